// An unknown --mlir-* option is an unknown option (no pass is named mlir-*), with a
// did-you-mean, exit code 1 and no traceback.
// RUN: not meshir-opt %s -mlir-timng 2>&1 | filecheck %s

// CHECK: meshir-opt: error: unknown option '--mlir-timng'; did you mean '--mlir-timing'? (see meshir-opt --help)
// CHECK-NOT: Traceback
func.func @f() {
  return
}
