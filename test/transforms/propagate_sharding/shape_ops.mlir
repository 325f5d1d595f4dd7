// Shape ops: rename carries layouts by position, transpose and broadcast by name (new
// names of a broadcast get theirs from users or rules); slice, concat and pad do not carry
// the layout of the dim they cut or join (the other dims do), shift does.
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// rename swaps the names: the layout stays with the position (b's x goes to the new d).
// CHECK-LABEL: func.func @rename_layout_follows_position
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<d=8@x, b=16@y, f32>
// CHECK-NEXT: %0 = "mtf.rename"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<d=8@x, b=16@y, f32>
func.func @rename_layout_follows_position(%a: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<d=8, b=16, f32> {
  %0 = "mtf.rename"(%a) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<d=8, b=16, f32>
  return %0 : !mtf.tensor<d=8, b=16, f32>
}

// CHECK-LABEL: func.func @rename_backward
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<p=8@y, q=16@x, f32>
// CHECK-NEXT: %0 = "mtf.rename"(%arg0) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<p=8@y, q=16@x, f32>
func.func @rename_backward(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<p=8@y, q=16@x, f32> {
  %0 = "mtf.rename"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<p=8@y, q=16@x, f32>
  return %0 : !mtf.tensor<p=8@y, q=16@x, f32>
}

// CHECK-LABEL: func.func @transpose_by_name
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, s=4@(), d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, s=4@(), f32>
// CHECK-NEXT: %0 = "mtf.transpose"(%arg0) : (!mtf.tensor<b=8@x, s=4@(), d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, s=4@(), f32>
func.func @transpose_by_name(%a: !mtf.tensor<b=8@x, s=4, d=16@y, f32>) -> !mtf.tensor<d=16, b=8, s=4, f32> {
  %0 = "mtf.transpose"(%a) : (!mtf.tensor<b=8@x, s=4, d=16@y, f32>) -> !mtf.tensor<d=16, b=8, s=4, f32>
  return %0 : !mtf.tensor<d=16, b=8, s=4, f32>
}

// CHECK-LABEL: func.func @transpose_backward
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(x,y), d=16@(), f32>) -> !mtf.tensor<d=16@(), b=8@(x,y), f32>
// CHECK-NEXT: %0 = "mtf.transpose"(%arg0) : (!mtf.tensor<b=8@(x,y), d=16@(), f32>) -> !mtf.tensor<d=16@(), b=8@(x,y), f32>
func.func @transpose_backward(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<d=16@(), b=8@(x,y), f32> {
  %0 = "mtf.transpose"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<d=16@(), b=8@(x,y), f32>
  return %0 : !mtf.tensor<d=16@(), b=8@(x,y), f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// The broadcast's new name b gets its layout backward from the user (the add with a
// b@x operand); the old name d forward from the operand.
// CHECK-LABEL: func.func @broadcast_new_dim_from_user
// CHECK-SAME: (%arg0: !mtf.tensor<d=16@y, f32>, %arg1: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.broadcast"(%arg0) : (!mtf.tensor<d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.add"(%0, %arg1) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
func.func @broadcast_new_dim_from_user(%a: !mtf.tensor<d=16@y, f32>, %c: !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.broadcast"(%a) : (!mtf.tensor<d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.add"(%0, %c) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %1 : !mtf.tensor<b=8, d=16, f32>
}

// The new name from a rule; a new name nobody constrains is replicated.
// CHECK-LABEL: func.func @broadcast_new_dims_from_rule_or_replicated
// CHECK-SAME: (%arg0: !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, s=4@(), f32>
// CHECK-NEXT: %0 = "mtf.broadcast"(%arg0) : (!mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, s=4@(), f32>
func.func @broadcast_new_dims_from_rule_or_replicated(%a: !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16, b=8, s=4, f32> attributes {mtf.layout_rules = {b = ["x"]}} {
  %0 = "mtf.broadcast"(%a) : (!mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16, b=8, s=4, f32>
  return %0 : !mtf.tensor<d=16, b=8, s=4, f32>
}

// Backward through a broadcast: the operand gets the layouts of the names it has.
// CHECK-LABEL: func.func @broadcast_backward
// CHECK-SAME: (%arg0: !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.broadcast"(%arg0) : (!mtf.tensor<d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
func.func @broadcast_backward(%a: !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32> {
  %0 = "mtf.broadcast"(%a) : (!mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  return %0 : !mtf.tensor<b=8@x, d=16@y, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// slice along a split dim: d's layout stays on the operand (moving the window is the
// next pass's job), the result's d is replicated; b passes through.
// CHECK-LABEL: func.func @slice_along_split_dim
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=8@(), f32>
// CHECK-NEXT: %0 = "mtf.slice"(%arg0) {dim = "d", start = 4 : i64} : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=8@(), f32>
// CHECK-NEXT: return %0 : !mtf.tensor<b=8@x, d=8@(), f32>
func.func @slice_along_split_dim(%a: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=8, f32> {
  %0 = "mtf.slice"(%a) {dim = "d", start = 4} : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=8, f32>
  return %0 : !mtf.tensor<b=8, d=8, f32>
}

// Nor backward: the result's d@y does not reach the operand's d; b does.
// CHECK-LABEL: func.func @slice_backward
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@(), f32>) -> !mtf.tensor<b=8@x, d=8@y, f32>
// CHECK-NEXT: %0 = "mtf.slice"(%arg0) {dim = "d", start = 4 : i64} : (!mtf.tensor<b=8@x, d=16@(), f32>) -> !mtf.tensor<b=8@x, d=8@y, f32>
func.func @slice_backward(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=8@y, f32> {
  %0 = "mtf.slice"(%a) {dim = "d", start = 4} : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=8@y, f32>
  return %0 : !mtf.tensor<b=8@x, d=8@y, f32>
}

// concat along a split dim: no layout of d passes between the operands or to the result;
// b is shared by all three.
// CHECK-LABEL: func.func @concat_along_split_dim
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>, %arg1: !mtf.tensor<b=8@x, d=16@(), f32>) -> !mtf.tensor<b=8@x, d=32@(), f32>
// CHECK-NEXT: %0 = "mtf.concat"(%arg0, %arg1) {dim = "d"} : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8@x, d=16@(), f32>) -> !mtf.tensor<b=8@x, d=32@(), f32>
func.func @concat_along_split_dim(%a: !mtf.tensor<b=8@x, d=16@y, f32>, %c: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=32, f32> {
  %0 = "mtf.concat"(%a, %c) {dim = "d"} : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=32, f32>
  return %0 : !mtf.tensor<b=8, d=32, f32>
}

// A rule on the along-dim still lays out every dim of that name on its own.
// CHECK-LABEL: func.func @concat_along_dim_with_rule
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), d=16@y, f32>, %arg1: !mtf.tensor<b=8@(), d=8@y, f32>) -> !mtf.tensor<b=8@(), d=24@y, f32>
// CHECK-NEXT: %0 = "mtf.concat"(%arg0, %arg1) {dim = "d"} : (!mtf.tensor<b=8@(), d=16@y, f32>, !mtf.tensor<b=8@(), d=8@y, f32>) -> !mtf.tensor<b=8@(), d=24@y, f32>
func.func @concat_along_dim_with_rule(%a: !mtf.tensor<b=8, d=16, f32>, %c: !mtf.tensor<b=8, d=8, f32>) -> !mtf.tensor<b=8, d=24, f32> attributes {mtf.layout_rules = {d = ["y"]}} {
  %0 = "mtf.concat"(%a, %c) {dim = "d"} : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<b=8, d=8, f32>) -> !mtf.tensor<b=8, d=24, f32>
  return %0 : !mtf.tensor<b=8, d=24, f32>
}

// pad along a split dim: like slice.
// CHECK-LABEL: func.func @pad_along_split_dim
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=20@(), f32>
// CHECK-NEXT: %0 = "mtf.pad"(%arg0) {dim = "d", high = 3 : i64, low = 1 : i64} : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=20@(), f32>
func.func @pad_along_split_dim(%a: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=20, f32> {
  %0 = "mtf.pad"(%a) {dim = "d", low = 1, high = 3} : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=20, f32>
  return %0 : !mtf.tensor<b=8, d=20, f32>
}

// shift along a split dim keeps the dim's size and index space: the layout passes (the
// boundary elements are a halo exchange for the next pass), forward and backward.
// CHECK-LABEL: func.func @shift_along_split_dim
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.shift"(%arg0) {dim = "d", offset = 1 : i64} : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
func.func @shift_along_split_dim(%a: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.shift"(%a) {dim = "d", offset = 1} : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %0 : !mtf.tensor<b=8, d=16, f32>
}

// CHECK-LABEL: func.func @shift_backward
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), d=16@(x,y), f32>) -> !mtf.tensor<b=8@(), d=16@(x,y), f32>
// CHECK-NEXT: %0 = "mtf.shift"(%arg0) {dim = "d", offset = -3 : i64, wrap = true} : (!mtf.tensor<b=8@(), d=16@(x,y), f32>) -> !mtf.tensor<b=8@(), d=16@(x,y), f32>
func.func @shift_backward(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16@(x,y), f32> {
  %0 = "mtf.shift"(%a) {dim = "d", offset = -3, wrap = true} : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16@(x,y), f32>
  return %0 : !mtf.tensor<b=8, d=16@(x,y), f32>
}
