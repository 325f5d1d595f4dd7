// --emit-bytecode writes MLIR bytecode; meshir-opt reads bytecode wherever it reads text (a
// file or standard input), recognized by its magic number. mtf ops and types round-trip, and
// so do locations: a pass's error on bytecode input points into the original text.
// RUN: meshir-opt %s --emit-bytecode | meshir-opt - | filecheck %s
// RUN: meshir-opt %s --emit-bytecode -o %t.mlirbc
// RUN: meshir-opt %t.mlirbc --mtf-strip-layouts --mlir-print-debuginfo | filecheck %s --check-prefix=PASS
// RUN: not meshir-opt %t.mlirbc --mtf-strip-layouts --mtf-lower-to-stablehlo 2>&1 | filecheck %s --check-prefix=ERROR

// CHECK-LABEL: func.func @f(%arg0: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32> {
// CHECK-NEXT: %0 = "mtf.relu"(%arg0) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: return %0

// PASS: %0 = "mtf.relu"(%arg0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32> loc(#[[LOC:loc[0-9]+]])
// PASS: #[[LOC]] = loc("{{.*}}emit_bytecode.mlir":[[# @LINE + 6]]:8)

// ERROR: emit_bytecode.mlir:[[# @LINE + 4]]:8: error: 'mtf.relu' op is not partitioned

sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  return %0 : !mtf.tensor<b=8@x, f32>
}
