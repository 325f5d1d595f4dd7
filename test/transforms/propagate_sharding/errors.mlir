// mtf-propagate-sharding rejects contradictory or impossible user statements with a located
// error (exit 1, no traceback): conflicting mtf.shard constraints on one value, layout rules
// naming an axis the mesh does not have, rules that split two names of one tensor over one
// axis, and rules that do not divide a dim. The same checks apply to rules given with the
// `rules=` option, whose text errors the CLI reports at the top of the input (OPT-* lines,
// run on Inputs/plain.mlir: one exp of a free b=8 x d=16 tensor on mesh x=4, y=2).
// RUN: meshir-opt %s --split-input-file --mtf-propagate-sharding --verify-diagnostics
// RUN: not meshir-opt %s --split-input-file --mtf-propagate-sharding 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b:z"' 2>&1 | filecheck %s --check-prefix=OPT-AXIS
// RUN: not meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b:x,d:x"' 2>&1 | filecheck %s --check-prefix=OPT-TWO
// RUN: not meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b:x,d:(x,x)"' 2>&1 | filecheck %s --check-prefix=OPT-TWICE
// RUN: not meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b:(x,y"' 2>&1 | filecheck %s --check-prefix=OPT-PAREN
// RUN: not meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b:x d:y"' 2>&1 | filecheck %s --check-prefix=OPT-SPACE
// RUN: not meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b:x,,d:y"' 2>&1 | filecheck %s --check-prefix=OPT-EMPTY
// RUN: not meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b:x,b:y"' 2>&1 | filecheck %s --check-prefix=OPT-DUP
// RUN: not meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b"' 2>&1 | filecheck %s --check-prefix=OPT-NOAXIS
// RUN: not meshir-opt %S/Inputs/plain.mlir --mtf-propagate-sharding='rules="b:x;"' 2>&1 | filecheck %s --check-prefix=OPT-SEMI
// RUN: not meshir-opt %S/Inputs/no_mesh.mlir --mtf-propagate-sharding='rules="b:x"' 2>&1 | filecheck %s --check-prefix=OPT-NOMESH

// ERR-NOT: Traceback
// ERR-NOT: internal error

// Two user mtf.shard ops constraining one value differently contradict each other.
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @conflicting_shard_constraints(%a: !mtf.tensor<b=8, d=16, f32>) -> (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@y, d=16, f32>) {
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  // ERR: errors.mlir:[[# @LINE + 1]]:8: error: conflicting mtf.shard constraints on %arg0: 'b' is @x at {{.*}}errors.mlir:[[# @LINE - 1]]:8 and @y here
  %1 = "mtf.shard"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8@y, d=16, f32> // expected-error {{conflicting mtf.shard constraints on %arg0: 'b' is @x at}}
  return %0, %1 : !mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<b=8@y, d=16, f32>
}

// -----

// Pinned replicated (@()) and split are a conflict too. (Shards of one value on different
// dims, or leaving a dim free, are not: priorities.mlir, @shards_on_different_dims_combine.)
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @replicated_vs_split_constraints(%a: !mtf.tensor<b=8, d=16, f32>) -> (!mtf.tensor<b=8, d=16@(), f32>, !mtf.tensor<b=8, d=16@y, f32>) {
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16@(), f32>
  // ERR: errors.mlir:[[# @LINE + 1]]:8: error: conflicting mtf.shard constraints on %arg0: 'd' is @() at {{.*}}errors.mlir:[[# @LINE - 1]]:8 and @y here
  %1 = "mtf.shard"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16@y, f32> // expected-error {{'d' is @() at}}
  return %0, %1 : !mtf.tensor<b=8, d=16@(), f32>, !mtf.tensor<b=8, d=16@y, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// ERR: errors.mlir:[[# @LINE + 1]]:1: error: 'func.func' op layout rule for 'b' names unknown mesh axis 'z' (["x"=4, "y"=2])
func.func @rule_names_missing_axis(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32> attributes {mtf.layout_rules = {b = ["z"]}} { // expected-error {{layout rule for 'b' names unknown mesh axis 'z' (["x"=4, "y"=2])}}
  return %a : !mtf.tensor<b=8, d=16, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// ERR: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: layout rules split both 'b' and 'd' of !mtf.tensor<b=8, d=16, f32> over mesh axis 'x'
func.func @rules_split_two_names_over_one_axis(%a: !mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32> attributes {mtf.layout_rules = {b = ["x"], d = ["x", "y"]}} { // expected-error {{layout rules split both 'b' and 'd' of !mtf.tensor<b=8, d=16, f32> over mesh axis 'x'}}
  return %a : !mtf.tensor<b=8, d=16, f32>
}

// -----

// The rule is checked on every value: here on the einsum result only (no input has both names).
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @rules_clash_on_einsum_result(%a: !mtf.tensor<b=8, k=4, f32>, %w: !mtf.tensor<k=4, f=16, f32>) -> !mtf.tensor<b=8, f=16, f32> attributes {mtf.layout_rules = {b = ["y"], f = ["y"]}} {
  // ERR: errors.mlir:[[# @LINE + 1]]:8: error: layout rules split both 'b' and 'f' of !mtf.tensor<b=8, f=16, f32> over mesh axis 'y'
  %0 = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=8, k=4, f32>, !mtf.tensor<k=4, f=16, f32>) -> !mtf.tensor<b=8, f=16, f32> // expected-error {{layout rules split both 'b' and 'f'}}
  return %0 : !mtf.tensor<b=8, f=16, f32>
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>

// ERR: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: layout rule b:x does not divide dimension 'b' of size 6 (mesh axes x have 4 devices) in !mtf.tensor<b=6, d=16, f32>
func.func @rule_does_not_divide(%a: !mtf.tensor<b=6, d=16, f32>) -> !mtf.tensor<b=6, d=16, f32> attributes {mtf.layout_rules = {b = ["x"]}} { // expected-error {{layout rule b:x does not divide dimension 'b' of size 6 (mesh axes x have 4 devices)}}
  return %a : !mtf.tensor<b=6, d=16, f32>
}

// -----

// A rule must divide every dim of its name, also one made by an op (here a slice), even when
// the name's other dims divide.
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @rule_does_not_divide_sliced_dim(%a: !mtf.tensor<d=16, f32>) -> !mtf.tensor<d=6, f32> attributes {mtf.layout_rules = {d = ["x", "y"]}} {
  // ERR: errors.mlir:[[# @LINE + 1]]:8: error: layout rule d:(x,y) does not divide dimension 'd' of size 6 (mesh axes (x,y) have 8 devices) in !mtf.tensor<d=6, f32>
  %0 = "mtf.slice"(%a) {dim = "d", start = 2} : (!mtf.tensor<d=16, f32>) -> !mtf.tensor<d=6, f32> // expected-error {{layout rule d:(x,y) does not divide dimension 'd' of size 6}}
  return %0 : !mtf.tensor<d=6, f32>
}

// The rule text is checked against each function's mesh, at the function.
// OPT-AXIS: plain.mlir:2:1: error: layout rule for 'b' names unknown mesh axis 'z' (["x"=4, "y"=2])
// OPT-AXIS-NOT: error
// OPT-AXIS-NOT: Traceback

// Two names of one tensor over one axis: reported for every value that has both.
// OPT-TWO: plain.mlir:2:18: error: layout rules split both 'b' and 'd' of !mtf.tensor<b=8, d=16, f32> over mesh axis 'x'
// OPT-TWO: plain.mlir:3:8: error: layout rules split both 'b' and 'd' of !mtf.tensor<b=8, d=16, f32> over mesh axis 'x'
// OPT-TWO-NOT: Traceback

// OPT-TWICE: plain.mlir:2:1: error: layout rule for 'd' names a mesh axis twice: (x,x)
// OPT-TWICE-NOT: Traceback

// Rules for a function that has no mesh (and a module with none).
// OPT-NOMESH: no_mesh.mlir:1:1: error: layout rules given but the function has no mesh (set mtf.mesh)
// OPT-NOMESH-NOT: Traceback

// Malformed text is not about any op: it is reported at the start of the input.
// OPT-PAREN: plain.mlir:1:1: error: pass 'mtf-propagate-sharding' failed: malformed layout rules at column 1 of 'b:(x,y': expected 'dim:axis' or 'dim:(axis,...)'
// OPT-PAREN-NOT: Traceback
// OPT-SPACE: plain.mlir:1:1: error: pass 'mtf-propagate-sharding' failed: malformed layout rules at column 1 of 'b:x d:y': expected 'dim:axis' or 'dim:(axis,...)'
// OPT-SPACE-NOT: Traceback
// OPT-EMPTY: plain.mlir:1:1: error: pass 'mtf-propagate-sharding' failed: malformed layout rules at column 5 of 'b:x,,d:y': expected 'dim:axis' or 'dim:(axis,...)'
// OPT-EMPTY-NOT: Traceback
// OPT-DUP: plain.mlir:1:1: error: pass 'mtf-propagate-sharding' failed: layout rules give 'b' twice in 'b:x,b:y'
// OPT-DUP-NOT: Traceback
// OPT-NOAXIS: plain.mlir:1:1: error: pass 'mtf-propagate-sharding' failed: malformed layout rules at column 1 of 'b': expected 'dim:axis' or 'dim:(axis,...)'
// OPT-NOAXIS-NOT: Traceback
// Mesh-TensorFlow's `b:x;d:y` is accepted (rules_text_forms.mlir); a trailing separator is not.
// OPT-SEMI: plain.mlir:1:1: error: pass 'mtf-propagate-sharding' failed: malformed layout rules: 'b:x;' ends with a semicolon
// OPT-SEMI-NOT: Traceback
