// mtf-canonicalize where mi.compile runs it: after mtf-insert-collectives, once every layout
// is decided. A duplicated computation is computed once and its collectives with it; a dead
// one goes with the collectives that fed it; the result is still partitioned (it lowers).
// RUN: meshir-opt %s --mtf-propagate-sharding --mtf-insert-collectives | filecheck %s --check-prefix=BEFORE
// RUN: meshir-opt %s --mtf-propagate-sharding --mtf-insert-collectives --mtf-canonicalize | filecheck %s
// RUN: meshir-opt %s --mtf-propagate-sharding --mtf-insert-collectives --mtf-canonicalize --mtf-lower-to-stablehlo | filecheck %s --check-prefix=LOWERED

// BEFORE-LABEL: func.func @ffn_twice
// BEFORE-COUNT-3: "mtf.all_reduce"
// CHECK-LABEL: func.func @ffn_twice
// CHECK:      "mtf.einsum"
// CHECK-NEXT: "mtf.relu"
// CHECK-NEXT: "mtf.einsum"
// CHECK-NEXT: %[[R:.*]] = "mtf.all_reduce"
// CHECK-NEXT: %[[S:.*]] = "mtf.add"(%[[R]], %[[R]])
// CHECK-NEXT: return %[[S]]
// LOWERED-LABEL: func.func public @ffn_twice
// LOWERED-COUNT-1: "stablehlo.all_reduce"
// LOWERED-NOT: "stablehlo.all_reduce"
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @ffn_twice(%x: !mtf.tensor<batch=8@x, d_model=16@(), f32>, %w1: !mtf.tensor<d_model=16@(), d_ff=64@y, f32>, %w2: !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, d_model=16@(), f32> {
  %0 = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=8@x, d_model=16@(), f32>, !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
  %1 = "mtf.relu"(%0) : (!mtf.tensor<batch=8, d_ff=64, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
  %2 = "mtf.einsum"(%1, %w2) : (!mtf.tensor<batch=8, d_ff=64, f32>, !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
  %3 = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=8@x, d_model=16@(), f32>, !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
  %4 = "mtf.relu"(%3) : (!mtf.tensor<batch=8, d_ff=64, f32>) -> !mtf.tensor<batch=8, d_ff=64, f32>
  %5 = "mtf.einsum"(%4, %w2) : (!mtf.tensor<batch=8, d_ff=64, f32>, !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
  %6 = "mtf.exp"(%5) : (!mtf.tensor<batch=8, d_model=16, f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
  %7 = "mtf.add"(%2, %5) : (!mtf.tensor<batch=8, d_model=16, f32>, !mtf.tensor<batch=8, d_model=16, f32>) -> !mtf.tensor<batch=8@x, d_model=16@(), f32>
  %8 = "mtf.einsum"(%1, %w2) : (!mtf.tensor<batch=8, d_ff=64, f32>, !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
  %9 = "mtf.tanh"(%8) : (!mtf.tensor<batch=8, d_model=16, f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
  return %7 : !mtf.tensor<batch=8@x, d_model=16@(), f32>
}
