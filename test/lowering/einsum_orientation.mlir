// mtf.einsum lowers its last contraction so the dot_general's result is already in the
// result's dim order when some orientation gives it: batch dims in the result's order, the
// operands swapped when the result lists the second operand's names first. No transpose
// follows, which XLA:CPU would fold into the dot by swapping its operands, leaving a dot
// the fast matmul library does not take (a weight gradient became a plain `dot`).
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A weight gradient: dy[b, l, f] . x[b, l, m] -> w[m, f] contracts x first.
// CHECK-LABEL: func.func public @weight_gradient_swaps_operands(
// CHECK: sdy.manual_computation{{.*}} (%[[DY:arg[0-9]+]]: tensor<8x8x4xf32>, %[[X:arg[0-9]+]]: tensor<8x8x16xf32>)
// CHECK-NOT: stablehlo.transpose
// CHECK: stablehlo.dot_general %[[X]], %[[DY]], contracting_dims = [0, 1] x [0, 1] : (tensor<8x8x16xf32>, tensor<8x8x4xf32>) -> tensor<16x4xf32>
// CHECK-NOT: stablehlo.transpose
// CHECK: sdy.return
func.func @weight_gradient_swaps_operands(%dy: !mtf.tensor<b=8@(), l=8@(), f=8@y, f32>, %x: !mtf.tensor<b=8@(), l=8@(), m=16@(), f32>) -> !mtf.tensor<m=16@(), f=8@y, f32> {
  %0 = "mtf.einsum"(%dy, %x) : (!mtf.tensor<b=8@(), l=8@(), f=8@y, f32>, !mtf.tensor<b=8@(), l=8@(), m=16@(), f32>) -> !mtf.tensor<m=16@(), f=8@y, f32>
  return %0 : !mtf.tensor<m=16@(), f=8@y, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Attention logits: q[h, b, l, k] . k[b, j, h, k] -> [b, h, l, j] batches (b, h) in the
// result's order (not q's), the operands as given.
// CHECK-LABEL: func.func public @batch_dims_in_result_order(
// CHECK: sdy.manual_computation{{.*}} (%[[Q:arg[0-9]+]]: tensor<2x2x8x4xf32>, %[[K:arg[0-9]+]]: tensor<2x8x2x4xf32>)
// CHECK-NOT: stablehlo.transpose
// CHECK: stablehlo.dot_general %[[Q]], %[[K]], batching_dims = [1, 0] x [0, 2], contracting_dims = [3] x [3] : (tensor<2x2x8x4xf32>, tensor<2x8x2x4xf32>) -> tensor<2x2x8x8xf32>
// CHECK-NOT: stablehlo.transpose
// CHECK: sdy.return
func.func @batch_dims_in_result_order(%q: !mtf.tensor<h=4@y, b=8@x, l=8@(), k=4@(), f32>, %k: !mtf.tensor<b=8@x, j=8@(), h=4@y, k=4@(), f32>) -> !mtf.tensor<b=8@x, h=4@y, l=8@(), j=8@(), f32> {
  %0 = "mtf.einsum"(%q, %k) : (!mtf.tensor<h=4@y, b=8@x, l=8@(), k=4@(), f32>, !mtf.tensor<b=8@x, j=8@(), h=4@y, k=4@(), f32>) -> !mtf.tensor<b=8@x, h=4@y, l=8@(), j=8@(), f32>
  return %0 : !mtf.tensor<b=8@x, h=4@y, l=8@(), j=8@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Batch dims that the result interleaves with free dims: no orientation gives the result's
// order, so the dot keeps the operands as given and a transpose follows.
// CHECK-LABEL: func.func public @interleaved_result_keeps_the_transpose(
// CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, batching_dims = [0] x [0], contracting_dims = [2] x [1]
// CHECK: stablehlo.transpose
func.func @interleaved_result_keeps_the_transpose(%a: !mtf.tensor<b=8@x, i=4@(), k=4@(), f32>, %c: !mtf.tensor<b=8@x, k=4@(), j=4@(), f32>) -> !mtf.tensor<i=4@(), b=8@x, j=4@(), f32> {
  %0 = "mtf.einsum"(%a, %c) : (!mtf.tensor<b=8@x, i=4@(), k=4@(), f32>, !mtf.tensor<b=8@x, k=4@(), j=4@(), f32>) -> !mtf.tensor<i=4@(), b=8@x, j=4@(), f32>
  return %0 : !mtf.tensor<i=4@(), b=8@x, j=4@(), f32>
}
