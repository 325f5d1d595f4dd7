// mtf.reshape relates groups of dims with equal element counts, row-major. A merged dim is
// split over the concatenated axes of its parts when every part before the last split one
// is split completely (each device's block stays contiguous); a merged layout splits onto
// the parts from major to minor, stopping at the first axis that does not divide. Where no
// layout carries over, the operand is resharded (explicit mtf.shard) before the reshape.
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Split batch=32@(x,y) into b0=4, b1=8: x (4 devices) exactly fills b0, y goes to b1.
// CHECK-LABEL: func.func @split_distributes_axes_major_to_minor
// CHECK-SAME: (%arg0: !mtf.tensor<batch=32@(x,y), d=16@(), f32>) -> !mtf.tensor<b0=4@x, b1=8@y, d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<batch=32@(x,y), d=16@(), f32>) -> !mtf.tensor<b0=4@x, b1=8@y, d=16@(), f32>
// CHECK-NEXT: return %0 : !mtf.tensor<b0=4@x, b1=8@y, d=16@(), f32>
func.func @split_distributes_axes_major_to_minor(%a: !mtf.tensor<batch=32@(x,y), d=16, f32>) -> !mtf.tensor<b0=4, b1=8, d=16, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<batch=32@(x,y), d=16, f32>) -> !mtf.tensor<b0=4, b1=8, d=16, f32>
  return %0 : !mtf.tensor<b0=4, b1=8, d=16, f32>
}

// Merge back from written layouts: b0@x is split completely, so batch is @(x,y).
// CHECK-LABEL: func.func @merge_concatenates_axes
// CHECK-SAME: (%arg0: !mtf.tensor<b0=4@x, b1=8@y, d=16@(), f32>) -> !mtf.tensor<batch=32@(x,y), d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<b0=4@x, b1=8@y, d=16@(), f32>) -> !mtf.tensor<batch=32@(x,y), d=16@(), f32>
// CHECK-NEXT: return %0 : !mtf.tensor<batch=32@(x,y), d=16@(), f32>
func.func @merge_concatenates_axes(%a: !mtf.tensor<b0=4@x, b1=8@y, d=16, f32>) -> !mtf.tensor<batch=32, d=16, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b0=4@x, b1=8@y, d=16, f32>) -> !mtf.tensor<batch=32, d=16, f32>
  return %0 : !mtf.tensor<batch=32, d=16, f32>
}

// Only the major part split: still contiguous.
// CHECK-LABEL: func.func @merge_with_only_major_part_split
// CHECK-SAME: (%arg0: !mtf.tensor<b0=4@x, b1=8@(), f32>) -> !mtf.tensor<batch=32@x, f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<b0=4@x, b1=8@(), f32>) -> !mtf.tensor<batch=32@x, f32>
func.func @merge_with_only_major_part_split(%a: !mtf.tensor<b0=4@x, b1=8, f32>) -> !mtf.tensor<batch=32, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b0=4@x, b1=8, f32>) -> !mtf.tensor<batch=32, f32>
  return %0 : !mtf.tensor<batch=32, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// An unsplit major dim before a split minor one: a device's part of the merged dim would be
// strided, so no layout carries over; the merge happens replicated and the operand is
// explicitly resharded first.
// CHECK-LABEL: func.func @noncontiguous_merge_falls_back_to_replicated
// CHECK-SAME: (%arg0: !mtf.tensor<b0=4@(), b1=8@y, d=16@(), f32>) -> !mtf.tensor<batch=32@(), d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b0=4@(), b1=8@y, d=16@(), f32>) -> !mtf.tensor<b0=4@(), b1=8@(), d=16@(), f32>
// CHECK-NEXT: %1 = "mtf.reshape"(%0) : (!mtf.tensor<b0=4@(), b1=8@(), d=16@(), f32>) -> !mtf.tensor<batch=32@(), d=16@(), f32>
// CHECK-NEXT: return %1 : !mtf.tensor<batch=32@(), d=16@(), f32>
func.func @noncontiguous_merge_falls_back_to_replicated(%a: !mtf.tensor<b0=4, b1=8@y, d=16, f32>) -> !mtf.tensor<batch=32, d=16, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b0=4, b1=8@y, d=16, f32>) -> !mtf.tensor<batch=32, d=16, f32>
  return %0 : !mtf.tensor<batch=32, d=16, f32>
}

// A major dim split only partly (b0=4 over y=2) before a split minor one: y alone gives
// contiguous blocks of the merged dim (batch@y), b1's x would make them strided, so only
// x is gathered before the reshape.
// CHECK-LABEL: func.func @partly_split_major_dim_keeps_contiguous_prefix
// CHECK-SAME: (%arg0: !mtf.tensor<b0=4@y, b1=8@x, f32>) -> !mtf.tensor<batch=32@y, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b0=4@y, b1=8@x, f32>) -> !mtf.tensor<b0=4@y, b1=8@(), f32>
// CHECK-NEXT: %1 = "mtf.reshape"(%0) : (!mtf.tensor<b0=4@y, b1=8@(), f32>) -> !mtf.tensor<batch=32@y, f32>
func.func @partly_split_major_dim_keeps_contiguous_prefix(%a: !mtf.tensor<b0=4@y, b1=8@x, f32>) -> !mtf.tensor<batch=32, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b0=4@y, b1=8@x, f32>) -> !mtf.tensor<batch=32, f32>
  return %0 : !mtf.tensor<batch=32, f32>
}

// A split whose first axis does not divide the major part (x=4 over b0=2): nothing
// carries over (x would have to straddle b0 and b1), so the operand is resharded.
// CHECK-LABEL: func.func @split_axis_straddling_parts_falls_back
// CHECK-SAME: (%arg0: !mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=2@(), b1=2@(), b2=8@(), f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<batch=32@(), f32>
// CHECK-NEXT: %1 = "mtf.reshape"(%0) : (!mtf.tensor<batch=32@(), f32>) -> !mtf.tensor<b0=2@(), b1=2@(), b2=8@(), f32>
func.func @split_axis_straddling_parts_falls_back(%a: !mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=2, b1=2, b2=8, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=2, b1=2, b2=8, f32>
  return %0 : !mtf.tensor<b0=2, b1=2, b2=8, f32>
}

// A split axis smaller than the major part stays on it (b0=8 over y=2).
// CHECK-LABEL: func.func @split_axis_stays_on_major_part
// CHECK-SAME: (%arg0: !mtf.tensor<batch=32@y, d=6@(), f32>) -> !mtf.tensor<b0=8@y, b1=4@(), d=6@(), f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<batch=32@y, d=6@(), f32>) -> !mtf.tensor<b0=8@y, b1=4@(), d=6@(), f32>
func.func @split_axis_stays_on_major_part(%a: !mtf.tensor<batch=32@y, d=6, f32>) -> !mtf.tensor<b0=8, b1=4, d=6, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<batch=32@y, d=6, f32>) -> !mtf.tensor<b0=8, b1=4, d=6, f32>
  return %0 : !mtf.tensor<b0=8, b1=4, d=6, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Backward: a written split result lays out the free merged operand, and a written merged
// result lays out the free parts.
// CHECK-LABEL: func.func @split_layout_flows_backward
// CHECK-SAME: (%arg0: !mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=4@x, b1=8@y, f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=4@x, b1=8@y, f32>
func.func @split_layout_flows_backward(%a: !mtf.tensor<batch=32, f32>) -> !mtf.tensor<b0=4@x, b1=8@y, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<batch=32, f32>) -> !mtf.tensor<b0=4@x, b1=8@y, f32>
  return %0 : !mtf.tensor<b0=4@x, b1=8@y, f32>
}

// CHECK-LABEL: func.func @merge_layout_flows_backward
// CHECK-SAME: (%arg0: !mtf.tensor<b0=4@x, b1=8@y, f32>) -> !mtf.tensor<batch=32@(x,y), f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<b0=4@x, b1=8@y, f32>) -> !mtf.tensor<batch=32@(x,y), f32>
func.func @merge_layout_flows_backward(%a: !mtf.tensor<b0=4, b1=8, f32>) -> !mtf.tensor<batch=32@(x,y), f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b0=4, b1=8, f32>) -> !mtf.tensor<batch=32@(x,y), f32>
  return %0 : !mtf.tensor<batch=32@(x,y), f32>
}

// Rules on the parts' names and the untouched dim reach the merged operand through the
// reshape: b0:x makes batch@x, b1 has no rule and stays replicated.
// CHECK-LABEL: func.func @rules_on_parts_reach_merged_operand
// CHECK-SAME: (%arg0: !mtf.tensor<batch=32@x, d=16@y, f32>) -> !mtf.tensor<b0=4@x, b1=8@(), d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<batch=32@x, d=16@y, f32>) -> !mtf.tensor<b0=4@x, b1=8@(), d=16@y, f32>
func.func @rules_on_parts_reach_merged_operand(%a: !mtf.tensor<batch=32, d=16, f32>) -> !mtf.tensor<b0=4, b1=8, d=16, f32> attributes {mtf.layout_rules = {b0 = ["x"], d = ["y"]}} {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<batch=32, d=16, f32>) -> !mtf.tensor<b0=4, b1=8, d=16, f32>
  return %0 : !mtf.tensor<b0=4, b1=8, d=16, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Renaming equal-size dims by reshape: layouts follow position, both ways.
// CHECK-LABEL: func.func @reshape_renaming_equal_size_dims
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<c=8@x, e=16@y, f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<c=8@x, e=16@y, f32>
func.func @reshape_renaming_equal_size_dims(%a: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<c=8, e=16, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<c=8, e=16, f32>
  return %0 : !mtf.tensor<c=8, e=16, f32>
}

// CHECK-LABEL: func.func @reshape_renaming_backward
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<c=8@y, e=16@x, f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<c=8@y, e=16@x, f32>
func.func @reshape_renaming_backward(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<c=8@y, e=16@x, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<c=8@y, e=16@x, f32>
  return %0 : !mtf.tensor<c=8@y, e=16@x, f32>
}

// Size-1 dims added around and between dims: the others keep their layouts, the new ones
// are replicated.
// CHECK-LABEL: func.func @size_one_dims_added
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<one=1@(), b=8@x, mid=1@(), d=16@y, u=1@(), f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<one=1@(), b=8@x, mid=1@(), d=16@y, u=1@(), f32>
func.func @size_one_dims_added(%a: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<one=1, b=8, mid=1, d=16, u=1, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<one=1, b=8, mid=1, d=16, u=1, f32>
  return %0 : !mtf.tensor<one=1, b=8, mid=1, d=16, u=1, f32>
}

// Size-1 dims removed (backward from the written result).
// CHECK-LABEL: func.func @size_one_dims_removed
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, u=1@(), d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<b=8@x, u=1@(), d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
func.func @size_one_dims_removed(%a: !mtf.tensor<b=8, u=1, d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b=8, u=1, d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  return %0 : !mtf.tensor<b=8@x, d=16@y, f32>
}

// A size-1 dim inside a merged group does not break contiguity.
// CHECK-LABEL: func.func @merge_through_a_size_one_dim
// CHECK-SAME: (%arg0: !mtf.tensor<b0=4@x, one=1@(), b1=8@y, f32>) -> !mtf.tensor<batch=32@(x,y), f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<b0=4@x, one=1@(), b1=8@y, f32>) -> !mtf.tensor<batch=32@(x,y), f32>
func.func @merge_through_a_size_one_dim(%a: !mtf.tensor<b0=4@x, one=1, b1=8@y, f32>) -> !mtf.tensor<batch=32, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b0=4@x, one=1, b1=8@y, f32>) -> !mtf.tensor<batch=32, f32>
  return %0 : !mtf.tensor<batch=32, f32>
}

// CHECK-LABEL: func.func @split_skips_a_size_one_dim
// CHECK-SAME: (%arg0: !mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=4@x, one=1@(), b1=8@y, f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=4@x, one=1@(), b1=8@y, f32>
func.func @split_skips_a_size_one_dim(%a: !mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=4, one=1, b1=8, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=4, one=1, b1=8, f32>
  return %0 : !mtf.tensor<b0=4, one=1, b1=8, f32>
}
