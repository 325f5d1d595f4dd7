// gather: the ids' names and the table's names other than the gathered dim are shared with
// the result; the gathered dim's layout stays on the table. one_hot: the ids' names are
// shared with the result, the depth is the result's own. Creation ops (constant, iota,
// random_*) have no operands: their results get layouts from their users or from rules.
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @gather_forward
// CHECK-SAME: (%arg0: !mtf.tensor<v=100@(), d=16@y, f32>, %arg1: !mtf.tensor<b=8@x, s=4@(), i32>) -> !mtf.tensor<b=8@x, s=4@(), d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.gather"(%arg0, %arg1) {dim = "v"} : (!mtf.tensor<v=100@(), d=16@y, f32>, !mtf.tensor<b=8@x, s=4@(), i32>) -> !mtf.tensor<b=8@x, s=4@(), d=16@y, f32>
// CHECK-NEXT: return %0 : !mtf.tensor<b=8@x, s=4@(), d=16@y, f32>
func.func @gather_forward(%table: !mtf.tensor<v=100, d=16@y, f32>, %ids: !mtf.tensor<b=8@x, s=4, i32>) -> !mtf.tensor<b=8, s=4, d=16, f32> {
  %0 = "mtf.gather"(%table, %ids) {dim = "v"} : (!mtf.tensor<v=100, d=16@y, f32>, !mtf.tensor<b=8@x, s=4, i32>) -> !mtf.tensor<b=8, s=4, d=16, f32>
  return %0 : !mtf.tensor<b=8, s=4, d=16, f32>
}

// The gathered dim's split stays on the table and reaches neither the ids nor the result.
// CHECK-LABEL: func.func @gathered_dim_stays_on_table
// CHECK-SAME: (%arg0: !mtf.tensor<v=128@x, d=16@(), f32>, %arg1: !mtf.tensor<b=8@(), i32>) -> !mtf.tensor<b=8@(), d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.gather"(%arg0, %arg1) {dim = "v"} : (!mtf.tensor<v=128@x, d=16@(), f32>, !mtf.tensor<b=8@(), i32>) -> !mtf.tensor<b=8@(), d=16@(), f32>
func.func @gathered_dim_stays_on_table(%table: !mtf.tensor<v=128@x, d=16, f32>, %ids: !mtf.tensor<b=8, i32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.gather"(%table, %ids) {dim = "v"} : (!mtf.tensor<v=128@x, d=16, f32>, !mtf.tensor<b=8, i32>) -> !mtf.tensor<b=8, d=16, f32>
  return %0 : !mtf.tensor<b=8, d=16, f32>
}

// Backward from the result: b to the ids, d to the table; the table's v stays replicated.
// CHECK-LABEL: func.func @gather_backward
// CHECK-SAME: (%arg0: !mtf.tensor<v=128@(), d=16@y, f32>, %arg1: !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.gather"(%arg0, %arg1) {dim = "v"} : (!mtf.tensor<v=128@(), d=16@y, f32>, !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
func.func @gather_backward(%table: !mtf.tensor<v=128, d=16, f32>, %ids: !mtf.tensor<b=8, i32>) -> !mtf.tensor<b=8@x, d=16@y, f32> {
  %0 = "mtf.gather"(%table, %ids) {dim = "v"} : (!mtf.tensor<v=128, d=16, f32>, !mtf.tensor<b=8, i32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  return %0 : !mtf.tensor<b=8@x, d=16@y, f32>
}

// An embedding lookup with rules: vocab:y splits the table's gathered dim (it stays there),
// batch:x reaches the ids and the result.
// CHECK-LABEL: func.func @embedding_with_rules
// CHECK-SAME: (%arg0: !mtf.tensor<vocab=64@y, d=16@(), f32>, %arg1: !mtf.tensor<batch=8@x, i32>) -> !mtf.tensor<batch=8@x, d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.gather"(%arg0, %arg1) {dim = "vocab"} : (!mtf.tensor<vocab=64@y, d=16@(), f32>, !mtf.tensor<batch=8@x, i32>) -> !mtf.tensor<batch=8@x, d=16@(), f32>
func.func @embedding_with_rules(%table: !mtf.tensor<vocab=64, d=16, f32>, %ids: !mtf.tensor<batch=8, i32>) -> !mtf.tensor<batch=8, d=16, f32> attributes {mtf.layout_rules = {batch = ["x"], vocab = ["y"]}} {
  %0 = "mtf.gather"(%table, %ids) {dim = "vocab"} : (!mtf.tensor<vocab=64, d=16, f32>, !mtf.tensor<batch=8, i32>) -> !mtf.tensor<batch=8, d=16, f32>
  return %0 : !mtf.tensor<batch=8, d=16, f32>
}

// The gathered dim counts for the one-axis-per-op rule: the table's v@x (2048 elements)
// beats the ids' b@x (8), so the gather computes with b replicated (ids resharded) and the
// result is resharded after it to b@x.
// CHECK-LABEL: func.func @gathered_dim_and_ids_split_on_one_axis
// CHECK-SAME: (%arg0: !mtf.tensor<v=128@x, d=16@(), f32>, %arg1: !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg1) {reshard = true} : (!mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@(), i32>
// CHECK-NEXT: %1 = "mtf.gather"(%arg0, %0) {dim = "v"} : (!mtf.tensor<v=128@x, d=16@(), f32>, !mtf.tensor<b=8@(), i32>) -> !mtf.tensor<b=8@(), d=16@(), f32>
// CHECK-NEXT: %2 = "mtf.shard"(%1) {reshard = true} : (!mtf.tensor<b=8@(), d=16@(), f32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@x, d=16@(), f32>
func.func @gathered_dim_and_ids_split_on_one_axis(%table: !mtf.tensor<v=128@x, d=16, f32>, %ids: !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.gather"(%table, %ids) {dim = "v"} : (!mtf.tensor<v=128@x, d=16, f32>, !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8, d=16, f32>
  return %0 : !mtf.tensor<b=8, d=16, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// one_hot: the ids' b passes to the result; the depth v comes from a rule.
// CHECK-LABEL: func.func @one_hot_forward_and_depth_rule
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, v=16@y, f32>
// CHECK-NEXT: %0 = "mtf.one_hot"(%arg0) : (!mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, v=16@y, f32>
func.func @one_hot_forward_and_depth_rule(%ids: !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8, v=16, f32> attributes {mtf.layout_rules = {v = ["y"]}} {
  %0 = "mtf.one_hot"(%ids) : (!mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8, v=16, f32>
  return %0 : !mtf.tensor<b=8, v=16, f32>
}

// Backward: only b reaches the ids (they have no depth).
// CHECK-LABEL: func.func @one_hot_backward
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, v=16@y, f32>
// CHECK-NEXT: %0 = "mtf.one_hot"(%arg0) : (!mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, v=16@y, f32>
func.func @one_hot_backward(%ids: !mtf.tensor<b=8, i32>) -> !mtf.tensor<b=8@x, v=16@y, f32> {
  %0 = "mtf.one_hot"(%ids) : (!mtf.tensor<b=8, i32>) -> !mtf.tensor<b=8@x, v=16@y, f32>
  return %0 : !mtf.tensor<b=8@x, v=16@y, f32>
}

// The depth's layout from a user: the one-hot matrix times a table split on v.
// CHECK-LABEL: func.func @one_hot_depth_from_user
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, i32>, %arg1: !mtf.tensor<v=16@y, d=4@(), f32>) -> !mtf.tensor<b=8@x, d=4@(), f32>
// CHECK-NEXT: %0 = "mtf.one_hot"(%arg0) : (!mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, v=16@y, f32>
// CHECK-NEXT: %1 = "mtf.einsum"(%0, %arg1) : (!mtf.tensor<b=8@x, v=16@y, f32>, !mtf.tensor<v=16@y, d=4@(), f32>) -> !mtf.tensor<b=8@x, d=4@(), f32>
func.func @one_hot_depth_from_user(%ids: !mtf.tensor<b=8@x, i32>, %table: !mtf.tensor<v=16@y, d=4, f32>) -> !mtf.tensor<b=8, d=4, f32> {
  %0 = "mtf.one_hot"(%ids) : (!mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8, v=16, f32>
  %1 = "mtf.einsum"(%0, %table) : (!mtf.tensor<b=8, v=16, f32>, !mtf.tensor<v=16@y, d=4, f32>) -> !mtf.tensor<b=8, d=4, f32>
  return %1 : !mtf.tensor<b=8, d=4, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Creation results take the layouts their users need (backward), whatever their dim order.
// CHECK-LABEL: func.func @creation_results_from_users
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.constant"() {value = 1.000000e+00 : f32} : () -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.iota"() {dim = "d"} : () -> !mtf.tensor<d=16@y, f32>
// CHECK-NEXT: %2 = "mtf.random_uniform"() {seed = 1 : i64} : () -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %3 = "mtf.random_normal"() {seed = 2 : i64} : () -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: %4 = "mtf.add"(%arg0, %0) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %5 = "mtf.mul"(%4, %1) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %6 = "mtf.sub"(%5, %2) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %7 = "mtf.add"(%6, %3) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<d=16@y, b=8@x, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: return %7 : !mtf.tensor<b=8@x, d=16@y, f32>
func.func @creation_results_from_users(%a: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %c = "mtf.constant"() {value = 1.0 : f32} : () -> !mtf.tensor<b=8, d=16, f32>
  %i = "mtf.iota"() {dim = "d"} : () -> !mtf.tensor<d=16, f32>
  %r = "mtf.random_uniform"() {seed = 1} : () -> !mtf.tensor<b=8, d=16, f32>
  %n = "mtf.random_normal"() {seed = 2} : () -> !mtf.tensor<d=16, b=8, f32>
  %0 = "mtf.add"(%a, %c) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.mul"(%0, %i) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %2 = "mtf.sub"(%1, %r) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %3 = "mtf.add"(%2, %n) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, b=8, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %3 : !mtf.tensor<b=8, d=16, f32>
}

// From rules, with no user and no argument at all.
// CHECK-LABEL: func.func @creation_results_from_rules
// CHECK-SAME: () -> (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8@x, i32>, !mtf.tensor<d=16@y, b=8@x, bf16>, !mtf.tensor<s=4@(), f32>)
// CHECK-NEXT: %0 = "mtf.random_normal"() {seed = 2 : i64} : () -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.iota"() {dim = "b"} : () -> !mtf.tensor<b=8@x, i32>
// CHECK-NEXT: %2 = "mtf.random_uniform"() {seed = 3 : i64} : () -> !mtf.tensor<d=16@y, b=8@x, bf16>
// CHECK-NEXT: %3 = "mtf.constant"() {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>} : () -> !mtf.tensor<s=4@(), f32>
func.func @creation_results_from_rules() -> (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<b=8, i32>, !mtf.tensor<d=16, b=8, bf16>, !mtf.tensor<s=4, f32>) attributes {mtf.layout_rules = {b = ["x"], d = ["y"]}} {
  %r = "mtf.random_normal"() {seed = 2} : () -> !mtf.tensor<b=8, d=16, f32>
  %i = "mtf.iota"() {dim = "b"} : () -> !mtf.tensor<b=8, i32>
  %u = "mtf.random_uniform"() {seed = 3} : () -> !mtf.tensor<d=16, b=8, bf16>
  %c = "mtf.constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> !mtf.tensor<s=4, f32>
  return %r, %i, %u, %c : !mtf.tensor<b=8, d=16, f32>, !mtf.tensor<b=8, i32>, !mtf.tensor<d=16, b=8, bf16>, !mtf.tensor<s=4, f32>
}

// A layout written on a creation result is kept and flows forward to its users and
// backward to the free argument it meets.
// CHECK-LABEL: func.func @written_creation_layout_flows_to_users
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.constant"() {value = 2.000000e+00 : f32} : () -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %1 = "mtf.mul"(%arg0, %0) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
func.func @written_creation_layout_flows_to_users(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32> {
  %c = "mtf.constant"() {value = 2.0 : f32} : () -> !mtf.tensor<b=8@x, f32>
  %0 = "mtf.mul"(%a, %c) : (!mtf.tensor<b=8, f32>, !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}

// An iota that feeds a one-hot comparison: its layout comes from the other operand.
// CHECK-LABEL: func.func @iota_compared_with_ids
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, v=16@y, i1>
// CHECK-NEXT: %0 = "mtf.iota"() {dim = "v"} : () -> !mtf.tensor<v=16@y, i32>
// CHECK-NEXT: %1 = "mtf.eq"(%arg0, %0) : (!mtf.tensor<b=8@x, i32>, !mtf.tensor<v=16@y, i32>) -> !mtf.tensor<b=8@x, v=16@y, i1>
func.func @iota_compared_with_ids(%ids: !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8, v=16@y, i1> {
  %iota = "mtf.iota"() {dim = "v"} : () -> !mtf.tensor<v=16, i32>
  %0 = "mtf.eq"(%ids, %iota) : (!mtf.tensor<b=8@x, i32>, !mtf.tensor<v=16, i32>) -> !mtf.tensor<b=8, v=16@y, i1>
  return %0 : !mtf.tensor<b=8, v=16@y, i1>
}
