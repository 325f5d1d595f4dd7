// Bytecode meshir-opt cannot read is an error at the file, exit code 1, no traceback:
// truncated, from a newer MLIR, or not MLIR at all (LLVM bitcode).
// RUN: meshir-opt %s --emit-bytecode -o %t.mlirbc
// RUN: %python -c "import sys; d = open(sys.argv[1], 'rb').read(); open(sys.argv[1] + '.cut', 'wb').write(d[:len(d) // 2]); open(sys.argv[1] + '.new', 'wb').write(d[:4] + bytes([199]) + d[5:]); open(sys.argv[1] + '.bc', 'wb').write(b'BC\xc0\xde\x35\x14\x00\x00')" %t.mlirbc
// RUN: not meshir-opt %t.mlirbc.cut 2>&1 | filecheck %s --check-prefix=CUT
// RUN: not meshir-opt %t.mlirbc.new 2>&1 | filecheck %s --check-prefix=NEWER
// RUN: not meshir-opt %t.mlirbc.bc 2>&1 | filecheck %s --check-prefix=FOREIGN

// CUT: .mlirbc.cut: error: {{.+}}
// CUT-NEXT: .mlirbc.cut: note: in bytecode version {{[0-9]+}} produced by: MLIR
// CUT-NOT: Traceback

// NEWER: .mlirbc.new: error: bytecode version 99 is newer than the current version {{[0-9]+}}
// NEWER-NOT: Traceback

// FOREIGN: meshir-opt: error: cannot read input file '{{.*}}.mlirbc.bc': it is neither UTF-8 MLIR text nor MLIR bytecode (which starts with 'ML\xefR'); it is LLVM bitcode
// FOREIGN-NOT: Traceback

func.func @f(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}
