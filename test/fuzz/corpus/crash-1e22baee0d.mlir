// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-import-pipeline)"]
// FUZZ-FOUND: crash:Check failed: funcOp Failed to lookup function: callee on b946915 after 64547 executions
module {module {module {module {module {module {
func.func private @callee(%a: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  return %a : !mtf.tensor<b=4, f32>
}
func.func @through_call(%w: !mtf.tensor<b=4, f32> {mtf.name = "w"}) -> !mtf.tensor<f32> attributes {mtf.mesh = @mesh} {
  %0 = func.call @callee(%w) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<f32>
  return %1 : !mtf.tensor<f32>
}
}}}}}}