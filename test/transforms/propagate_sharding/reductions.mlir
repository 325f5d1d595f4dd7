// Reductions keep the layouts of the names they keep (both ways); a reduced name, split or
// not, is absent from the result, and its axes do not leak onto the kept names.
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @kept_names_keep_their_layouts
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, s=4@(), d=16@y, f32>) -> (!mtf.tensor<b=8@x, f32>, !mtf.tensor<d=16@y, b=8@x, f32>, !mtf.tensor<s=4@(), f32>, !mtf.tensor<f32>)
// CHECK-NEXT: %0 = "mtf.reduce_sum"(%arg0) : (!mtf.tensor<b=8@x, s=4@(), d=16@y, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %1 = "mtf.reduce_max"(%arg0) : (!mtf.tensor<b=8@x, s=4@(), d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: %2 = "mtf.reduce_min"(%arg0) : (!mtf.tensor<b=8@x, s=4@(), d=16@y, f32>) -> !mtf.tensor<s=4@(), f32>
// CHECK-NEXT: %3 = "mtf.reduce_sum"(%arg0) : (!mtf.tensor<b=8@x, s=4@(), d=16@y, f32>) -> !mtf.tensor<f32>
// CHECK-NEXT: return %0, %1, %2, %3 : !mtf.tensor<b=8@x, f32>, !mtf.tensor<d=16@y, b=8@x, f32>, !mtf.tensor<s=4@(), f32>, !mtf.tensor<f32>
func.func @kept_names_keep_their_layouts(%a: !mtf.tensor<b=8@x, s=4, d=16@y, f32>) -> (!mtf.tensor<b=8, f32>, !mtf.tensor<d=16, b=8, f32>, !mtf.tensor<s=4, f32>, !mtf.tensor<f32>) {
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<b=8@x, s=4, d=16@y, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.reduce_max"(%a) : (!mtf.tensor<b=8@x, s=4, d=16@y, f32>) -> !mtf.tensor<d=16, b=8, f32>
  %2 = "mtf.reduce_min"(%a) : (!mtf.tensor<b=8@x, s=4, d=16@y, f32>) -> !mtf.tensor<s=4, f32>
  %3 = "mtf.reduce_sum"(%a) : (!mtf.tensor<b=8@x, s=4, d=16@y, f32>) -> !mtf.tensor<f32>
  return %0, %1, %2, %3 : !mtf.tensor<b=8, f32>, !mtf.tensor<d=16, b=8, f32>, !mtf.tensor<s=4, f32>, !mtf.tensor<f32>
}

// The reduced split name d@(x,y) leaves no trace in the result: the kept b is free and
// nothing else constrains it, so it is replicated (x and y are not passed on to it).
// CHECK-LABEL: func.func @reduced_split_name_is_absent_from_result
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), d=16@(x,y), f32>) -> !mtf.tensor<b=8@(), f32>
// CHECK-NEXT: %0 = "mtf.reduce_max"(%arg0) : (!mtf.tensor<b=8@(), d=16@(x,y), f32>) -> !mtf.tensor<b=8@(), f32>
// CHECK-NEXT: return %0 : !mtf.tensor<b=8@(), f32>
func.func @reduced_split_name_is_absent_from_result(%a: !mtf.tensor<b=8, d=16@(x,y), f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.reduce_max"(%a) : (!mtf.tensor<b=8, d=16@(x,y), f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Backward: the result's layout reaches the operand's kept name; the reduced name of the
// free operand has no constraint and is replicated.
// CHECK-LABEL: func.func @kept_name_layout_flows_backward
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(x,y), d=16@(), f32>) -> !mtf.tensor<b=8@(x,y), f32>
// CHECK-NEXT: %0 = "mtf.reduce_sum"(%arg0) : (!mtf.tensor<b=8@(x,y), d=16@(), f32>) -> !mtf.tensor<b=8@(x,y), f32>
// CHECK-NEXT: return %0 : !mtf.tensor<b=8@(x,y), f32>
func.func @kept_name_layout_flows_backward(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@(x,y), f32> {
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@(x,y), f32>
  return %0 : !mtf.tensor<b=8@(x,y), f32>
}

// Backward through a chain from a later mtf.shard, then forward to the second reduction.
// CHECK-LABEL: func.func @reductions_between_a_shard_and_an_argument
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, s=4@(), d=16@x, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: %0 = "mtf.reduce_max"(%arg0) : (!mtf.tensor<b=8@y, s=4@(), d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: %2 = "mtf.reduce_sum"(%1) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@y, f32>
func.func @reductions_between_a_shard_and_an_argument(%a: !mtf.tensor<b=8, s=4, d=16, f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.reduce_max"(%a) : (!mtf.tensor<b=8, s=4, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
  %2 = "mtf.reduce_sum"(%1) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8, f32>
  return %2 : !mtf.tensor<b=8, f32>
}

// -----

// Rules lay out reduced names on the operand and kept names everywhere.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @rules_on_reduced_and_kept_names
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.reduce_sum"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: return %0 : !mtf.tensor<b=8@x, f32>
func.func @rules_on_reduced_and_kept_names(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, f32> attributes {mtf.layout_rules = {b = ["x"], d = ["y"]}} {
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}

// A layer-norm-like mean: the reduced result broadcasts back against the input by name,
// so the statistics keep the batch layout and the subtraction needs no reshard.
// CHECK-LABEL: func.func @reduce_then_broadcast_back
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.reduce_sum"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %1 = "mtf.sub"(%arg0, %0) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@x, d=16@y, f32>
func.func @reduce_then_broadcast_back(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32> attributes {mtf.layout_rules = {b = ["x"], d = ["y"]}} {
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.sub"(%a, %0) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %1 : !mtf.tensor<b=8, d=16, f32>
}

// -----

// The reduced name counts for the one-axis-per-op rule: d@x from an mtf.shard (strongest)
// beats the rule b:x inside the reduction, which computes b replicated; the result takes its
// rule after the op (the pending sum over x then becomes a reduce_scatter). The constrained
// operand is not resharded.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @reduced_name_keeps_its_axis_over_a_rule
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), d=16@x, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) : (!mtf.tensor<b=8@(), d=16@x, f32>) -> !mtf.tensor<b=8@(), d=16@x, f32>
// CHECK-NEXT: %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=8@(), d=16@x, f32>) -> !mtf.tensor<b=8@(), f32>
// CHECK-NEXT: %2 = "mtf.shard"(%1) {reshard = true} : (!mtf.tensor<b=8@(), f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@x, f32>
func.func @reduced_name_keeps_its_axis_over_a_rule(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, f32> attributes {mtf.layout_rules = {b = ["x"]}} {
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16@x, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=8, d=16@x, f32>) -> !mtf.tensor<b=8, f32>
  return %1 : !mtf.tensor<b=8, f32>
}

// The same with the reduced name written on the argument (an annotation, still stronger
// than the rule).
// CHECK-LABEL: func.func @reduced_annotated_name_keeps_its_axis_over_a_rule
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), d=16@x, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.reduce_max"(%arg0) : (!mtf.tensor<b=8@(), d=16@x, f32>) -> !mtf.tensor<b=8@(), f32>
// CHECK-NEXT: %1 = "mtf.shard"(%0) {reshard = true} : (!mtf.tensor<b=8@(), f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@x, f32>
func.func @reduced_annotated_name_keeps_its_axis_over_a_rule(%a: !mtf.tensor<b=8, d=16@x, f32>) -> !mtf.tensor<b=8, f32> attributes {mtf.layout_rules = {b = ["x"]}} {
  %0 = "mtf.reduce_max"(%a) : (!mtf.tensor<b=8, d=16@x, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}
