// --mlir-print-debuginfo prints the locations, which name the input file.
// RUN: meshir-opt %s --mlir-print-debuginfo | filecheck %s

// CHECK: return loc(#[[LOC:loc[0-9]*]])
// CHECK: #[[LOC]] = loc("{{.*}}print_debuginfo.mlir":[[# @LINE + 2]]:3)
func.func @f() {
  return
}
