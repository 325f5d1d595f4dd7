// mtf-lower-to-stablehlo (explicit mode): each function becomes a public StableHLO function
// with global types and sdy.sharding attributes, whose body is one sdy.manual_computation
// over all mesh axes holding the per-device program (local shapes, collectives with replica
// groups from the mesh, partition_id arithmetic for the device's blocks).
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK: module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32}
// CHECK-LABEL: func.func public @matmul_all_reduce_y_all_gather_x(
// CHECK-SAME: %arg0: tensor<8x8xf32> {mtf.name = "a", sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}
// CHECK-SAME: %arg1: tensor<8x4xf32> {mtf.name = "w", sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}
// CHECK-SAME: -> (tensor<8x4xf32> {mtf.name = "out", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
// CHECK: %[[R:.*]] = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"y"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"x", "y"} (%[[A:arg[0-9]+]]: tensor<2x4xf32>, %[[W:arg[0-9]+]]: tensor<4x4xf32>) {
// CHECK: %[[P:.*]] = stablehlo.dot_general %[[A]], %[[W]], contracting_dims = [1] x [0] : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[S:.*]] = "stablehlo.all_reduce"(%[[P]]) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<{{\[\[}}0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
// CHECK: stablehlo.add
// CHECK: }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK: %[[G:.*]] = "stablehlo.all_gather"(%[[S]]) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<{{\[\[}}0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> : (tensor<2x4xf32>) -> tensor<8x4xf32>
// CHECK: sdy.return %[[G]] : tensor<8x4xf32>
// CHECK: } : (tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK: return %[[R]] : tensor<8x4xf32>
func.func @matmul_all_reduce_y_all_gather_x(%a: !mtf.tensor<b=8@x, k=8@y, f32> {mtf.name = "a"}, %w: !mtf.tensor<k=8@y, n=4@(), f32> {mtf.name = "w"}) -> (!mtf.tensor<b=8@(), n=4@(), f32> {mtf.name = "out"}) {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8@x, k=8@y, f32>, !mtf.tensor<k=8@y, n=4@(), f32>) -> !mtf.tensor<b=8@x, n=4@(), f32, partial@y>
  %1 = "mtf.all_reduce"(%0) {reduction = "sum", axes = ["y"], bytes_per_device = 32 : i64} : (!mtf.tensor<b=8@x, n=4@(), f32, partial@y>) -> !mtf.tensor<b=8@x, n=4@(), f32>
  %2 = "mtf.all_gather"(%1) {dim = "b", axes = ["x"], bytes_per_device = 96 : i64} : (!mtf.tensor<b=8@x, n=4@(), f32>) -> !mtf.tensor<b=8@(), n=4@(), f32>
  return %2 : !mtf.tensor<b=8@(), n=4@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// A float max crosses the devices as total-order integer keys (NaN wins, whatever the
// backend's all-reduce does with NaN): +NaN for NaN, bitcast, flip the negatives.
// CHECK-LABEL: func.func public @reduce_max_all_reduce_x
// CHECK: stablehlo.reduce
// CHECK: %[[NAN:.*]] = stablehlo.constant dense<0x7FC00000> : tensor<4xf32>
// CHECK: stablehlo.compare  NE
// CHECK: stablehlo.select %{{.*}}, %[[NAN]]
// CHECK: %[[BITS:.*]] = stablehlo.bitcast_convert %{{.*}} : (tensor<4xf32>) -> tensor<4xi32>
// CHECK: %[[MAG:.*]] = stablehlo.constant dense<2147483647> : tensor<4xi32>
// CHECK: %[[FLIPPED:.*]] = stablehlo.xor %[[BITS]], %[[MAG]]
// CHECK: %[[KEYS:.*]] = stablehlo.select %{{.*}}, %[[FLIPPED]], %[[BITS]]
// CHECK: "stablehlo.all_reduce"(%[[KEYS]])
// CHECK-SAME: replica_groups = dense<{{\[\[}}0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>
// CHECK: stablehlo.maximum
// CHECK: }) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK: stablehlo.xor
// CHECK: stablehlo.bitcast_convert %{{.*}} : (tensor<4xi32>) -> tensor<4xf32>
func.func @reduce_max_all_reduce_x(%a: !mtf.tensor<b=8@x, d=8@y, f32>) -> !mtf.tensor<d=8@y, f32> {
  %0 = "mtf.reduce_max"(%a) : (!mtf.tensor<b=8@x, d=8@y, f32>) -> !mtf.tensor<d=8@y, f32, partial_max@x>
  %1 = "mtf.all_reduce"(%0) {reduction = "max", axes = ["x"], bytes_per_device = 24 : i64} : (!mtf.tensor<d=8@y, f32, partial_max@x>) -> !mtf.tensor<d=8@y, f32>
  return %1 : !mtf.tensor<d=8@y, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// all_slice keeps the device's block: x's coordinate is partition_id / 2 (x's stride; no
// remainder for the major-most axis), times the block size 2.
// CHECK-LABEL: func.func public @all_slice_over_x
// CHECK: (%[[A:arg[0-9]+]]: tensor<8x4xf32>) {
// CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0> : tensor<i32>
// CHECK: %[[PID:.*]] = stablehlo.partition_id : tensor<ui32>
// CHECK: %[[TWO:.*]] = stablehlo.constant dense<2> : tensor<ui32>
// CHECK: %[[X:.*]] = stablehlo.divide %[[PID]], %[[TWO]] : tensor<ui32>
// CHECK: %[[XI:.*]] = stablehlo.convert %[[X]] : (tensor<ui32>) -> tensor<i32>
// CHECK: %[[SIZE:.*]] = stablehlo.constant dense<2> : tensor<i32>
// CHECK: %[[OFF:.*]] = stablehlo.multiply %[[XI]], %[[SIZE]] : tensor<i32>
// CHECK: %[[S:.*]] = stablehlo.dynamic_slice %[[A]], %[[OFF]], %[[ZERO]], sizes = [2, 4] : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x4xf32>
// CHECK: sdy.return %[[S]] : tensor<2x4xf32>
func.func @all_slice_over_x(%a: !mtf.tensor<b=8@(), d=8@y, f32>) -> !mtf.tensor<b=8@x, d=8@y, f32> {
  %0 = "mtf.all_slice"(%a) {dim = "b", axes = ["x"], bytes_per_device = 0 : i64} : (!mtf.tensor<b=8@(), d=8@y, f32>) -> !mtf.tensor<b=8@x, d=8@y, f32>
  return %0 : !mtf.tensor<b=8@x, d=8@y, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// y is the minor-most axis: its coordinate is partition_id % 2 (stride 1: no division).
// CHECK-LABEL: func.func public @all_slice_over_y
// CHECK: %[[PID:.*]] = stablehlo.partition_id : tensor<ui32>
// CHECK: %[[Y:.*]] = stablehlo.remainder %[[PID]], %{{.*}} : tensor<ui32>
// CHECK: stablehlo.convert %[[Y]] : (tensor<ui32>) -> tensor<i32>
// CHECK: stablehlo.dynamic_slice {{.*}} sizes = [4] : (tensor<8xf32>, tensor<i32>) -> tensor<4xf32>
func.func @all_slice_over_y(%a: !mtf.tensor<d=8@(), f32>) -> !mtf.tensor<d=8@y, f32> {
  %0 = "mtf.all_slice"(%a) {dim = "d", axes = ["y"], bytes_per_device = 0 : i64} : (!mtf.tensor<d=8@(), f32>) -> !mtf.tensor<d=8@y, f32>
  return %0 : !mtf.tensor<d=8@y, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// as_partial keeps the value on the devices whose y coordinate is 0 and zeros it on the
// others (a select, exact for NaN and inf); the all_reduce over both axes then sums it once.
// CHECK-LABEL: func.func public @as_partial_over_y
// CHECK: %[[PID:.*]] = stablehlo.partition_id : tensor<ui32>
// CHECK: %[[Y:.*]] = stablehlo.remainder %[[PID]], %{{.*}} : tensor<ui32>
// CHECK: %[[YI:.*]] = stablehlo.convert %[[Y]] : (tensor<ui32>) -> tensor<i32>
// CHECK: %[[FIRST:.*]] = stablehlo.compare  EQ, %[[YI]], %{{.*}},  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK: %[[ZEROS:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK: %[[KEPT:.*]] = stablehlo.select %{{.*}}, %{{.*}}, %[[ZEROS]] : tensor<4xi1>, tensor<4xf32>
// CHECK: "stablehlo.all_reduce"(%[[KEPT]])
// CHECK-SAME: replica_groups = dense<{{\[\[}}0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>
func.func @as_partial_over_y(%b: !mtf.tensor<b=8@x, d=4@(), f32>) -> !mtf.tensor<d=4@(), f32> {
  %a = "mtf.reduce_sum"(%b) : (!mtf.tensor<b=8@x, d=4@(), f32>) -> !mtf.tensor<d=4@(), f32, partial@x>
  %0 = "mtf.as_partial"(%a) {axes = ["y"], bytes_per_device = 0 : i64} : (!mtf.tensor<d=4@(), f32, partial@x>) -> !mtf.tensor<d=4@(), f32, partial@(x,y)>
  %1 = "mtf.all_reduce"(%0) {axes = ["x", "y"], reduction = "sum", bytes_per_device = 28 : i64} : (!mtf.tensor<d=4@(), f32, partial@(x,y)>) -> !mtf.tensor<d=4@(), f32>
  return %1 : !mtf.tensor<d=4@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Group members are ordered like the blocks of a dim split over the collective's axes in
// the order it names them: (y, x) puts y major, so the group of all 8 devices is
// 0, 2, 4, 6, 1, 3, 5, 7.
// CHECK-LABEL: func.func public @all_gather_over_y_then_x
// CHECK: "stablehlo.all_gather"
// CHECK-SAME: replica_groups = dense<{{\[\[}}0, 2, 4, 6, 1, 3, 5, 7]]> : tensor<1x8xi64>
// CHECK-SAME: (tensor<1x4xf32>) -> tensor<8x4xf32>
func.func @all_gather_over_y_then_x(%a: !mtf.tensor<b=8@(y,x), d=4@(), f32>) -> !mtf.tensor<b=8@(), d=4@(), f32> {
  %0 = "mtf.all_gather"(%a) {dim = "b", axes = ["y", "x"], bytes_per_device = 112 : i64} : (!mtf.tensor<b=8@(y,x), d=4@(), f32>) -> !mtf.tensor<b=8@(), d=4@(), f32>
  return %0 : !mtf.tensor<b=8@(), d=4@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>

// CHECK-LABEL: func.func public @reduce_scatter_all_to_all_permute
// CHECK: "stablehlo.reduce_scatter"
// CHECK-SAME: replica_groups = dense<{{\[\[}}0, 1], [2, 3]]> : tensor<2x2xi64>, scatter_dimension = 0 : i64, use_global_device_ids
// CHECK: }) : (tensor<8x4xf32>) -> tensor<4x4xf32>
// CHECK: "stablehlo.all_to_all"
// CHECK-SAME: concat_dimension = 0 : i64, replica_groups = dense<{{\[\[}}0, 1], [2, 3]]> : tensor<2x2xi64>, split_count = 2 : i64, split_dimension = 1 : i64
// CHECK-SAME: (tensor<4x4xf32>) -> tensor<8x2xf32>
// CHECK: "stablehlo.collective_permute"
// CHECK-SAME: source_target_pairs = dense<{{\[\[}}0, 0], [2, 1], [1, 2], [3, 3]]> : tensor<4x2xi64>
// CHECK-SAME: (tensor<8x2xf32>) -> tensor<8x2xf32>
func.func @reduce_scatter_all_to_all_permute(%x: !mtf.tensor<b=8@(), k=2@y, d=4@(), f32>) -> !mtf.tensor<b=8@(), d=4@y, f32> {
  %a = "mtf.reduce_sum"(%x) : (!mtf.tensor<b=8@(), k=2@y, d=4@(), f32>) -> !mtf.tensor<b=8@(), d=4@(), f32, partial@y>
  %0 = "mtf.reduce_scatter"(%a) {reduction = "sum", dim = "b", axes = ["y"], bytes_per_device = 64 : i64} : (!mtf.tensor<b=8@(), d=4@(), f32, partial@y>) -> !mtf.tensor<b=8@y, d=4@(), f32>
  %1 = "mtf.all_to_all"(%0) {src_dim = "b", dst_dim = "d", axes = ["y"], bytes_per_device = 32 : i64} : (!mtf.tensor<b=8@y, d=4@(), f32>) -> !mtf.tensor<b=8@(), d=4@y, f32>
  %2 = "mtf.collective_permute"(%1) {bytes_per_device = 64 : i64} : (!mtf.tensor<b=8@(), d=4@y, f32>) -> !mtf.tensor<b=8@(), d=4@x, f32>
  %3 = "mtf.collective_permute"(%2) {bytes_per_device = 64 : i64} : (!mtf.tensor<b=8@(), d=4@x, f32>) -> !mtf.tensor<b=8@(), d=4@y, f32>
  return %3 : !mtf.tensor<b=8@(), d=4@y, f32>
}

// -----

// A function without a mesh runs on one device: no manual_computation, global shapes.
// CHECK: module attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}
// CHECK-LABEL: func.func public @no_mesh(%arg0: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[N:.*]] = stablehlo.negate %arg0 : tensor<4xf32>
// CHECK-NEXT: return %[[N]] : tensor<4xf32>
func.func @no_mesh(%a: !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32> {
  %0 = "mtf.neg"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return %0 : !mtf.tensor<d=4, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// top_k along v split over x: each device takes its block's first 2 (chlo.top_k, jax's
// own op), adds its block offset to their indices, all-gathers those 2 values and 2 indices
// over x (in block order), and sorts the 8 candidates stably by total-order key: the bytes
// grow with k, not with v.
// CHECK-LABEL: func.func public @top_k_along_a_split_dim
// CHECK: %[[T:.*]]:2 = "chlo.top_k"(%arg1) {k = 2 : i64} : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
// CHECK: %[[I:.*]] = stablehlo.add %[[T]]#1, %{{.*}} : tensor<2x2xi32>
// CHECK: "stablehlo.all_gather"(%[[T]]#0) <{all_gather_dim = 1 : i64, {{.*}}replica_groups = dense<{{\[\[}}0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> : (tensor<2x2xf32>) -> tensor<2x8xf32>
// CHECK: "stablehlo.all_gather"(%[[I]]) {{.*}} : (tensor<2x2xi32>) -> tensor<2x8xi32>
// CHECK: "stablehlo.sort"({{.*}}) <{dimension = 1 : i64, is_stable = true}>
// CHECK: stablehlo.compare GT, {{.*}}, SIGNED
// CHECK: }) : (tensor<2x8xi32>, tensor<2x8xi32>, tensor<2x8xf32>) -> (tensor<2x8xi32>, tensor<2x8xi32>, tensor<2x8xf32>)
func.func @top_k_along_a_split_dim(%x: !mtf.tensor<b=2@(), v=16@x, f32>) -> (!mtf.tensor<b=2@(), k=2@(), f32>, !mtf.tensor<b=2@(), k=2@(), i32>) {
  %0:2 = "mtf.top_k"(%x) {dim = "v", bytes_per_device = 96 : i64} : (!mtf.tensor<b=2@(), v=16@x, f32>) -> (!mtf.tensor<b=2@(), k=2@(), f32>, !mtf.tensor<b=2@(), k=2@(), i32>)
  return %0#0, %0#1 : !mtf.tensor<b=2@(), k=2@(), f32>, !mtf.tensor<b=2@(), k=2@(), i32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// cumsum along v split over x: each device scans its block of 4 (a reduce_window over the
// whole block), all-gathers its block total over x, sums the totals of the blocks before its
// own (masked by its x coordinate) and adds that to its scan: one value per device crosses.
// CHECK-LABEL: func.func public @cumsum_along_a_split_dim
// CHECK: %[[S:.*]] = "stablehlo.reduce_window"(%arg1, %{{.*}}) <{padding = dense<{{\[\[}}0, 0], [3, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>}>
// CHECK: %[[T:.*]] = stablehlo.slice %[[S]] [0:2, 3:4] : (tensor<2x4xf32>) -> tensor<2x1xf32>
// CHECK: "stablehlo.all_gather"(%[[T]]) <{all_gather_dim = 1 : i64, {{.*}}replica_groups = dense<{{\[\[}}0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, use_global_device_ids}> : (tensor<2x1xf32>) -> tensor<2x4xf32>
// CHECK: stablehlo.compare  LT, %{{.*}}, %{{.*}},  SIGNED : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
// CHECK: %[[P:.*]] = stablehlo.reduce(%{{.*}} init: %{{.*}}) applies stablehlo.add across dimensions = [1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK: %[[B:.*]] = stablehlo.broadcast_in_dim %[[P]], dims = [0] : (tensor<2xf32>) -> tensor<2x4xf32>
// CHECK: stablehlo.add %[[B]], %[[S]] : tensor<2x4xf32>
func.func @cumsum_along_a_split_dim(%x: !mtf.tensor<b=2@(), v=16@x, f32>) -> !mtf.tensor<b=2@(), v=16@x, f32> {
  %0 = "mtf.cumsum"(%x) {dim = "v", bytes_per_device = 24 : i64} : (!mtf.tensor<b=2@(), v=16@x, f32>) -> !mtf.tensor<b=2@(), v=16@x, f32>
  return %0 : !mtf.tensor<b=2@(), v=16@x, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// dynamic_slice of 3 along v split over x: the start is wrapped (negative) and clamped into
// [0, 13]; each device pads its block of 4 with 3 zeros on each side, cuts the window at
// start - offset + 3, and one all_reduce over x adds the owners' parts (the window only).
// CHECK-LABEL: func.func public @dynamic_slice_along_a_split_dim
// CHECK: stablehlo.select
// CHECK: stablehlo.minimum
// CHECK: stablehlo.maximum
// CHECK: %[[P:.*]] = stablehlo.pad %arg{{[0-9]+}}, %{{.*}}, low = [0, 3], high = [0, 3], interior = [0, 0] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x10xf32>
// CHECK: %[[W:.*]] = stablehlo.dynamic_slice %[[P]], %{{.*}}, %{{.*}}, sizes = [2, 3] : (tensor<2x10xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
// CHECK: "stablehlo.all_reduce"(%[[W]]) {{.*}}replica_groups = dense<{{\[\[}}0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>
func.func @dynamic_slice_along_a_split_dim(%x: !mtf.tensor<b=2@(), v=16@x, f32>, %s: !mtf.tensor<i32>) -> !mtf.tensor<b=2@(), v=3@(), f32> {
  %0 = "mtf.dynamic_slice"(%x, %s) {dim = "v", bytes_per_device = 36 : i64} : (!mtf.tensor<b=2@(), v=16@x, f32>, !mtf.tensor<i32>) -> !mtf.tensor<b=2@(), v=3@(), f32>
  return %0 : !mtf.tensor<b=2@(), v=3@(), f32>
}
