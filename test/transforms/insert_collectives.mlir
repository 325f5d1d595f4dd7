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
