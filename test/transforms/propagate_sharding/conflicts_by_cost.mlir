// Two layouts of one priority meet: the outcome whose collectives cost less wins
// (transforms/propagation/conflicts.py), by the cost model of the pass options (bytes per
// device unless objective=time). A higher priority still wins whatever it costs.
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding --mtf-insert-collectives | filecheck %s --check-prefix=BYTES
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding="objective=time links=x:1e-3:1e8" | filecheck %s --check-prefix=TIME

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Each argument is split on the dim the other leaves replicated (Shardy's "fake conflict"):
// computing in b@x, m@y slices each operand where the other is split and sends nothing; the
// first argument's layout everywhere would all-gather b (192 bytes).
// CHECK-LABEL: func.func @each_dim_from_its_split
// CHECK-SAME: -> !mtf.tensor<b=8@x, m=16@y, f32>
// CHECK: "mtf.add"({{.*}}) : (!mtf.tensor<b=8@x, m=16@y, f32>, !mtf.tensor<b=8@x, m=16@y, f32>)
// BYTES-LABEL: func.func @each_dim_from_its_split
// BYTES-NOT: bytes_per_device = {{[1-9]}}
// BYTES: return
func.func @each_dim_from_its_split(%a: !mtf.tensor<b=8@(), m=16@y, f32>, %c: !mtf.tensor<b=8@x, m=16@(), f32>) -> !mtf.tensor<b=8, m=16, f32> {
  %0 = "mtf.add"(%a, %c) : (!mtf.tensor<b=8@(), m=16@y, f32>, !mtf.tensor<b=8@x, m=16@(), f32>) -> !mtf.tensor<b=8, m=16, f32>
  return %0 : !mtf.tensor<b=8, m=16, f32>
}

// The larger tensor's c@() would reach the sum and leave c replicated: its pending sum over x
// is then all-reduced whole (48 bytes) and %v gathered (16). Taking %v's c@y instead slices
// %w before the reduction (free) and all-reduces half the sum (24 bytes).
// CHECK-LABEL: func.func @slice_before_a_sum
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<d=32@x, c=8@(), f32>) -> !mtf.tensor<d=32@x, c=8@y, f32>
// CHECK-NEXT: %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<d=32@x, c=8@y, f32>) -> !mtf.tensor<c=8@y, f32>
// BYTES-LABEL: func.func @slice_before_a_sum
// BYTES: "mtf.all_slice"{{.*}}bytes_per_device = 0
// BYTES: "mtf.all_reduce"{{.*}}bytes_per_device = 24
// BYTES-NOT: bytes_per_device
// BYTES: return
func.func @slice_before_a_sum(%w: !mtf.tensor<d=32@x, c=8@(), f32>, %v: !mtf.tensor<c=8@y, f32>) -> !mtf.tensor<c=8, f32> {
  %0 = "mtf.reduce_sum"(%w) : (!mtf.tensor<d=32@x, c=8@(), f32>) -> !mtf.tensor<c=8, f32>
  %1 = "mtf.mul"(%v, %0) : (!mtf.tensor<c=8@y, f32>, !mtf.tensor<c=8, f32>) -> !mtf.tensor<c=8, f32>
  %2 = "mtf.exp"(%1) : (!mtf.tensor<c=8, f32>) -> !mtf.tensor<c=8, f32>
  return %2 : !mtf.tensor<c=8, f32>
}

// Two names of one einsum on one axis (one axis per op): the cheaper of the two gathers is
// made, %a's i (768 bytes) rather than %c's j (1536 bytes).
// CHECK-LABEL: func.func @one_axis_per_op_cheaper_gather
// CHECK-SAME: -> !mtf.tensor<i=64@(), j=32@x, l=4@(), f32>
// BYTES-LABEL: func.func @one_axis_per_op_cheaper_gather
// BYTES: "mtf.all_gather"(%arg0) {axes = ["x"], bytes_per_device = 768 : i64, dim = "i"}
func.func @one_axis_per_op_cheaper_gather(%a: !mtf.tensor<i=64@x, k=4, f32>, %c: !mtf.tensor<k=4, j=32@x, l=4, f32>) -> !mtf.tensor<i=64, j=32, l=4, f32> {
  %0 = "mtf.einsum"(%a, %c) : (!mtf.tensor<i=64@x, k=4, f32>, !mtf.tensor<k=4, j=32@x, l=4, f32>) -> !mtf.tensor<i=64, j=32, l=4, f32>
  return %0 : !mtf.tensor<i=64, j=32, l=4, f32>
}

// A constraint beats written layouts even where keeping theirs and resharding once after
// the add would cost less: cost only decides within one priority.
// CHECK-LABEL: func.func @constraint_beats_cheaper
// CHECK: "mtf.add"({{.*}}) : (!mtf.tensor<b=8@y, f32>, !mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@y, f32>
func.func @constraint_beats_cheaper(%a: !mtf.tensor<b=8@x, f32>, %c: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, f32> {
  %0 = "mtf.add"(%a, %c) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@y, f32>
  return %1 : !mtf.tensor<b=8@y, f32>
}

// With x slow (objective=time: 1 ms per step and 100 MB/s on x), the add computes in
// b@(), m@x, with fewer steps over x; by bytes it computes in %a's layout, b@x, m@().
// CHECK-LABEL: func.func @time_objective
// CHECK: "mtf.add"({{.*}}) -> !mtf.tensor<b=16@x, m=8@(), f32>
// TIME-LABEL: func.func @time_objective
// TIME: "mtf.add"({{.*}}) -> !mtf.tensor<b=16@(), m=8@x, f32>
func.func @time_objective(%a: !mtf.tensor<b=16@x, m=8@(), f32>, %c: !mtf.tensor<b=16@y, m=8@x, f32>) -> !mtf.tensor<b=16, m=8, f32> {
  %0 = "mtf.add"(%a, %c) : (!mtf.tensor<b=16@x, m=8@(), f32>, !mtf.tensor<b=16@y, m=8@x, f32>) -> !mtf.tensor<b=16, m=8, f32>
  %1 = "mtf.exp"(%0) : (!mtf.tensor<b=16, m=8, f32>) -> !mtf.tensor<b=16, m=8, f32>
  return %1 : !mtf.tensor<b=16, m=8, f32>
}
