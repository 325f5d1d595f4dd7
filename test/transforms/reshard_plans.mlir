// The reshard planner's choices (docs/reshard-planner.md): the cheapest collectives by bytes
// per device, or by α–β time when the links say one axis is slow.
// RUN: meshir-opt %s --split-input-file --mtf-insert-collectives | filecheck %s
// RUN: meshir-opt %s --split-input-file --pass-pipeline='builtin.module(mtf-insert-collectives{objective=time links=x:1e-3:1e9,y:1e-6:1e11})' | filecheck %s --check-prefix=TIME

// One all_to_all moves both axes (not gather + all_to_all + slice).
// CHECK-LABEL: func.func @two_axes_in_one_all_to_all
// CHECK-NEXT: "mtf.all_to_all"(%arg0) {axes = ["x", "y"], bytes_per_device = 112 : i64, dst_dim = "b", src_dim = "a"}
// CHECK-NOT: "mtf.all_
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @two_axes_in_one_all_to_all(%v: !mtf.tensor<a=32@(x,y), b=8@(), f32>) -> !mtf.tensor<a=32@(), b=8@(x,y), f32> {
  %0 = "mtf.shard"(%v) : (!mtf.tensor<a=32@(x,y), b=8@(), f32>) -> !mtf.tensor<a=32@(), b=8@(x,y), f32>
  return %0 : !mtf.tensor<a=32@(), b=8@(x,y), f32>
}

// -----

// The same axes swap dims: one collective_permute of the whole shard.
// CHECK-LABEL: func.func @swap_axes_between_dims
// CHECK-NEXT: "mtf.collective_permute"(%arg0) {bytes_per_device = 128 : i64} : (!mtf.tensor<a=16@x, b=8@y, f32>) -> !mtf.tensor<a=16@y, b=8@x, f32>
// CHECK-NOT: "mtf.all_
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @swap_axes_between_dims(%v: !mtf.tensor<a=16@x, b=8@y, f32>) -> !mtf.tensor<a=16@y, b=8@x, f32> {
  %0 = "mtf.shard"(%v) : (!mtf.tensor<a=16@x, b=8@y, f32>) -> !mtf.tensor<a=16@y, b=8@x, f32>
  return %0 : !mtf.tensor<a=16@y, b=8@x, f32>
}

// -----

// By bytes: one gather over both axes. By time with x slow: y first (fast, cheap in steps),
// then x alone, so the slow ring has 3 steps instead of 7.
// CHECK-LABEL: func.func @gather_over_a_slow_axis
// CHECK-NEXT: "mtf.all_gather"(%arg0) {axes = ["x", "y"], bytes_per_device = 28 : i64, dim = "a"}
// CHECK-NOT: "mtf.all_
// TIME-LABEL: func.func @gather_over_a_slow_axis
// TIME-NEXT: "mtf.all_gather"(%arg0) {axes = ["y"], bytes_per_device = 4 : i64, dim = "a"}
// TIME-NEXT: "mtf.all_gather"(%{{.*}}) {axes = ["x"], bytes_per_device = 24 : i64, dim = "a"}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @gather_over_a_slow_axis(%v: !mtf.tensor<a=8@(x,y), f32>) -> !mtf.tensor<a=8@(), f32> {
  %0 = "mtf.shard"(%v) : (!mtf.tensor<a=8@(x,y), f32>) -> !mtf.tensor<a=8@(), f32>
  return %0 : !mtf.tensor<a=8@(), f32>
}
