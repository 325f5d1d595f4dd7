// mtf-autodiff differentiates through func.call without inlining: the callee gets @<f>_fwd
// (its results, then the residuals its backward reads) and @<f>_bwd (residuals and result
// cotangents -> cotangents of its float arguments). A plain call saves the residuals; a call
// marked mtf.remat recomputes @<f>_fwd in the backward sweep behind optimization barriers.
// RUN: meshir-opt %s --split-input-file --mtf-autodiff='wrt=w' | filecheck %s

sdy.mesh @mesh = <["x"=2]>
func.func private @layer(%a: !mtf.tensor<b=4, f32>, %w: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  %0 = "mtf.mul"(%a, %w) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.tanh"(%0) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %1 : !mtf.tensor<b=4, f32>
}
// The forward also returns what the backward reads (in the order it reads them): tanh's result and both arguments.
// CHECK-LABEL: func.func private @layer_fwd(
// CHECK-SAME: -> (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>)
// CHECK: %[[T:.*]] = "mtf.tanh"
// CHECK-NEXT: return %[[T]], %[[T]], %arg1, %arg0
// The backward: residuals, then the result's cotangent; one cotangent per float argument.
// CHECK-LABEL: func.func private @layer_bwd(
// CHECK-SAME: %arg3: !mtf.tensor<b=4, f32>) -> (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>)
// CHECK-NOT: "mtf.tanh"
// CHECK: return
// CHECK-LABEL: func.func @saved_call_grad(
// CHECK-NEXT: %[[F:.*]]:4 = call @layer_fwd(%arg0, %arg1)
// CHECK-NEXT: "mtf.reduce_sum"(%[[F]]#0)
// CHECK-NOT: optimization_barrier
// CHECK: %[[G:.*]]:2 = call @layer_bwd(%[[F]]#1, %[[F]]#2, %[[F]]#3, %{{.*}})
// CHECK-NEXT: return %{{.*}}, %[[G]]#1
func.func @saved_call(%x: !mtf.tensor<b=4, f32> {mtf.name = "x"}, %w: !mtf.tensor<b=4, f32> {mtf.name = "w"}) -> !mtf.tensor<f32> attributes {mtf.mesh = @mesh} {
  %0 = func.call @layer(%x, %w) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<f32>
  return %1 : !mtf.tensor<f32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func private @layer(%a: !mtf.tensor<b=4, f32>, %w: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  %0 = "mtf.mul"(%a, %w) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.tanh"(%0) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %1 : !mtf.tensor<b=4, f32>
}
// The forward calls @layer itself (nothing saved); the backward reruns @layer_fwd on its
// operands behind barriers, each selected by a predicate of the cotangent that is always
// true (so the recomputation waits for it), then @layer_bwd on what that returns.
// CHECK-LABEL: func.func @remat_call_grad(
// CHECK-NEXT: %[[Y:.*]] = call @layer(%arg0, %arg1) {mtf.remat}
// CHECK-NEXT: "mtf.reduce_sum"(%[[Y]])
// CHECK: %[[CT:.*]] = "mtf.broadcast"
// CHECK-NEXT: %[[BX:.*]] = "mtf.optimization_barrier"(%arg0)
// CHECK-NEXT: %[[EQ:.*]] = "mtf.eq"(%[[CT]], %[[CT]])
// CHECK-NEXT: %[[NE:.*]] = "mtf.ne"(%[[CT]], %[[CT]])
// CHECK-NEXT: %[[ALWAYS:.*]] = "mtf.max"(%[[EQ]], %[[NE]])
// CHECK: %[[SX:.*]] = "mtf.select"(%[[ALWAYS]], %[[BX]], %{{.*}})
// CHECK: %[[BW:.*]] = "mtf.optimization_barrier"(%arg1)
// CHECK: %[[SW:.*]] = "mtf.select"({{.*}}, %[[BW]], %{{.*}})
// CHECK-NEXT: %[[F:.*]]:4 = call @layer_fwd(%[[SX]], %[[SW]])
// CHECK-NEXT: %[[G:.*]]:2 = call @layer_bwd(%[[F]]#1, %[[F]]#2, %[[F]]#3, %{{.*}})
// CHECK-NEXT: return %{{.*}}, %[[G]]#1
func.func @remat_call(%x: !mtf.tensor<b=4, f32> {mtf.name = "x"}, %w: !mtf.tensor<b=4, f32> {mtf.name = "w"}) -> !mtf.tensor<f32> attributes {mtf.mesh = @mesh} {
  %0 = func.call @layer(%x, %w) {mtf.remat} : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<f32>
  return %1 : !mtf.tensor<f32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func private @block(%a: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  %0 = "mtf.tanh"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %0 : !mtf.tensor<b=4, f32>
}
func.func private @block_vjp(%a: !mtf.tensor<b=4, f32>, %y: !mtf.tensor<b=4, f32>, %ct: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  return %ct : !mtf.tensor<b=4, f32>
}
// A call marked mtf.custom_vjp: the backward calls the user's VJP on (inputs, outputs,
// cotangents); the callee is never split.
// CHECK-NOT: @block_fwd
// CHECK-LABEL: func.func @custom_call_grad(
// CHECK-NEXT: %[[Y:.*]] = call @block(%arg0) {mtf.custom_vjp = @block_vjp}
// CHECK: %[[G:.*]] = call @block_vjp(%arg0, %[[Y]], %{{.*}})
// CHECK-NEXT: return %{{.*}}, %[[G]]
func.func @custom_call(%w: !mtf.tensor<b=4, f32> {mtf.name = "w"}) -> !mtf.tensor<f32> attributes {mtf.mesh = @mesh} {
  %0 = func.call @block(%w) {mtf.custom_vjp = @block_vjp} : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<f32>
  return %1 : !mtf.tensor<f32>
}
