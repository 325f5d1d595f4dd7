// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-aggressive-propagate)"]
// FUZZ-FOUND: crash:signal on 71f07d4 after 6031 executions
func.func private@f(tensor<8xf32>)->tensor<8xf32>