// Every form of the !mtf.tensor type survives print -> parse -> print.
// RUN: meshir-opt %s | meshir-opt | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @free_layout
// CHECK-SAME: !mtf.tensor<batch=8, d_model=16, f32>
func.func @free_layout(%a: !mtf.tensor<batch=8, d_model=16, f32>) {
  return
}

// CHECK-LABEL: func.func @split_over_one_axis
// CHECK-SAME: !mtf.tensor<batch=8@x, d_ff=64@y, f32>
func.func @split_over_one_axis(%a: !mtf.tensor<batch=8@x, d_ff=64@y, f32>) {
  return
}

// CHECK-LABEL: func.func @split_over_two_axes
// CHECK-SAME: !mtf.tensor<batch=32@(x,y), d_model=512, bf16>
func.func @split_over_two_axes(%a: !mtf.tensor<batch=32@(x,y), d_model=512, bf16>) {
  return
}

// CHECK-LABEL: func.func @pinned_replicated
// CHECK-SAME: !mtf.tensor<batch=8@x, d_model=16@(), f32>
func.func @pinned_replicated(%a: !mtf.tensor<batch=8@x, d_model=16@(), f32>) {
  return
}

// CHECK-LABEL: func.func @partial_sum
// CHECK-SAME: !mtf.tensor<batch=8@x, d_model=16, f32, partial@y>
func.func @partial_sum(%a: !mtf.tensor<batch=8@x, d_model=16, f32, partial@y>) {
  return
}

// CHECK-LABEL: func.func @partial_over_two_axes
// CHECK-SAME: !mtf.tensor<d_model=16, f32, partial@(x,y)>
func.func @partial_over_two_axes(%a: !mtf.tensor<d_model=16, f32, partial@(x,y)>) {
  return
}

// CHECK-LABEL: func.func @partial_max
// CHECK-SAME: !mtf.tensor<batch=8, f32, partial_max@y>
func.func @partial_max(%a: !mtf.tensor<batch=8, f32, partial_max@y>) {
  return
}

// CHECK-LABEL: func.func @partial_min
// CHECK-SAME: !mtf.tensor<batch=8, f32, partial_min@y>
func.func @partial_min(%a: !mtf.tensor<batch=8, f32, partial_min@y>) {
  return
}

// CHECK-LABEL: func.func @scalar
// CHECK-SAME: !mtf.tensor<f32>
func.func @scalar(%a: !mtf.tensor<f32>) {
  return
}

// CHECK-LABEL: func.func @partial_scalar
// CHECK-SAME: !mtf.tensor<f32, partial@x>
func.func @partial_scalar(%a: !mtf.tensor<f32, partial@x>) {
  return
}

// CHECK-LABEL: func.func @element_types
// CHECK-SAME: !mtf.tensor<n=4, f32>
// CHECK-SAME: !mtf.tensor<n=4, bf16>
// CHECK-SAME: !mtf.tensor<n=4, f16>
// CHECK-SAME: !mtf.tensor<n=4, f64>
// CHECK-SAME: !mtf.tensor<n=4, i32>
// CHECK-SAME: !mtf.tensor<n=4, i64>
// CHECK-SAME: !mtf.tensor<n=4, i1>
func.func @element_types(%a: !mtf.tensor<n=4, f32>, %b: !mtf.tensor<n=4, bf16>, %c: !mtf.tensor<n=4, f16>,
                         %d: !mtf.tensor<n=4, f64>, %e: !mtf.tensor<n=4, i32>, %f: !mtf.tensor<n=4, i64>,
                         %g: !mtf.tensor<n=4, i1>) {
  return
}

// CHECK-LABEL: func.func @in_result_position
// CHECK-SAME: -> !mtf.tensor<batch=8@x, d=16@y, f32>
func.func @in_result_position(%a: !mtf.tensor<batch=8@x, d=16@y, f32>) -> !mtf.tensor<batch=8@x, d=16@y, f32> {
  return %a : !mtf.tensor<batch=8@x, d=16@y, f32>
}
