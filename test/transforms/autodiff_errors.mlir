// Gradients that cannot exist are errors at the function (or at the op in the way).
// RUN: meshir-opt %s --split-input-file --verify-diagnostics --mtf-autodiff='wrt=w'

sdy.mesh @mesh = <["x"=2]>
// expected-error @+1 {{cannot differentiate @no_w with respect to 'w': no such argument (arguments: x)}}
func.func @no_w(%x: !mtf.tensor<b=4, f32> {mtf.name = "x"}) -> !mtf.tensor<f32> attributes {mtf.mesh = @mesh} {
  %0 = "mtf.reduce_sum"(%x) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<f32>
  return %0 : !mtf.tensor<f32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error @+1 {{result 'y' of @not_scalar is not a scalar (!mtf.tensor<b=4, f32>): differentiate a scalar}}
func.func @not_scalar(%w: !mtf.tensor<b=4, f32> {mtf.name = "w"}) -> (!mtf.tensor<b=4, f32> {mtf.name = "y"}) attributes {mtf.mesh = @mesh} {
  %0 = "mtf.exp"(%w) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %0 : !mtf.tensor<b=4, f32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func private @callee(%a: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
func.func @through_call(%w: !mtf.tensor<b=4, f32> {mtf.name = "w"}) -> !mtf.tensor<f32> attributes {mtf.mesh = @mesh} {
  // expected-error @+1 {{cannot differentiate through 'func.call': it has no VJP rule (its callee has no body)}}
  %0 = func.call @callee(%w) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<f32>
  return %1 : !mtf.tensor<f32>
}

// -----

// A recursive call is an error at the call, naming the cycle: differentiating it would not
// end (found by test/fuzz, issue 27: a RecursionError).
func.func @recursive(%w: !mtf.tensor<b=8, f32> {mtf.name = "w"}) -> !mtf.tensor<f32> {
  // expected-error @+1 {{'func.call' op @recursive calls itself (@recursive -> @recursive): mtf-autodiff cannot differentiate recursive calls}}
  %0 = func.call @recursive(%w) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<f32>
  return %0 : !mtf.tensor<f32>
}

// -----

func.func @ping(%w: !mtf.tensor<b=8, f32> {mtf.name = "w"}) -> !mtf.tensor<f32> {
  %0 = func.call @pong(%w) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<f32>
  return %0 : !mtf.tensor<f32>
}
func.func private @pong(%w: !mtf.tensor<b=8, f32>) -> !mtf.tensor<f32> {
  // expected-error @+1 {{'func.call' op @pong calls @ping, which leads back to @pong (@ping -> @pong -> @ping): mtf-autodiff cannot differentiate recursive calls}}
  %0 = func.call @ping(%w) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<f32>
  return %0 : !mtf.tensor<f32>
}

// -----

// The cycle is found below the differentiated function, in a loop body too.
func.func @outer(%w: !mtf.tensor<b=8, f32> {mtf.name = "w"}) -> !mtf.tensor<f32> {
  %0 = func.call @looping(%w) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<f32>
  return %1 : !mtf.tensor<f32>
}
func.func private @looping(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32> {
  %c = "mtf.constant"() {value = false} : () -> !mtf.tensor<i1>
  %r = "mtf.while"(%a, %c) ({
  ^bb0(%h: !mtf.tensor<b=8, f32>, %k: !mtf.tensor<i1>):
    "mtf.yield"(%k) : (!mtf.tensor<i1>) -> ()
  }, {
  ^bb0(%h: !mtf.tensor<b=8, f32>, %k: !mtf.tensor<i1>):
    // expected-error @+1 {{'func.call' op @looping calls itself (@looping -> @looping)}}
    %0 = func.call @looping(%h) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
    "mtf.yield"(%0) : (!mtf.tensor<b=8, f32>) -> ()
  }) {invariants = 1} : (!mtf.tensor<b=8, f32>, !mtf.tensor<i1>) -> !mtf.tensor<b=8, f32>
  return %r : !mtf.tensor<b=8, f32>
}
