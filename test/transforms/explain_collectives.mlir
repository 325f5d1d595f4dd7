// RUN: meshir-opt %s --split-input-file --verify-diagnostics --mtf-propagate-sharding --mtf-insert-collectives=explain=true
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding --mtf-insert-collectives=explain=true | filecheck %s
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding --mtf-insert-collectives | filecheck %s --check-prefix=PLAIN

// Every collective says why it exists: a remark at the op that needs it, and the same record
// on the collective (mtf.provenance). Without explain=true nothing is recorded.
// PLAIN-NOT: mtf.provenance

// A contraction over a dim a layout rule splits leaves a pending sum; the first op that
// cannot take it pending needs the all_reduce.
// CHECK-LABEL: func.func @pending_sum_for_a_nonlinear_op
// CHECK: "mtf.all_reduce"{{.*}}mtf.provenance = {dims = ["f"], needed_by = "mtf.tanh", reason = "mtf.tanh cannot compute on a pending value; mtf.einsum reduces over 'f' while split, leaving the reduction pending", sources = [{axes = "y", dim = "f", kind = "rule", rule = "f", text = "layout rule f:y", where = ""}]}
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pending_sum_for_a_nonlinear_op(%a: !mtf.tensor<b=8, f=8, f32>, %w: !mtf.tensor<f=8, m=4, f32>) -> !mtf.tensor<b=8, m=4, f32> attributes {mtf.mesh = @mesh, mtf.layout_rules = {f = ["y"]}} {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8, f=8, f32>, !mtf.tensor<f=8, m=4, f32>) -> !mtf.tensor<b=8, m=4, f32>
  // expected-remark @+1 {{all_reduce over y (128 bytes/device) for dims f, needed by mtf.tanh: mtf.tanh cannot compute on a pending value; mtf.einsum reduces over 'f' while split, leaving the reduction pending (f@y by layout rule f:y)}}
  %1 = "mtf.tanh"(%0) : (!mtf.tensor<b=8, m=4, f32>) -> !mtf.tensor<b=8, m=4, f32>
  return %1 : !mtf.tensor<b=8, m=4, f32>
}

// -----

// A function result is never pending: the return needs the all_reduce.
// CHECK-LABEL: func.func @pending_result
// CHECK: "mtf.all_reduce"{{.*}}needed_by = "func.return"
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @pending_result(%a: !mtf.tensor<b=8, f=8, f32>, %w: !mtf.tensor<f=8, m=4, f32>) -> !mtf.tensor<b=8, m=4, f32> attributes {mtf.mesh = @mesh, mtf.layout_rules = {f = ["y"]}} {
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8, f=8, f32>, !mtf.tensor<f=8, m=4, f32>) -> !mtf.tensor<b=8, m=4, f32>
  // expected-remark @+1 {{all_reduce over y (128 bytes/device) for dims f, needed by func.return: a function result is never pending; mtf.einsum reduces over 'f' while split}}
  return %0 : !mtf.tensor<b=8, m=4, f32>
}

// -----

// Two written layouts meet at an add. Computing in b@x, m@y (each argument's split, where
// the other is replicated) is the cheapest outcome (propagation resolves the conflict by
// cost): each operand is sliced where the other is split, and each record names both
// statements (the arguments' types) of the dim it changes.
// CHECK-LABEL: func.func @written_layouts_meet
// CHECK: "mtf.all_slice"{{.*}}dims = ["b"], needed_by = "mtf.add"{{.*}}kind = "written"
// CHECK: "mtf.all_slice"{{.*}}dims = ["m"], needed_by = "mtf.add"
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @written_layouts_meet(%a: !mtf.tensor<b=8@(), m=16@y, f32>, %c: !mtf.tensor<b=8@x, m=16@(), f32>) -> !mtf.tensor<b=8, m=16, f32> attributes {mtf.mesh = @mesh} {
  // expected-remark-re @+2 {{all_slice over x (0 bytes/device) for dims b, needed by mtf.add: mtf.add computes with b@x, but operand #0 is laid out b@() (b@() by layout written on an argument at {{.*}}explain_collectives.mlir:{{[0-9]+}}:33; b@x by layout written on an argument at {{.*}}:{{[0-9]+}}:71, preferred where it met a layout of equal priority: cheaper)}}
  // expected-remark-re @+1 {{all_slice over y (0 bytes/device) for dims m, needed by mtf.add: mtf.add computes with m@y, but operand #1 is laid out m@() (m@() by layout written on an argument at {{.*}}:{{[0-9]+}}:71; m@y by layout written on an argument at {{.*}}:{{[0-9]+}}:33)}}
  %0 = "mtf.add"(%a, %c) : (!mtf.tensor<b=8@(), m=16@y, f32>, !mtf.tensor<b=8@x, m=16@(), f32>) -> !mtf.tensor<b=8, m=16, f32>
  return %0 : !mtf.tensor<b=8, m=16, f32>
}

// -----

// An op that computes along a dim a rule splits gathers it first and splits its result again.
// CHECK-LABEL: func.func @slice_along_split_dim
// CHECK: "mtf.all_gather"{{.*}}needed_by = "mtf.slice", reason = "mtf.slice computes along 'm', which must be whole on every device"
// CHECK: "mtf.all_slice"{{.*}}needed_by = "mtf.slice", reason = "mtf.slice computed 'm' whole; its result is laid out
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @slice_along_split_dim(%a: !mtf.tensor<b=8, m=16, f32>) -> !mtf.tensor<b=8, m=8, f32> attributes {mtf.mesh = @mesh, mtf.layout_rules = {m = ["x"]}} {
  // expected-remark @+2 {{all_gather over x (384 bytes/device) for dims m, needed by mtf.slice: mtf.slice computes along 'm', which must be whole on every device (m@x by layout rule m:x)}}
  // expected-remark @+1 {{all_slice over x (0 bytes/device) for dims m, needed by mtf.slice: mtf.slice computed 'm' whole}}
  %1 = "mtf.slice"(%a) {dim = "m", start = 4} : (!mtf.tensor<b=8, m=16, f32>) -> !mtf.tensor<b=8, m=8, f32>
  return %1 : !mtf.tensor<b=8, m=8, f32>
}

// -----

// A user's mtf.shard and a collective written by hand explain themselves.
// CHECK-LABEL: func.func @shard_and_handwritten
// CHECK: "mtf.all_to_all"{{.*}}needed_by = "mtf.shard"{{.*}}kind = "shard"
// CHECK: "mtf.all_gather"{{.*}}needed_by = "mtf.all_gather", reason = "the program writes this collective"
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @shard_and_handwritten(%a: !mtf.tensor<b=8@x, m=16@(), f32>) -> !mtf.tensor<b=8@(), m=16@(), f32> attributes {mtf.mesh = @mesh} {
  // expected-remark @+1 {{all_to_all over x (96 bytes/device) for dims b, m, needed by mtf.shard: an mtf.shard constrains the layout}}
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8@x, m=16@(), f32>) -> !mtf.tensor<b=8@(), m=16@x, f32>
  // expected-remark @+1 {{all_gather over x (384 bytes/device) for dims m, needed by mtf.all_gather: the program writes this collective}}
  %1 = "mtf.all_gather"(%0) {dim = "m", axes = ["x"]} : (!mtf.tensor<b=8@(), m=16@x, f32>) -> !mtf.tensor<b=8@(), m=16@(), f32>
  return %1 : !mtf.tensor<b=8@(), m=16@(), f32>
}

// -----

// A shift along a split dim exchanges halos instead of gathering: the shift records why.
// CHECK-LABEL: func.func @halo_exchange_of_a_shift
// CHECK: "mtf.shift"{{.*}}bytes_per_device = 32 : i64{{.*}}mtf.provenance = {dims = ["m"], needed_by = "mtf.shift"
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @halo_exchange_of_a_shift(%a: !mtf.tensor<b=8, m=16, f32>) -> !mtf.tensor<b=8, m=16, f32> attributes {mtf.mesh = @mesh, mtf.layout_rules = {m = ["x"]}} {
  // expected-remark @+1 {{collective_permute (a halo exchange) (32 bytes/device) for dims m, needed by mtf.shift: mtf.shift along split 'm' needs boundary rows of the neighbouring blocks (a halo exchange, not a gather) (m@x by layout rule m:x)}}
  %1 = "mtf.shift"(%a) {dim = "m", offset = 1} : (!mtf.tensor<b=8, m=16, f32>) -> !mtf.tensor<b=8, m=16, f32>
  return %1 : !mtf.tensor<b=8, m=16, f32>
}
