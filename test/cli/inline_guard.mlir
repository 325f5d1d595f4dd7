// MLIR's inliner segfaults on an op of an unregistered dialect that has a region; meshir-opt
// refuses to run `inline` on such IR (mtf ops have no regions, so MeshIR programs inline fine).
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(inline)'
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(inline, cse)'

func.func @f() {
  // expected-error @+1 {{'test.op' op is unregistered and has regions: pass 'inline' cannot run on it}}
  "test.op"() ({
    "test.yield"() : () -> ()
  }) : () -> ()
  return
}

// -----

func.func @callee(%a: !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return %0 : !mtf.tensor<d=4, f32>
}
func.func @caller(%a: !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32> {
  %0 = call @callee(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return %0 : !mtf.tensor<d=4, f32>
}
