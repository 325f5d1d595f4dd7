// mtf-lower-to-stablehlo refuses IR that is not in partitioned form, with an error located
// at the op (the partitioned verifier's, docs/partitioning.md), and a pending argument.
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo --verify-diagnostics
// (gspmd mode's errors: gspmd_errors.mlir.)

sdy.mesh @mesh = <["x"=2]>

func.func @shard_left(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@(), f32> {
  // expected-error @+1 {{'mtf.shard' op is not partitioned: mtf.shard must have become collectives}}
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@(), f32>
  return %0 : !mtf.tensor<b=8@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=2]>

func.func @free_layout(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8, f32> {
  // expected-error @+1 {{'mtf.neg' op is not partitioned: !mtf.tensor<b=8, f32> has dims without a layout}}
  %0 = "mtf.neg"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8, f32>
  // expected-error @+1 {{'func.return' op is not partitioned: !mtf.tensor<b=8, f32> has dims without a layout}}
  return %0 : !mtf.tensor<b=8, f32>
}

// -----

sdy.mesh @mesh = <["x"=2]>

func.func @partial_read_non_linearly(%a: !mtf.tensor<b=8@x, d=4@(), f32>) -> !mtf.tensor<d=4@(), f32> {
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<b=8@x, d=4@(), f32>) -> !mtf.tensor<d=4@(), f32, partial@x>
  // expected-error @+1 {{'mtf.exp' op is not partitioned: reads the pending value}}
  %1 = "mtf.exp"(%0) : (!mtf.tensor<d=4@(), f32, partial@x>) -> !mtf.tensor<d=4@(), f32, partial@x>
  %2 = "mtf.all_reduce"(%1) {reduction = "sum", axes = ["x"], bytes_per_device = 16 : i64} : (!mtf.tensor<d=4@(), f32, partial@x>) -> !mtf.tensor<d=4@(), f32>
  return %2 : !mtf.tensor<d=4@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=2]>

// expected-error @+1 {{'func.func' op argument #0 is pending (!mtf.tensor<d=4@(), f32, partial@x>); arguments must be complete values}}
func.func @pending_argument(%a: !mtf.tensor<d=4@(), f32, partial@x>) -> !mtf.tensor<d=4@(), f32> {
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = ["x"], bytes_per_device = 16 : i64} : (!mtf.tensor<d=4@(), f32, partial@x>) -> !mtf.tensor<d=4@(), f32>
  return %0 : !mtf.tensor<d=4@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=4]>

// A shift along a split dim reads its neighbours' rows: only as far as one block (here 2 rows).
func.func @shift_past_the_block_along_a_split_dim(%a: !mtf.tensor<d=8@x, f32>) -> !mtf.tensor<d=8@x, f32> {
  // expected-error @+1 {{'mtf.shift' op is not partitioned: 'd' must be whole on every device, got @x in !mtf.tensor<d=8@x, f32> (a halo of 3 rows does not fit in blocks of 2)}}
  %0 = "mtf.shift"(%a) {dim = "d", offset = 3 : i64, bytes_per_device = 12 : i64} : (!mtf.tensor<d=8@x, f32>) -> !mtf.tensor<d=8@x, f32>
  return %0 : !mtf.tensor<d=8@x, f32>
}

// -----

sdy.mesh @mesh = <["x"=4]>

func.func @halo_shift_without_bytes(%a: !mtf.tensor<d=8@x, f32>) -> !mtf.tensor<d=8@x, f32> {
  // expected-error @+1 {{'mtf.shift' op is not partitioned: halo exchange without bytes_per_device}}
  %0 = "mtf.shift"(%a) {dim = "d", offset = 1 : i64} : (!mtf.tensor<d=8@x, f32>) -> !mtf.tensor<d=8@x, f32>
  return %0 : !mtf.tensor<d=8@x, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// The shifted dim must be split alike in operand and result (here x against y).
func.func @halo_shift_changing_the_layout(%a: !mtf.tensor<d=8@x, f32>) -> !mtf.tensor<d=8@y, f32> {
  // expected-error @+1 {{'mtf.shift' op is not partitioned: 'd' must be whole on every device, got @x in !mtf.tensor<d=8@x, f32>}}
  %0 = "mtf.shift"(%a) {dim = "d", offset = 1 : i64, bytes_per_device = 4 : i64} : (!mtf.tensor<d=8@x, f32>) -> !mtf.tensor<d=8@y, f32>
  return %0 : !mtf.tensor<d=8@y, f32>
}
