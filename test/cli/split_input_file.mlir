// --split-input-file processes chunks separately and joins their outputs with '// -----';
// a failing chunk does not stop the others but makes the run fail.
// RUN: meshir-opt %s --split-input-file | filecheck %s
// RUN: not meshir-opt %s 2>&1 | filecheck %s --check-prefix=WHOLE

// CHECK: module {
// CHECK: func.func @first
// CHECK: // -----
// CHECK-NEXT: module {
// CHECK: func.func @second
// CHECK-NOT: // -----
func.func @first() {
  return
}

// -----

// The same symbol in two chunks is fine: each chunk is its own module.
// WHOLE: split_input_file.mlir:[[# @LINE + 1]]:1: error: redefinition of symbol named 'first'
func.func @first() {
  return
}

func.func @second() {
  return
}
