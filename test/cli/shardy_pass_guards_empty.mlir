// Shardy's propagation and export abort ("Failed to lookup function: main") on a module
// without a function named main or exactly one function; passes that handle one
// (sdy-close-shardings) still run.
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdy-propagation-pipeline)'
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdy-basic-propagate)'
// RUN: meshir-opt %s --split-input-file --pass-pipeline='builtin.module(sdy-close-shardings)' | filecheck %s --check-prefix=SAFE

// SAFE: sdy.mesh @mesh
// expected-error @+1 {{Shardy pass 'sdy-}}
module {
  sdy.mesh @mesh = <["x"=2]>
}

// -----

// SAFE: func.func @f
// expected-error @+1 {{needs a function named @main or exactly one function}}
module {
  func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @g(%a) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @g(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
}

// -----

// With a main, other functions are fine.
// SAFE: func.func @main
module {
  func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
  func.func private @g(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
}
