// Shardy's propagation and export abort ("Failed to lookup function: main") on a module
// without a defined function; passes that handle one (sdy-close-shardings) still run.
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdy-propagation-pipeline)'
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdy-basic-propagate)'
// RUN: meshir-opt %s --pass-pipeline='builtin.module(sdy-close-shardings)' | filecheck %s --check-prefix=SAFE

// SAFE: sdy.mesh @mesh
// expected-error @+1 {{Shardy pass 'sdy-}}
module {
  sdy.mesh @mesh = <["x"=2]>
}
