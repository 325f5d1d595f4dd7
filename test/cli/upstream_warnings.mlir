// Warnings and notes from upstream passes are printed (exit 0) or checked like errors.
// RUN: meshir-opt %s --sdy-insert-explicit-reshards 2>&1 >/dev/null | filecheck %s
// RUN: meshir-opt %s --sdy-insert-explicit-reshards --verify-diagnostics | filecheck %s --check-prefix=OUT

sdy.mesh @mesh = <["x"=2]>

// OUT-LABEL: func.func @shardy_does_not_know_mtf_ops
func.func @shardy_does_not_know_mtf_ops(%a: !mtf.tensor<d=4@x, f32>) {
  // CHECK: upstream_warnings.mlir:[[# @LINE + 4]]:8: warning: op 'mtf.relu' is unknown to SDY sharding rule registry
  // CHECK: upstream_warnings.mlir:[[# @LINE + 3]]:8: note:
  // expected-warning @below {{op 'mtf.relu' is unknown to SDY sharding rule registry}}
  // expected-note @below {{"mtf.relu"}}
  %0 = "mtf.relu"(%a) : (!mtf.tensor<d=4@x, f32>) -> !mtf.tensor<d=4@x, f32>
  return
}
