// mtf-canonicalize merges identical pure ops (same op, operands, attributes and result type)
// and erases pure ops whose results are unused; every mtf op but mtf.shard is pure.
// RUN: meshir-opt %s --mtf-canonicalize | filecheck %s

sdy.mesh @mesh = <["x"=2, "y"=2]>

// A duplicated relu is computed once; the dead exp is erased, and so is the dead chain
// before it (a dead op's operands may die with it).
// CHECK-LABEL: func.func @duplicate_and_dead
// CHECK-NEXT: %[[R:.*]] = "mtf.relu"(%arg0)
// CHECK-NEXT: %[[M:.*]] = "mtf.mul"(%[[R]], %[[R]])
// CHECK-NEXT: return %[[M]]
func.func @duplicate_and_dead(%a: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.relu"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %2 = "mtf.mul"(%0, %1) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %3 = "mtf.tanh"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %4 = "mtf.exp"(%3) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %2 : !mtf.tensor<b=4, f32>
}

// CSE reaches users: once the two relus are one, so are the two muls of them, and the two
// equal constants; random ops are functions of their seed and type.
// CHECK-LABEL: func.func @cse_cascades
// CHECK-NEXT: "mtf.constant"
// CHECK-NEXT: "mtf.random_uniform"() {seed = 7 : i64}
// CHECK-NEXT: "mtf.relu"
// CHECK-NEXT: "mtf.mul"
// CHECK-NEXT: %[[M:.*]] = "mtf.mul"
// CHECK-NEXT: %[[S:.*]] = "mtf.add"(%[[M]], %[[M]])
// CHECK-NEXT: return %[[S]]
func.func @cse_cascades(%a: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  %c0 = "mtf.constant"() {value = 2.0 : f32} : () -> !mtf.tensor<b=4, f32>
  %c1 = "mtf.constant"() {value = 2.0 : f32} : () -> !mtf.tensor<b=4, f32>
  %u0 = "mtf.random_uniform"() {seed = 7} : () -> !mtf.tensor<b=4, f32>
  %u1 = "mtf.random_uniform"() {seed = 7} : () -> !mtf.tensor<b=4, f32>
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.relu"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %p0 = "mtf.mul"(%0, %c0) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %q0 = "mtf.mul"(%p0, %u0) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %p1 = "mtf.mul"(%1, %c1) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %q1 = "mtf.mul"(%p1, %u1) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %2 = "mtf.add"(%q0, %q1) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %2 : !mtf.tensor<b=4, f32>
}

// Not merged: other attributes (seed, dim), other result types (layout, element type),
// other operand order.
// CHECK-LABEL: func.func @different_ops_stay
// CHECK-COUNT-2: "mtf.random_uniform"
// CHECK-COUNT-2: "mtf.relu"
// CHECK-COUNT-2: "mtf.sub"
// CHECK-COUNT-2: "mtf.slice"
func.func @different_ops_stay(%a: !mtf.tensor<b=4, d=4, f32>, %c: !mtf.tensor<b=4, d=4, f32>) -> (!mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=4@x, d=4, f32>, !mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=2, d=4, f32>, !mtf.tensor<b=4, d=2, f32>) {
  %u0 = "mtf.random_uniform"() {seed = 7} : () -> !mtf.tensor<b=4, d=4, f32>
  %u1 = "mtf.random_uniform"() {seed = 8} : () -> !mtf.tensor<b=4, d=4, f32>
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=4, d=4, f32>) -> !mtf.tensor<b=4, d=4, f32>
  %1 = "mtf.relu"(%a) : (!mtf.tensor<b=4, d=4, f32>) -> !mtf.tensor<b=4@x, d=4, f32>
  %2 = "mtf.sub"(%a, %c) : (!mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=4, d=4, f32>) -> !mtf.tensor<b=4, d=4, f32>
  %3 = "mtf.sub"(%c, %a) : (!mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=4, d=4, f32>) -> !mtf.tensor<b=4, d=4, f32>
  %4 = "mtf.slice"(%a) {dim = "b", start = 0} : (!mtf.tensor<b=4, d=4, f32>) -> !mtf.tensor<b=2, d=4, f32>
  %5 = "mtf.slice"(%a) {dim = "d", start = 0} : (!mtf.tensor<b=4, d=4, f32>) -> !mtf.tensor<b=4, d=2, f32>
  return %u0, %u1, %1, %0, %2, %3, %4, %5 : !mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=4@x, d=4, f32>, !mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=4, d=4, f32>, !mtf.tensor<b=2, d=4, f32>, !mtf.tensor<b=4, d=2, f32>
}

// mtf.shard is not pure: an unused one still constrains propagation, and two equal ones
// both stay; the pure ops feeding an unused shard stay with it.
// CHECK-LABEL: func.func @shards_stay
// CHECK-NEXT: "mtf.relu"
// CHECK-NEXT: "mtf.shard"
// CHECK-NEXT: "mtf.shard"
// CHECK-NEXT: "mtf.shard"
// CHECK-NEXT: return %arg0
func.func @shards_stay(%a: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4@x, f32>
  %2 = "mtf.shard"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4@y, f32>
  %3 = "mtf.shard"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4@y, f32>
  return %a : !mtf.tensor<b=4, f32>
}

// Results used by ops of other dialects are kept; ops of other dialects are left alone
// (neither merged nor erased).
// CHECK-LABEL: func.func @other_dialects
// CHECK-NEXT: %[[E:.*]] = "mtf.exp"(%arg0)
// CHECK-NEXT: "test.use"(%[[E]])
// CHECK-NEXT: "test.pure"(%arg0)
// CHECK-NEXT: "test.pure"(%arg0)
// CHECK-NEXT: return
func.func @other_dialects(%a: !mtf.tensor<b=4, f32>) {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %1 = "mtf.exp"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  "test.use"(%1) : (!mtf.tensor<b=4, f32>) -> ()
  %2 = "test.pure"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  %3 = "test.pure"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return
}

// Blocks nested in ops of other dialects are canonicalized too; ops in one block are not
// merged with ops of another (CSE is per block).
// CHECK-LABEL: func.func @nested_blocks
// CHECK-NEXT: %[[O:.*]] = "mtf.neg"(%arg0)
// CHECK-NEXT: "test.region"() ({
// CHECK-NEXT: %[[I:.*]] = "mtf.neg"(%arg0)
// CHECK-NEXT: "test.yield"(%[[I]], %[[I]], %arg0)
// CHECK-NEXT: })
// CHECK-NEXT: return %[[O]]
func.func @nested_blocks(%a: !mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32> {
  %0 = "mtf.neg"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  "test.region"() ({
    %1 = "mtf.neg"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
    %2 = "mtf.neg"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
    %3 = "mtf.neg"(%2) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
    %4 = "mtf.exp"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
    "test.yield"(%1, %2, %3) : (!mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>, !mtf.tensor<b=4, f32>) -> ()
  }) : () -> ()
  return %0 : !mtf.tensor<b=4, f32>
}
