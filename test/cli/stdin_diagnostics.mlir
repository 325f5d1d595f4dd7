// Diagnostics about standard input name '<stdin>', with the line of the original input
// even in a later chunk of --split-input-file.
// RUN: not meshir-opt --split-input-file < %s 2>&1 | filecheck %s

func.func @valid(%a: !mtf.tensor<d=4, i32>) {
  return
}

// -----

func.func @error_located_in_stdin(%a: !mtf.tensor<d=4, i32>) {
  // CHECK: <stdin>:[[# @LINE + 1]]:8: error: 'mtf.exp' op operand element type i32 is not supported
  %0 = "mtf.exp"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  return
}
