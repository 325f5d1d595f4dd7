// --dump-pass-pipeline prints the pipeline that will run to stderr as mlir-opt does, every
// option written out (MeshIR's and upstream ones alike), then runs it.
// RUN: meshir-opt %s --pass-pipeline='builtin.module(mtf-strip-layouts, func.func(canonicalize{max-iterations=3}, cse))' --dump-pass-pipeline 2>&1 | filecheck %s

// CHECK: Pass Manager with 2 passes:
// CHECK-NEXT: builtin.module(
// CHECK-NEXT: {{^}}  mtf-strip-layouts{keep-collectives=false},
// CHECK-NEXT: {{^}}  func.func(
// CHECK-NEXT: {{^}}    canonicalize{{{.*}}max-iterations=3{{.*}}},
// CHECK-NEXT: {{^}}    cse
// CHECK-NEXT: {{^}}  )
// CHECK-NEXT: )
// CHECK-EMPTY:
// CHECK-NEXT: module {
func.func @f() {
  return
}
