// `mtf.name` on an argument or result must be a string: inputs and results are bound by it.
// (Found by the fuzzer: mtf-autodiff raised a Python ValueError on a symbol reference.)
// RUN: meshir-opt %s --split-input-file --verify-diagnostics

sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{'func.func' op argument #1: mtf.name must be a string, got @not_a_string}}
func.func @f(%x: !mtf.tensor<b=4, f32> {mtf.name = "x"}, %w: !mtf.tensor<b=4, f32> {mtf.name = @not_a_string}) -> !mtf.tensor<b=4, f32> attributes {mtf.mesh = @mesh} {
  %0 = "mtf.add"(%x, %w) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %0 : !mtf.tensor<b=4, f32>
}

// -----

// expected-error@+1 {{'func.func' op result #0: mtf.name must be a string, got 3 : i64}}
func.func @g(%x: !mtf.tensor<b=4, f32>) -> (!mtf.tensor<b=4, f32> {mtf.name = 3}) {
  return %x : !mtf.tensor<b=4, f32>
}
