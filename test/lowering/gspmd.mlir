// mtf-lower-to-stablehlo{mode=gspmd}: each function becomes a public StableHLO function with
// global types and sdy.sharding attributes (as in explicit mode), whose body is the global
// program -- no sdy.manual_computation, no collectives, no partition_id -- with an
// sdy.sharding_constraint carrying the propagated layout after every op. mtf.shard and the
// collectives lower to their result's constraint alone; pending values get none.
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo='mode=gspmd' | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo='mode=gspmd' | filecheck %s --check-prefix=NONE

// NONE-NOT: sdy.manual_computation
// NONE-NOT: partition_id
// NONE-NOT: stablehlo.all_
// NONE-NOT: stablehlo.reduce_scatter
// NONE-NOT: stablehlo.collective_permute
// NONE-NOT: stablehlo.dynamic_slice

sdy.mesh @mesh = <["x"=4, "y"=2]>

// The FFN after mtf-propagate-sharding with batch:x, d_ff:y: the second einsum contracts
// d_ff, split over y; XLA's partitioner, not the lowering, adds the all-reduce.
// CHECK: module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
// CHECK-LABEL: func.func public @ffn(
// CHECK-SAME: %arg0: tensor<8x16xf32> {mtf.name = "x", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}
// CHECK-SAME: %arg1: tensor<16x64xf32> {mtf.name = "w1", sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}
// CHECK-SAME: %arg2: tensor<64x16xf32> {mtf.name = "w2", sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}
// CHECK-SAME: -> (tensor<8x16xf32> {mtf.name = "y", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
// CHECK-NEXT: %[[H:.*]] = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x64xf32>) -> tensor<8x64xf32>
// CHECK-NEXT: %[[HC:.*]] = sdy.sharding_constraint %[[H]] <@mesh, [{"x"}, {"y"}]> : tensor<8x64xf32>
// CHECK-NEXT: %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<8x64xf32>
// CHECK-NEXT: %[[R:.*]] = stablehlo.maximum %[[HC]], %[[ZERO]] : tensor<8x64xf32>
// CHECK-NEXT: %[[RC:.*]] = sdy.sharding_constraint %[[R]] <@mesh, [{"x"}, {"y"}]> : tensor<8x64xf32>
// CHECK-NEXT: %[[Y:.*]] = stablehlo.dot_general %[[RC]], %arg2, contracting_dims = [1] x [0] : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
// CHECK-NEXT: %[[YC:.*]] = sdy.sharding_constraint %[[Y]] <@mesh, [{"x"}, {}]> : tensor<8x16xf32>
// CHECK-NEXT: return %[[YC]] : tensor<8x16xf32>
func.func @ffn(%x: !mtf.tensor<batch=8@x, d_model=16@(), f32> {mtf.name = "x"}, %w1: !mtf.tensor<d_model=16@(), d_ff=64@y, f32> {mtf.name = "w1"}, %w2: !mtf.tensor<d_ff=64@y, d_model=16@(), f32> {mtf.name = "w2"}) -> (!mtf.tensor<batch=8@x, d_model=16@(), f32> {mtf.name = "y"}) {
  %0 = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=8@x, d_model=16@(), f32>, !mtf.tensor<d_model=16@(), d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
  %1 = "mtf.relu"(%0) : (!mtf.tensor<batch=8@x, d_ff=64@y, f32>) -> !mtf.tensor<batch=8@x, d_ff=64@y, f32>
  %2 = "mtf.einsum"(%1, %w2) : (!mtf.tensor<batch=8@x, d_ff=64@y, f32>, !mtf.tensor<d_ff=64@y, d_model=16@(), f32>) -> !mtf.tensor<batch=8@x, d_model=16@(), f32>
  return %2 : !mtf.tensor<batch=8@x, d_model=16@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// mtf.shard is the constraint of its result's layout; one to the layout the value already
// has adds nothing. Dims split over several axes list them major to minor.
// CHECK-LABEL: func.func public @reshards(
// CHECK-SAME: %arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-NEXT: %[[T:.*]] = sdy.sharding_constraint %arg0 <@mesh, [{}, {"y", "x"}]> : tensor<8x16xf32>
// CHECK-NEXT: %[[N:.*]] = stablehlo.negate %[[T]] : tensor<8x16xf32>
// CHECK-NEXT: %[[NC:.*]] = sdy.sharding_constraint %[[N]] <@mesh, [{}, {"y", "x"}]> : tensor<8x16xf32>
// CHECK-NEXT: %[[B:.*]] = sdy.sharding_constraint %[[NC]] <@mesh, [{"x"}, {"y"}]> : tensor<8x16xf32>
// CHECK-NEXT: return %[[B]] : tensor<8x16xf32>
func.func @reshards(%a: !mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32> {
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@(), d=16@(y,x), f32>
  %1 = "mtf.neg"(%0) : (!mtf.tensor<b=8@(), d=16@(y,x), f32>) -> !mtf.tensor<b=8@(), d=16@(y,x), f32>
  %2 = "mtf.shard"(%1) : (!mtf.tensor<b=8@(), d=16@(y,x), f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  %3 = "mtf.shard"(%2) : (!mtf.tensor<b=8@x, d=16@y, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  return %3 : !mtf.tensor<b=8@x, d=16@y, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// After mtf-insert-collectives: a pending value is its global sum (the global dot_general
// computes it) and gets no constraint; the collectives are the constraints of their results.
// CHECK-LABEL: func.func public @partitioned_input(
// CHECK-NEXT: %[[P:.*]] = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: %[[S:.*]] = sdy.sharding_constraint %[[P]] <@mesh, [{"x"}, {}]> : tensor<8x4xf32>
// CHECK-NEXT: %[[G:.*]] = sdy.sharding_constraint %[[S]] <@mesh, [{}, {}]> : tensor<8x4xf32>
// CHECK-NEXT: return %[[G]] : tensor<8x4xf32>
func.func @partitioned_input(%a: !mtf.tensor<b=8@x, k=8@y, f32>, %w: !mtf.tensor<k=8@y, n=4@(), f32>) -> !mtf.tensor<b=8@(), n=4@(), f32> {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8@x, k=8@y, f32>, !mtf.tensor<k=8@y, n=4@(), f32>) -> !mtf.tensor<b=8@x, n=4@(), f32, partial@y>
  %1 = "mtf.all_reduce"(%0) {reduction = "sum", axes = ["y"], bytes_per_device = 32 : i64} : (!mtf.tensor<b=8@x, n=4@(), f32, partial@y>) -> !mtf.tensor<b=8@x, n=4@(), f32>
  %2 = "mtf.all_gather"(%1) {dim = "b", axes = ["x"], bytes_per_device = 96 : i64} : (!mtf.tensor<b=8@x, n=4@(), f32>) -> !mtf.tensor<b=8@(), n=4@(), f32>
  return %2 : !mtf.tensor<b=8@(), n=4@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Global indices need no device offsets: iota is a plain iota, a dense constant is embedded
// whole, a gather from a table split along the looked-up dim reads the ids as they are.
// CHECK-LABEL: func.func public @global_indices(
// CHECK: %[[VALID:.*]] = stablehlo.and
// CHECK: %[[IDS:.*]] = stablehlo.select %[[VALID]], %arg1
// CHECK: "stablehlo.gather"(%arg0, %[[IDS]])
// CHECK: sdy.sharding_constraint {{.*}} <@mesh, [{"y"}, {}]> : tensor<4x4xf32>
// CHECK: %[[IOTA:.*]] = stablehlo.iota dim = 0 : tensor<8x4xi32>
// CHECK-NEXT: %[[F:.*]] = stablehlo.convert %[[IOTA]] : (tensor<8x4xi32>) -> tensor<8x4xf32>
// CHECK-NEXT: sdy.sharding_constraint %[[F]] <@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>
// CHECK-NEXT: %[[C:.*]] = stablehlo.constant dense<{{.*}}> : tensor<8x4xf32>
// CHECK-NEXT: sdy.sharding_constraint %[[C]] <@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>
func.func @global_indices(%t: !mtf.tensor<v=8@x, d=4@y, f32>, %ids: !mtf.tensor<b=4@y, i32>) -> (!mtf.tensor<b=4@y, d=4@(), f32>, !mtf.tensor<v=8@x, d=4@y, f32>) {
  %0 = "mtf.gather"(%t, %ids) {dim = "v"} : (!mtf.tensor<v=8@x, d=4@y, f32>, !mtf.tensor<b=4@y, i32>) -> !mtf.tensor<b=4@y, d=4@(), f32>
  %1 = "mtf.iota"() {dim = "v"} : () -> !mtf.tensor<v=8@x, d=4@y, f32>
  %2 = "mtf.constant"() {value = dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]> : tensor<8x4xf32>} : () -> !mtf.tensor<v=8@x, d=4@y, f32>
  %3 = "mtf.add"(%1, %2) : (!mtf.tensor<v=8@x, d=4@y, f32>, !mtf.tensor<v=8@x, d=4@y, f32>) -> !mtf.tensor<v=8@x, d=4@y, f32>
  return %0, %3 : !mtf.tensor<b=4@y, d=4@(), f32>, !mtf.tensor<v=8@x, d=4@y, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// random_uniform hashes the global row-major index: iota along each dim, times its stride.
// CHECK-LABEL: func.func public @random(
// CHECK-NEXT: %[[I0:.*]] = stablehlo.iota dim = 0 : tensor<8x4xui32>
// CHECK-NEXT: %[[FOUR:.*]] = stablehlo.constant dense<4> : tensor<8x4xui32>
// CHECK-NEXT: %[[ROW:.*]] = stablehlo.multiply %[[I0]], %[[FOUR]] : tensor<8x4xui32>
// CHECK-NEXT: %[[I1:.*]] = stablehlo.iota dim = 1 : tensor<8x4xui32>
// CHECK-NEXT: stablehlo.add %[[ROW]], %[[I1]] : tensor<8x4xui32>
// CHECK: %[[U:.*]] = stablehlo.minimum
// CHECK-NEXT: %[[UC:.*]] = sdy.sharding_constraint %[[U]] <@mesh, [{"x"}, {"y"}]> : tensor<8x4xf32>
// CHECK-NEXT: return %[[UC]]
func.func @random() -> !mtf.tensor<v=8@x, d=4@y, f32> {
  %0 = "mtf.random_uniform"() {seed = 1 : i64, minval = 0.0 : f64, maxval = 1.0 : f64} : () -> !mtf.tensor<v=8@x, d=4@y, f32>
  return %0 : !mtf.tensor<v=8@x, d=4@y, f32>
}

// -----

// A function without a mesh: the global program, without shardings or constraints.
// CHECK: module attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
// CHECK-LABEL: func.func public @no_mesh(%arg0: tensor<4xf32> {mtf.name = "a"}) -> (tensor<4xf32> {mtf.name = "r"}) {
// CHECK-NEXT: %[[E:.*]] = stablehlo.exponential %arg0 : tensor<4xf32>
// CHECK-NEXT: return %[[E]] : tensor<4xf32>
func.func @no_mesh(%a: !mtf.tensor<b=4, f32> {mtf.name = "a"}) -> (!mtf.tensor<b=4, f32> {mtf.name = "r"}) {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return %0 : !mtf.tensor<b=4, f32>
}
