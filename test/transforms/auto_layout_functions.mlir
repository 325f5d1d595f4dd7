// mtf-auto-layout chooses each public function's rules alone: @f's choice does not constrain
// @g's (each candidate is measured on its own function), and a private callee (mi.remat's)
// takes no rules of its own: the search sees its tensors inlined, so @h never puts batch and
// d_ff (which only the callee's tensor holds together) on one axis.
// RUN: meshir-opt %s --mtf-auto-layout="goal=memory" | filecheck %s
// RUN: meshir-opt %s --mtf-auto-layout="goal=memory" --mtf-propagate-sharding --mtf-insert-collectives | filecheck %s --check-prefix=PARTITIONED

sdy.mesh @mesh = <["x"=4, "y"=2]>
// CHECK-LABEL: func.func private @ffn_body
// CHECK-NOT: mtf.layout_rules
func.func private @ffn_body(%x: !mtf.tensor<batch=32, d_model=16, f32>, %w1: !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<batch=32, d_ff=64, f32> attributes {mtf.mesh = @mesh} {
  %h = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=32, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<batch=32, d_ff=64, f32>
  %r = "mtf.relu"(%h) : (!mtf.tensor<batch=32, d_ff=64, f32>) -> !mtf.tensor<batch=32, d_ff=64, f32>
  return %r : !mtf.tensor<batch=32, d_ff=64, f32>
}
// CHECK-LABEL: func.func @f
// CHECK-SAME: mtf.layout_rules = {batch = ["x"], d_ff = ["y"]}
func.func @f(%x: !mtf.tensor<batch=64, d_model=16, f32>, %w1: !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<batch=64, d_ff=64, f32> attributes {mtf.mesh = @mesh} {
  %h = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=64, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<batch=64, d_ff=64, f32>
  return %h : !mtf.tensor<batch=64, d_ff=64, f32>
}
// CHECK-LABEL: func.func @g
// CHECK-SAME: mtf.layout_rules = {batch = ["x"], d_model2 = ["y"]}
func.func @g(%x: !mtf.tensor<batch=64, d_model=16, f32>, %w: !mtf.tensor<d_model=16, d_model2=64, f32>) -> !mtf.tensor<batch=64, d_model2=64, f32> attributes {mtf.mesh = @mesh} {
  %h = "mtf.einsum"(%x, %w) : (!mtf.tensor<batch=64, d_model=16, f32>, !mtf.tensor<d_model=16, d_model2=64, f32>) -> !mtf.tensor<batch=64, d_model2=64, f32>
  return %h : !mtf.tensor<batch=64, d_model2=64, f32>
}
// CHECK-LABEL: func.func @h
// CHECK-SAME: mtf.layout_rules = {batch = ["y"], d_ff = ["x"]}
// PARTITIONED-LABEL: func.func @h
// PARTITIONED-SAME: d_ff=64@x
func.func @h(%x: !mtf.tensor<batch=32, d_model=16, f32>, %w1: !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<d_model=16, f32> attributes {mtf.mesh = @mesh} {
  %r = call @ffn_body(%x, %w1) {mtf.remat} : (!mtf.tensor<batch=32, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64, f32>) -> !mtf.tensor<batch=32, d_ff=64, f32>
  %y = "mtf.einsum"(%r, %x) : (!mtf.tensor<batch=32, d_ff=64, f32>, !mtf.tensor<batch=32, d_model=16, f32>) -> !mtf.tensor<d_model=16, f32>
  return %y : !mtf.tensor<d_model=16, f32>
}
