// FUZZ-ARGS: ["--mlir-very-unsafe-disable-verifier-on-parsing", "--pass-pipeline=builtin.module(sdy-op-priority-propagate)"]
// FUZZ-FOUND: crash:Check failed: funcOp Failed to lookup function: main on e0d531a after 13247 executions
module {module {
func.func @dim_attribute_names_missing_dimension(%a: !mtf.tensor<>) {
  return
}
}}