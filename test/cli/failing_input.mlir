// Bad input exits 1 with `file:line:col: error:` diagnostics and the source line - never a
// Python traceback.
// RUN: not meshir-opt %s 2>&1 | filecheck %s
// RUN: not meshir-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not meshir-opt %s --no-such-flag=3 2>&1 | filecheck %s --check-prefix=FLAG
// RUN: not meshir-opt %s %s 2>&1 | filecheck %s --check-prefix=USAGE

sdy.mesh @mesh = <["x"=4]>

func.func @indivisible(%a: !mtf.tensor<d=6, f32>) {
  // CHECK: failing_input.mlir:[[# @LINE + 3]]:8: error: 'mtf.shard' op dimension 'd' of size 6 is not divisible by 4
  // CHECK-NEXT: {{^}}  %0 = "mtf.shard"
  // CHECK-NEXT: {{^}}       ^
  %0 = "mtf.shard"(%a) : (!mtf.tensor<d=6, f32>) -> !mtf.tensor<d=6@x, f32>
  return
}
// CHECK-NOT: Traceback

// MISSING: meshir-opt: error: cannot read input file '{{.*}}failing_input.mlir.missing': No such file or directory
// MISSING-NOT: Traceback

// FLAG: meshir-opt: error: unknown option or pass '--no-such-flag=3'
// FLAG-NOT: Traceback

// USAGE: meshir-opt: error: unrecognized arguments: {{.*}}failing_input.mlir (see meshir-opt --help)
