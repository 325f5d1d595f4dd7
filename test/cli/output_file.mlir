// -o writes the module to a file; nothing goes to stdout.
// RUN: meshir-opt %s -o %t > %t.stdout
// RUN: filecheck %s --input-file %t
// RUN: %python -c "import os, sys; sys.exit(os.path.getsize(sys.argv[1]))" %t.stdout
// RUN: meshir-opt %s -o=%t.2 && filecheck %s --input-file %t.2

// CHECK-LABEL: func.func @written_to_file
func.func @written_to_file(%a: !mtf.tensor<d=4, f32>) {
  return
}
