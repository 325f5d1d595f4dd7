// FUZZ-ARGS: ["--mtf-lower-to-stablehlo"]
// FUZZ-FOUND: internal:RuntimeError@lower.py:_swap_functions on 1cae2bb (issue 27 campaign)
sdy.mesh @mesh = <["x"=2]>
func.func @"héllo"(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32> {
  return %a : !mtf.tensor<b=8@x, f32>
}
