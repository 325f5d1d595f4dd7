// The passes that follow calls refuse a recursive call (MeshIR does not support recursion)
// with an error at the call that closes the cycle, naming the cycle and the pass: never a
// RecursionError or a hang (found by test/fuzz, issue 27). mtf-autodiff: autodiff_errors.mlir;
// Shardy's propagation: test/cli/shardy_pass_guards_recursion.mlir.
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --mtf-inline
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --mtf-propagate-sharding
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --mtf-auto-layout
// RUN: not meshir-opt %s --split-input-file --mtf-inline 2>&1 | filecheck %s --check-prefix=INLINE
// RUN: not meshir-opt %s --split-input-file --mtf-propagate-sharding 2>&1 | filecheck %s --check-prefix=PROPAGATE

// INLINE: error: 'func.call' op @f calls itself (@f -> @f): mtf-inline cannot inline recursive calls
// PROPAGATE: error: 'func.call' op @f calls itself (@f -> @f): mtf-propagate-sharding cannot propagate layouts through recursive calls

sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32> {
  // expected-error @+1 {{'func.call' op @f calls itself (@f -> @f)}}
  %0 = func.call @f(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}

// -----

// Mutual recursion: the error is at the call that closes the cycle.
sdy.mesh @mesh = <["x"=2]>
func.func @ping(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32> {
  %0 = func.call @pong(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}
func.func private @pong(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32> {
  // expected-error @+1 {{'func.call' op @pong calls @ping, which leads back to @pong (@ping -> @pong -> @ping)}}
  %0 = func.call @ping(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}

// -----

// A call in a loop body counts too.
sdy.mesh @mesh = <["x"=2]>
func.func @looping(%a: !mtf.tensor<b=8, f32>, %c: !mtf.tensor<i1>) -> !mtf.tensor<b=8, f32> {
  %r = "mtf.while"(%a, %c) ({
  ^bb0(%h: !mtf.tensor<b=8, f32>, %k: !mtf.tensor<i1>):
    "mtf.yield"(%k) : (!mtf.tensor<i1>) -> ()
  }, {
  ^bb0(%h: !mtf.tensor<b=8, f32>, %k: !mtf.tensor<i1>):
    // expected-error @+1 {{'func.call' op @looping calls itself (@looping -> @looping)}}
    %0 = func.call @looping(%h, %k) : (!mtf.tensor<b=8, f32>, !mtf.tensor<i1>) -> !mtf.tensor<b=8, f32>
    "mtf.yield"(%0) : (!mtf.tensor<b=8, f32>) -> ()
  }) {invariants = 1} : (!mtf.tensor<b=8, f32>, !mtf.tensor<i1>) -> !mtf.tensor<b=8, f32>
  return %r : !mtf.tensor<b=8, f32>
}
