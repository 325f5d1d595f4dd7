sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @plain(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %0 : !mtf.tensor<b=8, d=16, f32>
}
