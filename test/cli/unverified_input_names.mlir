// With MeshIR's verifier off after parsing, mtf-autodiff meets an `mtf.name` that is not a
// string: the verifier's located error, not an internal ValueError (found by test/fuzz).
// RUN: meshir-opt %s --verify-diagnostics --mlir-very-unsafe-disable-verifier-on-parsing --pass-pipeline='builtin.module(mtf-autodiff)'

// expected-error @+1 {{'func.func' op result #0: mtf.name must be a string, got 3 : i64}}
func.func @f(%x: !mtf.tensor<b=4, f32>) -> (!mtf.tensor<b=4, f32> {mtf.name = 3}) {
  return %x : !mtf.tensor<b=4, f32>
}
