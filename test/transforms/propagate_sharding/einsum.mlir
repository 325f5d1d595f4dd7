// mtf.einsum shares a name's layout between every operand and the result that has it;
// contracted names share it between the operands only. One op may not split two names over
// one mesh axis (Mesh-TensorFlow): the weaker layout loses and gets an explicit mtf.shard.
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// The FFN with Mesh-TensorFlow's rules batch:x, d_ff:y and no written layout: data parallel
// over x, model parallel over y; d_model is unconstrained, so replicated everywhere. No
// reshards (the contraction over d_ff@y is the next pass's partial sum).
// CHECK-LABEL: func.func @ffn_with_layout_rules
// CHECK-SAME: (%arg0: !mtf.tensor<batch=8@x, d_model=16@(), f32>, %arg1: !mtf.tensor<d_model=16@(), d_ff=64@y, f32>, %arg2: !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, d_model=16@(), f32>
// CHECK-SAME: attributes {mtf.layout_rules = {batch = ["x"], d_ff = ["y"]}}
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<batch=8@x, d_model=16@(), f32>, !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
// CHECK-NEXT: %1 = "mtf.relu"(%0) : (!mtf.tensor<batch=8@x, d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
// CHECK-NEXT: %2 = "mtf.einsum"(%1, %arg2) : (!mtf.tensor<batch=8@x, d_ff=64@y, f32>, !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, d_model=16@(), f32>
// CHECK-NEXT: return %2 : !mtf.tensor<batch=8@x, d_model=16@(), f32>
func.func @ffn_with_layout_rules(%x: !mtf.tensor<batch=8, d_model=16, f32>, %w1: !mtf.tensor<d_model=16, d_ff=64, f32>, %w2: !mtf.tensor<d_ff=64, d_model=16, f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
    attributes {mtf.layout_rules = {batch = ["x"], d_ff = ["y"]}} {
  %h = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=8, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
  %r = "mtf.relu"(%h) : (!mtf.tensor<batch=8, d_ff=64, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
  %y = "mtf.einsum"(%r, %w2) : (!mtf.tensor<batch=8, d_ff=64, f32>, !mtf.tensor<d_ff=64, d_model=16, f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
  return %y : !mtf.tensor<batch=8, d_model=16, f32>
}

// The same FFN from written layouts instead of rules: batch from the input, d_ff from the
// first weight; both reach the second weight and the output.
// CHECK-LABEL: func.func @ffn_from_written_layouts
// CHECK-SAME: (%arg0: !mtf.tensor<batch=8@x, d_model=16@(), f32>, %arg1: !mtf.tensor<d_model=16@(), d_ff=64@y, f32>, %arg2: !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, d_model=16@(), f32>
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<batch=8@x, d_model=16@(), f32>, !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
// CHECK-NEXT: %1 = "mtf.relu"(%0) : (!mtf.tensor<batch=8@x, d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
// CHECK-NEXT: %2 = "mtf.einsum"(%1, %arg2) : (!mtf.tensor<batch=8@x, d_ff=64@y, f32>, !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, d_model=16@(), f32>
// CHECK-NEXT: return %2 : !mtf.tensor<batch=8@x, d_model=16@(), f32>
func.func @ffn_from_written_layouts(%x: !mtf.tensor<batch=8@x, d_model=16, f32>, %w1: !mtf.tensor<d_model=16, d_ff=64@y, f32>, %w2: !mtf.tensor<d_ff=64, d_model=16, f32>) -> !mtf.tensor<batch=8, d_model=16, f32> {
  %h = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=8@x, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64@y, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
  %r = "mtf.relu"(%h) : (!mtf.tensor<batch=8, d_ff=64, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
  %y = "mtf.einsum"(%r, %w2) : (!mtf.tensor<batch=8, d_ff=64, f32>, !mtf.tensor<d_ff=64, d_model=16, f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
  return %y : !mtf.tensor<batch=8, d_model=16, f32>
}

// Backward from the output's layout: batch and d_model reach the input and the second
// weight; d_ff and the first einsum's d_model (another op's factor) stay replicated.
// CHECK-LABEL: func.func @ffn_backward_from_result
// CHECK-SAME: (%arg0: !mtf.tensor<batch=8@x, d_model=16@(), f32>, %arg1: !mtf.tensor<d_model=16@(), d_ff=64@(), f32>, %arg2: !mtf.tensor<d_ff=64@(), d_model=16@y, f32>) -> !mtf.tensor<batch=8@x, d_model=16@y, f32>
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<batch=8@x, d_model=16@(), f32>, !mtf.tensor<d_model=16@(), d_ff=64@(), f32>) -> !mtf.tensor<batch=8@x, d_ff=64@(), f32>
// CHECK-NEXT: %1 = "mtf.einsum"(%0, %arg2) : (!mtf.tensor<batch=8@x, d_ff=64@(), f32>, !mtf.tensor<d_ff=64@(), d_model=16@y, f32>) -> !mtf.tensor<batch=8@x, d_model=16@y, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<batch=8@x, d_model=16@y, f32>
func.func @ffn_backward_from_result(%x: !mtf.tensor<batch=8, d_model=16, f32>, %w1: !mtf.tensor<d_model=16, d_ff=64, f32>, %w2: !mtf.tensor<d_ff=64, d_model=16, f32>) -> !mtf.tensor<batch=8@x, d_model=16@y, f32> {
  %h = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=8, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
  %y = "mtf.einsum"(%h, %w2) : (!mtf.tensor<batch=8, d_ff=64, f32>, !mtf.tensor<d_ff=64, d_model=16, f32>) -> !mtf.tensor<batch=8@x, d_model=16@y, f32>
  return %y : !mtf.tensor<batch=8@x, d_model=16@y, f32>
}

// -----

// A contracted name's layout is shared by the operands that have it (the other operand
// follows), and does not appear in the result; the result's free names stay replicated.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @contraction_over_split_name
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), k=16@y, f32>, %arg1: !mtf.tensor<k=16@y, n=32@(), f32>) -> !mtf.tensor<b=8@(), n=32@(), f32>
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<b=8@(), k=16@y, f32>, !mtf.tensor<k=16@y, n=32@(), f32>) -> !mtf.tensor<b=8@(), n=32@(), f32>
// CHECK-NEXT: return %0 : !mtf.tensor<b=8@(), n=32@(), f32>
func.func @contraction_over_split_name(%a: !mtf.tensor<b=8, k=16@y, f32>, %w: !mtf.tensor<k=16, n=32, f32>) -> !mtf.tensor<b=8, n=32, f32> {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8, k=16@y, f32>, !mtf.tensor<k=16, n=32, f32>) -> !mtf.tensor<b=8, n=32, f32>
  return %0 : !mtf.tensor<b=8, n=32, f32>
}

// Contraction over a name split on two axes, other names from the other operand.
// CHECK-LABEL: func.func @contraction_over_two_axis_split
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), k=16@(x,y), f32>, %arg1: !mtf.tensor<k=16@(x,y), n=32@(), f32>) -> !mtf.tensor<n=32@(), b=8@(), f32>
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<b=8@(), k=16@(x,y), f32>, !mtf.tensor<k=16@(x,y), n=32@(), f32>) -> !mtf.tensor<n=32@(), b=8@(), f32>
func.func @contraction_over_two_axis_split(%a: !mtf.tensor<b=8, k=16, f32>, %w: !mtf.tensor<k=16@(x,y), n=32, f32>) -> !mtf.tensor<n=32, b=8, f32> {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8, k=16, f32>, !mtf.tensor<k=16@(x,y), n=32, f32>) -> !mtf.tensor<n=32, b=8, f32>
  return %0 : !mtf.tensor<n=32, b=8, f32>
}

// -----

// Mesh-TensorFlow: one op may not split two names over one axis. Both operands are written
// with x, on b and on n; the larger operand (w: 512 elements against 128) wins, so the
// einsum computes with b replicated and the smaller operand gets an explicit reshard.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @two_names_one_axis_weaker_operand_resharded
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, k=16@(), f32>, %arg1: !mtf.tensor<k=16@(), n=32@x, f32>) -> !mtf.tensor<b=8@(), n=32@x, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@x, k=16@(), f32>) -> !mtf.tensor<b=8@(), k=16@(), f32>
// CHECK-NEXT: %1 = "mtf.einsum"(%0, %arg1) : (!mtf.tensor<b=8@(), k=16@(), f32>, !mtf.tensor<k=16@(), n=32@x, f32>) -> !mtf.tensor<b=8@(), n=32@x, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@(), n=32@x, f32>
func.func @two_names_one_axis_weaker_operand_resharded(%a: !mtf.tensor<b=8@x, k=16, f32>, %w: !mtf.tensor<k=16, n=32@x, f32>) -> !mtf.tensor<b=8, n=32, f32> {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8@x, k=16, f32>, !mtf.tensor<k=16, n=32@x, f32>) -> !mtf.tensor<b=8, n=32, f32>
  return %0 : !mtf.tensor<b=8, n=32, f32>
}

// The same between a contracted name and a result name: the written result (256 elements)
// beats the operand's contracted k@y (128), which is resharded to replicated before the op.
// CHECK-LABEL: func.func @contracted_and_kept_name_on_one_axis
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), k=16@y, f32>, %arg1: !mtf.tensor<k=16@(), n=32@y, f32>) -> !mtf.tensor<b=8@(), n=32@y, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@(), k=16@y, f32>) -> !mtf.tensor<b=8@(), k=16@(), f32>
// CHECK-NEXT: %1 = "mtf.einsum"(%0, %arg1) : (!mtf.tensor<b=8@(), k=16@(), f32>, !mtf.tensor<k=16@(), n=32@y, f32>) -> !mtf.tensor<b=8@(), n=32@y, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@(), n=32@y, f32>
func.func @contracted_and_kept_name_on_one_axis(%a: !mtf.tensor<b=8, k=16@y, f32>, %w: !mtf.tensor<k=16, n=32, f32>) -> !mtf.tensor<b=8, n=32@y, f32> {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8, k=16@y, f32>, !mtf.tensor<k=16, n=32, f32>) -> !mtf.tensor<b=8, n=32@y, f32>
  return %0 : !mtf.tensor<b=8, n=32@y, f32>
}

// Only the clashing axis is dropped: n keeps y, b keeps x; the smaller operand's b@(x,y)
// is cut to b@x for the op.
// CHECK-LABEL: func.func @only_the_clashing_axis_is_dropped
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(x,y), k=16@(), f32>, %arg1: !mtf.tensor<k=16@(), n=32@y, f32>) -> !mtf.tensor<b=8@x, n=32@y, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@(x,y), k=16@(), f32>) -> !mtf.tensor<b=8@x, k=16@(), f32>
// CHECK-NEXT: %1 = "mtf.einsum"(%0, %arg1) : (!mtf.tensor<b=8@x, k=16@(), f32>, !mtf.tensor<k=16@(), n=32@y, f32>) -> !mtf.tensor<b=8@x, n=32@y, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@x, n=32@y, f32>
func.func @only_the_clashing_axis_is_dropped(%a: !mtf.tensor<b=8@(x,y), k=16, f32>, %w: !mtf.tensor<k=16, n=32@y, f32>) -> !mtf.tensor<b=8, n=32, f32> {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8@(x,y), k=16, f32>, !mtf.tensor<k=16, n=32@y, f32>) -> !mtf.tensor<b=8, n=32, f32>
  return %0 : !mtf.tensor<b=8, n=32, f32>
}

// A name only one operand has (n, summed away) still counts for the one-axis-per-op rule:
// rules b:x and n:x meet in this einsum; n's statement on the larger operand (512 elements
// against 128) wins, the einsum computes with b replicated, and the result is resharded
// after it to its own rule b:x (the partial sum over x becomes a reduce_scatter later).
// CHECK-LABEL: func.func @summed_name_of_one_operand_counts_for_one_axis_per_op
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, k=16@(), f32>, %arg1: !mtf.tensor<k=16@(), n=32@x, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@x, k=16@(), f32>) -> !mtf.tensor<b=8@(), k=16@(), f32>
// CHECK-NEXT: %1 = "mtf.einsum"(%0, %arg1) : (!mtf.tensor<b=8@(), k=16@(), f32>, !mtf.tensor<k=16@(), n=32@x, f32>) -> !mtf.tensor<b=8@(), f32>
// CHECK-NEXT: %2 = "mtf.shard"(%1) {reshard = true} : (!mtf.tensor<b=8@(), f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@x, f32>
func.func @summed_name_of_one_operand_counts_for_one_axis_per_op(%a: !mtf.tensor<b=8, k=16, f32>, %c: !mtf.tensor<k=16, n=32, f32>) -> !mtf.tensor<b=8, f32>
    attributes {mtf.layout_rules = {b = ["x"], n = ["x"]}} {
  %0 = "mtf.einsum"(%a, %c) : (!mtf.tensor<b=8, k=16, f32>, !mtf.tensor<k=16, n=32, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}

// -----

// Three operands: b from the first, j (contracted between the 2nd and 3rd) from the second;
// the third operand and the result follow.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @three_operand_einsum
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, i=4@(), f32>, %arg1: !mtf.tensor<i=4@(), j=16@y, f32>, %arg2: !mtf.tensor<j=16@y, k=8@(), f32>) -> !mtf.tensor<b=8@x, k=8@(), f32>
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1, %arg2) : (!mtf.tensor<b=8@x, i=4@(), f32>, !mtf.tensor<i=4@(), j=16@y, f32>, !mtf.tensor<j=16@y, k=8@(), f32>) -> !mtf.tensor<b=8@x, k=8@(), f32>
// CHECK-NEXT: return %0 : !mtf.tensor<b=8@x, k=8@(), f32>
func.func @three_operand_einsum(%a: !mtf.tensor<b=8@x, i=4, f32>, %c: !mtf.tensor<i=4, j=16@y, f32>, %e: !mtf.tensor<j=16, k=8, f32>) -> !mtf.tensor<b=8, k=8, f32> {
  %0 = "mtf.einsum"(%a, %c, %e) : (!mtf.tensor<b=8@x, i=4, f32>, !mtf.tensor<i=4, j=16@y, f32>, !mtf.tensor<j=16, k=8, f32>) -> !mtf.tensor<b=8, k=8, f32>
  return %0 : !mtf.tensor<b=8, k=8, f32>
}

// A name shared by all three operands and the result (a batch dim of a bilinear form).
// CHECK-LABEL: func.func @three_operands_share_a_batch_name
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, i=4@(), f32>, %arg1: !mtf.tensor<b=8@x, i=4@(), j=16@y, f32>, %arg2: !mtf.tensor<j=16@y, b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1, %arg2) : (!mtf.tensor<b=8@x, i=4@(), f32>, !mtf.tensor<b=8@x, i=4@(), j=16@y, f32>, !mtf.tensor<j=16@y, b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
func.func @three_operands_share_a_batch_name(%u: !mtf.tensor<b=8, i=4, f32>, %m: !mtf.tensor<b=8, i=4, j=16@y, f32>, %v: !mtf.tensor<j=16, b=8, f32>) -> !mtf.tensor<b=8@x, f32> {
  %0 = "mtf.einsum"(%u, %m, %v) : (!mtf.tensor<b=8, i=4, f32>, !mtf.tensor<b=8, i=4, j=16@y, f32>, !mtf.tensor<j=16, b=8, f32>) -> !mtf.tensor<b=8@x, f32>
  return %0 : !mtf.tensor<b=8@x, f32>
}

// A one-operand einsum (a transpose plus a sum) relays the kept names.
// CHECK-LABEL: func.func @one_operand_einsum
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, s=4@(), d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0) : (!mtf.tensor<b=8@x, s=4@(), d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
func.func @one_operand_einsum(%a: !mtf.tensor<b=8@x, s=4, d=16@y, f32>) -> !mtf.tensor<d=16, b=8, f32> {
  %0 = "mtf.einsum"(%a) : (!mtf.tensor<b=8@x, s=4, d=16@y, f32>) -> !mtf.tensor<d=16, b=8, f32>
  return %0 : !mtf.tensor<d=16, b=8, f32>
}

// -----

// Attention scores and context with rules batch:x, heads:y: both names keep their layouts
// through both einsums, the contracted k and t stay replicated, no reshards.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @attention_with_rules
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, s=4@(), h=2@y, k=8@(), f32>, %arg1: !mtf.tensor<b=8@x, t=4@(), h=2@y, k=8@(), f32>, %arg2: !mtf.tensor<b=8@x, t=4@(), h=2@y, k=8@(), f32>) -> !mtf.tensor<b=8@x, s=4@(), h=2@y, k=8@(), f32>
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<b=8@x, s=4@(), h=2@y, k=8@(), f32>, !mtf.tensor<b=8@x, t=4@(), h=2@y, k=8@(), f32>) -> !mtf.tensor<b=8@x, h=2@y, s=4@(), t=4@(), f32>
// CHECK-NEXT: %1 = "mtf.exp"(%0) : (!mtf.tensor<b=8@x, h=2@y, s=4@(), t=4@(), f32>) -> !mtf.tensor<b=8@x, h=2@y, s=4@(), t=4@(), f32>
// CHECK-NEXT: %2 = "mtf.einsum"(%1, %arg2) : (!mtf.tensor<b=8@x, h=2@y, s=4@(), t=4@(), f32>, !mtf.tensor<b=8@x, t=4@(), h=2@y, k=8@(), f32>) -> !mtf.tensor<b=8@x, s=4@(), h=2@y, k=8@(), f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@x, s=4@(), h=2@y, k=8@(), f32>
func.func @attention_with_rules(%q: !mtf.tensor<b=8, s=4, h=2, k=8, f32>, %kk: !mtf.tensor<b=8, t=4, h=2, k=8, f32>, %v: !mtf.tensor<b=8, t=4, h=2, k=8, f32>) -> !mtf.tensor<b=8, s=4, h=2, k=8, f32>
    attributes {mtf.layout_rules = {b = ["x"], h = ["y"]}} {
  %0 = "mtf.einsum"(%q, %kk) : (!mtf.tensor<b=8, s=4, h=2, k=8, f32>, !mtf.tensor<b=8, t=4, h=2, k=8, f32>) -> !mtf.tensor<b=8, h=2, s=4, t=4, f32>
  %1 = "mtf.exp"(%0) : (!mtf.tensor<b=8, h=2, s=4, t=4, f32>) -> !mtf.tensor<b=8, h=2, s=4, t=4, f32>
  %2 = "mtf.einsum"(%1, %v) : (!mtf.tensor<b=8, h=2, s=4, t=4, f32>, !mtf.tensor<b=8, t=4, h=2, k=8, f32>) -> !mtf.tensor<b=8, s=4, h=2, k=8, f32>
  return %2 : !mtf.tensor<b=8, s=4, h=2, k=8, f32>
}
