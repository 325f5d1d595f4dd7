// mtf-verify checks every !mtf.tensor wherever it appears: on ops of other dialects (results,
// block arguments, type attributes, inside tuple and function types) and in declarations.
// RUN: meshir-opt %s --split-input-file --verify-diagnostics
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --mlir-very-unsafe-disable-verifier-on-parsing --pass-pipeline='builtin.module(mtf-verify)'

sdy.mesh @mesh = <["x"=2]>
func.func @foreign_op_result() {
  // expected-error @+1 {{'test.op' op result #0: dimension 'a' has size 0; sizes must be positive}}
  %0 = "test.op"() : () -> !mtf.tensor<a=0, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @foreign_op_tuple_result() {
  // expected-error @+1 {{'test.op' op result #0: dimension name 'b' appears twice}}
  %0 = "test.op"() : () -> tuple<i32, !mtf.tensor<b=2, b=4, f32>>
  return
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @foreign_op_type_attribute() {
  // expected-error @+1 {{'test.op' op attribute 't': dimension 'a' of size 3 is not divisible by 2 (mesh axes x)}}
  "test.op"() {t = [!mtf.tensor<a=3@x, f32>]} : () -> ()
  return
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @foreign_region_block_argument() {
  // expected-error @+1 {{'test.op' op region #0 block #0 argument #0: unknown mesh axis 'z'}}
  "test.op"() ({
  ^bb0(%a: !mtf.tensor<a=4@z, f32>):
    "test.yield"() : () -> ()
  }) : () -> ()
  return
}

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error @+1 {{'func.func' op argument #0: unknown mesh axis 'q'}}
func.func private @declaration(%a: !mtf.tensor<a=4@q, f32>)

// -----

// expected-error @+1 {{'func.func' op argument #0: !mtf.tensor<a=8589934592, b=8589934592, f32> has 73786976294838206464 elements, more than int64 can count}}
func.func @elements_overflow_int64(%a: !mtf.tensor<a=8589934592, b=8589934592, f32>) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: dimension 'a' has size 9223372036854775808, more than int64 holds}}
func.func @size_overflows_int64(%a: !mtf.tensor<a=9223372036854775808, f32>) {
  return
}

// -----

// expected-error @+1 {{has 9223372036854775808 bytes, more than int64 can count}}
func.func @bytes_overflow_int64(%a: !mtf.tensor<a=1152921504606846976, f64>) {
  return
}
