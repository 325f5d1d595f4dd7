// Shardy's propagation segfaults on an op of an unregistered dialect with a region (like
// MLIR's inliner, see inline_guard.mlir); the passes that handle one still run.
// RUN: meshir-opt %s --verify-diagnostics --pass-pipeline='builtin.module(sdy-basic-propagate)'
// RUN: meshir-opt %s --verify-diagnostics --pass-pipeline='builtin.module(sdy-aggressive-propagate)'
// RUN: meshir-opt %s --pass-pipeline='builtin.module(sdy-close-shardings)' | filecheck %s

// CHECK: "test.op"() ({
func.func @f() {
  // expected-error @+1 {{'test.op' op is unregistered and has regions: pass 'sdy-}}
  "test.op"() ({
    "test.yield"() : () -> ()
  }) : () -> ()
  return
}
