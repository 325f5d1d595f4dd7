// FUZZ-ARGS: ["--mtf-insert-collectives"]
// FUZZ-FOUND: internal:TypeContentError@tensor_type.py:from_mlir on 71f07d4 after 452 executions
sdy.mesh@mesh=<["x"=2]>func.func@propagates_argument_sharding(%a:tensor<8x16xf32>{sdy.sharding=#sdy.sharding<@mesh,[{}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.add %a, %a : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}