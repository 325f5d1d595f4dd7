// mtf-verify runs the MeshIR verifier as a pass: a valid module goes through unchanged, an
// invalid one fails the pass with the verifier's located diagnostics (exit 1).
// RUN: meshir-opt %s --split-input-file --mtf-verify --mlir-very-unsafe-disable-verifier-on-parsing --verify-diagnostics | filecheck %s
// RUN: not meshir-opt %s --split-input-file --mtf-verify --mlir-very-unsafe-disable-verifier-on-parsing 2>&1 | filecheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @valid_module_unchanged
// CHECK-NEXT: "mtf.relu"(%arg0) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
func.func @valid_module_unchanged(%a: !mtf.tensor<d=4, f32>) {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

// ERR: verify.mlir:[[# @LINE + 3]]:8: error: 'mtf.exp' op operand element type i32 is not supported
// ERR-NOT: Traceback
func.func @invalid_module_fails_the_pass(%a: !mtf.tensor<d=4, i32>) {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32> // expected-error {{'mtf.exp' op operand element type i32 is not supported}}
  return
}
