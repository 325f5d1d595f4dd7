// The gather VJP's table cotangent, einsum(one_hot(ids), ct) over the ids' names, lowers as
// a scatter-add into the device's block (ids minus the block's first row), not as a
// materialized one-hot and a dot_general (lowering/stablehlo/scatter_add.py).
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func public @table_cotangent_is_a_scatter_add(
// CHECK: sdy.manual_computation{{.*}} (%[[IDS:arg[0-9]+]]: tensor<8x4xi32>, %[[CT:arg[0-9]+]]: tensor<8x4x2xf32>)
// CHECK-NOT: stablehlo.compare
// CHECK: %[[ROW:.*]] = stablehlo.subtract %[[IDS]], %{{.*}} : tensor<8x4xi32>
// CHECK-NOT: stablehlo.dot_general
// CHECK: "stablehlo.scatter"(%{{.*}}, %[[ROW]], %[[CT]])
// CHECK-SAME: scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 2>
// CHECK: stablehlo.add
// CHECK: (tensor<8x2xf32>, tensor<8x4xi32>, tensor<8x4x2xf32>) -> tensor<8x2xf32>
// CHECK-NOT: stablehlo.dot_general
// CHECK: sdy.return
func.func @table_cotangent_is_a_scatter_add(%ids: !mtf.tensor<b=8@(), s=4@(), i32>, %ct: !mtf.tensor<b=8@(), s=4@(), d=8@x, f32>) -> !mtf.tensor<v=16@y, d=8@x, f32> {
  %0 = "mtf.one_hot"(%ids) : (!mtf.tensor<b=8@(), s=4@(), i32>) -> !mtf.tensor<b=8@(), s=4@(), v=16@y, f32>
  %1 = "mtf.einsum"(%0, %ct) : (!mtf.tensor<b=8@(), s=4@(), v=16@y, f32>, !mtf.tensor<b=8@(), s=4@(), d=8@x, f32>) -> !mtf.tensor<v=16@y, d=8@x, f32>
  return %1 : !mtf.tensor<v=16@y, d=8@x, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Updates whose names come in another order are transposed to (ids' names, result's names).
// CHECK-LABEL: func.func public @updates_transposed_to_ids_then_rows(
// CHECK: stablehlo.transpose %{{.*}}, dims = [1, 2, 0]
// CHECK: "stablehlo.scatter"
// CHECK-SAME: update_window_dims = [2]
// CHECK-NOT: stablehlo.dot_general
func.func @updates_transposed_to_ids_then_rows(%ids: !mtf.tensor<b=8@(), s=4@(), i32>, %ct: !mtf.tensor<d=8@(), b=8@(), s=4@(), f32>) -> !mtf.tensor<v=16@(), d=8@(), f32> {
  %0 = "mtf.one_hot"(%ids) : (!mtf.tensor<b=8@(), s=4@(), i32>) -> !mtf.tensor<b=8@(), s=4@(), v=16@(), f32>
  %1 = "mtf.einsum"(%ct, %0) : (!mtf.tensor<d=8@(), b=8@(), s=4@(), f32>, !mtf.tensor<b=8@(), s=4@(), v=16@(), f32>) -> !mtf.tensor<v=16@(), d=8@(), f32>
  return %1 : !mtf.tensor<v=16@(), d=8@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A one_hot used twice stays a one_hot, and both einsums stay dots.
// CHECK-LABEL: func.func public @shared_one_hot_stays_a_dot(
// CHECK: stablehlo.compare
// CHECK: stablehlo.dot_general
// CHECK: stablehlo.dot_general
// CHECK-NOT: stablehlo.scatter
func.func @shared_one_hot_stays_a_dot(%ids: !mtf.tensor<b=8@(), i32>, %ct: !mtf.tensor<b=8@(), d=8@(), f32>) -> (!mtf.tensor<v=16@(), d=8@(), f32>, !mtf.tensor<v=16@(), d=8@(), f32>) {
  %0 = "mtf.one_hot"(%ids) : (!mtf.tensor<b=8@(), i32>) -> !mtf.tensor<b=8@(), v=16@(), f32>
  %1 = "mtf.einsum"(%0, %ct) : (!mtf.tensor<b=8@(), v=16@(), f32>, !mtf.tensor<b=8@(), d=8@(), f32>) -> !mtf.tensor<v=16@(), d=8@(), f32>
  %2 = "mtf.einsum"(%ct, %0) : (!mtf.tensor<b=8@(), d=8@(), f32>, !mtf.tensor<b=8@(), v=16@(), f32>) -> !mtf.tensor<v=16@(), d=8@(), f32>
  return %1, %2 : !mtf.tensor<v=16@(), d=8@(), f32>, !mtf.tensor<v=16@(), d=8@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Contracting the depth (cross-entropy's pick of the label's logit) is not a scatter.
// CHECK-LABEL: func.func public @depth_contraction_stays_a_dot(
// CHECK: stablehlo.compare
// CHECK: stablehlo.dot_general
// CHECK-NOT: stablehlo.scatter
func.func @depth_contraction_stays_a_dot(%ids: !mtf.tensor<b=8@(), i32>, %logp: !mtf.tensor<b=8@(), v=16@(), f32>) -> !mtf.tensor<b=8@(), f32> {
  %0 = "mtf.one_hot"(%ids) : (!mtf.tensor<b=8@(), i32>) -> !mtf.tensor<b=8@(), v=16@(), f32>
  %1 = "mtf.einsum"(%0, %logp) : (!mtf.tensor<b=8@(), v=16@(), f32>, !mtf.tensor<b=8@(), v=16@(), f32>) -> !mtf.tensor<b=8@(), f32>
  return %1 : !mtf.tensor<b=8@(), f32>
}
