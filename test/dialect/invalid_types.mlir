// One case per rule of the !mtf.tensor type: its syntax (with the column of the error in
// the type text), its content, and its fit to the function's mesh and layout rules.
// RUN: meshir-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{argument #0: malformed type '!mtf.tensr<d=4, f32>' at column 1: expected '!mtf.tensor<'}}
func.func @unknown_type_name(%a: !mtf.tensr<d=4, f32>) {
  return
}

// -----

// expected-error @+1 {{malformed type '!mtf.tensor<=4, f32>' at column 13: expected a dimension name or an element type}}
func.func @missing_dimension_name(%a: !mtf.tensor<=4, f32>) {
  return
}

// -----

// expected-error @+1 {{malformed type '!mtf.tensor<d=four, f32>' at column 15: expected a dimension size (a positive integer)}}
func.func @size_not_a_number(%a: !mtf.tensor<d=four, f32>) {
  return
}

// -----

// expected-error @+1 {{at column 17: expected a mesh axis name or '('}}
func.func @missing_axis_after_at(%a: !mtf.tensor<d=4@, f32>) {
  return
}

// -----

// expected-error @+1 {{at column 20: expected a mesh axis name}}
func.func @trailing_comma_in_axes(%a: !mtf.tensor<d=4@(x,), f32>) {
  return
}

// -----

// expected-error @+1 {{at column 17: expected ','}}
func.func @missing_comma_between_dimensions(%a: !mtf.tensor<d=4 e=2, f32>) {
  return
}

// -----

// expected-error @+1 {{at column 18: expected an element type (f32, bf16, f16, f64, i32, i64, i1)}}
func.func @unknown_element_type(%a: !mtf.tensor<d=4, f128>) {
  return
}

// -----

// expected-error @+1 {{at column 23: expected 'partial', 'partial_max' or 'partial_min'}}
func.func @unknown_partial_keyword(%a: !mtf.tensor<d=4, f32, pending@x>) {
  return
}

// -----

// expected-error @+1 {{at column 30: expected '@'}}
func.func @partial_without_axes(%a: !mtf.tensor<d=4, f32, partial>) {
  return
}

// -----

// expected-error @+1 {{at column 33: expected at least one mesh axis after 'partial@'}}
func.func @partial_over_no_axis(%a: !mtf.tensor<d=4, f32, partial@()>) {
  return
}

// -----

// expected-error @+1 {{at column 22: expected '>'}}
func.func @junk_after_element_type(%a: !mtf.tensor<d=4, f32 x>) {
  return
}

// -----

// expected-error @+1 {{argument #0: dimension name 'd' appears twice}}
func.func @name_used_twice(%a: !mtf.tensor<d=4, d=8, f32>) {
  return
}

// -----

// expected-error @+1 {{dimension 'd' has size 0; sizes must be positive}}
func.func @zero_size(%a: !mtf.tensor<d=0, f32>) {
  return
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
// expected-error @+1 {{mesh axis 'x' is used more than once}}
func.func @axis_used_twice(%a: !mtf.tensor<a=4@x, b=4@x, f32>) {
  return
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
// expected-error @+1 {{mesh axis 'y' is used more than once}}
func.func @axis_both_split_and_partial(%a: !mtf.tensor<a=4@y, f32, partial@y>) {
  return
}

// -----

// expected-error @+1 {{result #0: type !mtf.tensor<d=4@x, f32> uses mesh axes but the function has no mesh (set mtf.mesh)}}
func.func private @axes_without_mesh(%a: !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4@x, f32>


// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
// expected-error @+1 {{unknown mesh axis 'z' in !mtf.tensor<d=4@z, f32> (mesh @mesh has ["x"=2, "y"=2])}}
func.func @unknown_mesh_axis(%a: !mtf.tensor<d=4@z, f32>) {
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
// expected-error @+1 {{dimension 'd' of size 6 is not divisible by 4 (mesh axes x) in !mtf.tensor<d=6@x, f32> on mesh @mesh ["x"=4, "y"=2]}}
func.func @indivisible_split(%a: !mtf.tensor<d=6@x, f32>) {
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
// expected-error @+1 {{dimension 'd' of size 4 is not divisible by 8 (mesh axes (x,y))}}
func.func @indivisible_split_over_two_axes(%a: !mtf.tensor<d=4@(x,y), f32>) {
  return
}

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error @+1 {{function refers to unknown mesh @grid (meshes in module: @mesh)}}
func.func @unknown_mesh_symbol(%a: !mtf.tensor<d=4, f32>) attributes {mtf.mesh = @grid} {
  return
}

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error @+1 {{mtf.mesh must name a mesh symbol like @mesh, got "mesh"}}
func.func @mesh_attribute_not_a_symbol(%a: !mtf.tensor<d=4, f32>) attributes {mtf.mesh = "mesh"} {
  return
}

// -----

sdy.mesh @a = <["x"=2]>
sdy.mesh @b = <["x"=2]>
// expected-error @+1 {{uses mesh axes but the function has no mesh (set mtf.mesh)}}
func.func @two_meshes_and_no_choice(%a: !mtf.tensor<d=4@x, f32>) {
  return
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
// expected-error @+1 {{layout rule for 'd_ff' names unknown mesh axis 'z' (["x"=2, "y"=2])}}
func.func @layout_rule_names_missing_axis(%a: !mtf.tensor<d_ff=4, f32>) attributes {mtf.layout_rules = {batch = ["x"], d_ff = ["z"]}} {
  return
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
// expected-error @+1 {{layout rule for 'batch' names mesh axis 'x' twice}}
func.func @layout_rule_repeats_axis(%a: !mtf.tensor<batch=4, f32>) attributes {mtf.layout_rules = {batch = ["x", "x"]}} {
  return
}

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error @+1 {{mtf.layout_rules must be a dictionary {dim = ["axis", ...]}}}
func.func @layout_rules_not_a_dictionary(%a: !mtf.tensor<batch=4, f32>) attributes {mtf.layout_rules = ["x"]} {
  return
}

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error @+1 {{layout rule for 'batch' must be an array of axis names}}
func.func @layout_rule_not_an_array(%a: !mtf.tensor<batch=4, f32>) attributes {mtf.layout_rules = {batch = "x"}} {
  return
}

// -----

func.func @no_mesh_for_layout_rule(%a: !mtf.tensor<batch=4, f32>) attributes {mtf.layout_rules = {batch = ["x"]}} {
// expected-error @-1 {{layout rule for 'batch' names unknown mesh axis 'x' (no mesh)}}
  return
}

// -----

module {
  // expected-error @+1 {{'sdy.mesh' op mesh axis name 'a b' is not an identifier}}
  sdy.mesh @mesh = <["a b"=2]>
}

// -----

// A mesh name MeshIR cannot use is an error at the sdy.mesh op alone: no Python line of
// meshir-opt's own in front of the message (found by test/fuzz, issue 27).
sdy.mesh @mesh = <["x"=2]>
// expected-error @+1 {{'sdy.mesh' op mesh name 'mésh' is not an identifier}}
sdy.mesh @"mésh" = <["x"=2]>
