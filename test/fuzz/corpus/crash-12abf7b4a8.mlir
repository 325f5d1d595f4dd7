// FUZZ-ARGS: ["--sdy-propagation-pipeline"]
// FUZZ-FOUND: crash:Check failed: funcOp Failed to lookup function: main on 71f07d4 after 541 executions
