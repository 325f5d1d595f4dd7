// MeshIR passes and upstream passes run in one pipeline, given as --pass-pipeline (with or
// without the builtin.module wrapper, with nested op pipelines) or as pass flags.
// RUN: meshir-opt %s --pass-pipeline='builtin.module(mtf-verify, canonicalize, func.func(cse), mtf-strip-layouts, mtf-verify)' | filecheck %s
// RUN: meshir-opt %s --pass-pipeline='mtf-verify,canonicalize{max-iterations=2},cse,mtf-strip-layouts' | filecheck %s
// RUN: meshir-opt %s --mtf-verify --canonicalize='max-iterations=2' --cse --mtf-strip-layouts | filecheck %s
// RUN: meshir-opt %s -mtf-verify -canonicalize -cse -mtf-strip-layouts | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @strip_and_dedupe
// CHECK-SAME: (%arg0: !mtf.tensor<b=8, d=16, f32>) -> (!mtf.tensor<b=8, d=16, f32>, tensor<f32>, tensor<f32>)
func.func @strip_and_dedupe(%a: !mtf.tensor<b=8@x, d=16@y, f32>) -> (!mtf.tensor<b=8@x, d=16@y, f32>, tensor<f32>, tensor<f32>) {
  // CHECK-NEXT: %[[C:.*]] = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  // CHECK-NEXT: %[[R:.*]] = "mtf.relu"(%arg0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  // CHECK-NEXT: return %[[R]], %[[C]], %[[C]] : !mtf.tensor<b=8, d=16, f32>, tensor<f32>, tensor<f32>
  %c0 = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  %c1 = stablehlo.constant dense<1.0> : tensor<f32>
  return %0, %c0, %c1 : !mtf.tensor<b=8@x, d=16@y, f32>, tensor<f32>, tensor<f32>
}
