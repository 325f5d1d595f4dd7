// The verifier remembers the verdict of an op it has seen (dialect/verdicts.py): an op equal
// to an earlier one is reported again, at its own line; the same op on another mesh is
// judged on that mesh; and mtf.yield, whose rule reads its parent, is judged every time.
// RUN: meshir-opt %s --verify-diagnostics

sdy.mesh @wide = <["x"=4]>
sdy.mesh @narrow = <["x"=2]>

func.func @twice(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.relu' op expects 1 operand, got 2}}
  %0 = "mtf.relu"(%a, %a) : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  // expected-error @+1 {{'mtf.relu' op expects 1 operand, got 2}}
  %1 = "mtf.relu"(%a, %a) : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

func.func @fits_the_narrow_mesh(%a: !mtf.tensor<d=6, f32>) attributes {mtf.mesh = @narrow} {
  %0 = "mtf.shard"(%a) : (!mtf.tensor<d=6, f32>) -> !mtf.tensor<d=6@x, f32>
  return
}

func.func @same_op_on_the_wide_mesh(%a: !mtf.tensor<d=6, f32>) attributes {mtf.mesh = @wide} {
  // expected-error @+1 {{not divisible by 4}}
  %0 = "mtf.shard"(%a) : (!mtf.tensor<d=6, f32>) -> !mtf.tensor<d=6@x, f32>
  return
}

func.func @yield_in_a_loop_then_outside(%c: !mtf.tensor<b=8, f32>) {
  %r = "mtf.scan"(%c) ({
  ^bb0(%i: !mtf.tensor<i32>, %h: !mtf.tensor<b=8, f32>):
    "mtf.yield"(%h) : (!mtf.tensor<b=8, f32>) -> ()
  }) {length = 3 : i64, carries = 1 : i64} : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  // expected-error @+1 {{must end the body of an mtf.scan or mtf.while}}
  "mtf.yield"(%c) : (!mtf.tensor<b=8, f32>) -> ()
  return
}
