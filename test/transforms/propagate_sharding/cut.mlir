// A cut (`mtf.shard {cut = [dims]}`, what mi.reshard writes) fixes its result's layout of
// those dims without binding its operand's: propagation lays each side out by its own ops and
// the change is resharded there. A plain constraint binds both sides.
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @cut_keeps_the_operand_free
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@(), d=16@(), f32>)
// CHECK: "mtf.exp"(%arg0) {{.*}} -> !mtf.tensor<b=8@(), d=16@(), f32>
// CHECK: "mtf.shard"({{.*}}) {cut = ["b"]} : (!mtf.tensor<b=8@(), d=16@(), f32>) -> !mtf.tensor<b=8@x, d=16@(), f32>
func.func @cut_keeps_the_operand_free(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
    attributes {mtf.mesh = @mesh} {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.shard"(%0) {cut = ["b"]} : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %2 = "mtf.tanh"(%1) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %2 : !mtf.tensor<b=8, d=16, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @constraint_binds_the_operand
// CHECK-SAME: (%arg0: !mtf.tensor<b=8@x, d=16@(), f32>)
func.func @constraint_binds_the_operand(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
    attributes {mtf.mesh = @mesh} {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %2 = "mtf.tanh"(%1) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %2 : !mtf.tensor<b=8, d=16, f32>
}

