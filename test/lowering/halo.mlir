// mtf-lower-to-stablehlo (explicit mode) of a shift along a split dim: a halo exchange.
// Each device sends its boundary rows to the neighbouring block with one collective_permute
// (pairs from the block order of the dim's axes, major to minor), the blocks at the end of
// the dim take `fill` (a select on the block index) unless the shift wraps, and the shifted
// window is cut out of the shard extended by the halo.
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo | filecheck %s

sdy.mesh @mesh = <["x"=4, "y"=2]>

// d over (y, x): block = y * 4 + x, device = x * 2 + y, so the blocks are held by devices
// 0, 2, 4, 6, 1, 3, 5, 7. A shift by -1 reads the first row of the next block: each device
// sends it to the previous block's device; the last block (device 7) gets the fill.
// CHECK-LABEL: func.func public @shift_back_one_row_over_y_then_x
// CHECK:      (%[[X:arg[0-9]+]]: tensor<4x2xf32>) {
// CHECK:      %[[ROWS:.*]] = stablehlo.slice %[[X]] [0:4, 0:1] : (tensor<4x2xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[GOT:.*]] = "stablehlo.collective_permute"(%[[ROWS]]) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<{{\[\[}}2, 0], [3, 1], [4, 2], [5, 3], [6, 4], [7, 5], [1, 6]]> : tensor<7x2xi64>}>
// CHECK:      %[[LAST:.*]] = stablehlo.constant dense<7> : tensor<i32>
// CHECK-NEXT: %[[EDGE:.*]] = stablehlo.compare EQ, %{{.*}}, %[[LAST]]
// CHECK-NEXT: %[[MASK:.*]] = stablehlo.broadcast_in_dim %[[EDGE]], dims = [] : (tensor<i1>) -> tensor<4x1xi1>
// CHECK-NEXT: %[[FILL:.*]] = stablehlo.constant dense<2.500000e+00> : tensor<4x1xf32>
// CHECK-NEXT: %[[HALO:.*]] = stablehlo.select %[[MASK]], %[[FILL]], %[[GOT]]
// CHECK-NEXT: %[[EXT:.*]] = stablehlo.concatenate %[[X]], %[[HALO]], dim = 1 : (tensor<4x2xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[OUT:.*]] = stablehlo.slice %[[EXT]] [0:4, 1:3] : (tensor<4x3xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: sdy.return %[[OUT]]
// CHECK-NOT:  all_gather
func.func @shift_back_one_row_over_y_then_x(%a: !mtf.tensor<b=4@(), d=16@(y,x), f32>) -> !mtf.tensor<b=4@(), d=16@(y,x), f32> {
  %0 = "mtf.shift"(%a) {dim = "d", offset = -1 : i64, fill = 2.5, bytes_per_device = 16 : i64} : (!mtf.tensor<b=4@(), d=16@(y,x), f32>) -> !mtf.tensor<b=4@(), d=16@(y,x), f32>
  return %0 : !mtf.tensor<b=4@(), d=16@(y,x), f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// Wrapping around along x (blocks of 4 rows; y replicates): the first block receives the
// last block's rows, in every y group; no fill, no select.
// CHECK-LABEL: func.func public @wrap_two_rows_over_x
// CHECK:      (%[[X:arg[0-9]+]]: tensor<4x4xf32>) {
// CHECK:      %[[ROWS:.*]] = stablehlo.slice %[[X]] [0:4, 2:4] : (tensor<4x4xf32>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[GOT:.*]] = "stablehlo.collective_permute"(%[[ROWS]]) <{{.*}}source_target_pairs = dense<{{\[\[}}6, 0], [7, 1], [0, 2], [1, 3], [2, 4], [3, 5], [4, 6], [5, 7]]> : tensor<8x2xi64>}>
// CHECK-NEXT: %[[EXT:.*]] = stablehlo.concatenate %[[GOT]], %[[X]], dim = 1 : (tensor<4x2xf32>, tensor<4x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: %[[OUT:.*]] = stablehlo.slice %[[EXT]] [0:4, 0:4] : (tensor<4x6xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: sdy.return %[[OUT]]
func.func @wrap_two_rows_over_x(%a: !mtf.tensor<b=4@(), d=16@x, f32>) -> !mtf.tensor<b=4@(), d=16@x, f32> {
  %0 = "mtf.shift"(%a) {dim = "d", offset = 2 : i64, wrap = true, bytes_per_device = 32 : i64} : (!mtf.tensor<b=4@(), d=16@x, f32>) -> !mtf.tensor<b=4@(), d=16@x, f32>
  return %0 : !mtf.tensor<b=4@(), d=16@x, f32>
}
