// Hand-written collectives keep the layouts written on them (they change layouts on
// purpose and never get reshards); the dims they do not change relay layouts like an
// identity op, so free dims around them get layouts from arguments, users and rules.
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2, "z"=2]>

// all_reduce clears the pending sum over y; b's layout crosses it, and d (free on both
// sides) gets z backward from the bias it is added to.
// CHECK-LABEL: func.func @all_reduce_relays_unchanged_dims
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@z, f32, partial@y>, %arg1: !mtf.tensor<d=16@z, f32>) -> !mtf.tensor<b=8@x, d=16@z, f32>
// CHECK-NEXT: %0 = "mtf.all_reduce"(%arg0) {axes = ["y"], reduction = "sum"} : (!mtf.tensor<b=8@x, d=16@z, f32, partial@y>) -> !mtf.tensor<b=8@x, d=16@z, f32>
// CHECK-NEXT: %1 = "mtf.add"(%0, %arg1) : (!mtf.tensor<b=8@x, d=16@z, f32>, !mtf.tensor<d=16@z, f32>) -> !mtf.tensor<b=8@x, d=16@z, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@x, d=16@z, f32>
func.func @all_reduce_relays_unchanged_dims(%p: !mtf.tensor<b=8@x, d=16, f32, partial@y>, %bias: !mtf.tensor<d=16@z, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.all_reduce"(%p) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<b=8@x, d=16, f32, partial@y>) -> !mtf.tensor<b=8@x, d=16, f32>
  %1 = "mtf.add"(%0, %bias) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16@z, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %1 : !mtf.tensor<b=8, d=16, f32>
}

// all_gather's written b@x -> b@() is kept: the free user after it stays replicated on b
// (x does not leak past the gather), while d's y crosses it both ways.
// CHECK-LABEL: func.func @all_gather_keeps_written_layouts
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@(), d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.all_gather"(%arg0) {axes = ["x"], dim = "b"} : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@(), d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.exp"(%0) : (!mtf.tensor<b=8@(), d=16@y, f32>) -> !mtf.tensor<b=8@(), d=16@y, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@(), d=16@y, f32>
func.func @all_gather_keeps_written_layouts(%a: !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16@y, f32> {
  %0 = "mtf.all_gather"(%a) {dim = "b", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@(), d=16, f32>
  %1 = "mtf.exp"(%0) : (!mtf.tensor<b=8@(), d=16, f32>) -> !mtf.tensor<b=8, d=16@y, f32>
  return %1 : !mtf.tensor<b=8, d=16@y, f32>
}

// A gather of the minor axis of a two-axis split, with a rule on b that the written layouts
// override on both sides; d, free on both sides, stays replicated (nothing constrains it).
// CHECK-LABEL: func.func @all_gather_of_minor_axis_overrides_rule
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(x,y), d=16@(), f32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.all_gather"(%arg0) {axes = ["y"], dim = "b"} : (!mtf.tensor<b=8@(x,y), d=16@(), f32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
func.func @all_gather_of_minor_axis_overrides_rule(%a: !mtf.tensor<b=8@(x,y), d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32> attributes {mtf.layout_rules = {b = ["z"]}} {
  %0 = "mtf.all_gather"(%a) {dim = "b", axes = ["y"]} : (!mtf.tensor<b=8@(x,y), d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  return %0 : !mtf.tensor<b=8@x, d=16, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2, "z"=2]>

// reduce_scatter turns the pending sum over y into d@y; b's x crosses it forward.
// CHECK-LABEL: func.func @reduce_scatter_relays_other_dims
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@(), f32, partial@y>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.reduce_scatter"(%arg0) {axes = ["y"], dim = "d", reduction = "sum"} : (!mtf.tensor<b=8@x, d=16@(), f32, partial@y>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.neg"(%0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
func.func @reduce_scatter_relays_other_dims(%p: !mtf.tensor<b=8@x, d=16@(), f32, partial@y>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.reduce_scatter"(%p) {reduction = "sum", dim = "d", axes = ["y"]} : (!mtf.tensor<b=8@x, d=16@(), f32, partial@y>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  %1 = "mtf.neg"(%0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %1 : !mtf.tensor<b=8, d=16, f32>
}

// all_slice splits b further over z (no traffic); d's layout comes backward from a later
// shard through the slice to the free operand and the argument.
// CHECK-LABEL: func.func @all_slice_relays_other_dims_backward
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@(x,z), d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.all_slice"(%0) {axes = ["z"], dim = "b"} : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@(x,z), d=16@y, f32>
// CHECK-NEXT: %2 = "mtf.shard"(%1) : (!mtf.tensor<b=8@(x,z), d=16@y, f32>) -> !mtf.tensor<b=8@(x,z), d=16@y, f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@(x,z), d=16@y, f32>
func.func @all_slice_relays_other_dims_backward(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@(x,z), d=16@y, f32> {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %1 = "mtf.all_slice"(%0) {dim = "b", axes = ["z"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@(x,z), d=16, f32>
  %2 = "mtf.shard"(%1) : (!mtf.tensor<b=8@(x,z), d=16, f32>) -> !mtf.tensor<b=8@(x,z), d=16@y, f32>
  return %2 : !mtf.tensor<b=8@(x,z), d=16@y, f32>
}

// all_to_all moves x from b to d; the third dim s gets its rule on both sides.
// CHECK-LABEL: func.func @all_to_all_with_free_third_dim
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@(), s=4@y, f32>) -> !mtf.tensor<b=8@(), d=16@x, s=4@y, f32>
// CHECK-NEXT: %0 = "mtf.all_to_all"(%arg0) {axes = ["x"], dst_dim = "d", src_dim = "b"} : (!mtf.tensor<b=8@x, d=16@(), s=4@y, f32>) -> !mtf.tensor<b=8@(), d=16@x, s=4@y, f32>
func.func @all_to_all_with_free_third_dim(%a: !mtf.tensor<b=8@x, d=16@(), s=4, f32>) -> !mtf.tensor<b=8@(), d=16@x, s=4, f32> attributes {mtf.layout_rules = {s = ["y"]}} {
  %0 = "mtf.all_to_all"(%a) {src_dim = "b", dst_dim = "d", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16@(), s=4, f32>) -> !mtf.tensor<b=8@(), d=16@x, s=4, f32>
  return %0 : !mtf.tensor<b=8@(), d=16@x, s=4, f32>
}

// collective_permute re-maps b from y to z (same shard shape); d gets x on both sides
// from the later shard.
// CHECK-LABEL: func.func @collective_permute_with_free_dim
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@z, d=16@x, f32>
// CHECK-NEXT: %0 = "mtf.collective_permute"(%arg0) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@z, d=16@x, f32>
// CHECK-NEXT: %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8@z, d=16@x, f32>) -> !mtf.tensor<b=8@z, d=16@x, f32>
func.func @collective_permute_with_free_dim(%a: !mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8@z, d=16@x, f32> {
  %0 = "mtf.collective_permute"(%a) : (!mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8@z, d=16, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8@z, d=16, f32>) -> !mtf.tensor<b=8@z, d=16@x, f32>
  return %1 : !mtf.tensor<b=8@z, d=16@x, f32>
}

// A permute changes only the dims written with another layout on each side (b: y to z);
// d's rule wants y, which the permute spends, so d is replicated across it and resharded
// after (it was refused before: "keeps each device's shard shape").
// CHECK-LABEL: func.func @collective_permute_under_a_rule_on_its_axes
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, d=16@(), f32>) -> !mtf.tensor<b=8@z, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.collective_permute"(%arg0) : (!mtf.tensor<b=8@y, d=16@(), f32>) -> !mtf.tensor<b=8@z, d=16@(), f32>
// CHECK-NEXT: %1 = "mtf.shard"(%0) {reshard = true} : (!mtf.tensor<b=8@z, d=16@(), f32>) -> !mtf.tensor<b=8@z, d=16@y, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@z, d=16@y, f32>
func.func @collective_permute_under_a_rule_on_its_axes(%a: !mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8@z, d=16, f32> attributes {mtf.layout_rules = {d = ["y"]}} {
  %0 = "mtf.collective_permute"(%a) : (!mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8@z, d=16, f32>
  return %0 : !mtf.tensor<b=8@z, d=16, f32>
}

// -----

// Collectives between two einsums of a hand-partitioned FFN: all written layouts stay,
// the free weight and output get theirs through the collectives.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @hand_partitioned_ffn
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, f=64@y, f32>, %arg1: !mtf.tensor<f=64@y, m=16@(), f32>) -> !mtf.tensor<b=8@x, m=16@(), f32>
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<b=8@x, f=64@y, f32>, !mtf.tensor<f=64@y, m=16@(), f32>) -> !mtf.tensor<b=8@x, m=16@(), f32, partial@y>
// CHECK-NEXT: %1 = "mtf.all_reduce"(%0) {axes = ["y"], reduction = "sum"} : (!mtf.tensor<b=8@x, m=16@(), f32, partial@y>) -> !mtf.tensor<b=8@x, m=16@(), f32>
// CHECK-NEXT: %2 = "mtf.relu"(%1) : (!mtf.tensor<b=8@x, m=16@(), f32>) -> !mtf.tensor<b=8@x, m=16@(), f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@x, m=16@(), f32>
func.func @hand_partitioned_ffn(%h: !mtf.tensor<b=8@x, f=64@y, f32>, %w: !mtf.tensor<f=64, m=16, f32>) -> !mtf.tensor<b=8, m=16, f32> {
  %0 = "mtf.einsum"(%h, %w) : (!mtf.tensor<b=8@x, f=64@y, f32>, !mtf.tensor<f=64, m=16, f32>) -> !mtf.tensor<b=8@x, m=16, f32, partial@y>
  %1 = "mtf.all_reduce"(%0) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<b=8@x, m=16, f32, partial@y>) -> !mtf.tensor<b=8@x, m=16, f32>
  %2 = "mtf.relu"(%1) : (!mtf.tensor<b=8@x, m=16, f32>) -> !mtf.tensor<b=8, m=16, f32>
  return %2 : !mtf.tensor<b=8, m=16, f32>
}
