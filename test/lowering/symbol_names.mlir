// Names that are not bare identifiers (a function @"héllo wörld", an mtf.name with a newline)
// are written into the StableHLO text as MLIR prints them: quoted, with \XX escapes, so the
// lowered module parses, in both modes, and reads back (found by test/fuzz, issue 27).
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo='mode=gspmd' | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo | meshir-opt --split-input-file | filecheck %s

sdy.mesh @mesh = <["x"=2]>

// CHECK-LABEL: func.func public @"h\C3\A9llo w\C3\B6rld"(
// CHECK-SAME: %arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}
func.func @"héllo wörld"(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32> {
  return %a : !mtf.tensor<b=8@x, f32>
}

// -----

sdy.mesh @mesh = <["x"=2]>

// CHECK-LABEL: func.func public @"9lives"(
// CHECK-SAME: {mtf.name = "a\0Ab\22c\\d\C3\A9", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}
// CHECK-SAME: -> (tensor<8xf32> {mtf.name = "out put", sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>})
func.func @"9lives"(%a: !mtf.tensor<b=8@x, f32> {mtf.name = "a\nb\"c\\dé"}) -> (!mtf.tensor<b=8@x, f32> {mtf.name = "out put"}) {
  %0 = "mtf.neg"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  return %0 : !mtf.tensor<b=8@x, f32>
}
