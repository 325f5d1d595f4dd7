// The verifier rules of loops (dialect/ops/loops.py), one per chunk.
// RUN: meshir-opt %s --split-input-file --verify-diagnostics

func.func @carry_changes_dims(%c: !mtf.tensor<b=8, f32>, %w: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{carried value #0 is !mtf.tensor<b=8, f32> on entry but its yielded value is !mtf.tensor<b=8, d=4, f32>}}
  %r = "mtf.scan"(%c, %w) ({
  ^bb0(%i: !mtf.tensor<i32>, %h: !mtf.tensor<b=8, f32>, %v: !mtf.tensor<d=4, f32>):
    %n = "mtf.mul"(%h, %v) : (!mtf.tensor<b=8, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<b=8, d=4, f32>
    "mtf.yield"(%n) : (!mtf.tensor<b=8, d=4, f32>) -> ()
  }) {length = 3 : i64, carries = 1 : i64, invariants = 1 : i64} : (!mtf.tensor<b=8, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<b=8, f32>
  return
}

// -----

func.func @carry_changes_element_type(%c: !mtf.tensor<b=8, f32>) {
  // expected-error @+1 {{carried value #0 is !mtf.tensor<b=8, f32> on entry but its yielded value is !mtf.tensor<b=8, i32>}}
  %r = "mtf.scan"(%c) ({
  ^bb0(%i: !mtf.tensor<i32>, %h: !mtf.tensor<b=8, f32>):
    %n = "mtf.cast"(%h) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, i32>
    "mtf.yield"(%n) : (!mtf.tensor<b=8, i32>) -> ()
  }) {length = 3 : i64, carries = 1 : i64} : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return
}

// -----

func.func @condition_not_a_scalar_i1(%c: !mtf.tensor<b=8, f32>) {
  // expected-error @+1 {{cond region must yield one !mtf.tensor<i1> (a scalar i1), got !mtf.tensor<b=8, f32>}}
  %r = "mtf.while"(%c) ({
  ^bb0(%h: !mtf.tensor<b=8, f32>):
    "mtf.yield"(%h) : (!mtf.tensor<b=8, f32>) -> ()
  }, {
  ^bb0(%h: !mtf.tensor<b=8, f32>):
    "mtf.yield"(%h) : (!mtf.tensor<b=8, f32>) -> ()
  }) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return
}

// -----

func.func @scan_over_a_dim_xs_lacks(%c: !mtf.tensor<b=8, f32>, %xs: !mtf.tensor<b=8, f32>) {
  // expected-error @+1 {{xs #0 !mtf.tensor<b=8, f32> must have dim 't' of size 3 (the scan's length)}}
  %r = "mtf.scan"(%c, %xs) ({
  ^bb0(%i: !mtf.tensor<i32>, %h: !mtf.tensor<b=8, f32>, %x: !mtf.tensor<b=8, f32>):
    "mtf.yield"(%h) : (!mtf.tensor<b=8, f32>) -> ()
  }) {length = 3 : i64, carries = 1 : i64, dim = "t"} : (!mtf.tensor<b=8, f32>, !mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return
}

// -----

func.func @body_without_yield(%c: !mtf.tensor<b=8, f32>) {
  // expected-error @+1 {{region #0 must end with 'mtf.yield'}}
  %r = "mtf.scan"(%c) ({
  ^bb0(%i: !mtf.tensor<i32>, %h: !mtf.tensor<b=8, f32>):
    // expected-error @+1 {{'mtf.neg' op cannot end a block: mtf ops are not terminators}}
    %n = "mtf.neg"(%h) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  }) {length = 3 : i64, carries = 1 : i64} : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8, f32>
  return
}

// -----

func.func @yield_outside_a_loop(%c: !mtf.tensor<b=8, f32>) {
  // expected-error @+1 {{must end the body of an mtf.scan or mtf.while}}
  "mtf.yield"(%c) : (!mtf.tensor<b=8, f32>) -> ()
  return
}
