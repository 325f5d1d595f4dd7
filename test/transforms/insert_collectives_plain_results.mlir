// An mtf function may also return plain tensors; mtf-insert-collectives reduces only its
// pending mtf results (it used to read every returned value as an !mtf.tensor).
// RUN: meshir-opt %s --pass-pipeline='builtin.module(mtf-insert-collectives)' | filecheck %s

sdy.mesh @mesh = <["x"=2]>
// CHECK-LABEL: func.func @mixed_results
// CHECK: return %{{.*}}, %{{.*}} : !mtf.tensor<b=8@x, f32>, tensor<f32>
func.func @mixed_results(%a: !mtf.tensor<b=8@x, f32>) -> (!mtf.tensor<b=8@x, f32>, tensor<f32>) {
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  return %0, %c : !mtf.tensor<b=8@x, f32>, tensor<f32>
}
