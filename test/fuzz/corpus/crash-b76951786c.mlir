// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-insert-explicit-reshards)"]
// FUZZ-FOUND: crash:signal on 71f07d4 after 214 executions
sdy.mesh @mesh = <["x"=2]>
func.func private @declaration(!mtf.tensor<b=8@x, f32>, tensor<4xf32>) -> !mtf.tensor<b=8@x, f32>
func.func @nested_region(%a: !mtf.tensor<b=8@x, f32>) {
  "test.region"() : () -> ()
}