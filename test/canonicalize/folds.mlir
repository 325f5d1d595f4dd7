// mtf-canonicalize folds trivial ops by the `fold` methods of the op classes: each fold is
// exact for every input (NaN, inf and -0.0 included) and keeps the full type of the value.
// RUN: meshir-opt %s --mtf-canonicalize | filecheck %s
// The result verifies and canonicalizing again changes nothing.
// RUN: meshir-opt %s --mtf-canonicalize --mtf-verify --mtf-canonicalize | filecheck %s

sdy.mesh @mesh = <["x"=2, "y"=2]>

// A reshape, broadcast, transpose, rename or cast to its operand's own type is the operand.
// CHECK-LABEL: func.func @identities
// CHECK-NEXT: return %arg0 : !mtf.tensor<b=4@x, d=6, f32>
func.func @identities(%a: !mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@x, d=6, f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@x, d=6, f32>
  %1 = "mtf.broadcast"(%0) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@x, d=6, f32>
  %2 = "mtf.transpose"(%1) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@x, d=6, f32>
  %3 = "mtf.rename"(%2) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@x, d=6, f32>
  %4 = "mtf.cast"(%3) : (!mtf.tensor<b=4@x, d=6, f32>) -> !mtf.tensor<b=4@x, d=6, f32>
  return %4 : !mtf.tensor<b=4@x, d=6, f32>
}

// A slice of the whole dim, a pad of 0 and 0, a shift by 0 or by a whole turn when
// wrapping, a one-operand concat, a reduction that reduces no name, a one-operand einsum
// to its operand's type.
// CHECK-LABEL: func.func @whole_dim_ops
// CHECK-NEXT: return %arg0 : !mtf.tensor<b=4, d=6, f32>
func.func @whole_dim_ops(%a: !mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32> {
  %0 = "mtf.slice"(%a) {dim = "d", start = 0} : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %1 = "mtf.pad"(%0) {dim = "d", low = 0, high = 0, value = 1.0} : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %2 = "mtf.shift"(%1) {dim = "d", offset = 0} : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %3 = "mtf.shift"(%2) {dim = "d", offset = -12, wrap = true} : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %4 = "mtf.concat"(%3) {dim = "d"} : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %5 = "mtf.reduce_sum"(%4) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %6 = "mtf.reduce_max"(%5) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %7 = "mtf.einsum"(%6) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  return %7 : !mtf.tensor<b=4, d=6, f32>
}

// Shifts that move elements stay.
// CHECK-LABEL: func.func @shifts_that_move
// CHECK-NEXT: "mtf.shift"(%arg0) {dim = "d", offset = 6 : i64}
// CHECK-NEXT: "mtf.shift"{{.*}}offset = 5 : i64, wrap = true
func.func @shifts_that_move(%a: !mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32> {
  %0 = "mtf.shift"(%a) {dim = "d", offset = 6} : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %1 = "mtf.shift"(%0) {dim = "d", offset = 5, wrap = true} : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  return %1 : !mtf.tensor<b=4, d=6, f32>
}

// reshape(reshape(x)) is one reshape of x when the middle type states no layout; none at
// all when it comes back to x's type.
// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-NEXT: %[[R:.*]] = "mtf.reshape"(%arg0) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<m=3, n=8, f32>
// CHECK-NEXT: return %[[R]], %arg0
func.func @reshape_of_reshape(%a: !mtf.tensor<b=4, d=6, f32>) -> (!mtf.tensor<m=3, n=8, f32>, !mtf.tensor<b=4, d=6, f32>) {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<n=24, f32>
  %1 = "mtf.reshape"(%0) : (!mtf.tensor<n=24, f32>) -> !mtf.tensor<m=3, n=8, f32>
  %2 = "mtf.reshape"(%1) : (!mtf.tensor<m=3, n=8, f32>) -> !mtf.tensor<k=2, l=12, f32>
  %3 = "mtf.reshape"(%2) : (!mtf.tensor<k=2, l=12, f32>) -> !mtf.tensor<b=4, d=6, f32>
  return %1, %3 : !mtf.tensor<m=3, n=8, f32>, !mtf.tensor<b=4, d=6, f32>
}

// transpose(transpose(x)) is x when it restores x's type, else one transpose of x.
// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-NEXT: %[[T:.*]] = "mtf.transpose"(%arg0) : (!mtf.tensor<a=2@x, b=4, c=6, f32>) -> !mtf.tensor<c=6, a=2@x, b=4, f32>
// CHECK-NEXT: return %arg0, %[[T]]
func.func @transpose_of_transpose(%x: !mtf.tensor<a=2@x, b=4, c=6, f32>) -> (!mtf.tensor<a=2@x, b=4, c=6, f32>, !mtf.tensor<c=6, a=2@x, b=4, f32>) {
  %0 = "mtf.transpose"(%x) : (!mtf.tensor<a=2@x, b=4, c=6, f32>) -> !mtf.tensor<b=4, a=2@x, c=6, f32>
  %1 = "mtf.transpose"(%0) : (!mtf.tensor<b=4, a=2@x, c=6, f32>) -> !mtf.tensor<a=2@x, b=4, c=6, f32>
  %2 = "mtf.transpose"(%0) : (!mtf.tensor<b=4, a=2@x, c=6, f32>) -> !mtf.tensor<c=6, a=2@x, b=4, f32>
  return %1, %2 : !mtf.tensor<a=2@x, b=4, c=6, f32>, !mtf.tensor<c=6, a=2@x, b=4, f32>
}

// rename(rename(x)) is one rename, or x when the names come back.
// CHECK-LABEL: func.func @rename_of_rename
// CHECK-NEXT: %[[R:.*]] = "mtf.rename"(%arg0) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<p=4, q=6, f32>
// CHECK-NEXT: return %arg0, %[[R]]
func.func @rename_of_rename(%a: !mtf.tensor<b=4, d=6, f32>) -> (!mtf.tensor<b=4, d=6, f32>, !mtf.tensor<p=4, q=6, f32>) {
  %0 = "mtf.rename"(%a) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, e=6, f32>
  %1 = "mtf.rename"(%0) : (!mtf.tensor<b=4, e=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %2 = "mtf.rename"(%0) : (!mtf.tensor<b=4, e=6, f32>) -> !mtf.tensor<p=4, q=6, f32>
  return %1, %2 : !mtf.tensor<b=4, d=6, f32>, !mtf.tensor<p=4, q=6, f32>
}

// x + (-0.0), (-0.0) + x, x - 0.0, x * 1, 1 * x, x / 1, x ** 1 are x, for a splat constant
// of any rank whose broadcast leaves x's type; -(-x), max(x, x), min(x, x) and
// select(c, x, x) are x.
// CHECK-LABEL: func.func @float_neutral_elements
// CHECK-NEXT: return %arg0 : !mtf.tensor<b=4, d=6, f32>
func.func @float_neutral_elements(%x: !mtf.tensor<b=4, d=6, f32>, %c: !mtf.tensor<b=4, d=6, i1>) -> !mtf.tensor<b=4, d=6, f32> {
  %mz = "mtf.constant"() {value = -0.0 : f32} : () -> !mtf.tensor<d=6, f32>
  %pz = "mtf.constant"() {value = dense<0.0> : tensor<f32>} : () -> !mtf.tensor<f32>
  %one = "mtf.constant"() {value = dense<1.0> : tensor<6xf32>} : () -> !mtf.tensor<d=6, f32>
  %0 = "mtf.add"(%x, %mz) : (!mtf.tensor<b=4, d=6, f32>, !mtf.tensor<d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %1 = "mtf.add"(%mz, %0) : (!mtf.tensor<d=6, f32>, !mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %2 = "mtf.sub"(%1, %pz) : (!mtf.tensor<b=4, d=6, f32>, !mtf.tensor<f32>) -> !mtf.tensor<b=4, d=6, f32>
  %3 = "mtf.mul"(%2, %one) : (!mtf.tensor<b=4, d=6, f32>, !mtf.tensor<d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %4 = "mtf.mul"(%one, %3) : (!mtf.tensor<d=6, f32>, !mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %5 = "mtf.div"(%4, %one) : (!mtf.tensor<b=4, d=6, f32>, !mtf.tensor<d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %6 = "mtf.pow"(%5, %one) : (!mtf.tensor<b=4, d=6, f32>, !mtf.tensor<d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %7 = "mtf.neg"(%6) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %8 = "mtf.neg"(%7) : (!mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %9 = "mtf.max"(%8, %8) : (!mtf.tensor<b=4, d=6, f32>, !mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %10 = "mtf.min"(%9, %9) : (!mtf.tensor<b=4, d=6, f32>, !mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  %11 = "mtf.select"(%c, %10, %10) : (!mtf.tensor<b=4, d=6, i1>, !mtf.tensor<b=4, d=6, f32>, !mtf.tensor<b=4, d=6, f32>) -> !mtf.tensor<b=4, d=6, f32>
  return %11 : !mtf.tensor<b=4, d=6, f32>
}

// Integers: + 0, - 0, * 1, / 1 (an integer zero has no sign).
// CHECK-LABEL: func.func @integer_neutral_elements
// CHECK-NEXT: return %arg0 : !mtf.tensor<b=4, i32>
func.func @integer_neutral_elements(%x: !mtf.tensor<b=4, i32>) -> !mtf.tensor<b=4, i32> {
  %z = "mtf.constant"() {value = 0 : i32} : () -> !mtf.tensor<i32>
  %one = "mtf.constant"() {value = 1 : i32} : () -> !mtf.tensor<i32>
  %0 = "mtf.add"(%z, %x) : (!mtf.tensor<i32>, !mtf.tensor<b=4, i32>) -> !mtf.tensor<b=4, i32>
  %1 = "mtf.sub"(%0, %z) : (!mtf.tensor<b=4, i32>, !mtf.tensor<i32>) -> !mtf.tensor<b=4, i32>
  %2 = "mtf.mul"(%1, %one) : (!mtf.tensor<b=4, i32>, !mtf.tensor<i32>) -> !mtf.tensor<b=4, i32>
  %3 = "mtf.div"(%2, %one) : (!mtf.tensor<b=4, i32>, !mtf.tensor<i32>) -> !mtf.tensor<b=4, i32>
  return %3 : !mtf.tensor<b=4, i32>
}

// Reshapes of replicated values compose too (the form after propagation and
// insert-collectives); a middle type split over an axis is kept (see no_fold.mlir).
// CHECK-LABEL: func.func @replicated_reshapes
// CHECK-NEXT: return %arg0 : !mtf.tensor<b=4@(), d=6@(), f32>
func.func @replicated_reshapes(%a: !mtf.tensor<b=4@(), d=6@(), f32>) -> !mtf.tensor<b=4@(), d=6@(), f32> {
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b=4@(), d=6@(), f32>) -> !mtf.tensor<n=24@(), f32>
  %1 = "mtf.reshape"(%0) : (!mtf.tensor<n=24@(), f32>) -> !mtf.tensor<b=4@(), d=6@(), f32>
  return %1 : !mtf.tensor<b=4@(), d=6@(), f32>
}
