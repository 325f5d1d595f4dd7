// --verify-diagnostics matches diagnostics with expected-* comments: on the same line,
// @+N / @-N lines away, @above / @below the comment block; errors, warnings and notes.
// RUN: meshir-opt %s --split-input-file --verify-diagnostics
// RUN: meshir-opt %s -split-input-file -verify-diagnostics

func.func @same_line(%a: !mtf.tensor<d=4, i32>) {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32> // expected-error {{operand element type i32 is not supported}}
  return
}

// -----

func.func @relative_lines(%a: !mtf.tensor<d=4, i32>) {
  // expected-error @+2 {{'mtf.exp' op operand element type i32}}
  // expected-error @+3 {{'mtf.log' op operand element type i32}}
  %0 = "mtf.exp"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  %1 = "mtf.relu"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  %2 = "mtf.log"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  %3 = "mtf.sin"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  // expected-error @-1 {{'mtf.sin' op}}
  return
}

// -----

// Stacked @below comments all refer to the next line without an expected-* comment.
func.func @above_and_below(%a: !mtf.tensor<d=4, i32>) {
  // expected-error @below {{'mtf.exp' op}}
  %0 = "mtf.exp"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  %1 = "mtf.exp"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  // expected-error @above {{'mtf.exp' op}}
  return
}

// -----

func.func @regex_expectation(%a: !mtf.tensor<d=6, f32>) {
  // expected-error-re @+1 {{result names [{{[a-z]+}}] are not in the operand [d]}}
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<d=6, f32>) -> !mtf.tensor<zz=2, f32>
  return
}
