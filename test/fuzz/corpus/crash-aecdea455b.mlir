// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-export-pipeline)"]
// FUZZ-FOUND: crash:Check failed: funcOp Failed to lookup function: main on e0d531a after 26180 executions
module {module {module {module {module {module {module {// 
func.func @first() {
  return
}
}}}}}}}