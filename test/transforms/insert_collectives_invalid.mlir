// RUN: meshir-opt %s --split-input-file --verify-diagnostics --mtf-insert-collectives

sdy.mesh @mesh = <["x"=2]>
func.func @needs_propagation_first(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32> {
  // expected-error @+1 {{%0 has dims without a layout (m): run mtf-propagate-sharding first}}
  %0 = "mtf.broadcast"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, m=2, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=8@x, m=2, f32>) -> !mtf.tensor<b=8@x, f32>
  return %1 : !mtf.tensor<b=8@x, f32>
}
