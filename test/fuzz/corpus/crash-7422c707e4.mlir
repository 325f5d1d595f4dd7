// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-basic-propagate)"]
// FUZZ-FOUND: crash:Check failed: funcOp Failed to lookup function: main on 71f07d4 after 110 executions
