// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-user-priority-propagate)"]
// FUZZ-FOUND: crash:Check failed: funcOp Failed to lookup function: main on 71f07d4 after 29 executions
