// mtf-lower-to-stablehlo{mode=gspmd} lowers propagated IR: a dim without a layout, a pending
// argument or a pending result is an error located at the op (or function) holding it.
// Pending intermediate values are fine: their global value is the sum (see gspmd.mlir).
// RUN: meshir-opt %s --split-input-file --mtf-lower-to-stablehlo='mode=gspmd' --verify-diagnostics

sdy.mesh @mesh = <["x"=2]>

// expected-error @+1 {{'func.func' op argument #0 !mtf.tensor<b=8, f32> has dims without a layout; gspmd mode lowers propagated IR (run mtf-propagate-sharding first)}}
func.func @unpropagated(%a: !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@x, f32> {
  // expected-error @+1 {{'mtf.neg' op result !mtf.tensor<b=8, f32> has dims without a layout; gspmd mode lowers propagated IR}}
  %0 = "mtf.neg"(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  %1 = "mtf.shard"(%0) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@x, f32>
  return %1 : !mtf.tensor<b=8@x, f32>
}

// -----

sdy.mesh @mesh = <["x"=2]>

// expected-error @+1 {{'func.func' op argument #0 is pending (!mtf.tensor<d=4@(), f32, partial@x>); arguments must be complete values}}
func.func @pending_argument(%a: !mtf.tensor<d=4@(), f32, partial@x>) -> !mtf.tensor<d=4@(), f32> {
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = ["x"], bytes_per_device = 16 : i64} : (!mtf.tensor<d=4@(), f32, partial@x>) -> !mtf.tensor<d=4@(), f32>
  return %0 : !mtf.tensor<d=4@(), f32>
}

// -----

sdy.mesh @mesh = <["x"=2]>

func.func @pending_result(%a: !mtf.tensor<b=8@x, d=4@(), f32>) -> !mtf.tensor<d=4@(), f32, partial@x> {
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<b=8@x, d=4@(), f32>) -> !mtf.tensor<d=4@(), f32, partial@x>
  // expected-error @+1 {{'func.return' op returns the pending value !mtf.tensor<d=4@(), f32, partial@x> (result #0); results must be complete values}}
  return %0 : !mtf.tensor<d=4@(), f32, partial@x>
}

