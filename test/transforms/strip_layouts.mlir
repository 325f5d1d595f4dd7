// mtf-strip-layouts frees every layout and drops partial markers everywhere a type
// appears: arguments, results, op results, nested blocks and the function type; it erases
// collectives (identities in global semantics) unless told to keep them, and drops the bytes a
// halo exchange recorded on a shift.
// RUN: meshir-opt %s --split-input-file --mtf-strip-layouts | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-strip-layouts=keep-collectives --verify-each=false | filecheck %s --check-prefix=KEEP

sdy.mesh @mesh = <["x"=4, "y"=2]>

// CHECK-LABEL: func.func @signature_and_ops
// CHECK-SAME: (%arg0: !mtf.tensor<b=8, d=16, f32>, %arg1: !mtf.tensor<d=16, f=64, f32>) -> !mtf.tensor<b=8, f=64, f32>
func.func @signature_and_ops(%x: !mtf.tensor<b=8@x, d=16@(), f32>, %w: !mtf.tensor<d=16, f=64@y, f32>) -> !mtf.tensor<b=8@x, f=64@y, f32> {
  // CHECK-NEXT: "mtf.einsum"(%arg0, %arg1) : (!mtf.tensor<b=8, d=16, f32>, !mtf.tensor<d=16, f=64, f32>) -> !mtf.tensor<b=8, f=64, f32>
  %0 = "mtf.einsum"(%x, %w) : (!mtf.tensor<b=8@x, d=16@(), f32>, !mtf.tensor<d=16, f=64@y, f32>) -> !mtf.tensor<b=8@x, f=64@y, f32>
  return %0 : !mtf.tensor<b=8@x, f=64@y, f32>
}

// CHECK-LABEL: func.func @collectives_are_erased
// CHECK-SAME: (%arg0: !mtf.tensor<d=16, f32>) -> !mtf.tensor<d=16, f32>
// CHECK-NEXT: return %arg0 : !mtf.tensor<d=16, f32>
// KEEP-LABEL: func.func @collectives_are_erased
// KEEP-NEXT: "mtf.all_reduce"(%arg0) {axes = ["y"], reduction = "max"} : (!mtf.tensor<d=16, f32>) -> !mtf.tensor<d=16, f32>
// KEEP-NEXT: "mtf.all_gather"(%0) {axes = ["x"], dim = "d"} : (!mtf.tensor<d=16, f32>) -> !mtf.tensor<d=16, f32>
func.func @collectives_are_erased(%a: !mtf.tensor<d=16@x, f32, partial_max@y>) -> !mtf.tensor<d=16, f32> {
  %0 = "mtf.all_reduce"(%a) {reduction = "max", axes = ["y"]} : (!mtf.tensor<d=16@x, f32, partial_max@y>) -> !mtf.tensor<d=16@x, f32>
  %1 = "mtf.all_gather"(%0) {dim = "d", axes = ["x"]} : (!mtf.tensor<d=16@x, f32>) -> !mtf.tensor<d=16, f32>
  return %1 : !mtf.tensor<d=16, f32>
}

// -----

// Types of other dialects, and values in nested regions, are handled too.
// CHECK-LABEL: func.func private @declaration
// CHECK-SAME: (!mtf.tensor<b=8, f32>, tensor<4xf32>) -> !mtf.tensor<b=8, f32>
sdy.mesh @mesh = <["x"=2]>
func.func private @declaration(!mtf.tensor<b=8@x, f32>, tensor<4xf32>) -> !mtf.tensor<b=8@x, f32>

// CHECK-LABEL: func.func @nested_region
// CHECK: ^bb0(%[[ARG:.*]]: !mtf.tensor<b=8, f32>):
// CHECK-NEXT: "test.yield"(%[[ARG]]) : (!mtf.tensor<b=8, f32>) -> ()
func.func @nested_region(%a: !mtf.tensor<b=8@x, f32>) {
  "test.region"() ({
  ^bb0(%arg: !mtf.tensor<b=8@x, f32>):
    "test.yield"(%arg) : (!mtf.tensor<b=8@x, f32>) -> ()
  }) : () -> ()
  return
}

// -----

sdy.mesh @mesh = <["x"=4]>

// A shift along a split dim (a halo exchange) loses its recorded bytes with its layout.
// CHECK-LABEL: func.func @halo_shift_forgets_its_bytes
// CHECK-NEXT: "mtf.shift"(%arg0) {dim = "d", offset = 1 : i64} : (!mtf.tensor<d=8, f32>) -> !mtf.tensor<d=8, f32>
func.func @halo_shift_forgets_its_bytes(%a: !mtf.tensor<d=8@x, f32>) -> !mtf.tensor<d=8@x, f32> {
  %0 = "mtf.shift"(%a) {dim = "d", offset = 1 : i64, bytes_per_device = 4 : i64} : (!mtf.tensor<d=8@x, f32>) -> !mtf.tensor<d=8@x, f32>
  return %0 : !mtf.tensor<d=8@x, f32>
}
