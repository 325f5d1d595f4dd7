// FUZZ-ARGS: ["--mlir-very-unsafe-disable-verifier-on-parsing", "--pass-pipeline=builtin.module(sdy-close-shardings)"]
// FUZZ-FOUND: crash:signal on 71f07d4 after 5677 executions
func.func private@axes_without_mesh(!mtf.tensor<df32>) -> !mtf.tensor<d>