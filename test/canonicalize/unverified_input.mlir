// With MeshIR's verifier off after parsing, mtf-canonicalize reports the verifier's located
// diagnostics for ops its folds could not read, instead of an internal error.
// RUN: meshir-opt %s --verify-diagnostics --mlir-very-unsafe-disable-verifier-on-parsing --mtf-canonicalize

func.func @no_operand() -> !mtf.tensor<b=4, f32> {
  // expected-error @+1 {{'mtf.neg' op expects 1 operand, got 0}}
  %0 = "mtf.neg"() : () -> !mtf.tensor<b=4, f32>
  %1 = "mtf.neg"(%0) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %1 : !mtf.tensor<b=4, f32>
}
