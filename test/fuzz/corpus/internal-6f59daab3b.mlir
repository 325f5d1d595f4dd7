// FUZZ-ARGS: ["--mtf-autodiff=function=f"]
// FUZZ-FOUND: internal:RecursionError@gradient.py:active_values on 1cae2bb (issue 27 campaign)
func.func @f(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<f32> {
  %0 = func.call @g(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<f32>
  return %0 : !mtf.tensor<f32>
}
func.func @g(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<f32> {
  %0 = func.call @f(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<f32>
  return %0 : !mtf.tensor<f32>
}
