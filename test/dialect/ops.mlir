// Every mtf op prints in generic form and parses back to the same op and types.
// RUN: meshir-opt %s | filecheck %s
// RUN: meshir-opt %s | meshir-opt | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @unary_ops_keep_type
func.func @unary_ops_keep_type(%a: !mtf.tensor<b=8@x, d=16, f32>) {
  // CHECK: "mtf.neg"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %0 = "mtf.neg"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.abs"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %1 = "mtf.abs"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.sign"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %2 = "mtf.sign"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.relu"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %3 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.exp"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %4 = "mtf.exp"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.log"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %5 = "mtf.log"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.sqrt"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %6 = "mtf.sqrt"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.rsqrt"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %7 = "mtf.rsqrt"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.tanh"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %8 = "mtf.tanh"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.logistic"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %9 = "mtf.logistic"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.sin"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %10 = "mtf.sin"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.cos"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %11 = "mtf.cos"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.floor"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %12 = "mtf.floor"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.stop_gradient"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %13 = "mtf.stop_gradient"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  return
}

// CHECK-LABEL: func.func @integer_unary_ops
func.func @integer_unary_ops(%a: !mtf.tensor<n=8, i32>) {
  // CHECK: "mtf.neg"(%arg0) : (!mtf.tensor<n=8, i32>) -> !mtf.tensor<n=8, i32>
  %0 = "mtf.neg"(%a) : (!mtf.tensor<n=8, i32>) -> !mtf.tensor<n=8, i32>
  // CHECK: "mtf.abs"(%arg0) : (!mtf.tensor<n=8, i32>) -> !mtf.tensor<n=8, i32>
  %1 = "mtf.abs"(%a) : (!mtf.tensor<n=8, i32>) -> !mtf.tensor<n=8, i32>
  return
}

// CHECK-LABEL: func.func @binary_ops_broadcast_by_name
func.func @binary_ops_broadcast_by_name(%a: !mtf.tensor<b=8@x, d=16, f32>, %c: !mtf.tensor<d=16, f32>) {
  // CHECK: "mtf.add"(%arg0, %arg1) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %0 = "mtf.add"(%a, %c) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.sub"(%arg1, %arg0) : (!mtf.tensor<d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<d=16, b=8@x, f32>
  %1 = "mtf.sub"(%c, %a) : (!mtf.tensor<d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<d=16, b=8@x, f32>
  // CHECK: "mtf.mul"(%arg0, %arg0) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %2 = "mtf.mul"(%a, %a) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.div"(%arg0, %arg1) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %3 = "mtf.div"(%a, %c) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.max"(%arg0, %arg0) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %4 = "mtf.max"(%a, %a) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.min"(%arg0, %arg0) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %5 = "mtf.min"(%a, %a) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.pow"(%arg0, %arg1) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %6 = "mtf.pow"(%a, %c) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  return
}

// CHECK-LABEL: func.func @compare_ops_give_i1
func.func @compare_ops_give_i1(%a: !mtf.tensor<b=8@x, d=16, f32>, %c: !mtf.tensor<d=16, f32>) {
  // CHECK: "mtf.eq"(%arg0, %arg1) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  %0 = "mtf.eq"(%a, %c) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  // CHECK: "mtf.ne"(%arg0, %arg0) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  %1 = "mtf.ne"(%a, %a) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  // CHECK: "mtf.lt"(%arg0, %arg0) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  %2 = "mtf.lt"(%a, %a) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  // CHECK: "mtf.le"(%arg0, %arg0) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  %3 = "mtf.le"(%a, %a) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  // CHECK: "mtf.gt"(%arg0, %arg0) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  %4 = "mtf.gt"(%a, %a) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  // CHECK: "mtf.ge"(%arg0, %arg0) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  %5 = "mtf.ge"(%a, %a) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i1>
  return
}

// CHECK-LABEL: func.func @cast_and_select
func.func @cast_and_select(%a: !mtf.tensor<b=8@x, d=16, f32>, %p: !mtf.tensor<b=8@x, d=16, i1>) {
  // CHECK: "mtf.cast"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i32>
  %0 = "mtf.cast"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, i32>
  // CHECK: "mtf.cast"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, bf16>
  %1 = "mtf.cast"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, bf16>
  // CHECK: "mtf.select"(%arg1, %arg0, %arg0) : (!mtf.tensor<b=8@x, d=16, i1>, !mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %2 = "mtf.select"(%p, %a, %a) : (!mtf.tensor<b=8@x, d=16, i1>, !mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  return
}

// A bf16 contraction may return f32 (accumulated and kept wide: mi.Precision's gradients).
// CHECK-LABEL: func.func @einsum_returns_a_wider_float
func.func @einsum_returns_a_wider_float(%x: !mtf.tensor<b=8, d=16, bf16>, %w: !mtf.tensor<d=16, f=4, bf16>) {
  // CHECK: "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<b=8, d=16, bf16>, !mtf.tensor<d=16, f=4, bf16>) -> !mtf.tensor<b=8, f=4, f32>
  %0 = "mtf.einsum"(%x, %w) : (!mtf.tensor<b=8, d=16, bf16>, !mtf.tensor<d=16, f=4, bf16>) -> !mtf.tensor<b=8, f=4, f32>
  return
}

// CHECK-LABEL: func.func @einsum_contracts_missing_names
func.func @einsum_contracts_missing_names(%x: !mtf.tensor<batch=8@x, d_model=16, f32>, %w: !mtf.tensor<d_model=16, d_ff=64@y, f32>) {
  // CHECK: "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<batch=8@x, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
  %0 = "mtf.einsum"(%x, %w) : (!mtf.tensor<batch=8@x, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
  // CHECK: "mtf.einsum"(%arg0) : (!mtf.tensor<batch=8@x, d_model=16, f32>) -> !mtf.tensor<f32>
  %1 = "mtf.einsum"(%x) : (!mtf.tensor<batch=8@x, d_model=16, f32>) -> !mtf.tensor<f32>
  // CHECK: "mtf.einsum"(%arg0, %arg1, %arg0) : (!mtf.tensor<batch=8@x, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64@y, f32>, !mtf.tensor<batch=8@x, d_model=16, f32>) -> !mtf.tensor<batch=8@x, d_model=16, d_ff=64@y, f32>
  %2 = "mtf.einsum"(%x, %w, %x) : (!mtf.tensor<batch=8@x, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=64@y, f32>, !mtf.tensor<batch=8@x, d_model=16, f32>) -> !mtf.tensor<batch=8@x, d_model=16, d_ff=64@y, f32>
  return
}

// CHECK-LABEL: func.func @einsum_over_split_name_is_partial
func.func @einsum_over_split_name_is_partial(%x: !mtf.tensor<batch=8, d_model=16@y, f32>, %w: !mtf.tensor<d_model=16@y, d_ff=64, f32>) {
  // CHECK: "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<batch=8, d_model=16@y, f32>, !mtf.tensor<d_model=16@y, d_ff=64, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32, partial@y>
  %0 = "mtf.einsum"(%x, %w) : (!mtf.tensor<batch=8, d_model=16@y, f32>, !mtf.tensor<d_model=16@y, d_ff=64, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32, partial@y>
  return
}

// CHECK-LABEL: func.func @reductions_drop_names
func.func @reductions_drop_names(%a: !mtf.tensor<b=8@x, d=16, f32>) {
  // CHECK: "mtf.reduce_sum"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, f32>
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, f32>
  // CHECK: "mtf.reduce_max"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<d=16, f32>
  %1 = "mtf.reduce_max"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<d=16, f32>
  // CHECK: "mtf.reduce_min"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<f32>
  %2 = "mtf.reduce_min"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<f32>
  return
}

// CHECK-LABEL: func.func @shape_ops
func.func @shape_ops(%a: !mtf.tensor<b=8@x, d=16, f32>, %c: !mtf.tensor<d=16, f32>) {
  // CHECK: "mtf.broadcast"(%arg1) : (!mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %0 = "mtf.broadcast"(%c) : (!mtf.tensor<d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.reshape"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, h=4, k=4, f32>
  %1 = "mtf.reshape"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, h=4, k=4, f32>
  // CHECK: "mtf.rename"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, e=16, f32>
  %2 = "mtf.rename"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, e=16, f32>
  // CHECK: "mtf.transpose"(%arg0) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<d=16, b=8@x, f32>
  %3 = "mtf.transpose"(%a) : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<d=16, b=8@x, f32>
  // CHECK: "mtf.slice"(%arg0) {dim = "d", start = 2 : i64} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=4, f32>
  %4 = "mtf.slice"(%a) {dim = "d", start = 2} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=4, f32>
  // CHECK: "mtf.concat"(%arg0, %arg0) {dim = "d"} : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=32, f32>
  %5 = "mtf.concat"(%a, %a) {dim = "d"} : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=32, f32>
  // CHECK: "mtf.pad"(%arg0) {dim = "d", high = 2 : i64, low = 1 : i64, value = 5.000000e-01 : f64} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=19, f32>
  %6 = "mtf.pad"(%a) {dim = "d", low = 1, high = 2, value = 0.5} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=19, f32>
  // CHECK: "mtf.pad"(%arg0) {dim = "d", high = 0 : i64, low = 0 : i64} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %7 = "mtf.pad"(%a) {dim = "d", low = 0, high = 0} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.shift"(%arg0) {dim = "d", offset = 1 : i64} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %8 = "mtf.shift"(%a) {dim = "d", offset = 1} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.shift"(%arg0) {dim = "d", fill = 2.000000e+00 : f64, offset = -3 : i64, wrap = true} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  %9 = "mtf.shift"(%a) {dim = "d", offset = -3, wrap = true, fill = 2.0} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.split"(%arg0) {dim = "d"} : (!mtf.tensor<b=8@x, d=16, f32>) -> (!mtf.tensor<b=8@x, d=4, f32>, !mtf.tensor<b=8@x, d=12, f32>)
  %10:2 = "mtf.split"(%a) {dim = "d"} : (!mtf.tensor<b=8@x, d=16, f32>) -> (!mtf.tensor<b=8@x, d=4, f32>, !mtf.tensor<b=8@x, d=12, f32>)
  return
}

// CHECK-LABEL: func.func @creation_ops
func.func @creation_ops() {
  // CHECK: "mtf.constant"() {value = 1.500000e+00 : f32} : () -> !mtf.tensor<r=2, c=2, f32>
  %0 = "mtf.constant"() {value = 1.5 : f32} : () -> !mtf.tensor<r=2, c=2, f32>
  // CHECK: "mtf.constant"() {value = dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>} : () -> !mtf.tensor<r=2, c=2, f32>
  %1 = "mtf.constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> !mtf.tensor<r=2, c=2, f32>
  // CHECK: "mtf.constant"() {value = dense<7> : tensor<2x4xi32>} : () -> !mtf.tensor<r=2, c=4@x, i32>
  %2 = "mtf.constant"() {value = dense<7> : tensor<2x4xi32>} : () -> !mtf.tensor<r=2, c=4@x, i32>
  // CHECK: "mtf.constant"() {value = 3 : i64} : () -> !mtf.tensor<i64>
  %3 = "mtf.constant"() {value = 3 : i64} : () -> !mtf.tensor<i64>
  // CHECK: "mtf.iota"() {dim = "n"} : () -> !mtf.tensor<n=8@x, i32>
  %4 = "mtf.iota"() {dim = "n"} : () -> !mtf.tensor<n=8@x, i32>
  // CHECK: "mtf.random_uniform"() {seed = 42 : i64} : () -> !mtf.tensor<n=8@x, f32>
  %5 = "mtf.random_uniform"() {seed = 42} : () -> !mtf.tensor<n=8@x, f32>
  // CHECK: "mtf.random_uniform"() {maxval = 1.000000e+00 : f64, minval = -1.000000e+00 : f64, seed = 42 : i64} : () -> !mtf.tensor<n=8@x, bf16>
  %6 = "mtf.random_uniform"() {seed = 42, minval = -1.0, maxval = 1.0} : () -> !mtf.tensor<n=8@x, bf16>
  // CHECK: "mtf.random_normal"() {seed = 7 : i64} : () -> !mtf.tensor<n=8@x, f32>
  %7 = "mtf.random_normal"() {seed = 7} : () -> !mtf.tensor<n=8@x, f32>
  // CHECK: "mtf.random_normal"() {mean = 1.000000e+00 : f64, seed = 7 : i64, stddev = 2.000000e+00 : f64} : () -> !mtf.tensor<n=8@x, f64>
  %8 = "mtf.random_normal"() {seed = 7, mean = 1.0, stddev = 2.0} : () -> !mtf.tensor<n=8@x, f64>
  return
}

// A seed operand instead of the attribute: a 0-d i32 tensor computed at run time.
// CHECK-LABEL: func.func @random_seed_operand
func.func @random_seed_operand(%seed: !mtf.tensor<i32>) {
  // CHECK: "mtf.random_uniform"(%arg0) {maxval = 2.000000e+00 : f64} : (!mtf.tensor<i32>) -> !mtf.tensor<n=8@x, f32>
  %0 = "mtf.random_uniform"(%seed) {maxval = 2.0} : (!mtf.tensor<i32>) -> !mtf.tensor<n=8@x, f32>
  // CHECK: "mtf.random_normal"(%arg0) : (!mtf.tensor<i32>) -> !mtf.tensor<n=8@x, bf16>
  %1 = "mtf.random_normal"(%seed) : (!mtf.tensor<i32>) -> !mtf.tensor<n=8@x, bf16>
  return
}

// CHECK-LABEL: func.func @indexing_ops
func.func @indexing_ops(%ids: !mtf.tensor<b=8@x, i32>, %table: !mtf.tensor<v=100, d=16@y, f32>) {
  // CHECK: "mtf.one_hot"(%arg0) : (!mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, v=10, f32>
  %0 = "mtf.one_hot"(%ids) : (!mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, v=10, f32>
  // CHECK: "mtf.gather"(%arg1, %arg0) {dim = "v"} : (!mtf.tensor<v=100, d=16@y, f32>, !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  %1 = "mtf.gather"(%table, %ids) {dim = "v"} : (!mtf.tensor<v=100, d=16@y, f32>, !mtf.tensor<b=8@x, i32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  return
}

// CHECK-LABEL: func.func @selection_ops
func.func @selection_ops(%x: !mtf.tensor<b=8@x, v=100@y, f32>, %n: !mtf.tensor<b=8, s=4, i32>) {
  // CHECK: %{{.*}}:2 = "mtf.top_k"(%arg0) {bytes_per_device = 96 : i64, dim = "v"} : (!mtf.tensor<b=8@x, v=100@y, f32>) -> (!mtf.tensor<b=8@x, k=3, f32>, !mtf.tensor<b=8@x, k=3, i32>)
  %0:2 = "mtf.top_k"(%x) {dim = "v", bytes_per_device = 96 : i64} : (!mtf.tensor<b=8@x, v=100@y, f32>) -> (!mtf.tensor<b=8@x, k=3, f32>, !mtf.tensor<b=8@x, k=3, i32>)
  // CHECK: "mtf.argmax"(%arg0) {dim = "v"} : (!mtf.tensor<b=8@x, v=100@y, f32>) -> !mtf.tensor<b=8@x, i32>
  %1 = "mtf.argmax"(%x) {dim = "v"} : (!mtf.tensor<b=8@x, v=100@y, f32>) -> !mtf.tensor<b=8@x, i32>
  // CHECK: "mtf.argmin"(%arg1) {dim = "s"} : (!mtf.tensor<b=8, s=4, i32>) -> !mtf.tensor<b=8, i32>
  %2 = "mtf.argmin"(%n) {dim = "s"} : (!mtf.tensor<b=8, s=4, i32>) -> !mtf.tensor<b=8, i32>
  return
}

// CHECK-LABEL: func.func @cumulative_ops
func.func @cumulative_ops(%x: !mtf.tensor<b=8@x, v=100@y, f32>) {
  // CHECK: "mtf.cumsum"(%arg0) {dim = "v"} : (!mtf.tensor<b=8@x, v=100@y, f32>) -> !mtf.tensor<b=8@x, v=100@y, f32>
  %0 = "mtf.cumsum"(%x) {dim = "v"} : (!mtf.tensor<b=8@x, v=100@y, f32>) -> !mtf.tensor<b=8@x, v=100@y, f32>
  // CHECK: "mtf.cumprod"(%arg0) {bytes_per_device = 32 : i64, dim = "v", exclusive = true, reverse = true} : (!mtf.tensor<b=8@x, v=100@y, f32>) -> !mtf.tensor<b=8@x, v=100@y, f32>
  %1 = "mtf.cumprod"(%x) {dim = "v", exclusive = true, reverse = true, bytes_per_device = 32 : i64} : (!mtf.tensor<b=8@x, v=100@y, f32>) -> !mtf.tensor<b=8@x, v=100@y, f32>
  return
}

// CHECK-LABEL: func.func @attention_ops
func.func @attention_ops(%q: !mtf.tensor<b=8@x, l=16, d=4, f32>, %k: !mtf.tensor<b=8@x, m=32, d=4, f32>, %mask: !mtf.tensor<l=16, m=32, i1>) {
  // CHECK: "mtf.dot_product_attention"(%arg0, %arg1, %arg1, %arg2) {causal = true, has_mask = true, key_dim = "d", key_length = "m", query_length = "l", scale = 5.000000e-01 : f64, value_dim = "d"} : (!mtf.tensor<b=8@x, l=16, d=4, f32>, !mtf.tensor<b=8@x, m=32, d=4, f32>, !mtf.tensor<b=8@x, m=32, d=4, f32>, !mtf.tensor<l=16, m=32, i1>) -> !mtf.tensor<b=8@x, l=16, d=4, f32>
  %0 = "mtf.dot_product_attention"(%q, %k, %k, %mask) {query_length = "l", key_length = "m", key_dim = "d", value_dim = "d", causal = true, scale = 0.5 : f64, has_mask = true} : (!mtf.tensor<b=8@x, l=16, d=4, f32>, !mtf.tensor<b=8@x, m=32, d=4, f32>, !mtf.tensor<b=8@x, m=32, d=4, f32>, !mtf.tensor<l=16, m=32, i1>) -> !mtf.tensor<b=8@x, l=16, d=4, f32>
  // CHECK: "mtf.dot_product_attention_grad"(%arg0, %arg1, %arg1, %0, %0) {block_size = 8 : i64, key_dim = "d", key_length = "m", query_length = "l", scale = 5.000000e-01 : f64, value_dim = "d"} : ({{.*}}) -> (!mtf.tensor<b=8@x, l=16, d=4, f32>, !mtf.tensor<b=8@x, m=32, d=4, f32>, !mtf.tensor<b=8@x, m=32, d=4, f32>)
  %1:3 = "mtf.dot_product_attention_grad"(%q, %k, %k, %0, %0) {query_length = "l", key_length = "m", key_dim = "d", value_dim = "d", scale = 0.5 : f64, block_size = 8 : i64} : (!mtf.tensor<b=8@x, l=16, d=4, f32>, !mtf.tensor<b=8@x, m=32, d=4, f32>, !mtf.tensor<b=8@x, m=32, d=4, f32>, !mtf.tensor<b=8@x, l=16, d=4, f32>, !mtf.tensor<b=8@x, l=16, d=4, f32>) -> (!mtf.tensor<b=8@x, l=16, d=4, f32>, !mtf.tensor<b=8@x, m=32, d=4, f32>, !mtf.tensor<b=8@x, m=32, d=4, f32>)
  return
}

// CHECK-LABEL: func.func @dynamic_window_ops
func.func @dynamic_window_ops(%x: !mtf.tensor<b=8@x, v=100@y, f32>, %u: !mtf.tensor<b=8@x, v=1, f32>, %s: !mtf.tensor<i32>) {
  // CHECK: "mtf.dynamic_slice"(%arg0, %arg2) {dim = "v"} : (!mtf.tensor<b=8@x, v=100@y, f32>, !mtf.tensor<i32>) -> !mtf.tensor<b=8@x, v=3, f32>
  %0 = "mtf.dynamic_slice"(%x, %s) {dim = "v"} : (!mtf.tensor<b=8@x, v=100@y, f32>, !mtf.tensor<i32>) -> !mtf.tensor<b=8@x, v=3, f32>
  // CHECK: "mtf.dynamic_update_slice"(%arg0, %arg1, %arg2) {dim = "v"} : (!mtf.tensor<b=8@x, v=100@y, f32>, !mtf.tensor<b=8@x, v=1, f32>, !mtf.tensor<i32>) -> !mtf.tensor<b=8@x, v=100@y, f32>
  %1 = "mtf.dynamic_update_slice"(%x, %u, %s) {dim = "v"} : (!mtf.tensor<b=8@x, v=100@y, f32>, !mtf.tensor<b=8@x, v=1, f32>, !mtf.tensor<i32>) -> !mtf.tensor<b=8@x, v=100@y, f32>
  return
}

// CHECK-LABEL: func.func @shard_constrains_layout
func.func @shard_constrains_layout(%a: !mtf.tensor<b=8, d=16, f32>) {
  // CHECK: "mtf.shard"(%arg0) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  return
}

// CHECK-LABEL: func.func @all_reduce_clears_partial
func.func @all_reduce_clears_partial(%p: !mtf.tensor<b=8@x, d=16, f32, partial@y>, %q: !mtf.tensor<d=16, f32, partial_max@(x,y)>) {
  // CHECK: "mtf.all_reduce"(%arg0) {axes = ["y"], reduction = "sum"} : (!mtf.tensor<b=8@x, d=16, f32, partial@y>) -> !mtf.tensor<b=8@x, d=16, f32>
  %0 = "mtf.all_reduce"(%p) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<b=8@x, d=16, f32, partial@y>) -> !mtf.tensor<b=8@x, d=16, f32>
  // CHECK: "mtf.all_reduce"(%arg1) {axes = ["x"], reduction = "max"} : (!mtf.tensor<d=16, f32, partial_max@(x,y)>) -> !mtf.tensor<d=16, f32, partial_max@y>
  %1 = "mtf.all_reduce"(%q) {reduction = "max", axes = ["x"]} : (!mtf.tensor<d=16, f32, partial_max@(x,y)>) -> !mtf.tensor<d=16, f32, partial_max@y>
  return
}

// CHECK-LABEL: func.func @all_gather_unsplits
func.func @all_gather_unsplits(%a: !mtf.tensor<b=8@x, d=16, f32>, %c: !mtf.tensor<b=32@(x,y), d=16, f32>) {
  // CHECK: "mtf.all_gather"(%arg0) {axes = ["x"], dim = "b"} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  %0 = "mtf.all_gather"(%a) {dim = "b", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  // CHECK: "mtf.all_gather"(%arg1) {axes = ["y"], dim = "b"} : (!mtf.tensor<b=32@(x,y), d=16, f32>) -> !mtf.tensor<b=32@x, d=16, f32>
  %1 = "mtf.all_gather"(%c) {dim = "b", axes = ["y"]} : (!mtf.tensor<b=32@(x,y), d=16, f32>) -> !mtf.tensor<b=32@x, d=16, f32>
  return
}

// CHECK-LABEL: func.func @reduce_scatter_splits_partial
func.func @reduce_scatter_splits_partial(%p: !mtf.tensor<b=8@x, d=16, f32, partial@y>) {
  // CHECK: "mtf.reduce_scatter"(%arg0) {axes = ["y"], dim = "d", reduction = "sum"} : (!mtf.tensor<b=8@x, d=16, f32, partial@y>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  %0 = "mtf.reduce_scatter"(%p) {reduction = "sum", dim = "d", axes = ["y"]} : (!mtf.tensor<b=8@x, d=16, f32, partial@y>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  return
}

// CHECK-LABEL: func.func @all_slice_splits_locally
func.func @all_slice_splits_locally(%a: !mtf.tensor<b=8@x, d=16, f32>) {
  // CHECK: "mtf.all_slice"(%arg0) {axes = ["y"], dim = "d"} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  %0 = "mtf.all_slice"(%a) {dim = "d", axes = ["y"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  return
}

// CHECK-LABEL: func.func @all_to_all_moves_axis
func.func @all_to_all_moves_axis(%a: !mtf.tensor<b=8@x, d=16, f32>) {
  // CHECK: "mtf.all_to_all"(%arg0) {axes = ["x"], dst_dim = "d", src_dim = "b"} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16@x, f32>
  %0 = "mtf.all_to_all"(%a) {src_dim = "b", dst_dim = "d", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16@x, f32>
  return
}

// CHECK-LABEL: func.func @collective_permute_keeps_shard_shape
func.func @collective_permute_keeps_shard_shape(%a: !mtf.tensor<b=32@(x,y), d=16, f32>) {
  // CHECK: "mtf.collective_permute"(%arg0) : (!mtf.tensor<b=32@(x,y), d=16, f32>) -> !mtf.tensor<b=32@(y,x), d=16, f32>
  %0 = "mtf.collective_permute"(%a) : (!mtf.tensor<b=32@(x,y), d=16, f32>) -> !mtf.tensor<b=32@(y,x), d=16, f32>
  return
}
