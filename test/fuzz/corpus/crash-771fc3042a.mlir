// FUZZ-ARGS: ["--pass-pipeline=builtin.module(sdy-aggressive-propagate)"]
// FUZZ-FOUND: crash:Check failed: funcOp Failed to lookup function: main on 71f07d4 after 2530 executions
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @disjoint_operands_combine(%a: !mtf.tensor<b=8@x, f32>, %c: !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16, b=8, f32> {
  %0 = "mtf.sub"(%a, %c) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16, b=8, f32>
  return %0 : !mtf.tensor<d=16, b=8, f32>
}
func.func @scalar_operand(%a: !mtf.tensor<b=8@x, f32>, %s: !mtf.tensor<f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.mul"(%a, %s) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}