// RUN: meshir-opt %s --split-input-file --mtf-insert-collectives | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding --mtf-insert-collectives | filecheck %s --check-prefix=PIPE

// Mesh-TensorFlow's FFN with batch:x, d_ff:y: the forward pass has exactly one all_reduce,
// over y (the contracted d_ff), and none over x.
// CHECK-LABEL: func.func @ffn_forward_one_all_reduce_over_y
// CHECK:      "mtf.einsum"
// CHECK-NEXT: "mtf.relu"
// CHECK-NEXT: %[[P:.*]] = "mtf.einsum"{{.*}} -> !mtf.tensor<batch=8@x, d_model=16@(), f32, partial@y>
// CHECK-NEXT: %[[R:.*]] = "mtf.all_reduce"(%[[P]]) {axes = ["y"], bytes_per_device = 128 : i64, reduction = "sum"}
// CHECK-NOT:  "mtf.all_
// CHECK:      return %[[R]]
// PIPE-LABEL: func.func @ffn_forward_one_all_reduce_over_y
// PIPE-COUNT-1: "mtf.all_reduce"
// PIPE-NOT: "mtf.all_
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @ffn_forward_one_all_reduce_over_y(%x: !mtf.tensor<batch=8@x, d_model=16@(), f32>, %w1: !mtf.tensor<d_model=16@(), d_ff=64@y, f32>, %w2: !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, d_model=16@(), f32> {
  %0 = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=8@x, d_model=16@(), f32>, !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
  %1 = "mtf.relu"(%0) : (!mtf.tensor<batch=8@x, d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
  %2 = "mtf.einsum"(%1, %w2) : (!mtf.tensor<batch=8@x, d_ff=64@y, f32>, !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, d_model=16@(), f32>
  return %2 : !mtf.tensor<batch=8@x, d_model=16@(), f32>
}

// -----

// Two pending sums add locally; one all_reduce before the non-linear tanh.
// CHECK-LABEL: func.func @lazy_add_of_pending_sums
// PIPE-LABEL: func.func @lazy_add_of_pending_sums
// CHECK:      "mtf.einsum"{{.*}}partial@y>
// CHECK-NEXT: "mtf.einsum"{{.*}}partial@y>
// CHECK-NEXT: "mtf.add"{{.*}} -> !mtf.tensor<b=8@(), m=4@(), f32, partial@y>
// CHECK-NEXT: "mtf.all_reduce"{{.*}}axes = ["y"]
// CHECK-NEXT: "mtf.tanh"
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @lazy_add_of_pending_sums(%a: !mtf.tensor<b=8@(), f=8@y, f32>, %c: !mtf.tensor<b=8@(), f=8@y, f32>, %w: !mtf.tensor<f=8@y, m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@(), f32> {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8@(), f=8@y, f32>, !mtf.tensor<f=8@y, m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@(), f32>
  %1 = "mtf.einsum"(%c, %w) : (!mtf.tensor<b=8@(), f=8@y, f32>, !mtf.tensor<f=8@y, m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@(), f32>
  %2 = "mtf.add"(%0, %1) : (!mtf.tensor<b=8@(), m=4@(), f32>, !mtf.tensor<b=8@(), m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@(), f32>
  %3 = "mtf.tanh"(%2) : (!mtf.tensor<b=8@(), m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@(), f32>
  return %3 : !mtf.tensor<b=8@(), m=4@(), f32>
}

// -----

// A pending sum that a reshard wants split over the same axis: one reduce_scatter.
// CHECK-LABEL: func.func @pending_sum_to_split_is_reduce_scatter
// CHECK:      "mtf.einsum"{{.*}}partial@y>
// CHECK-NEXT: "mtf.reduce_scatter"{{.*}}{axes = ["y"], bytes_per_device = 64 : i64, dim = "m", reduction = "sum"}{{.*}} -> !mtf.tensor<b=8@(), m=4@y, f32>
// CHECK-NOT:  "mtf.shard"
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pending_sum_to_split_is_reduce_scatter(%a: !mtf.tensor<b=8@(), f=8@y, f32>, %w: !mtf.tensor<f=8@y, m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@y, f32> {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8@(), f=8@y, f32>, !mtf.tensor<f=8@y, m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@(), f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8@(), m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@y, f32>
  return %1 : !mtf.tensor<b=8@(), m=4@y, f32>
}

// -----

// Moving a split from one dim to another is one all_to_all; slicing along a split dim
// gathers it, slices, and splits the result again (all_slice moves nothing).
// CHECK-LABEL: func.func @all_to_all_then_slice_along_split_dim
// CHECK:      "mtf.all_to_all"{{.*}}axes = ["x"]{{.*}}dst_dim = "m", src_dim = "b"
// CHECK-NEXT: "mtf.all_gather"{{.*}}axes = ["x"]{{.*}}dim = "m"
// CHECK-NEXT: "mtf.slice"
// CHECK-NEXT: "mtf.all_slice"{{.*}}axes = ["x"], bytes_per_device = 0 : i64, dim = "m"
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_to_all_then_slice_along_split_dim(%a: !mtf.tensor<b=8@x, m=16@(), f32>) -> !mtf.tensor<b=8@(), m=8@x, f32> {
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8@x, m=16@(), f32>) -> !mtf.tensor<b=8@(), m=16@x, f32>
  %1 = "mtf.slice"(%0) {dim = "m", start = 4} : (!mtf.tensor<b=8@(), m=16@x, f32>) -> !mtf.tensor<b=8@(), m=8@x, f32>
  return %1 : !mtf.tensor<b=8@(), m=8@x, f32>
}

// -----

// Sums pending over different axes join: each operand takes an as_partial over the axes
// it lacks (no traffic), and one all_reduce over both axes completes the total; a
// replicated scalar joins too. (One all_reduce where completing each sum took two.)
// CHECK-LABEL: func.func @pending_sums_over_different_axes_join
// CHECK:      %[[A:.*]] = "mtf.reduce_sum"{{.*}} -> !mtf.tensor<f32, partial@x>
// CHECK-NEXT: %[[B:.*]] = "mtf.reduce_sum"{{.*}} -> !mtf.tensor<f32, partial@y>
// CHECK-NEXT: %[[JA:.*]] = "mtf.as_partial"(%[[A]]) {axes = ["y"], bytes_per_device = 0 : i64} : (!mtf.tensor<f32, partial@x>) -> !mtf.tensor<f32, partial@(x,y)>
// CHECK-NEXT: %[[JB:.*]] = "mtf.as_partial"(%[[B]]) {axes = ["x"], bytes_per_device = 0 : i64} : (!mtf.tensor<f32, partial@y>) -> !mtf.tensor<f32, partial@(y,x)>
// CHECK-NEXT: %[[S:.*]] = "mtf.add"(%[[JA]], %[[JB]]) {{.*}} -> !mtf.tensor<f32, partial@(x,y)>
// CHECK-NEXT: %[[JC:.*]] = "mtf.as_partial"(%arg2) {axes = ["x", "y"], bytes_per_device = 0 : i64}
// CHECK-NEXT: %[[T:.*]] = "mtf.sub"(%[[S]], %[[JC]]) {{.*}} -> !mtf.tensor<f32, partial@(x,y)>
// CHECK-NEXT: "mtf.all_reduce"(%[[T]]) {axes = ["x", "y"], bytes_per_device = 7 : i64, reduction = "sum"}
// CHECK-NOT:  "mtf.all_
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pending_sums_over_different_axes_join(%u: !mtf.tensor<a=8@x, f32>, %v: !mtf.tensor<b=6@y, f32>, %c: !mtf.tensor<f32>) -> !mtf.tensor<f32> {
  %0 = "mtf.reduce_sum"(%u) : (!mtf.tensor<a=8@x, f32>) -> !mtf.tensor<f32>
  %1 = "mtf.reduce_sum"(%v) : (!mtf.tensor<b=6@y, f32>) -> !mtf.tensor<f32>
  %2 = "mtf.add"(%0, %1) : (!mtf.tensor<f32>, !mtf.tensor<f32>) -> !mtf.tensor<f32>
  %3 = "mtf.sub"(%2, %c) : (!mtf.tensor<f32>, !mtf.tensor<f32>) -> !mtf.tensor<f32>
  %4 = "mtf.sqrt"(%3) : (!mtf.tensor<f32>) -> !mtf.tensor<f32>
  return %4 : !mtf.tensor<f32>
}

// -----

// A replicated operand with dims is not joined (zeroing it would cost a pass over it and
// save nothing): the pending sum is completed before the add, as before.
// CHECK-LABEL: func.func @pending_sum_plus_replicated_tensor_completes_first
// CHECK:      "mtf.einsum"{{.*}}partial@y>
// CHECK-NEXT: "mtf.all_reduce"{{.*}}axes = ["y"]
// CHECK-NEXT: "mtf.add"{{.*}} -> !mtf.tensor<b=8@(), m=4@(), f32>
// CHECK-NOT:  "mtf.as_partial"
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pending_sum_plus_replicated_tensor_completes_first(%a: !mtf.tensor<b=8@(), f=8@y, f32>, %w: !mtf.tensor<f=8@y, m=4@(), f32>, %r: !mtf.tensor<b=8@(), m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@(), f32> {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8@(), f=8@y, f32>, !mtf.tensor<f=8@y, m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@(), f32>
  %1 = "mtf.add"(%0, %r) : (!mtf.tensor<b=8@(), m=4@(), f32>, !mtf.tensor<b=8@(), m=4@(), f32>) -> !mtf.tensor<b=8@(), m=4@(), f32>
  return %1 : !mtf.tensor<b=8@(), m=4@(), f32>
}

// -----

// Tensors pending over different axes join too when both are pending: one all_reduce over
// (x,z) instead of one over x and one over z; the dim split over y stays split.
// CHECK-LABEL: func.func @pending_tensors_join
// CHECK:      "mtf.as_partial"({{.*}}) {axes = ["z"], {{.*}} -> !mtf.tensor<m=4@y, f32, partial@(x,z)>
// CHECK-NEXT: "mtf.as_partial"({{.*}}) {axes = ["x"], {{.*}} -> !mtf.tensor<m=4@y, f32, partial@(z,x)>
// CHECK-NEXT: "mtf.add"
// CHECK-NEXT: "mtf.all_reduce"({{.*}}) {axes = ["x", "z"], bytes_per_device = 12 : i64, reduction = "sum"}
// CHECK-NOT:  "mtf.all_
sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
func.func @pending_tensors_join(%a: !mtf.tensor<b=8@x, m=4@y, f32>, %c: !mtf.tensor<b=8@z, m=4@y, f32>) -> !mtf.tensor<m=4@y, f32> {
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<b=8@x, m=4@y, f32>) -> !mtf.tensor<m=4@y, f32>
  %1 = "mtf.reduce_sum"(%c) : (!mtf.tensor<b=8@z, m=4@y, f32>) -> !mtf.tensor<m=4@y, f32>
  %2 = "mtf.add"(%0, %1) : (!mtf.tensor<m=4@y, f32>, !mtf.tensor<m=4@y, f32>) -> !mtf.tensor<m=4@y, f32>
  %3 = "mtf.exp"(%2) : (!mtf.tensor<m=4@y, f32>) -> !mtf.tensor<m=4@y, f32>
  return %3 : !mtf.tensor<m=4@y, f32>
}
