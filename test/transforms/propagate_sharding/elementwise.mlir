// Elementwise ops broadcast by name: a name's layout is shared by every operand and the
// result that has the name, whatever their dim orders, and flows forward (from annotated
// arguments) and backward (from annotated results and from mtf.shard on later values).
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Every unary op relays both layouts, cast included (element type changes, layout does not).
// CHECK-LABEL: func.func @unary_ops_relay_forward
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, i32>
// CHECK-NEXT: %0 = "mtf.neg"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.abs"(%0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %2 = "mtf.sign"(%1) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %3 = "mtf.relu"(%2) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %4 = "mtf.exp"(%3) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %5 = "mtf.log"(%4) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %6 = "mtf.sqrt"(%5) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %7 = "mtf.rsqrt"(%6) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %8 = "mtf.tanh"(%7) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %9 = "mtf.logistic"(%8) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %10 = "mtf.sin"(%9) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %11 = "mtf.cos"(%10) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %12 = "mtf.floor"(%11) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %13 = "mtf.stop_gradient"(%12) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %14 = "mtf.cast"(%13) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, i32>
// CHECK-NEXT: return %14 : !mtf.tensor<b=8@x, d=16@y, i32>
func.func @unary_ops_relay_forward(%a: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=16, i32> {
  %0 = "mtf.neg"(%a) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.abs"(%0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %2 = "mtf.sign"(%1) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %3 = "mtf.relu"(%2) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %4 = "mtf.exp"(%3) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %5 = "mtf.log"(%4) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %6 = "mtf.sqrt"(%5) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %7 = "mtf.rsqrt"(%6) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %8 = "mtf.tanh"(%7) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %9 = "mtf.logistic"(%8) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %10 = "mtf.sin"(%9) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %11 = "mtf.cos"(%10) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %12 = "mtf.floor"(%11) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %13 = "mtf.stop_gradient"(%12) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %14 = "mtf.cast"(%13) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, i32>
  return %14 : !mtf.tensor<b=8, d=16, i32>
}

// Every binary op relays layouts by name, here with operands in different dim orders: the
// layout belongs to the name, not to the position.
// CHECK-LABEL: func.func @binary_ops_match_by_name_not_position
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>, %arg1: !mtf.tensor<d=16@y, b=8@x, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.add"(%arg0, %arg1) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<d=16@y, b=8@x, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: %1 = "mtf.sub"(%0, %arg0) : (!mtf.tensor<d=16@y, b=8@x, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %2 = "mtf.mul"(%1, %arg1) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<d=16@y, b=8@x, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: %3 = "mtf.div"(%2, %arg0) : (!mtf.tensor<d=16@y, b=8@x, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %4 = "mtf.max"(%3, %arg1) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<d=16@y, b=8@x, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: %5 = "mtf.min"(%4, %arg0) : (!mtf.tensor<d=16@y, b=8@x, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %6 = "mtf.pow"(%5, %arg1) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<d=16@y, b=8@x, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: return %6 : !mtf.tensor<d=16@y, b=8@x, f32>
func.func @binary_ops_match_by_name_not_position(%a: !mtf.tensor<b=8@x, d=16@y, f32>, %c: !mtf.tensor<d=16, b=8, f32>) -> !mtf.tensor<d=16, b=8, f32> {
  %0 = "mtf.add"(%a, %c) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<d=16, b=8, f32>) -> !mtf.tensor<d=16, b=8, f32>
  %1 = "mtf.sub"(%0, %a) : (!mtf.tensor<d=16, b=8, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %2 = "mtf.mul"(%1, %c) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, b=8, f32>) -> !mtf.tensor<d=16, b=8, f32>
  %3 = "mtf.div"(%2, %a) : (!mtf.tensor<d=16, b=8, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %4 = "mtf.max"(%3, %c) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, b=8, f32>) -> !mtf.tensor<d=16, b=8, f32>
  %5 = "mtf.min"(%4, %a) : (!mtf.tensor<d=16, b=8, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %6 = "mtf.pow"(%5, %c) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, b=8, f32>) -> !mtf.tensor<d=16, b=8, f32>
  return %6 : !mtf.tensor<d=16, b=8, f32>
}

// -----

// An operand missing a name takes the layouts of the names it has (a bias gets d's layout,
// backward through the op, into a free argument); the result gets both.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @broadcast_operand_gets_layout_of_its_names
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>, %arg1: !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.mul"(%arg1, %arg0) : (!mtf.tensor<d=16@y, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: return %0 : !mtf.tensor<d=16@y, b=8@x, f32>
func.func @broadcast_operand_gets_layout_of_its_names(%a: !mtf.tensor<b=8@x, d=16@y, f32>, %bias: !mtf.tensor<d=16, f32>) -> !mtf.tensor<d=16, b=8, f32> {
  %0 = "mtf.mul"(%bias, %a) : (!mtf.tensor<d=16, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<d=16, b=8, f32>
  return %0 : !mtf.tensor<d=16, b=8, f32>
}

// Two operands with disjoint names: each brings the layout of its own name (outer product).
// CHECK-LABEL: func.func @disjoint_operands_combine
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, f32>, %arg1: !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.sub"(%arg0, %arg1) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16@y, b=8@x, f32>
// CHECK-NEXT: return %0 : !mtf.tensor<d=16@y, b=8@x, f32>
func.func @disjoint_operands_combine(%a: !mtf.tensor<b=8@x, f32>, %c: !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16, b=8, f32> {
  %0 = "mtf.sub"(%a, %c) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16, b=8, f32>
  return %0 : !mtf.tensor<d=16, b=8, f32>
}

// A scalar operand has no dims: nothing to lay out, nothing it constrains.
// CHECK-LABEL: func.func @scalar_operand
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, f32>, %arg1: !mtf.tensor<f32>) -> !mtf.tensor<b=8@x, f32>
// CHECK-NEXT: %0 = "mtf.mul"(%arg0, %arg1) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<f32>) -> !mtf.tensor<b=8@x, f32>
func.func @scalar_operand(%a: !mtf.tensor<b=8@x, f32>, %s: !mtf.tensor<f32>) -> !mtf.tensor<b=8, f32> {
  %0 = "mtf.mul"(%a, %s) : (!mtf.tensor<b=8@x, f32>, !mtf.tensor<f32>) -> !mtf.tensor<b=8, f32>
  return %0 : !mtf.tensor<b=8, f32>
}

// -----

// Compare gives i1 with the operands' layouts; select relays between its condition (missing
// a name here) and both branches; cast keeps the layout.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @compare_select_cast
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>, %arg1: !mtf.tensor<d=16@y, f32>, %arg2: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, i32>
// CHECK-NEXT: %0 = "mtf.gt"(%arg1, %arg1) : (!mtf.tensor<d=16@y, f32>, !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16@y, i1>
// CHECK-NEXT: %1 = "mtf.select"(%0, %arg0, %arg2) : (!mtf.tensor<d=16@y, i1>, !mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %2 = "mtf.cast"(%1) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, i32>
// CHECK-NEXT: return %2 : !mtf.tensor<b=8@x, d=16@y, i32>
func.func @compare_select_cast(%a: !mtf.tensor<b=8@x, d=16, f32>, %t: !mtf.tensor<d=16@y, f32>, %f: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, i32> {
  %p = "mtf.gt"(%t, %t) : (!mtf.tensor<d=16@y, f32>, !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<d=16, i1>
  %s = "mtf.select"(%p, %a, %f) : (!mtf.tensor<d=16, i1>, !mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %c = "mtf.cast"(%s) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, i32>
  return %c : !mtf.tensor<b=8, d=16, i32>
}

// Every compare op relays layouts, with broadcasting.
// CHECK-LABEL: func.func @compare_ops_relay
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, i32>, %arg1: !mtf.tensor<d=16@y, i32>)
// CHECK-NEXT: "mtf.eq"(%arg0, %arg1) : (!mtf.tensor<b=8@x, d=16@y, i32>, !mtf.tensor<d=16@y, i32>) -> !mtf.tensor<b=8@x, d=16@y, i1>
// CHECK-NEXT: "mtf.ne"(%arg1, %arg0) : (!mtf.tensor<d=16@y, i32>, !mtf.tensor<b=8@x, d=16@y, i32>) -> !mtf.tensor<d=16@y, b=8@x, i1>
// CHECK-NEXT: "mtf.lt"(%arg0, %arg1) : (!mtf.tensor<b=8@x, d=16@y, i32>, !mtf.tensor<d=16@y, i32>) -> !mtf.tensor<b=8@x, d=16@y, i1>
// CHECK-NEXT: "mtf.le"(%arg0, %arg1) : (!mtf.tensor<b=8@x, d=16@y, i32>, !mtf.tensor<d=16@y, i32>) -> !mtf.tensor<b=8@x, d=16@y, i1>
// CHECK-NEXT: "mtf.gt"(%arg0, %arg1) : (!mtf.tensor<b=8@x, d=16@y, i32>, !mtf.tensor<d=16@y, i32>) -> !mtf.tensor<b=8@x, d=16@y, i1>
// CHECK-NEXT: "mtf.ge"(%arg0, %arg1) : (!mtf.tensor<b=8@x, d=16@y, i32>, !mtf.tensor<d=16@y, i32>) -> !mtf.tensor<b=8@x, d=16@y, i1>
func.func @compare_ops_relay(%a: !mtf.tensor<b=8@x, d=16, i32>, %c: !mtf.tensor<d=16@y, i32>) {
  %0 = "mtf.eq"(%a, %c) : (!mtf.tensor<b=8@x, d=16, i32>, !mtf.tensor<d=16@y, i32>) -> !mtf.tensor<b=8, d=16, i1>
  %1 = "mtf.ne"(%c, %a) : (!mtf.tensor<d=16@y, i32>, !mtf.tensor<b=8@x, d=16, i32>) -> !mtf.tensor<d=16, b=8, i1>
  %2 = "mtf.lt"(%a, %c) : (!mtf.tensor<b=8@x, d=16, i32>, !mtf.tensor<d=16@y, i32>) -> !mtf.tensor<b=8, d=16, i1>
  %3 = "mtf.le"(%a, %c) : (!mtf.tensor<b=8@x, d=16, i32>, !mtf.tensor<d=16@y, i32>) -> !mtf.tensor<b=8, d=16, i1>
  %4 = "mtf.gt"(%a, %c) : (!mtf.tensor<b=8@x, d=16, i32>, !mtf.tensor<d=16@y, i32>) -> !mtf.tensor<b=8, d=16, i1>
  %5 = "mtf.ge"(%a, %c) : (!mtf.tensor<b=8@x, d=16, i32>, !mtf.tensor<d=16@y, i32>) -> !mtf.tensor<b=8, d=16, i1>
  return
}

// -----

// Backward from a layout written on the function result (and so on the returned value):
// it reaches every free value before it, the broadcast operand included.
sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @backward_from_annotated_result
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, f32>, %arg1: !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.exp"(%arg0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.add"(%0, %arg1) : (!mtf.tensor<b=8@x, d=16@y, f32>, !mtf.tensor<d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@x, d=16@y, f32>
func.func @backward_from_annotated_result(%a: !mtf.tensor<b=8, d=16, f32>, %c: !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32> {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.add"(%0, %c) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  return %1 : !mtf.tensor<b=8@x, d=16@y, f32>
}

// Backward from an mtf.shard on a later value: the computation before it already happens in
// the constrained layout (no reshard needed), and the shard stays.
// CHECK-LABEL: func.func @backward_from_shard_on_later_value
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@y, d=16@x, f32>, %arg1: !mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: %0 = "mtf.sqrt"(%arg0) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: %1 = "mtf.div"(%0, %arg1) : (!mtf.tensor<b=8@y, d=16@x, f32>, !mtf.tensor<b=8@y, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: %2 = "mtf.shard"(%1) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: %3 = "mtf.neg"(%2) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
// CHECK-NEXT: return %3 : !mtf.tensor<b=8@y, d=16@x, f32>
func.func @backward_from_shard_on_later_value(%a: !mtf.tensor<b=8, d=16, f32>, %c: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.sqrt"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.div"(%0, %c) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %2 = "mtf.shard"(%1) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
  %3 = "mtf.neg"(%2) : (!mtf.tensor<b=8@y, d=16@x, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %3 : !mtf.tensor<b=8, d=16, f32>
}

// Forward and backward at once: the i1 condition's layout comes from a later shard, the
// branch's from an argument, and the free branch takes both.
// CHECK-LABEL: func.func @select_meets_layouts_from_both_sides
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@y, i1>, %arg1: !mtf.tensor<b=8@x, f32>, %arg2: !mtf.tensor<d=16@y, b=8@x, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %0 = "mtf.select"(%arg0, %arg1, %arg2) : (!mtf.tensor<b=8@x, d=16@y, i1>, !mtf.tensor<b=8@x, f32>, !mtf.tensor<d=16@y, b=8@x, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
// CHECK-NEXT: return %1 : !mtf.tensor<b=8@x, d=16@y, f32>
func.func @select_meets_layouts_from_both_sides(%p: !mtf.tensor<b=8, d=16, i1>, %t: !mtf.tensor<b=8@x, f32>, %f: !mtf.tensor<d=16, b=8, f32>) -> !mtf.tensor<b=8, d=16@y, f32> {
  %0 = "mtf.select"(%p, %t, %f) : (!mtf.tensor<b=8, d=16, i1>, !mtf.tensor<b=8@x, f32>, !mtf.tensor<d=16, b=8, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16@y, f32>
  return %1 : !mtf.tensor<b=8, d=16@y, f32>
}
