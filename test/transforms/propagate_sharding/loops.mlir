// Loops (dialect/ops/loops.py): a carried value has one layout, its body argument's, on the
// operand, the yield and the result; a statement reaching any of them reaches all, and where
// one is written otherwise it is resharded (the operand before the loop, the yielded value
// before the yield, the result after). A scan reads its xs whole along the scanned dim.
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A constraint on the next carry (priority 0) reaches the carry back through the yield and
// beats the argument's b@x: the argument is resharded once, before the loop, not in every
// iteration. The invariant %w is written d@y, but the mul cannot use y twice: its reshard
// to d@() is made once, before the loop (hoisted), not in every iteration.
// CHECK-LABEL: func.func @carry_meets_a_constraint
// CHECK-SAME: -> !mtf.tensor<b=8@y, d=4@(), f32>
// CHECK-NEXT: %0 = "mtf.shard"(%arg0) {reshard = true} : (!mtf.tensor<b=8@x, d=4@(), f32>) -> !mtf.tensor<b=8@y, d=4@(), f32>
// CHECK-NEXT: %1 = "mtf.shard"(%arg1) {reshard = true} : (!mtf.tensor<d=4@y, f32>) -> !mtf.tensor<d=4@(), f32>
// CHECK-NEXT: %2 = "mtf.scan"(%0, %1) ({
// CHECK-NEXT: ^bb0(%arg2: !mtf.tensor<i32>, %arg3: !mtf.tensor<b=8@y, d=4@(), f32>, %arg4: !mtf.tensor<d=4@(), f32>):
// CHECK-NEXT: %3 = "mtf.mul"(%arg3, %arg4)
// CHECK: "mtf.yield"(%4) : (!mtf.tensor<b=8@y, d=4@(), f32>) -> ()
// CHECK-NEXT: }) {{.*}} : (!mtf.tensor<b=8@y, d=4@(), f32>, !mtf.tensor<d=4@(), f32>) -> !mtf.tensor<b=8@y, d=4@(), f32>
func.func @carry_meets_a_constraint(%c: !mtf.tensor<b=8@x, d=4, f32>, %w: !mtf.tensor<d=4@y, f32>) -> !mtf.tensor<b=8, d=4, f32> {
  %r = "mtf.scan"(%c, %w) ({
  ^bb0(%i: !mtf.tensor<i32>, %h: !mtf.tensor<b=8, d=4, f32>, %v: !mtf.tensor<d=4, f32>):
    %n = "mtf.mul"(%h, %v) : (!mtf.tensor<b=8, d=4, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<b=8, d=4, f32>
    %s = "mtf.shard"(%n) : (!mtf.tensor<b=8, d=4, f32>) -> !mtf.tensor<b=8@y, d=4, f32>
    "mtf.yield"(%s) : (!mtf.tensor<b=8@y, d=4, f32>) -> ()
  }) {length = 3 : i64, carries = 1 : i64, invariants = 1 : i64} : (!mtf.tensor<b=8@x, d=4, f32>, !mtf.tensor<d=4@y, f32>) -> !mtf.tensor<b=8, d=4, f32>
  return %r : !mtf.tensor<b=8, d=4, f32>
}

// A layout written on the loop's result, other than the carry's: the result is resharded
// after the loop.
// The scanned dim t, split by the rule, is gathered before the scan and re-split after.
// CHECK-LABEL: func.func @result_written_otherwise_and_a_split_scanned_dim
// CHECK: %0 = "mtf.shard"(%arg1) {reshard = true} : (!mtf.tensor<t=4@x, b=8@y, f32>) -> !mtf.tensor<t=4@(), b=8@y, f32>
// CHECK: %1:2 = "mtf.scan"(%arg0, %0)
// CHECK: "mtf.shard"(%1#1) {reshard = true} : (!mtf.tensor<t=4@(), b=8@y, f32>) -> !mtf.tensor<t=4@x, b=8@y, f32>
// CHECK: "mtf.shard"(%1#0) {reshard = true} : (!mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@(), f32>
func.func @result_written_otherwise_and_a_split_scanned_dim(%c: !mtf.tensor<b=8@y, f32>, %xs: !mtf.tensor<t=4, b=8, f32>) -> (!mtf.tensor<b=8@(), f32>, !mtf.tensor<t=4, b=8, f32>) attributes {mtf.layout_rules = {t = ["x"]}} {
  %r:2 = "mtf.scan"(%c, %xs) ({
  ^bb0(%i: !mtf.tensor<i32>, %h: !mtf.tensor<b=8, f32>, %x: !mtf.tensor<b=8, f32>):
    %n = "mtf.add"(%h, %x) : (!mtf.tensor<b=8, f32>, !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
    "mtf.yield"(%n, %n) : (!mtf.tensor<b=8, f32>, !mtf.tensor<b=8, f32>) -> ()
  }) {length = 4 : i64, carries = 1 : i64, dim = "t"} : (!mtf.tensor<b=8@y, f32>, !mtf.tensor<t=4, b=8, f32>) -> (!mtf.tensor<b=8@(), f32>, !mtf.tensor<t=4, b=8, f32>)
  return %r#0, %r#1 : !mtf.tensor<b=8@(), f32>, !mtf.tensor<t=4, b=8, f32>
}
