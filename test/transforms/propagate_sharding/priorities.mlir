// Who wins when statements meet: an mtf.shard constraint > a layout written on a type
// (argument, result, any op) > a layout rule; propagated layouts keep the strength of the
// statement they come from. Between equal priorities the statement on the larger tensor
// wins, then the one earlier in the program. Where two layouts of a value meet, an explicit
// mtf.shard {reshard = true} is left; dims nobody constrains are replicated (@()).
// Rules from the `rules=` option are added to (and override) the function's mtf.layout_rules
// (OPT lines; no other case here uses the names `batch` or `d_ff`).
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding='rules="batch:x"' | filecheck %s --check-prefix=OPT

sdy.mesh @mesh = <["x"=4, "y"=2]>

// The later shard's b@y beats the argument's b@x: the computation happens in b@y and the
// argument is resharded where they meet. d's rule still applies where y is free.
// CHECK-LABEL: func.func @shard_beats_argument_annotation
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: %1 = "mtf.exp"(%0) : (!mtf.tensor<b=8@y, d=16@(), f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: %2 = "mtf.shard"(%1) : (!mtf.tensor<b=8@y, d=16@(), f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@y, d=16@(), f32>
func.func @shard_beats_argument_annotation(%a: !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@y, d=16, f32> attributes {mtf.layout_rules = {d = ["y"]}} {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@y, d=16, f32>
  return %1 : !mtf.tensor<b=8@y, d=16, f32>
}

// The argument's b@y, propagated, beats the rule b:x on the values after it.
// CHECK-LABEL: func.func @argument_annotation_beats_rule
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, d=16@(), f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=8@y, d=16@(), f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: %1 = "mtf.neg"(%0) : (!mtf.tensor<b=8@y, d=16@(), f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
func.func @argument_annotation_beats_rule(%a: !mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32> attributes {mtf.layout_rules = {b = ["x"]}} {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.neg"(%0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %1 : !mtf.tensor<b=8, d=16, f32>
}

// A shard beats a rule, backward to the free argument.
// CHECK-LABEL: func.func @shard_beats_rule
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@y, f32>
func.func @shard_beats_rule(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@y, f32> attributes {mtf.layout_rules = {b = ["x"]}} {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@y, f32>
  return %1 : !mtf.tensor<b=8@y, f32>
}

// A layout written on the function result (so on the returned value) beats a rule, back
// to the argument.
// CHECK-LABEL: func.func @result_annotation_beats_rule
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: %1 = "mtf.neg"(%0) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@y, d=16@x, f32>
func.func @result_annotation_beats_rule(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32> attributes {mtf.layout_rules = {b = ["x"], d = ["y"]}} {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.neg"(%0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
  return %1 : !mtf.tensor<b=8@y, d=16@x, f32>
}

// A shard beats a layout written on a later result: the op computes in the shard's layout
// and its result is resharded to the written one.
// CHECK-LABEL: func.func @shard_beats_written_result
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %2 = "mtf.neg"(%1) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %3 = "mtf.shard"(%2) {reshard = true} : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: return %3 : !mtf.tensor<b=8@y, f32>
func.func @shard_beats_written_result(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@y, f32> {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@x, f32>
  %2 = "mtf.neg"(%1) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, f32>
  return %2 : !mtf.tensor<b=8@y, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Equal priority (two written arguments): the larger tensor's b@y (128 elements) beats
// the smaller one's b@x (8); the smaller is resharded.
// CHECK-LABEL: func.func @equal_priority_larger_tensor_wins
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, f32>, %arg1: !mtf.tensor<b=8@y, d=16@(), f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: %1 = "mtf.add"(%0, %arg1) : (!mtf.tensor<b=8@y, f32>, !mtf.tensor<b=8@y, d=16@(), f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@y, d=16@(), f32>
func.func @equal_priority_larger_tensor_wins(%a: !mtf.tensor<b=8@x, f32>, %c: !mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.add"(%a, %c) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %0 : !mtf.tensor<b=8, d=16, f32>
}

// Equal priority and size: the cheaper outcome wins (conflicts resolved by cost). Computing
// in b@x (4 devices) reshards %a from y, sending 8 bytes per device; computing in b@y would
// reshard %c from x, sending 16.
// CHECK-LABEL: func.func @equal_priority_and_size_cheaper_outcome_wins
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, f32>, %arg1: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %1 = "mtf.add"(%arg1, %0) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
func.func @equal_priority_and_size_cheaper_outcome_wins(%a: !mtf.tensor<b=8@y, f32>, %c: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.add"(%c, %a) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}

// Both names conflict at once (equal sizes): the first argument wins both, and the second
// gets one reshard for both dims.
// CHECK-LABEL: func.func @both_names_conflict_one_reshard
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>, %arg1: !mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg1) {reshard = true} : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.add"(%arg0, %0) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
func.func @both_names_conflict_one_reshard(%a: !mtf.tensor<b=8@x, d=16@y, f32>, %c: !mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.add"(%a, %c) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %0 : !mtf.tensor<b=8, d=16, f32>
}

// Different names on one axis in an outer product (one axis per op): the larger operand's
// d@x wins, b is computed replicated, the smaller operand is resharded, and the free
// values after the op follow the computation.
// CHECK-LABEL: func.func @one_axis_per_op_larger_name_wins
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, f32>, %arg1: !mtf.tensor<d=16@x, f32>) -> !mtf.tensor<b=8@(), d=16@x, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@(), f32>
// CHECK-NEXT: %1 = "mtf.mul"(%0, %arg1) : (!mtf.tensor<b=8@(), f32>, !mtf.tensor<d=16@x, f32>) -> !mtf.tensor<b=8@(), d=16@x, f32>
// CHECK-NEXT: %2 = "mtf.exp"(%1) : (!mtf.tensor<b=8@(), d=16@x, f32>) -> !mtf.tensor<b=8@(), d=16@x, f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@(), d=16@x, f32>
func.func @one_axis_per_op_larger_name_wins(%a: !mtf.tensor<b=8@x, f32>, %c: !mtf.tensor<d=16@x, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.mul"(%a, %c) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<d=16@x, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.exp"(%0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %1 : !mtf.tensor<b=8, d=16, f32>
}

// Equal priority between two written arguments of equal size: the first one's layout wins for a free
// value both reach (a constant used by two adds: %a and %c have equal size, %a is first),
// and the second add reshards its other operand.
// CHECK-LABEL: func.func @free_value_between_two_written_layouts
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@(), f32>, %arg1: !mtf.tensor<b=8@y, d=16@(), f32>) -> (!mtf.tensor<b=8@x, d=16@(), f32>, !mtf.tensor<b=8@x, d=16@(), f32>)
// CHECK-NEXT: %0 = "mtf.constant"() {value = 1.000000e+00 : f32} : () -> !mtf.tensor<b=8@x, d=16@(), f32>
// CHECK-NEXT: %1 = "mtf.add"(%arg0, %0) : (!mtf.tensor<b=8@x, d=16@(), f32>, !mtf.tensor<b=8@x, d=16@(), f32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
// CHECK-NEXT: %2 = "mtf.shard"(%arg1) {reshard = true} : (!mtf.tensor<b=8@y, d=16@(), f32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
// CHECK-NEXT: %3 = "mtf.add"(%2, %0) : (!mtf.tensor<b=8@x, d=16@(), f32>, !mtf.tensor<b=8@x, d=16@(), f32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
func.func @free_value_between_two_written_layouts(%a: !mtf.tensor<b=8@x, d=16, f32>, %c: !mtf.tensor<b=8@y, d=16, f32>) -> (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<b=8, d=16, f32>) {
  %k = "mtf.constant"() {value = 1.0 : f32} : () -> !mtf.tensor<b=8, d=16, f32>
  %0 = "mtf.add"(%a, %k) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.add"(%c, %k) : (!mtf.tensor<b=8@y, d=16, f32>, !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %0, %1 : !mtf.tensor<b=8, d=16, f32>, !mtf.tensor<b=8, d=16, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A chain annotated at both ends with equal sizes: the argument (first) wins for the
// values in between, and the reshard is left where they meet, before the return.
// CHECK-LABEL: func.func @annotated_at_both_ends_reshard_at_the_end
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@(), f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=8@x, d=16@(), f32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
// CHECK-NEXT: %1 = "mtf.neg"(%0) : (!mtf.tensor<b=8@x, d=16@(), f32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
// CHECK-NEXT: %2 = "mtf.shard"(%1) {reshard = true} : (!mtf.tensor<b=8@x, d=16@(), f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@y, d=16@(), f32>
func.func @annotated_at_both_ends_reshard_at_the_end(%a: !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@y, d=16, f32> {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.neg"(%0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@y, d=16, f32>
  return %1 : !mtf.tensor<b=8@y, d=16, f32>
}

// The larger result wins: the reshard moves to the start, on the small argument.
// CHECK-LABEL: func.func @annotated_at_both_ends_reshard_at_the_start
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: %1 = "mtf.exp"(%0) : (!mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: %2 = "mtf.broadcast"(%1) : (!mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@y, d=16@(), f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@y, d=16@(), f32>
func.func @annotated_at_both_ends_reshard_at_the_start(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, d=16, f32> {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.broadcast"(%0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@y, d=16, f32>
  return %1 : !mtf.tensor<b=8@y, d=16, f32>
}

// Dims nobody constrains are pinned replicated, the scalar result has nothing to pin.
// CHECK-LABEL: func.func @unconstrained_dims_become_replicated
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), d=16@(), f32>, %arg1: !mtf.tensor<d=16@(), f32>) -> !mtf.tensor<f32>
// CHECK-NEXT: %0 = "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<b=8@(), d=16@(), f32>, !mtf.tensor<d=16@(), f32>) -> !mtf.tensor<b=8@(), f32>
// CHECK-NEXT: %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=8@(), f32>) -> !mtf.tensor<f32>
// CHECK-NEXT: return %1 : !mtf.tensor<f32>
func.func @unconstrained_dims_become_replicated(%a: !mtf.tensor<b=8, d=16, f32>, %v: !mtf.tensor<d=16, f32>) -> !mtf.tensor<f32> {
  %0 = "mtf.einsum"(%a, %v) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.reduce_sum"(%0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<f32>
  return %1 : !mtf.tensor<f32>
}

// A written @() is a statement too: it is kept and it beats a rule (and its propagation).
// CHECK-LABEL: func.func @written_replicated_beats_rule
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), d=16@y, f32>) -> !mtf.tensor<b=8@(), d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=8@(), d=16@y, f32>) -> !mtf.tensor<b=8@(), d=16@y, f32>
func.func @written_replicated_beats_rule(%a: !mtf.tensor<b=8@(), d=16, f32>) -> !mtf.tensor<b=8, d=16, f32> attributes {mtf.layout_rules = {b = ["x"], d = ["y"]}} {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8@(), d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %0 : !mtf.tensor<b=8, d=16, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// An mtf.shard constrains only the dims its type lays out: d is left to its rule.
// CHECK-LABEL: func.func @shard_constrains_only_the_dims_it_names
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
func.func @shard_constrains_only_the_dims_it_names(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32> attributes {mtf.layout_rules = {d = ["y"]}} {
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  return %0 : !mtf.tensor<b=8@x, d=16, f32>
}

// Two shards of one value on different dims do not conflict: both apply.
// CHECK-LABEL: func.func @shards_on_different_dims_combine
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8@x, d=16@y, f32>)
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.shard"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
func.func @shards_on_different_dims_combine(%a: !mtf.tensor<b=8, d=16, f32>) -> (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8, d=16@y, f32>) {
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %1 = "mtf.shard"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16@y, f32>
  return %0, %1 : !mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8, d=16@y, f32>
}

// -----

// Propagated splits that do not fit fall back to the longest prefix of their axes that
// divides the dim and leaves out the axes the value already spends.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// batch@(x,y) split into b0=12, b1=8: x (4) divides 12, (x,y) (8) does not, so b0@x; the
// reshape then needs batch@x, and the operand is resharded (legal: 96/4, 12/4).
// CHECK-LABEL: func.func @indivisible_split_keeps_dividing_prefix
// CHECK-SAME: (%arg0: !mtf.tensor<batch=96@(x,y), f32>) -> !mtf.tensor<b0=12@x, b1=8@(), f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<batch=96@(x,y), f32>) -> !mtf.tensor<batch=96@x, f32>
// CHECK-NEXT: %1 = "mtf.reshape"(%0) : (!mtf.tensor<batch=96@x, f32>) -> !mtf.tensor<b0=12@x, b1=8@(), f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b0=12@x, b1=8@(), f32>
func.func @indivisible_split_keeps_dividing_prefix(%a: !mtf.tensor<batch=96@(x,y), f32>) -> !mtf.tensor<b0=12, b1=8, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<batch=96@(x,y), f32>) -> !mtf.tensor<b0=12, b1=8, f32>
  return %0 : !mtf.tensor<b0=12, b1=8, f32>
}

// When no prefix fits (x=4 over b0=2), the dim is left to weaker candidates: b0's rule y.
// CHECK-LABEL: func.func @nothing_fits_weaker_candidate_applies
// CHECK-SAME: (%arg0: !mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=2@y, b1=16@(), f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<batch=32@y, f32>
// CHECK-NEXT: %1 = "mtf.reshape"(%0) : (!mtf.tensor<batch=32@y, f32>) -> !mtf.tensor<b0=2@y, b1=16@(), f32>
func.func @nothing_fits_weaker_candidate_applies(%a: !mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=2, b1=16, f32> attributes {mtf.layout_rules = {b0 = ["y"]}} {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<batch=32@(x,y), f32>) -> !mtf.tensor<b0=2, b1=16, f32>
  return %0 : !mtf.tensor<b0=2, b1=16, f32>
}

// d@(x,y) meets a value whose b already spends y (and is stronger: 128 elements against
// 16): d keeps x there; only the small operand is resharded.
// CHECK-LABEL: func.func @split_cut_before_an_axis_in_use
// CHECK-SAME: (%arg0: !mtf.tensor<d=16@(x,y), f32>, %arg1: !mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<d=16@(x,y), f32>) -> !mtf.tensor<d=16@x, f32>
// CHECK-NEXT: %1 = "mtf.mul"(%arg1, %0) : (!mtf.tensor<b=8@y, d=16@x, f32>, !mtf.tensor<d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@y, d=16@x, f32>
func.func @split_cut_before_an_axis_in_use(%a: !mtf.tensor<d=16@(x,y), f32>, %c: !mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.mul"(%c, %a) : (!mtf.tensor<b=8@y, d=16, f32>, !mtf.tensor<d=16@(x,y), f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %0 : !mtf.tensor<b=8, d=16, f32>
}

// A rule's split is cut the same way on a value whose other dim is written on its axis.
// CHECK-LABEL: func.func @rule_cut_before_an_axis_in_use
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
func.func @rule_cut_before_an_axis_in_use(%c: !mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32> attributes {mtf.layout_rules = {d = ["x", "y"]}} {
  %0 = "mtf.exp"(%c) : (!mtf.tensor<b=8@y, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %0 : !mtf.tensor<b=8, d=16, f32>
}

// -----

// The `rules=` option adds batch:x to the function's own d_ff:y (OPT); without it, only
// d_ff is split.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @option_rules_combine_with_attribute
// CHECK-SAME: (%arg0: !mtf.tensor<batch=8@(), d_model=16@(), f32>, %arg1: !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<batch=8@(), d_ff=64@y, f32>
// CHECK-NEXT: "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<batch=8@(), d_model=16@(), f32>, !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<batch=8@(), d_ff=64@y, f32>
// OPT-LABEL: func.func @option_rules_combine_with_attribute
// OPT-SAME: (%arg0: !mtf.tensor<batch=8@x, d_model=16@(), f32>, %arg1: !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
// OPT-NEXT: "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<batch=8@x, d_model=16@(), f32>, !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
func.func @option_rules_combine_with_attribute(%x: !mtf.tensor<batch=8, d_model=16, f32>, %w1: !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
    attributes {mtf.layout_rules = {d_ff = ["y"]}} {
  %h = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=8, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
  return %h : !mtf.tensor<batch=8, d_ff=64, f32>
}

// For a name both give, the option overrides the attribute (batch:x instead of batch:y).
// CHECK-LABEL: func.func @option_rule_overrides_attribute
// CHECK-SAME: (%arg0: !mtf.tensor<batch=8@y, f32>) -> !mtf.tensor<batch=8@y, f32>
// OPT-LABEL: func.func @option_rule_overrides_attribute
// OPT-SAME: (%arg0: !mtf.tensor<batch=8@x, f32>) -> !mtf.tensor<batch=8@x, f32>
func.func @option_rule_overrides_attribute(%x: !mtf.tensor<batch=8, f32>) -> !mtf.tensor<batch=8, f32> attributes {mtf.layout_rules = {batch = ["y"]}} {
  %0 = "mtf.neg"(%x) : (!mtf.tensor<batch=8, f32>) -> !mtf.tensor<batch=8, f32>
  return %0 : !mtf.tensor<batch=8, f32>
}

// Written layouts beat option rules as they beat attribute rules.
// OPT-LABEL: func.func @option_rule_loses_to_written_layout
// OPT-SAME: (%arg0: !mtf.tensor<batch=8@y, f32>) -> !mtf.tensor<batch=8@y, f32>
func.func @option_rule_loses_to_written_layout(%x: !mtf.tensor<batch=8@y, f32>) -> !mtf.tensor<batch=8, f32> {
  %0 = "mtf.neg"(%x) : (!mtf.tensor<batch=8@y, f32>) -> !mtf.tensor<batch=8, f32>
  return %0 : !mtf.tensor<batch=8, f32>
}

// -----

// Equal priority, size and cost (x and y have 2 devices each): the first in program order
// wins (here the first argument, whatever the operand order).
sdy.mesh @mesh = <["x"=2, "y"=2]>
// CHECK-LABEL: func.func @equal_priority_size_and_cost_program_order_wins
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, f32>, %arg1: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg1) {reshard = true} : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, f32>
// CHECK-NEXT: %1 = "mtf.add"(%0, %arg0) : (!mtf.tensor<b=8@y, f32>, !mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@y, f32>
func.func @equal_priority_size_and_cost_program_order_wins(%a: !mtf.tensor<b=8@y, f32>, %c: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.add"(%c, %a) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}
