// Gradients exist only for float arguments.
// RUN: meshir-opt %s --verify-diagnostics --mtf-autodiff='wrt=ids'

sdy.mesh @mesh = <["x"=2]>
// expected-error @+1 {{cannot differentiate @lookup with respect to 'ids': its element type is i32, gradients exist only for float arguments}}
func.func @lookup(%table: !mtf.tensor<v=8, d=4, f32> {mtf.name = "table"}, %ids: !mtf.tensor<b=2, i32> {mtf.name = "ids"}) -> !mtf.tensor<f32> attributes {mtf.mesh = @mesh} {
  %0 = "mtf.gather"(%table, %ids) {dim = "v"} : (!mtf.tensor<v=8, d=4, f32>, !mtf.tensor<b=2, i32>) -> !mtf.tensor<b=2, d=4, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=2, d=4, f32>) -> !mtf.tensor<f32>
  return %1 : !mtf.tensor<f32>
}
