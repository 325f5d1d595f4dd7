// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-propagation-pipeline)"]
// FUZZ-FOUND: crash:Check failed: funcOp Failed to lookup function: main on 385878b after 252548 executions
func.func private@callee(%a:tensor<4xf32>)-> tensor<4xf32> {
  return %a : tensor<4xf32>
}