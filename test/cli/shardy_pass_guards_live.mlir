// Shardy's propagation pipeline first drops private functions that no public function uses
// (symbol DCE), then looks up @main or the only function: only the functions that stay count
// (fuzz finding crash-84d6cbe9be: a module with one private function aborted the process).
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdy-propagation-pipeline)' | filecheck %s

// expected-error @+1 {{needs a function named @main or exactly one function public or used by a public function in this 'builtin.module' (Shardy aborts otherwise); found 0: none}}
module {
  func.func private @main(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
}

// -----

// An unused private function is dropped, leaving one function.
// CHECK-LABEL: func.func @f
// CHECK-NOT: func.func
// CHECK: // -----
module {
  func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
  func.func private @g(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
}

// -----

// A private @main used by the one public function stays and is the entry.
// CHECK: func.func @g
// CHECK: func.func private @main
module {
  func.func private @main(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
  func.func @g(%a: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @main(%a) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}

// -----

// expected-error @+1 {{found 2: @f, @g}}
module {
  func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @g(%a) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @g(%a: tensor<8xf32>) -> tensor<8xf32> {
    return %a : tensor<8xf32>
  }
}
