// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-op-priority-propagate)"]
// FUZZ-FOUND: crash:signal on e0d531a after 68912 executions
func.func@f(){"test.op"() ({
  }) : () -> ()
}