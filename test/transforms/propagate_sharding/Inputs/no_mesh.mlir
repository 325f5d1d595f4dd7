func.func @no_mesh(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.neg"(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}
