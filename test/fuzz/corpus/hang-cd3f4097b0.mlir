// FUZZ-ARGS: ["--pass-pipeline=builtin.module(mtf-verify)"]
// FUZZ-FOUND: hang: on d7a6500 after 87598 executions
// Hand-written collectives keep the layouts written on them (they change layouts on
// purpose and never get reshards); the dims they do not change relay layouts like an
// identity op, so free dims around them get layouts from arguments, users and rules.

sdy.mesh @mesh = <["x"=4, "y"=2, "z"=2]>

// all_reduce clears the pending sum over y; b's layout crosses it, and d (free on both
// sides) gets z backward from the bias it is added to.
func.func @all_reduce_relays_unchanged_dims(%p: !mtf.tensor<b=8@x, d=16, f32, partial@y>, %bias: !mtf.tensor<d=16@z, f32>) -> !mtf.tensor<b=8, d=16, f32> {
  %0 = "mtf.all_reduce"(%p) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<b=8@x, d=16, f32, partial@y>) -> !mtf.tensor<b=8@x, d=16, f32>
// Hand-written collectives keep the layouts written on them (they change layouts on
  %1 = "mtf.add"(%0, %bias) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16@z, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return %1 : !mtf.tensor<b=8, d=16, f32>
}

// all_gather's written b@x -> b@() is kept: the free user after it stays replicated on b
// (x does not leak past the gather), while d's y crosses it both ways.
func.func @all_gather_keeps_written_layouts(%a: !mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16@y, f32> {
  %0 = "mtf.all_gather"(%a) {dim = "b", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@(), d=16, f32>
// The same symbol in two chunks is fine: each chunk is its own module.
func.func @first() {
  return
}

func.func @second() {
  return
}

  %1 = "mtf.exp"(%0) : (!mtf.tensor<b=8@(), d=16, f32>) -> !mtf.tensor<b=8, d=16@y, f32>
  return %1 : !mtf.tensor<b=8, d=16@y, f32>
}

// A gather of the minor axis of a two-axis split, with a rule on b that the written layouts
// override on both sides; d, free on both sides, stays replicated (nothing constrains it).
func.func @all_gather_of_minor_axis_overrides_rule(%a: !mtf.tensor<b=8@(x,y), d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32> attributes {mtf.layout_rules = {b = ["z"]}} {
  %0 = "mtf.all_gather"(%a) {dim = "b", axes = ["y"]} : (!mtf.tensor<b=8@(x,y), d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  return %0 : !mtf.tensor<b=8@x, d=16, f32>
}
