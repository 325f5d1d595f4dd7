// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-basic-propagate)"]
// FUZZ-FOUND: crash:signal on e0d531a after 12126 executions
func.func@f(){"test.op"() ({
  }) : () -> ()
}