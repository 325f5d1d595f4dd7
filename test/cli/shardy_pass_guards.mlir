// Shardy passes crash (segfault, CHECK abort) on a function declaration and on a module without
// a defined function; meshir-opt checks what each needs right before it runs (upstream_guards.py).
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdy-basic-propagate)'
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdy-export-pipeline)'
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdy-close-shardings)'
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(sdy-insert-explicit-reshards))'
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(sdy-propagation-pipeline)'

func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  return %a : tensor<8xf32>
}
// expected-error @+1 {{'func.func' op @declared is a declaration (no body): Shardy pass 'sdy-}}
func.func private @declared(%a: tensor<8xf32>) -> tensor<8xf32>
