// Regression tests of fixed mtf-propagate-sharding bugs: each case states what propagation
// must give and why.
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s

// BUG 1. A reshape merging dims whose layouts were *propagated* (not written) keeps only
// the first part's axes: batch gets @x, and b1's y is gathered by a needless reshard,
// although b0@x is split completely (4 of 4) so batch@(x,y) is contiguous — the answer the
// same reshape gives when b0@x, b1@y are written on its operand (reshape.mlir,
// @merge_concatenates_axes). Cause: the solver projects a reshape group as soon as its
// first dim is assigned (b1 still unassigned, so the merge is just (x)) and the later,
// more complete projection finds batch already assigned.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @merge_of_propagated_layouts
// CHECK-SAME: (%arg0: !mtf.tensor<b0=4@x, b1=8@y, f32>) -> !mtf.tensor<batch=32@(x,y), f32>
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b0=4@x, b1=8@y, f32>) -> !mtf.tensor<b0=4@x, b1=8@y, f32>
// CHECK-NEXT: %1 = "mtf.reshape"(%0) : (!mtf.tensor<b0=4@x, b1=8@y, f32>) -> !mtf.tensor<batch=32@(x,y), f32>
// CHECK-NEXT: return %1 : !mtf.tensor<batch=32@(x,y), f32>
func.func @merge_of_propagated_layouts(%a: !mtf.tensor<b0=4@x, b1=8@y, f32>) -> !mtf.tensor<batch=32, f32> {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b0=4@x, b1=8@y, f32>) -> !mtf.tensor<b0=4, b1=8, f32>
  %1 = "mtf.reshape"(%0) : (!mtf.tensor<b0=4, b1=8, f32>) -> !mtf.tensor<batch=32, f32>
  return %1 : !mtf.tensor<batch=32, f32>
}

// The split-then-merge round trip of the task: batch=32@(x,y) -> (b0, b1) -> batch must
// come back as batch@(x,y) with no reshard.
// CHECK-LABEL: func.func @split_then_merge_round_trip
// CHECK-SAME: (%arg0: !mtf.tensor<batch=32@(x,y), d=16@(), f32>) -> !mtf.tensor<batch=32@(x,y), d=16@(), f32>
// CHECK-NEXT: %0 = "mtf.reshape"(%arg0) : (!mtf.tensor<batch=32@(x,y), d=16@(), f32>) -> !mtf.tensor<b0=4@x, b1=8@y, d=16@(), f32>
// CHECK-NEXT: %1 = "mtf.exp"(%0) : (!mtf.tensor<b0=4@x, b1=8@y, d=16@(), f32>) -> !mtf.tensor<b0=4@x, b1=8@y, d=16@(), f32>
// CHECK-NEXT: %2 = "mtf.reshape"(%1) : (!mtf.tensor<b0=4@x, b1=8@y, d=16@(), f32>) -> !mtf.tensor<batch=32@(x,y), d=16@(), f32>
// CHECK-NEXT: return %2 : !mtf.tensor<batch=32@(x,y), d=16@(), f32>
func.func @split_then_merge_round_trip(%a: !mtf.tensor<batch=32@(x,y), d=16, f32>) -> !mtf.tensor<batch=32, d=16, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<batch=32@(x,y), d=16, f32>) -> !mtf.tensor<b0=4, b1=8, d=16, f32>
  %1 = "mtf.exp"(%0) : (!mtf.tensor<b0=4, b1=8, d=16, f32>) -> !mtf.tensor<b0=4, b1=8, d=16, f32>
  %2 = "mtf.reshape"(%1) : (!mtf.tensor<b0=4, b1=8, d=16, f32>) -> !mtf.tensor<batch=32, d=16, f32>
  return %2 : !mtf.tensor<batch=32, d=16, f32>
}

// -----

// BUG 2. A dim a collective does not change is free on both sides, and the two sides get
// different layouts: here the operand's d cannot take x (its b spends x) but the result's
// d gets x from its user. The all_gather then changes d's layout, the MeshIR verifier
// rejects the module after the pass ("all_gather may not change the layout of 'd'",
// exit 1 on a valid input). Expected: the collective's unchanged dims agree on both sides
// (any fix; the add then gets its d@x through a reshard).
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @collective_free_dim_gets_two_layouts
// CHECK: "mtf.all_gather"(%arg0) {axes = ["x"], dim = "b"} : (!mtf.tensor<b=8@x, d=16[[D:(@[(][a-z,]*[)]|@[a-z]+)]], f32>) -> !mtf.tensor<b=8@(), d=16[[D]], f32>
// CHECK: "mtf.add"
// CHECK-SAME: -> !mtf.tensor<b=8@(), d=16@x, f32>
func.func @collective_free_dim_gets_two_layouts(%a: !mtf.tensor<b=8@x, d=16, f32>, %c: !mtf.tensor<b=8, d=16@x, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.all_gather"(%a) {dim = "b", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@(), d=16, f32>
  %1 = "mtf.add"(%0, %c) : (!mtf.tensor<b=8@(), d=16, f32>, !mtf.tensor<b=8, d=16@x, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %1 : !mtf.tensor<b=8, d=16, f32>
}

// The same with all_reduce: partial@y takes y on the operand, the bias gives d@y to the
// result ("all_reduce may not change the layout of 'd'").
// CHECK-LABEL: func.func @all_reduce_free_dim_gets_two_layouts
// CHECK: "mtf.all_reduce"(%arg0) {axes = ["y"], reduction = "sum"} : (!mtf.tensor<b=8@x, d=16[[D:(@[(][a-z,]*[)]|@[a-z]+)]], f32, partial@y>) -> !mtf.tensor<b=8@x, d=16[[D]], f32>
func.func @all_reduce_free_dim_gets_two_layouts(%p: !mtf.tensor<b=8@x, d=16, f32, partial@y>, %bias: !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.all_reduce"(%p) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<b=8@x, d=16, f32, partial@y>) -> !mtf.tensor<b=8@x, d=16, f32>
  %1 = "mtf.add"(%0, %bias) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %1 : !mtf.tensor<b=8, d=16, f32>
}

// From a rule instead of a user: d:x applies to the all_slice's operand (x still free
// there) but not to its result (b takes x) -> "mesh axis 'x' is already used by the
// operand". The argument keeps the rule's d@x and is resharded before the all_slice.
// CHECK-LABEL: func.func @all_slice_free_dim_gets_two_layouts
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), d=16@x, f32>)
// CHECK-NEXT: %[[R:.*]] = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@(), d=16@x, f32>) -> !mtf.tensor<b=8@(), d=16@(), f32>
// CHECK-NEXT: "mtf.all_slice"(%[[R]]) {axes = ["x"], dim = "b"} : (!mtf.tensor<b=8@(), d=16@(), f32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
func.func @all_slice_free_dim_gets_two_layouts(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32> attributes {mtf.layout_rules = {d = ["x"]}} {
  %0 = "mtf.all_slice"(%a) {dim = "b", axes = ["x"]} : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  return %0 : !mtf.tensor<b=8@x, d=16, f32>
}

// -----

// BUG 3. A function declaration (no body) crashes the pass: "internal error: IndexError:
// attempt to access out of bounds block" (exit 2). Declarations are valid input (see
// test/transforms/strip_layouts.mlir); there is nothing to propagate in them.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func private @declaration
// CHECK-LABEL: func.func @defined
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
func.func private @declaration(!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
func.func @defined(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}

// -----

// BUG 4. Functions are propagated one by one, so a func.call's types (retyped in the
// caller) stop matching the callee's signature (retyped on its own): MLIR rejects the
// module after the pass ("'func.call' op result type mismatch", exit 1 on a valid input).
// Expected: the call's types equal the callee's signature afterwards (propagate through
// calls, or keep the call boundary and reshard around it).
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @callee
// CHECK-SAME: (%arg0: [[IN:!mtf.tensor<[^>]*>]]) -> [[OUT:!mtf.tensor<[^>]*>]]
// CHECK-LABEL: func.func @caller
// CHECK: {{(func\.)?}}call @callee(%{{.*}}) : ([[IN]]) -> [[OUT]]
func.func @callee(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}
func.func @caller(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@x, f32> {
  %0 = func.call @callee(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@x, f32>
  return %1 : !mtf.tensor<b=8@x, f32>
}

// -----

// A name's own rule beats another name's rule arriving through a rename: with b:x and d:y,
// rename(b -> d) gives the value d@y (d's rule), not d@x (b's rule); the rename itself
// computes where the data is (b@x) and its result is resharded.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @own_rule_beats_renamed_rule
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<d=8@y, f32>
// CHECK-NEXT: %[[R:.*]] = "mtf.rename"(%arg0) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<d=8@x, f32>
// CHECK-NEXT: %[[S:.*]] = "mtf.shard"(%[[R]]) {reshard = true} : (!mtf.tensor<d=8@x, f32>) -> !mtf.tensor<d=8@y, f32>
// CHECK-NEXT: return %[[S]]
func.func @own_rule_beats_renamed_rule(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<d=8, f32> attributes {mtf.layout_rules = {b = ["x"], d = ["y"]}} {
  %0 = "mtf.rename"(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<d=8, f32>
  return %0 : !mtf.tensor<d=8, f32>
}
