// Shardy's passes run from meshir-opt in the same context as the mtf dialect.
// RUN: meshir-opt %s --pass-pipeline='builtin.module(mtf-verify, sdy-propagation-pipeline)' | filecheck %s

sdy.mesh @mesh = <["x"=2]>

// CHECK-LABEL: func.func @propagates_argument_sharding
// CHECK-SAME: -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
// CHECK-NEXT: stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>]>}
func.func @propagates_argument_sharding(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %a, %a : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
