// Malformed MLIR is reported by the parser, located at the offending token.
// RUN: meshir-opt %s --split-input-file --verify-diagnostics

func.func @undefined_value(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{use of undeclared SSA value name}}
  %0 = "mtf.relu"(%b) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @value_defined_twice(%a: !mtf.tensor<d=4, f32>) {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  // expected-error @+1 {{redefinition of SSA value '%0'}}
  %0 = "mtf.relu"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @operand_type_disagrees_with_definition(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{use of value '%a' expects different type than prior uses}}
  %0 = "mtf.relu"(%a) : (!mtf.tensor<d=8, f32>) -> !mtf.tensor<d=8, f32>
  return
}

// -----

func.func @custom_syntax_for_mtf_op(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{Dialect `mtf' not found for custom op 'mtf.relu'}}
  %0 = mtf.relu %a : !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @missing_function_type(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{expected ':' followed by operation type}}
  %0 = "mtf.relu"(%a)
  return
}

// -----

func.func @unbalanced_type_brackets(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{unbalanced '<' character in pretty dialect name}}
  %0 = "mtf.relu"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32
  return
}

// -----

func.func @return_type_mismatch(%a: !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  // expected-error @+1 {{'func.return' op has 0 operands, but enclosing function (@return_type_mismatch) returns 1}}
  return
}

// -----

// expected-error @+1 {{expected valid '@'-identifier for symbol name}}
func.func (%a: !mtf.tensor<d=4, f32>) {
  return
}

// -----

func.func @unterminated_string(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{expected '"' in string literal}}
  %0 = "mtf.relu(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}
