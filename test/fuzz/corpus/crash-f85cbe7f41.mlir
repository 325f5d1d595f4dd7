// FUZZ-ARGS: ["--pass-pipeline=builtin.module(inline)"]
// FUZZ-FOUND: crash:signal on 71f07d4 after 5239 executions
"test.op"() ({"test.op"() ({"test.op"() ({"test.op"() ({"test.op"() ({"test.op"() ({// mtf-verify runs through unchanged, an
func.func @valid_module_unchanged(%a: !mtf.tensor<d=4, f32>) {
  return
}
}) : () -> ()}) : () -> ()}) : () -> ()}) : () -> ()}) : () -> ()}) : () -> ()