// Without an input file, or with '-', meshir-opt reads standard input.
// RUN: meshir-opt < %s | filecheck %s
// RUN: meshir-opt - < %s | filecheck %s

// CHECK-LABEL: func.func @read_from_stdin
func.func @read_from_stdin(%a: !mtf.tensor<d=4, f32>) {
  return
}
