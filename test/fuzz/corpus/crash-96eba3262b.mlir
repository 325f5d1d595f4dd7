// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-lift-inlined-meshes)"]
// FUZZ-FOUND: crash:signal on 71f07d4 after 1608 executions
module {module {module {module {module {module {
func.func private @declaration(!mtf.tensor<b=8@x, f32>, tensor<4xf32>) -> !mtf.tensor<b=8@x, f32>
func.func @nested_region(%a: !mtf.tensor<b=8@x, f32>) {
  "test.region"() ({
  }) : () -> ()
}
}}}}}}