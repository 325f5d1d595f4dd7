// FUZZ-ARGS: ["--pass-pipeline=builtin.module(mtf-autodiff)"]
// FUZZ-FOUND: internal:ValueError@signature.py:_names on bb4ab35 after 171848 executions
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @f(%x: !mtf.tensor<b=4@x, d=3, f32> {mtf.name = "x"}, %w: !mtf.tensor<d=3, h=2, f32> {},
      %bias: !mtf.tensor<h=2, f32> {mtf.name = @too_many_operands}) -> (!mtf.tensor<f32> )
    attributes {mtf.mesh = @mesh} {
  %0 = "mtf.einsum"(%x, %w) : (!mtf.tensor<b=4@x, d=3, f32>, !mtf.tensor<d=3, h=2, f32>) -> !mtf.tensor<b=4@x, h=2@y, f32>
  %1 = "mtf.add"(%0, %bias) : (!mtf.tensor<b=4@x, h=2@y, f32>, !mtf.tensor<h=2, f32>) -> !mtf.tensor<b=4, h=2, f32>
  %2 = "mtf.relu"(%1) : (!mtf.tensor<b=4, h=2, f32>) -> !mtf.tensor<b=4, h=2, f32>
  %3 = "mtf.reduce_sum"(%2) : (!mtf.tensor<b=4, h=2, f32>) -> !mtf.tensor<f32>
  return %3 : !mtf.tensor<f32>
}