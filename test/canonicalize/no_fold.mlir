// What mtf-canonicalize must leave alone: ops that change a layout or a pending reduction
// (the full type is compared, not names and sizes only), folds that are not exact, and
// mtf.shard and the collectives (never folded to their operand).
// RUN: meshir-opt %s --mtf-canonicalize | filecheck %s

sdy.mesh @mesh = <["x"=2, "y"=2]>

// Same names and sizes, other layout or pending partial: not identities.
// CHECK-LABEL: func.func @layout_or_partial_differs
// CHECK-NEXT: "mtf.reshape"(%arg0) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@y, d=6, f32>
// CHECK-NEXT: "mtf.transpose"(%arg0) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
// CHECK-NEXT: "mtf.broadcast"(%arg0) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@x, d=6@(), f32>
// CHECK-NEXT: "mtf.cast"(%arg1) : (!mtf.tensor<b=4, f32, partial@x>) -> !mtf.tensor<b=4, f32>
// CHECK-NEXT: "mtf.reduce_sum"(%arg1) : (!mtf.tensor<b=4, f32, partial@x>) -> !mtf.tensor<b=4, f32, partial@y>
// CHECK-NEXT: "mtf.slice"(%arg0) {dim = "d", start = 0 : i64} : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
// CHECK-NEXT: "mtf.cast"(%arg0) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@x, d=6, bf16>
// CHECK-NEXT: return
func.func @layout_or_partial_differs(%a: !mtf.tensor<b=4@x, d=6, f32>, %p: !mtf.tensor<b=4, f32, partial@x>) -> (!mtf.tensor<b=4@y, d=6, f32>, !mtf.tensor<b=4, d=6, f32>, !mtf.tensor<b=4@x, d=6@(), f32>, !mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32, partial@y>, !mtf.tensor<b=4, d=6, f32>, !mtf.tensor<b=4@x, d=6, bf16>) {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@y, d=6, f32>
  %1 = "mtf.transpose"(%a) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %2 = "mtf.broadcast"(%a) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@x, d=6@(), f32>
  %3 = "mtf.cast"(%p) : (!mtf.tensor<b=4, f32, partial@x>) -> !mtf.tensor<b=4, f32>
  %4 = "mtf.reduce_sum"(%p) : (!mtf.tensor<b=4, f32, partial@x>) -> !mtf.tensor<b=4, f32, partial@y>
  %5 = "mtf.slice"(%a) {dim = "d", start = 0} : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %6 = "mtf.cast"(%a) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@x, d=6, bf16>
  return %0, %1, %2, %3, %4, %5, %6 : !mtf.tensor<b=4@y, d=6, f32>, !mtf.tensor<b=4, d=6, f32>, !mtf.tensor<b=4@x, d=6@(), f32>, !mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32, partial@y>, !mtf.tensor<b=4, d=6, f32>, !mtf.tensor<b=4@x, d=6, bf16>
}

// Two reshapes whose middle type states a layout, two transposes or renames whose middle
// type lays a name out otherwise than x: composing them would drop that statement.
// CHECK-LABEL: func.func @middle_layout_kept
// CHECK-COUNT-2: "mtf.reshape"
// CHECK-COUNT-2: "mtf.transpose"
// CHECK-COUNT-2: "mtf.rename"
// CHECK-COUNT-2: "mtf.reshape"
func.func @middle_layout_kept(%a: !mtf.tensor<b=4, d=6, f32>, %r: !mtf.tensor<b=4@(), d=6@(), f32>) -> (!mtf.tensor<b=4, d=6, f32>, !mtf.tensor<b=4, d=6, f32>, !mtf.tensor<p=4, q=6, f32>, !mtf.tensor<b=4@(), d=6@(), f32>) {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<n=24@x, f32>
  %1 = "mtf.reshape"(%0) : (!mtf.tensor<n=24@x, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %2 = "mtf.transpose"(%a) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<d=6, b=4@y, f32>
  %3 = "mtf.transpose"(%2) : (!mtf.tensor<d=6, b=4@y, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %4 = "mtf.rename"(%a) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4@x, e=6, f32>
  %5 = "mtf.rename"(%4) : (!mtf.tensor<b=4@x, e=6, f32>) -> !mtf.tensor<p=4, q=6, f32>
  %6 = "mtf.reshape"(%r) : (!mtf.tensor<b=4@(), d=6@(), f32>) -> !mtf.tensor<n=24@x, f32>
  %7 = "mtf.reshape"(%6) : (!mtf.tensor<n=24@x, f32>) -> !mtf.tensor<b=4@(), d=6@(), f32>
  return %1, %3, %5, %7 : !mtf.tensor<b=4, d=6, f32>, !mtf.tensor<b=4, d=6, f32>, !mtf.tensor<p=4, q=6, f32>, !mtf.tensor<b=4@(), d=6@(), f32>
}

// Not exact, so not folded: x + 0.0 (turns -0.0 into +0.0; only x + (-0.0) folds),
// x - (-0.0), x * 0 (NaN, inf, -0.0), -0.0 + x when the constant broadcasts x to more names,
// a pending constant, stop_gradient (its meaning is for autodiff), neg of a neg that changes
// the layout, select of two different values.
// CHECK-LABEL: func.func @not_exact
// CHECK: %[[A0:.*]] = "mtf.add"(%arg0, %[[PZ:.*]]) :
// CHECK: %[[S0:.*]] = "mtf.sub"(%[[A0]], %[[MZ:.*]]) :
// CHECK: %[[M0:.*]] = "mtf.mul"(%[[S0]], %[[PZ]]) :
// CHECK: %[[A1:.*]] = "mtf.add"(%[[M0]], %[[MZB:.*]]) : {{.*}} -> !mtf.tensor<d=6, b=4, f32>
// CHECK: %[[A2:.*]] = "mtf.add"(%[[M0]], %[[MZP:.*]]) :
// CHECK: %[[G:.*]] = "mtf.stop_gradient"(%[[A2]])
// CHECK: %[[N0:.*]] = "mtf.neg"(%[[G]])
// CHECK: %[[N1:.*]] = "mtf.neg"(%[[N0]])
// CHECK: "mtf.select"(%arg1, %[[N1]], %arg0)
func.func @not_exact(%x: !mtf.tensor<d=6, f32>, %c: !mtf.tensor<d=6, i1>) -> (!mtf.tensor<d=6, f32>, !mtf.tensor<d=6, b=4, f32>) {
  %pz = "mtf.constant"() {value = 0.0 : f32} : () -> !mtf.tensor<d=6, f32>
  %mz = "mtf.constant"() {value = -0.0 : f32} : () -> !mtf.tensor<d=6, f32>
  %mzb = "mtf.constant"() {value = -0.0 : f32} : () -> !mtf.tensor<b=4, f32>
  %mzp = "mtf.constant"() {value = -0.0 : f32} : () -> !mtf.tensor<f32, partial@x>
  %0 = "mtf.add"(%x, %pz) : (!mtf.tensor<d=6, f32>, !mtf.tensor<d=6, f32>) -> !mtf.tensor<d=6, f32>
  %1 = "mtf.sub"(%0, %mz) : (!mtf.tensor<d=6, f32>, !mtf.tensor<d=6, f32>) -> !mtf.tensor<d=6, f32>
  %2 = "mtf.mul"(%1, %pz) : (!mtf.tensor<d=6, f32>, !mtf.tensor<d=6, f32>) -> !mtf.tensor<d=6, f32>
  %3 = "mtf.add"(%2, %mzb) : (!mtf.tensor<d=6, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<d=6, b=4, f32>
  %4 = "mtf.add"(%2, %mzp) : (!mtf.tensor<d=6, f32>, !mtf.tensor<f32, partial@x>) -> !mtf.tensor<d=6, f32>
  %5 = "mtf.stop_gradient"(%4) : (!mtf.tensor<d=6, f32>) -> !mtf.tensor<d=6, f32>
  %6 = "mtf.neg"(%5) : (!mtf.tensor<d=6, f32>) -> !mtf.tensor<d=6@x, f32>
  %7 = "mtf.neg"(%6) : (!mtf.tensor<d=6@x, f32>) -> !mtf.tensor<d=6@y, f32>
  %8 = "mtf.select"(%c, %7, %x) : (!mtf.tensor<d=6, i1>, !mtf.tensor<d=6@y, f32>, !mtf.tensor<d=6, f32>) -> !mtf.tensor<d=6, f32>
  return %8, %3 : !mtf.tensor<d=6, f32>, !mtf.tensor<d=6, b=4, f32>
}

// The constant must be a splat of the neutral element: 1.0 in a non-splat dense value
// whose other elements differ stays.
// CHECK-LABEL: func.func @not_a_splat
// CHECK: "mtf.mul"
func.func @not_a_splat(%x: !mtf.tensor<d=2, f32>) -> !mtf.tensor<d=2, f32> {
  %c = "mtf.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> !mtf.tensor<d=2, f32>
  %0 = "mtf.mul"(%x, %c) : (!mtf.tensor<d=2, f32>, !mtf.tensor<d=2, f32>) -> !mtf.tensor<d=2, f32>
  return %0 : !mtf.tensor<d=2, f32>
}

// Shards and collectives are identities in global semantics, but they state or change a
// layout: never folded to their operand, even to the operand's own type.
// CHECK-LABEL: func.func @shard_and_collectives_stay
// CHECK-NEXT: %[[S:.*]] = "mtf.shard"(%arg0)
// CHECK-NEXT: %[[R:.*]] = "mtf.all_reduce"(%arg1)
// CHECK-NEXT: %[[G:.*]] = "mtf.all_gather"(%[[S]])
// CHECK-NEXT: %[[P:.*]] = "mtf.collective_permute"(%[[G]])
// CHECK-NEXT: return %[[P]], %[[R]]
func.func @shard_and_collectives_stay(%a: !mtf.tensor<b=4@x, f32>, %p: !mtf.tensor<b=4, f32, partial@x>) -> (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) {
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=4@x, f32>) -> !mtf.tensor<b=4@x, f32>
  %1 = "mtf.all_reduce"(%p) {reduction = "sum", axes = ["x"]} : (!mtf.tensor<b=4, f32, partial@x>) -> !mtf.tensor<b=4, f32>
  %2 = "mtf.all_gather"(%0) {dim = "b", axes = ["x"]} : (!mtf.tensor<b=4@x, f32>) -> !mtf.tensor<b=4, f32>
  %3 = "mtf.collective_permute"(%2) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %3, %1 : !mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>
}

// Collectives are pure (deterministic, and every device runs the same program): two equal
// ones on one value are one, and an unused one is erased.
// CHECK-LABEL: func.func @equal_and_dead_collectives
// CHECK-NEXT: %[[R:.*]] = "mtf.all_reduce"(%arg0)
// CHECK-NEXT: "mtf.add"(%[[R]], %[[R]])
// CHECK-NOT: "mtf.all_
func.func @equal_and_dead_collectives(%p: !mtf.tensor<b=4, f32, partial@x>) -> !mtf.tensor<b=4, f32> {
  %0 = "mtf.all_reduce"(%p) {reduction = "sum", axes = ["x"], bytes_per_device = 16} : (!mtf.tensor<b=4, f32, partial@x>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.all_reduce"(%p) {reduction = "sum", axes = ["x"], bytes_per_device = 16} : (!mtf.tensor<b=4, f32, partial@x>) -> !mtf.tensor<b=4, f32>
  %2 = "mtf.add"(%0, %1) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %3 = "mtf.all_slice"(%2) {dim = "b", axes = ["y"], bytes_per_device = 0} : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4@y, f32>
  return %2 : !mtf.tensor<b=4, f32>
}
