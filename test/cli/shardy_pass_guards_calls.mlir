// Shardy's import looks callees up in the module it runs on only; a call into a nested
// module's function (valid MLIR: the nearest symbol table has it) aborted the process.
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdy-import-pipeline)'

module {
  module {
    func.func private @callee(%a: tensor<4xf32>) -> tensor<4xf32> {
      return %a : tensor<4xf32>
    }
    func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
      // expected-error @+1 {{'func.call' op calls @callee, which is not a function of the 'builtin.module' Shardy pass 'sdy-import-pipeline' runs on}}
      %0 = func.call @callee(%a) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
}

// -----

// Calls within the module are fine.
func.func private @callee(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @callee(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
