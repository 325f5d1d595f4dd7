// RUN: meshir-opt %s --split-input-file --mtf-insert-collectives | filecheck %s

// A shift along a split dim by at most one block keeps the dim split: each device gets the
// |offset| rows it reads from its neighbour (a halo exchange, emitted by the lowering), and
// the shift records the bytes: 1 row x b=4 x f32 = 16. No gather, no re-split.
// CHECK-LABEL: func.func @one_row_shift_keeps_the_dim_split
// CHECK-NOT:  "mtf.all_gather"
// CHECK:      %[[S:.*]] = "mtf.shift"(%arg0) {bytes_per_device = 16 : i64, dim = "d", {{.*}}offset = 1 : i64} : (!mtf.tensor<b=4@(), d=16@(x,y), f32>) -> !mtf.tensor<b=4@(), d=16@(x,y), f32>
// CHECK-NEXT: return %[[S]]
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @one_row_shift_keeps_the_dim_split(%a: !mtf.tensor<b=4@(), d=16@(x,y), f32>) -> !mtf.tensor<b=4@(), d=16@(x,y), f32> {
  %0 = "mtf.shift"(%a) {dim = "d", offset = 1 : i64, fill = -1.0} : (!mtf.tensor<b=4@(), d=16@(x,y), f32>) -> !mtf.tensor<b=4@(), d=16@(x,y), f32>
  return %0 : !mtf.tensor<b=4@(), d=16@(x,y), f32>
}

// -----

// Wrapping by 15 of 16 rows is a shift by -1: one row from the next block.
// CHECK-LABEL: func.func @wrapping_shift_takes_the_nearest_offset
// CHECK-NOT:  "mtf.all_gather"
// CHECK:      "mtf.shift"(%arg0) {bytes_per_device = 16 : i64, {{.*}}wrap = true}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @wrapping_shift_takes_the_nearest_offset(%a: !mtf.tensor<b=4@(), d=16@x, f32>) -> !mtf.tensor<b=4@(), d=16@x, f32> {
  %0 = "mtf.shift"(%a) {dim = "d", offset = 15 : i64, wrap = true} : (!mtf.tensor<b=4@(), d=16@x, f32>) -> !mtf.tensor<b=4@(), d=16@x, f32>
  return %0 : !mtf.tensor<b=4@(), d=16@x, f32>
}

// -----

// A shift by more than a block (3 rows, blocks of 2) gathers the dim, shifts it whole and
// splits the result again; the shift itself sends nothing (no bytes_per_device).
// CHECK-LABEL: func.func @shift_past_the_block_gathers
// CHECK:      "mtf.all_gather"(%arg0) {axes = ["x", "y"], bytes_per_device = 224 : i64, dim = "d"}
// CHECK-NEXT: "mtf.shift"({{.*}}) {dim = "d", {{.*}}offset = -3 : i64} : (!mtf.tensor<b=4@(), d=16@(), f32>) -> !mtf.tensor<b=4@(), d=16@(), f32>
// CHECK-NEXT: "mtf.all_slice"({{.*}}) {axes = ["x", "y"], bytes_per_device = 0 : i64, dim = "d"}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @shift_past_the_block_gathers(%a: !mtf.tensor<b=4@(), d=16@(x,y), f32>) -> !mtf.tensor<b=4@(), d=16@(x,y), f32> {
  %0 = "mtf.shift"(%a) {dim = "d", offset = -3 : i64} : (!mtf.tensor<b=4@(), d=16@(x,y), f32>) -> !mtf.tensor<b=4@(), d=16@(x,y), f32>
  return %0 : !mtf.tensor<b=4@(), d=16@(x,y), f32>
}
