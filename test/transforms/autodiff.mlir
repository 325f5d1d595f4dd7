// mtf-autodiff adds @<f>_grad after @f: the forward ops in global form, then the VJP of
// each op in reverse order, returning (value, grad_<arg>...) named with mtf.name.
// RUN: meshir-opt %s --split-input-file --mtf-autodiff | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-autodiff='wrt=w with-value=false' | filecheck %s --check-prefix=ONLYW

sdy.mesh @mesh = <["x"=2, "y"=2]>

// loss = reduce_sum(relu(einsum(x, w) + bias))
// CHECK-LABEL: func.func @f(
// CHECK-LABEL: func.func @f_grad(
// CHECK-SAME: %[[X:.*]]: !mtf.tensor<b=4@x, d=3, f32> {mtf.name = "x"}, %[[W:.*]]: !mtf.tensor<d=3, h=2, f32> {mtf.name = "w"}, %[[B:.*]]: !mtf.tensor<h=2, f32> {mtf.name = "bias"})
// CHECK-SAME: -> (!mtf.tensor<f32> {mtf.name = "value"}, !mtf.tensor<b=4, d=3, f32> {mtf.name = "grad_x"}, !mtf.tensor<d=3, h=2, f32> {mtf.name = "grad_w"}, !mtf.tensor<h=2, f32> {mtf.name = "grad_bias"})
// CHECK-SAME: attributes {mtf.mesh = @mesh}
// Forward, layouts of op results dropped (argument annotations stay):
// CHECK-NEXT: %[[E:.*]] = "mtf.einsum"(%[[X]], %[[W]]) : (!mtf.tensor<b=4@x, d=3, f32>, !mtf.tensor<d=3, h=2, f32>) -> !mtf.tensor<b=4, h=2, f32>
// CHECK-NEXT: %[[A:.*]] = "mtf.add"(%[[E]], %[[B]]) : {{.*}} -> !mtf.tensor<b=4, h=2, f32>
// CHECK-NEXT: %[[R:.*]] = "mtf.relu"(%[[A]])
// CHECK-NEXT: %[[L:.*]] = "mtf.reduce_sum"(%[[R]]) : (!mtf.tensor<b=4, h=2, f32>) -> !mtf.tensor<f32>
// Seed, then reduce_sum's VJP: broadcast back.
// CHECK-NEXT: %[[ONE:.*]] = "mtf.constant"() {value = 1.000000e+00 : f64} : () -> !mtf.tensor<f32>
// CHECK-NEXT: %[[CT_R:.*]] = "mtf.broadcast"(%[[ONE]]) : (!mtf.tensor<f32>) -> !mtf.tensor<b=4, h=2, f32>
// relu: the cotangent where the input is positive.
// CHECK-NEXT: %[[ZERO:.*]] = "mtf.constant"() {value = 0.000000e+00 : f64} : () -> !mtf.tensor<f32>
// CHECK-NEXT: %[[POS:.*]] = "mtf.gt"(%[[A]], %[[ZERO]]) : {{.*}} -> !mtf.tensor<b=4, h=2, i1>
// CHECK-NEXT: %[[CT_A:.*]] = "mtf.select"(%[[POS]], %[[CT_R]], %[[ZERO]])
// add: the bias was broadcast over b, so its cotangent is summed over b.
// CHECK-NEXT: %[[G_B:.*]] = "mtf.reduce_sum"(%[[CT_A]]) : (!mtf.tensor<b=4, h=2, f32>) -> !mtf.tensor<h=2, f32>
// einsum: the cotangent times the other operand, output = the operand's names.
// CHECK-NEXT: %[[G_X:.*]] = "mtf.einsum"(%[[CT_A]], %[[W]]) : {{.*}} -> !mtf.tensor<b=4, d=3, f32>
// CHECK-NEXT: %[[G_W:.*]] = "mtf.einsum"(%[[CT_A]], %[[X]]) : {{.*}} -> !mtf.tensor<d=3, h=2, f32>
// CHECK-NEXT: return %[[L]], %[[G_X]], %[[G_W]], %[[G_B]] : !mtf.tensor<f32>, !mtf.tensor<b=4, d=3, f32>, !mtf.tensor<d=3, h=2, f32>, !mtf.tensor<h=2, f32>

// Only what grad_w needs: no cotangent for x or bias, no value, dead forward ops erased.
// ONLYW-LABEL: func.func @f_grad(
// ONLYW-SAME: -> (!mtf.tensor<d=3, h=2, f32> {mtf.name = "grad_w"})
// ONLYW-NOT: "mtf.reduce_sum"(%{{.*}}) : (!mtf.tensor<b=4, h=2, f32>) -> !mtf.tensor<f32>
// ONLYW: "mtf.select"
// ONLYW-NOT: -> !mtf.tensor<h=2, f32>
// ONLYW-NOT: -> !mtf.tensor<b=4, d=3, f32>
// ONLYW: %[[G:.*]] = "mtf.einsum"
// ONLYW-NEXT: return %[[G]] : !mtf.tensor<d=3, h=2, f32>
func.func @f(%x: !mtf.tensor<b=4@x, d=3, f32> {mtf.name = "x"}, %w: !mtf.tensor<d=3, h=2, f32> {mtf.name = "w"},
             %bias: !mtf.tensor<h=2, f32> {mtf.name = "bias"}) -> (!mtf.tensor<f32> {mtf.name = "loss"})
    attributes {mtf.mesh = @mesh} {
  %0 = "mtf.einsum"(%x, %w) : (!mtf.tensor<b=4@x, d=3, f32>, !mtf.tensor<d=3, h=2, f32>) -> !mtf.tensor<b=4@x, h=2@y, f32>
  %1 = "mtf.add"(%0, %bias) : (!mtf.tensor<b=4@x, h=2@y, f32>, !mtf.tensor<h=2, f32>) -> !mtf.tensor<b=4, h=2, f32>
  %2 = "mtf.relu"(%1) : (!mtf.tensor<b=4, h=2, f32>) -> !mtf.tensor<b=4, h=2, f32>
  %3 = "mtf.reduce_sum"(%2) : (!mtf.tensor<b=4, h=2, f32>) -> !mtf.tensor<f32>
  return %3 : !mtf.tensor<f32>
}

// -----

// A value used twice gets the sum of its cotangents; collectives are erased (identities)
// and a partitioned program's partial markers dropped.
sdy.mesh @mesh = <["x"=2]>
// CHECK-LABEL: func.func @twice_grad(
// CHECK-SAME: %[[X:.*]]: !mtf.tensor<b=4@x, f32> {mtf.name = "w"}
// CHECK-NOT: mtf.all_reduce
// CHECK: %[[SQ:.*]] = "mtf.mul"(%[[X]], %[[X]]) : {{.*}} -> !mtf.tensor<b=4, f32>
// CHECK: %[[S:.*]] = "mtf.reduce_sum"(%[[SQ]]) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<f32>
// CHECK: %[[CT:.*]] = "mtf.broadcast"
// CHECK-NEXT: %[[C0:.*]] = "mtf.mul"(%[[CT]], %[[X]])
// CHECK-NEXT: %[[C1:.*]] = "mtf.mul"(%[[CT]], %[[X]])
// CHECK-NEXT: %[[G:.*]] = "mtf.add"(%[[C0]], %[[C1]]) : {{.*}} -> !mtf.tensor<b=4, f32>
// CHECK-NEXT: return %[[S]], %[[G]]
func.func @twice(%x: !mtf.tensor<b=4@x, f32> {mtf.name = "w"}) -> !mtf.tensor<f32> attributes {mtf.mesh = @mesh} {
  %0 = "mtf.mul"(%x, %x) : (!mtf.tensor<b=4@x, f32>, !mtf.tensor<b=4@x, f32>) -> !mtf.tensor<b=4@x, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=4@x, f32>) -> !mtf.tensor<f32, partial@x>
  %2 = "mtf.all_reduce"(%1) {reduction = "sum", axes = ["x"]} : (!mtf.tensor<f32, partial@x>) -> !mtf.tensor<f32>
  return %2 : !mtf.tensor<f32>
}

// -----

// div: a's cotangent ct/s is also the factor of s's, -(ct/s)(a/s): one division in the VJP
// and none of the quotient (XLA:CPU kept a divide of the quotient by a broadcast of s as a
// full-size broadcast, alive from the forward to the backward pass).
sdy.mesh @mesh = <["x"=2]>
// CHECK-LABEL: func.func @quotient_grad(
// CHECK-SAME: %[[A:.*]]: !mtf.tensor<b=4@x, j=3, f32> {mtf.name = "w"}, %[[S:.*]]: !mtf.tensor<b=4@x, f32> {mtf.name = "s"}
// CHECK: %[[Q:.*]] = "mtf.div"(%[[A]], %[[S]])
// CHECK: %[[CT:.*]] = "mtf.broadcast"
// CHECK-NEXT: %[[G_A:.*]] = "mtf.div"(%[[CT]], %[[S]])
// CHECK-NEXT: %[[P:.*]] = "mtf.mul"(%[[G_A]], %[[Q]])
// CHECK-NEXT: %[[N:.*]] = "mtf.neg"(%[[P]])
// CHECK-NEXT: %[[G_S:.*]] = "mtf.reduce_sum"(%[[N]]) : (!mtf.tensor<b=4, j=3, f32>) -> !mtf.tensor<b=4, f32>
// CHECK-NEXT: return %{{.*}}, %[[G_A]], %[[G_S]]
func.func @quotient(%a: !mtf.tensor<b=4@x, j=3, f32> {mtf.name = "w"}, %s: !mtf.tensor<b=4@x, f32> {mtf.name = "s"}) -> !mtf.tensor<f32> attributes {mtf.mesh = @mesh} {
  %0 = "mtf.div"(%a, %s) : (!mtf.tensor<b=4@x, j=3, f32>, !mtf.tensor<b=4@x, f32>) -> !mtf.tensor<b=4@x, j=3, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=4@x, j=3, f32>) -> !mtf.tensor<f32, partial@x>
  %2 = "mtf.all_reduce"(%1) {reduction = "sum", axes = ["x"]} : (!mtf.tensor<f32, partial@x>) -> !mtf.tensor<f32>
  return %2 : !mtf.tensor<f32>
}
