// Mismatches are reported like mlir-opt does, at the comment or at the diagnostic.
// RUN: not meshir-opt %s --verify-diagnostics 2>&1 | filecheck %s

func.func @mismatches(%a: !mtf.tensor<d=4, i32>) {
  // CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE + 2]]:8: error: unexpected error: 'mtf.exp' op operand element type i32 is not supported
  // CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE + 2]]:6: error: expected warning "never emitted" was not produced
  %0 = "mtf.exp"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  // expected-warning @+1 {{never emitted}}
  return
}
// CHECK-NOT: Traceback

// RUN: not meshir-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=KIND

// -----

func.func @wrong_severity(%a: !mtf.tensor<d=4, i32>) {
  // KIND: verify_diagnostics_mismatch.mlir:[[# @LINE + 1]]:6: error: 'error' diagnostic emitted when expecting a 'warning'
  // expected-warning @+1 {{'mtf.exp' op}}
  %0 = "mtf.exp"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  return
}
