// One case per verifier rule of the mtf ops (dialect/ops/*.py), each in its own chunk.
// RUN: meshir-opt %s --split-input-file --verify-diagnostics

func.func @unknown_op_suggests_a_name(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{unknown operation 'mtf.einsun'; did you mean 'mtf.einsum'?}}
  %0 = "mtf.einsun"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

// ---- rules every op shares (dialect/ops/base.py) ----

func.func @too_many_operands(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.relu' op expects 1 operand, got 2}}
  %0 = "mtf.relu"(%a, %a) : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @too_few_operands(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.select' op expects 3 operands, got 2}}
  %0 = "mtf.select"(%a, %a) : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @einsum_needs_an_operand() {
  // expected-error @+1 {{'mtf.einsum' op expects at least 1 operands, got 0}}
  %0 = "mtf.einsum"() : () -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @creation_op_takes_no_operand(%a: !mtf.tensor<d=4, i32>) {
  // expected-error @+1 {{'mtf.iota' op expects 0 operands, got 1}}
  %0 = "mtf.iota"(%a) {dim = "d"} : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  return
}

// -----

func.func @two_results(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.relu' op expects 1 result, got 2}}
  %0:2 = "mtf.relu"(%a) : (!mtf.tensor<d=4, f32>) -> (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f32>)
  return
}

// -----

func.func @missing_attribute(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.slice' op requires attribute 'start' (an integer)}}
  %0 = "mtf.slice"(%a) {dim = "d"} : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=2, f32>
  return
}

// -----

func.func @ill_typed_attribute(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.slice' op attribute 'start' must be an integer, got "one"}}
  %0 = "mtf.slice"(%a) {dim = "d", start = "one"} : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=2, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @ill_typed_axes_attribute(%a: !mtf.tensor<d=4, f32, partial@x>) {
  // expected-error @+1 {{attribute 'axes' must be an array of mesh axis names, got "x"}}
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = "x"} : (!mtf.tensor<d=4, f32, partial@x>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @result_not_a_named_tensor(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.relu' op result: expected an !mtf.tensor type, got tensor<4xf32>}}
  %0 = "mtf.relu"(%a) : (!mtf.tensor<d=4, f32>) -> tensor<4xf32>
  return
}

// -----

func.func @result_type_malformed(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.relu' op result has a malformed type: malformed type '!mtf.tensor<d=x, f32>' at column 15}}
  %0 = "mtf.relu"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=x, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @result_uses_unknown_axis(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.shard' op unknown mesh axis 'z' in !mtf.tensor<d=4@z, f32> (mesh @mesh has ["x"=4, "y"=2])}}
  %0 = "mtf.shard"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4@z, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @result_split_indivisible(%a: !mtf.tensor<d=6, f32>) {
  // expected-error @+1 {{'mtf.shard' op dimension 'd' of size 6 is not divisible by 4 (mesh axes x)}}
  %0 = "mtf.shard"(%a) : (!mtf.tensor<d=6, f32>) -> !mtf.tensor<d=6@x, f32>
  return
}

// -----

func.func @shard_cut_of_no_dim(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.shard' op cut 'e' is not a dimension of the result !mtf.tensor<d=4, f32>}}
  %0 = "mtf.shard"(%a) {cut = ["e"]} : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @shard_param_layout_unknown(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.shard' op param_layout must be one of compute, update, stored, got 'all'}}
  %0 = "mtf.shard"(%a) {param = "w", param_layout = "all"} : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @shard_param_layout_already_laid_out(%a: !mtf.tensor<d=4, f32>) attributes {mtf.mesh = @mesh} {
  // expected-error @+1 {{'mtf.shard' op a parameter's layout still to decide (param_layout) keeps its result free}}
  %0 = "mtf.shard"(%a) {param = "w", param_layout = "update"} : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4@x, f32>
  return
}

// -----

func.func @name_with_two_sizes(%a: !mtf.tensor<d=4, f32>, %b: !mtf.tensor<d=8, f32>) {
  // expected-error @+1 {{'mtf.add' op dimension 'd' has sizes 4 and 8 among the operands and result}}
  %0 = "mtf.add"(%a, %b) : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=8, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @mixed_element_types(%a: !mtf.tensor<d=4, f32>, %b: !mtf.tensor<d=4, i32>) {
  // expected-error @+1 {{'mtf.add' op operands must have one element type, got f32, i32}}
  %0 = "mtf.add"(%a, %b) : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @dim_attribute_names_missing_dimension(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.slice' op dim 'e' is not a dimension of the operand !mtf.tensor<d=4, f32>}}
  %0 = "mtf.slice"(%a) {dim = "e", start = 0} : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=2, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @collective_over_no_axis(%a: !mtf.tensor<d=4, f32, partial@x>) {
  // expected-error @+1 {{attribute 'axes' must name at least one mesh axis}}
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = []} : (!mtf.tensor<d=4, f32, partial@x>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @collective_axis_twice(%a: !mtf.tensor<d=4, f32, partial@x>) {
  // expected-error @+1 {{mesh axis used twice in axes (x,x)}}
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = ["x", "x"]} : (!mtf.tensor<d=4, f32, partial@x>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @collective_unknown_axis(%a: !mtf.tensor<d=4, f32, partial@x>) {
  // expected-error @+1 {{unknown mesh axis 'z' (mesh @mesh has ["x"=4, "y"=2])}}
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = ["z"]} : (!mtf.tensor<d=4, f32, partial@x>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @mtf_op_ends_block() {
  // MLIR accepts an unregistered op as a possible terminator; the MeshIR verifier does not.
  // expected-error @+1 {{'mtf.iota' op cannot end a block: mtf ops are not terminators (is a 'return' missing?)}}
  %0 = "mtf.iota"() {dim = "n"} : () -> !mtf.tensor<n=4, i32>
}

// -----

// ---- elementwise ops ----

func.func @elementwise_result_names_not_the_union(%a: !mtf.tensor<b=2, d=4, f32>, %c: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.add' op result names [d] must be the union of the operand names [b, d]}}
  %0 = "mtf.add"(%a, %c) : (!mtf.tensor<b=2, d=4, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @float_op_on_integers(%a: !mtf.tensor<d=4, i32>) {
  // expected-error @+1 {{'mtf.exp' op operand element type i32 is not supported (expected one of bf16, f16, f32, f64)}}
  %0 = "mtf.exp"(%a) : (!mtf.tensor<d=4, i32>) -> !mtf.tensor<d=4, i32>
  return
}

// -----

func.func @arithmetic_on_booleans(%a: !mtf.tensor<d=4, i1>) {
  // expected-error @+1 {{'mtf.add' op operand element type i1 is not supported}}
  %0 = "mtf.add"(%a, %a) : (!mtf.tensor<d=4, i1>, !mtf.tensor<d=4, i1>) -> !mtf.tensor<d=4, i1>
  return
}

// -----

func.func @elementwise_changes_element_type(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.tanh' op result element type must be f32, got f16}}
  %0 = "mtf.tanh"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f16>
  return
}

// -----

func.func @compare_result_not_i1(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.lt' op result element type must be i1, got f32}}
  %0 = "mtf.lt"(%a, %a) : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @cast_changes_names(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.cast' op result names [e] must equal operand names [d]}}
  %0 = "mtf.cast"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<e=4, i32>
  return
}

// -----

func.func @cast_changes_size(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.cast' op dimension 'd' has sizes 4 and 8 among the operand and result}}
  %0 = "mtf.cast"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=8, i32>
  return
}

// -----

func.func @select_condition_not_i1(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.select' op condition must have element type i1, got f32}}
  %0 = "mtf.select"(%a, %a, %a) : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @select_branches_differ(%p: !mtf.tensor<d=4, i1>, %a: !mtf.tensor<d=4, f32>, %b: !mtf.tensor<d=4, f16>) {
  // expected-error @+1 {{'mtf.select' op operands must have one element type, got f16, f32}}
  %0 = "mtf.select"(%p, %a, %b) : (!mtf.tensor<d=4, i1>, !mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f16>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

// ---- einsum and reductions ----

func.func @einsum_on_booleans(%a: !mtf.tensor<d=4, i1>) {
  // expected-error @+1 {{'mtf.einsum' op einsum needs numeric operands, got i1}}
  %0 = "mtf.einsum"(%a) : (!mtf.tensor<d=4, i1>) -> !mtf.tensor<i1>
  return
}

// -----

func.func @einsum_narrows_element_type(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.einsum' op result element type must be f32 or a wider float (f64), got bf16}}
  %0 = "mtf.einsum"(%a, %a) : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<bf16>
  return
}

// -----

func.func @einsum_widens_an_integer(%a: !mtf.tensor<d=4, i32>) {
  // expected-error @+1 {{'mtf.einsum' op result element type must be i32, got i64}}
  %0 = "mtf.einsum"(%a, %a) : (!mtf.tensor<d=4, i32>, !mtf.tensor<d=4, i32>) -> !mtf.tensor<i64>
  return
}

// -----

func.func @einsum_result_name_from_nowhere(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.einsum' op result names [z] appear in no operand (operand names: [d])}}
  %0 = "mtf.einsum"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<z=2, f32>
  return
}

// -----

func.func @reduce_adds_a_name(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.reduce_sum' op result names [z] are not in the operand [d]}}
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<z=2, f32>
  return
}

// -----

func.func @reduce_changes_element_type(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.reduce_max' op result element type must be f32, got i32}}
  %0 = "mtf.reduce_max"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<i32>
  return
}

// -----

func.func @reduce_sum_of_booleans(%a: !mtf.tensor<d=4, i1>) {
  // expected-error @+1 {{'mtf.reduce_sum' op reduce_sum needs a numeric operand, got i1}}
  %0 = "mtf.reduce_sum"(%a) : (!mtf.tensor<d=4, i1>) -> !mtf.tensor<i1>
  return
}

// -----

// ---- shape ops ----

func.func @shape_op_changes_element_type(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.broadcast' op result element type must be f32, got i32}}
  %0 = "mtf.broadcast"(%a) : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<b=2, d=4, i32>
  return
}

// -----

func.func @broadcast_drops_a_name(%a: !mtf.tensor<b=2, d=4, f32>) {
  // expected-error @+1 {{'mtf.broadcast' op result drops operand names [b]; broadcast may only add names}}
  %0 = "mtf.broadcast"(%a) : (!mtf.tensor<b=2, d=4, f32>) -> !mtf.tensor<d=4, f32>
  return
}

// -----

func.func @reshape_changes_element_count(%a: !mtf.tensor<b=2, d=4, f32>) {
  // expected-error @+1 {{'mtf.reshape' op reshape must keep the element count: operand has 8, result 6}}
  %0 = "mtf.reshape"(%a) : (!mtf.tensor<b=2, d=4, f32>) -> !mtf.tensor<n=6, f32>
  return
}

// -----

func.func @rename_changes_sizes(%a: !mtf.tensor<b=2, d=4, f32>) {
  // expected-error @+1 {{'mtf.rename' op rename keeps sizes position by position: operand (2, 4), result (4, 2)}}
  %0 = "mtf.rename"(%a) : (!mtf.tensor<b=2, d=4, f32>) -> !mtf.tensor<x=4, y=2, f32>
  return
}

// -----

func.func @transpose_not_a_permutation(%a: !mtf.tensor<b=2, d=4, f32>) {
  // expected-error @+1 {{'mtf.transpose' op result names [d, e] must be a permutation of [b, d]}}
  %0 = "mtf.transpose"(%a) : (!mtf.tensor<b=2, d=4, f32>) -> !mtf.tensor<d=4, e=2, f32>
  return
}

// -----

func.func @slice_changes_names(%a: !mtf.tensor<b=2, d=4, f32>) {
  // expected-error @+1 {{'mtf.slice' op result names [d, b] must equal operand names [b, d]}}
  %0 = "mtf.slice"(%a) {dim = "d", start = 0} : (!mtf.tensor<b=2, d=4, f32>) -> !mtf.tensor<d=2, b=2, f32>
  return
}

// -----

func.func @slice_resizes_another_dimension(%a: !mtf.tensor<b=2, d=4, f32>) {
  // expected-error @+1 {{'mtf.slice' op dimension 'b' changes size from 2 to 1; only 'd' may}}
  %0 = "mtf.slice"(%a) {dim = "d", start = 0} : (!mtf.tensor<b=2, d=4, f32>) -> !mtf.tensor<b=1, d=2, f32>
  return
}

// -----

func.func @slice_out_of_bounds(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.slice' op slice [3, 5) is out of bounds of 'd' of size 4}}
  %0 = "mtf.slice"(%a) {dim = "d", start = 3} : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=2, f32>
  return
}

// -----

func.func @concat_wrong_total(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.concat' op result size of 'd' must be 8 (the sum of the operands'), got 6}}
  %0 = "mtf.concat"(%a, %a) {dim = "d"} : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f32>) -> !mtf.tensor<d=6, f32>
  return
}

// -----

func.func @concat_mixed_element_types(%a: !mtf.tensor<d=4, f32>, %b: !mtf.tensor<d=4, f16>) {
  // expected-error @+1 {{'mtf.concat' op operands and result must have one element type, got f16, f32}}
  %0 = "mtf.concat"(%a, %b) {dim = "d"} : (!mtf.tensor<d=4, f32>, !mtf.tensor<d=4, f16>) -> !mtf.tensor<d=8, f32>
  return
}

// -----

func.func @split_pieces_do_not_sum_to_the_dim(%a: !mtf.tensor<b=2, d=8, f32>) {
  // expected-error @+1 {{'mtf.split' op the pieces' sizes of 'd' (4, 2) sum to 6, not to its size 8}}
  %0:2 = "mtf.split"(%a) {dim = "d"} : (!mtf.tensor<b=2, d=8, f32>) -> (!mtf.tensor<b=2, d=4, f32>, !mtf.tensor<b=2, d=2, f32>)
  return
}

// -----

func.func @split_piece_changes_another_dim(%a: !mtf.tensor<b=2, d=8, f32>) {
  // expected-error @+1 {{'mtf.split' op dimension 'b' changes size from 2 to 4; only 'd' may}}
  %0:2 = "mtf.split"(%a) {dim = "d"} : (!mtf.tensor<b=2, d=8, f32>) -> (!mtf.tensor<b=2, d=4, f32>, !mtf.tensor<b=4, d=4, f32>)
  return
}

// -----

func.func @split_without_results(%a: !mtf.tensor<d=8, f32>) {
  // expected-error @+1 {{'mtf.split' op expects at least one result, got 0}}
  "mtf.split"(%a) {dim = "d"} : (!mtf.tensor<d=8, f32>) -> ()
  return
}

// -----

func.func @split_of_an_unknown_dim(%a: !mtf.tensor<d=8, f32>) {
  // expected-error @+1 {{'mtf.split' op dim 'e' is not a dimension of the operand !mtf.tensor<d=8, f32>}}
  %0 = "mtf.split"(%a) {dim = "e"} : (!mtf.tensor<d=8, f32>) -> !mtf.tensor<d=8, f32>
  return
}

// -----

func.func @pad_negative(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.pad' op padding must be non-negative, got low=-1, high=0}}
  %0 = "mtf.pad"(%a) {dim = "d", low = -1, high = 0} : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=3, f32>
  return
}

// -----

func.func @pad_wrong_result_size(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.pad' op result size of 'd' must be 7, got 6}}
  %0 = "mtf.pad"(%a) {dim = "d", low = 1, high = 2} : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=6, f32>
  return
}

// -----

func.func @shift_resizes(%a: !mtf.tensor<d=4, f32>) {
  // expected-error @+1 {{'mtf.shift' op shift keeps the size of 'd'}}
  %0 = "mtf.shift"(%a) {dim = "d", offset = 1} : (!mtf.tensor<d=4, f32>) -> !mtf.tensor<d=5, f32>
  return
}

// -----

// ---- creation ops ----

func.func @constant_dense_shape_mismatch() {
  // expected-error @+1 {{'mtf.constant' op value has shape (3,) but the result !mtf.tensor<r=2, c=2, f32> has shape (2, 2)}}
  %0 = "mtf.constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> !mtf.tensor<r=2, c=2, f32>
  return
}

// -----

func.func @constant_dense_float_into_integer() {
  // expected-error @+1 {{'mtf.constant' op value has float elements (f32) but the result element type is i32}}
  %0 = "mtf.constant"() {value = dense<[1.5, 2.0]> : tensor<2xf32>} : () -> !mtf.tensor<r=2, i32>
  return
}

// -----

func.func @constant_float_scalar_into_integer() {
  // expected-error @+1 {{'mtf.constant' op value 2.5 is not an integer but the result element type is i32}}
  %0 = "mtf.constant"() {value = 2.5 : f32} : () -> !mtf.tensor<r=2, i32>
  return
}

// -----

func.func @constant_value_not_a_number() {
  // expected-error @+1 {{'mtf.constant' op attribute 'value' must be a number or dense elements, got "one"}}
  %0 = "mtf.constant"() {value = "one"} : () -> !mtf.tensor<r=2, f32>
  return
}

// -----

func.func @iota_of_booleans() {
  // expected-error @+1 {{'mtf.iota' op iota needs a numeric element type, got i1}}
  %0 = "mtf.iota"() {dim = "n"} : () -> !mtf.tensor<n=4, i1>
  return
}

// -----

func.func @iota_along_missing_dimension() {
  // expected-error @+1 {{'mtf.iota' op dim 'm' is not a dimension of the result !mtf.tensor<n=4, i32>}}
  %0 = "mtf.iota"() {dim = "m"} : () -> !mtf.tensor<n=4, i32>
  return
}

// -----

func.func @random_integers() {
  // expected-error @+1 {{'mtf.random_uniform' op random values need a float element type, got i32}}
  %0 = "mtf.random_uniform"() {seed = 1} : () -> !mtf.tensor<n=4, i32>
  return
}

// -----

func.func @uniform_empty_interval() {
  // expected-error @+1 {{'mtf.random_uniform' op minval 1.0 must be below maxval 0.5}}
  %0 = "mtf.random_uniform"() {seed = 1, minval = 1.0, maxval = 0.5} : () -> !mtf.tensor<n=4, f32>
  return
}

// -----

func.func @normal_negative_stddev() {
  // expected-error @+1 {{'mtf.random_normal' op stddev must be non-negative, got -1.0}}
  %0 = "mtf.random_normal"() {seed = 1, stddev = -1.0} : () -> !mtf.tensor<n=4, f32>
  return
}

// -----

func.func @random_without_a_seed() {
  // expected-error @+1 {{'mtf.random_uniform' op needs a seed: the attribute `seed` or a 0-d i32 operand}}
  %0 = "mtf.random_uniform"() : () -> !mtf.tensor<n=4, f32>
  return
}

// -----

func.func @random_with_two_seeds(%s: !mtf.tensor<i32>) {
  // expected-error @+1 {{'mtf.random_normal' op has both a seed operand and a `seed` attribute; give one}}
  %0 = "mtf.random_normal"(%s) {seed = 3} : (!mtf.tensor<i32>) -> !mtf.tensor<n=4, f32>
  return
}

// -----

func.func @random_seed_not_a_scalar_i32(%s: !mtf.tensor<n=4, i32>) {
  // expected-error @+1 {{'mtf.random_uniform' op the seed operand must be a 0-d i32 tensor, got !mtf.tensor<n=4, i32>}}
  %0 = "mtf.random_uniform"(%s) : (!mtf.tensor<n=4, i32>) -> !mtf.tensor<n=4, f32>
  return
}

// -----

func.func @random_seed_of_two_operands(%s: !mtf.tensor<i32>) {
  // expected-error @+1 {{'mtf.random_uniform' op expects 0 to 1 operands, got 2}}
  %0 = "mtf.random_uniform"(%s, %s) : (!mtf.tensor<i32>, !mtf.tensor<i32>) -> !mtf.tensor<n=4, f32>
  return
}

// -----

// ---- indexing ops ----

func.func @one_hot_of_floats(%a: !mtf.tensor<b=4, f32>) {
  // expected-error @+1 {{'mtf.one_hot' op ids must have an integer element type (i32, i64), got f32}}
  %0 = "mtf.one_hot"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, v=8, f32>
  return
}

// -----

func.func @one_hot_without_depth_name(%a: !mtf.tensor<b=4, i32>) {
  // expected-error @+1 {{'mtf.one_hot' op result names [b] must be the operand names [b] plus exactly one depth name}}
  %0 = "mtf.one_hot"(%a) : (!mtf.tensor<b=4, i32>) -> !mtf.tensor<b=4, f32>
  return
}

// -----

func.func @gather_with_float_ids(%t: !mtf.tensor<v=8, d=4, f32>, %ids: !mtf.tensor<b=2, f32>) {
  // expected-error @+1 {{'mtf.gather' op ids must have an integer element type (i32, i64), got f32}}
  %0 = "mtf.gather"(%t, %ids) {dim = "v"} : (!mtf.tensor<v=8, d=4, f32>, !mtf.tensor<b=2, f32>) -> !mtf.tensor<b=2, d=4, f32>
  return
}

// -----

func.func @gather_ids_have_gathered_name(%t: !mtf.tensor<v=8, d=4, f32>, %ids: !mtf.tensor<v=8, i32>) {
  // expected-error @+1 {{'mtf.gather' op ids may not have the gathered dimension 'v'}}
  %0 = "mtf.gather"(%t, %ids) {dim = "v"} : (!mtf.tensor<v=8, d=4, f32>, !mtf.tensor<v=8, i32>) -> !mtf.tensor<v=8, d=4, f32>
  return
}

// -----

func.func @gather_result_names(%t: !mtf.tensor<v=8, d=4, f32>, %ids: !mtf.tensor<b=2, i32>) {
  // expected-error @+1 {{'mtf.gather' op result names [b] must be the ids' names and the table's names except 'v': [b, d]}}
  %0 = "mtf.gather"(%t, %ids) {dim = "v"} : (!mtf.tensor<v=8, d=4, f32>, !mtf.tensor<b=2, i32>) -> !mtf.tensor<b=2, f32>
  return
}

// -----

func.func @gather_result_size(%t: !mtf.tensor<v=8, d=4, f32>, %ids: !mtf.tensor<b=2, i32>) {
  // expected-error @+1 {{'mtf.gather' op dimension 'd' has sizes 4 and 2 among the table and result}}
  %0 = "mtf.gather"(%t, %ids) {dim = "v"} : (!mtf.tensor<v=8, d=4, f32>, !mtf.tensor<b=2, i32>) -> !mtf.tensor<b=2, d=2, f32>
  return
}

// -----

func.func @gather_changes_element_type(%t: !mtf.tensor<v=8, d=4, f32>, %ids: !mtf.tensor<b=2, i32>) {
  // expected-error @+1 {{'mtf.gather' op result element type must be the table's f32, got i32}}
  %0 = "mtf.gather"(%t, %ids) {dim = "v"} : (!mtf.tensor<v=8, d=4, f32>, !mtf.tensor<b=2, i32>) -> !mtf.tensor<b=2, d=4, i32>
  return
}

// -----

// ---- shard and collectives: each checks the layout transition it performs ----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @shard_changes_dimensions(%a: !mtf.tensor<b=8, d=16, f32>) {
  // expected-error @+1 {{'mtf.shard' op operand !mtf.tensor<b=8, d=16, f32> and result !mtf.tensor<d=16@x, b=8, f32> must have the same dimensions}}
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8, d=16, f32>) -> !mtf.tensor<d=16@x, b=8, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @shard_changes_element_type(%a: !mtf.tensor<b=8, f32>) {
  // expected-error @+1 {{'mtf.shard' op result element type must be f32, got bf16}}
  %0 = "mtf.shard"(%a) : (!mtf.tensor<b=8, f32>) -> !mtf.tensor<b=8@x, bf16>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_reduce_unknown_reduction(%a: !mtf.tensor<d=16, f32, partial@y>) {
  // expected-error @+1 {{'mtf.all_reduce' op reduction must be one of sum, max, min, got 'mean'}}
  %0 = "mtf.all_reduce"(%a) {reduction = "mean", axes = ["y"]} : (!mtf.tensor<d=16, f32, partial@y>) -> !mtf.tensor<d=16, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_reduce_wrong_reduction(%a: !mtf.tensor<d=16, f32, partial_max@y>) {
  // expected-error @+1 {{'mtf.all_reduce' op reduction 'sum' does not match the operand's pending max}}
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<d=16, f32, partial_max@y>) -> !mtf.tensor<d=16, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_reduce_of_complete_value(%a: !mtf.tensor<d=16, f32>) {
  // expected-error @+1 {{'mtf.all_reduce' op operand !mtf.tensor<d=16, f32> is not partial over y}}
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<d=16, f32>) -> !mtf.tensor<d=16, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_reduce_leaves_result_partial(%a: !mtf.tensor<d=16, f32, partial@(x,y)>) {
  // expected-error @+1 {{'mtf.all_reduce' op result must be partial over x, got !mtf.tensor<d=16, f32>}}
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<d=16, f32, partial@(x,y)>) -> !mtf.tensor<d=16, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_reduce_changes_layout(%a: !mtf.tensor<b=8, d=16, f32, partial@y>) {
  // expected-error @+1 {{'mtf.all_reduce' op all_reduce may not change the layout of 'b'}}
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = ["y"]} : (!mtf.tensor<b=8, d=16, f32, partial@y>) -> !mtf.tensor<b=8@x, d=16, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_gather_of_axis_not_last(%a: !mtf.tensor<b=32@(x,y), f32>) {
  // expected-error @+1 {{'mtf.all_gather' op operand 'b'@(x,y) does not end with the gathered axes x}}
  %0 = "mtf.all_gather"(%a) {dim = "b", axes = ["x"]} : (!mtf.tensor<b=32@(x,y), f32>) -> !mtf.tensor<b=32@y, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_gather_wrong_result_layout(%a: !mtf.tensor<b=32@(x,y), f32>) {
  // expected-error @+1 {{'mtf.all_gather' op result layout of 'b' must be @x, got 'b'@()}}
  %0 = "mtf.all_gather"(%a) {dim = "b", axes = ["y"]} : (!mtf.tensor<b=32@(x,y), f32>) -> !mtf.tensor<b=32, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_gather_changes_partial(%a: !mtf.tensor<b=8@x, f32, partial@y>) {
  // expected-error @+1 {{'mtf.all_gather' op all_gather may not change the pending partial axes}}
  %0 = "mtf.all_gather"(%a) {dim = "b", axes = ["x"]} : (!mtf.tensor<b=8@x, f32, partial@y>) -> !mtf.tensor<b=8, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_slice_over_used_axis(%a: !mtf.tensor<b=8@x, d=16, f32>) {
  // expected-error @+1 {{'mtf.all_slice' op mesh axis 'x' is already used by the operand !mtf.tensor<b=8@x, d=16, f32>}}
  %0 = "mtf.all_slice"(%a) {dim = "d", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16@x, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_slice_wrong_result_layout(%a: !mtf.tensor<b=8@x, d=16, f32>) {
  // expected-error @+1 {{'mtf.all_slice' op result layout of 'd' must be @y, got 'd'@()}}
  %0 = "mtf.all_slice"(%a) {dim = "d", axes = ["y"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_slice_changes_partial(%a: !mtf.tensor<d=16, f32, partial@x>) {
  // expected-error @+1 {{'mtf.all_slice' op all_slice may not change the pending partial axes}}
  %0 = "mtf.all_slice"(%a) {dim = "d", axes = ["y"]} : (!mtf.tensor<d=16, f32, partial@x>) -> !mtf.tensor<d=16@y, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @reduce_scatter_wrong_result_layout(%a: !mtf.tensor<b=8, d=16, f32, partial@y>) {
  // expected-error @+1 {{'mtf.reduce_scatter' op result layout of 'd' must be @y, got 'd'@()}}
  %0 = "mtf.reduce_scatter"(%a) {reduction = "sum", dim = "d", axes = ["y"]} : (!mtf.tensor<b=8, d=16, f32, partial@y>) -> !mtf.tensor<b=8@y, d=16, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @reduce_scatter_of_complete_value(%a: !mtf.tensor<d=16, f32>) {
  // expected-error @+1 {{'mtf.reduce_scatter' op operand !mtf.tensor<d=16, f32> is not partial over y}}
  %0 = "mtf.reduce_scatter"(%a) {reduction = "sum", dim = "d", axes = ["y"]} : (!mtf.tensor<d=16, f32>) -> !mtf.tensor<d=16@y, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_to_all_onto_same_dimension(%a: !mtf.tensor<b=8@x, d=16, f32>) {
  // expected-error @+1 {{'mtf.all_to_all' op src_dim and dst_dim must differ, both are 'b'}}
  %0 = "mtf.all_to_all"(%a) {src_dim = "b", dst_dim = "b", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_to_all_of_axis_not_split(%a: !mtf.tensor<b=8@x, d=16, f32>) {
  // expected-error @+1 {{'mtf.all_to_all' op operand 'b'@x does not end with the moved axes y}}
  %0 = "mtf.all_to_all"(%a) {src_dim = "b", dst_dim = "d", axes = ["y"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@x, d=16@y, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_to_all_keeps_source_split(%a: !mtf.tensor<b=8@x, d=16, f32>) {
  // expected-error @+1 {{'mtf.all_to_all' op result layout of 'b' must be @(), got 'b'@y}}
  %0 = "mtf.all_to_all"(%a) {src_dim = "b", dst_dim = "d", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8@y, d=16@x, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_to_all_wrong_destination_layout(%a: !mtf.tensor<b=8@x, d=16, f32>) {
  // expected-error @+1 {{'mtf.all_to_all' op result layout of 'd' must be @x, got 'd'@()}}
  %0 = "mtf.all_to_all"(%a) {src_dim = "b", dst_dim = "d", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, f32>) -> !mtf.tensor<b=8, d=16, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_to_all_changes_partial(%a: !mtf.tensor<b=8@x, d=16, f32, partial@y>) {
  // expected-error @+1 {{'mtf.all_to_all' op all_to_all may not change the pending partial axes}}
  %0 = "mtf.all_to_all"(%a) {src_dim = "b", dst_dim = "d", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, f32, partial@y>) -> !mtf.tensor<b=8, d=16@x, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @all_to_all_moves_other_layout(%a: !mtf.tensor<b=8@x, d=16, e=4, f32>) {
  // expected-error @+1 {{'mtf.all_to_all' op all_to_all may not change the layout of 'e'}}
  %0 = "mtf.all_to_all"(%a) {src_dim = "b", dst_dim = "d", axes = ["x"]} : (!mtf.tensor<b=8@x, d=16, e=4, f32>) -> !mtf.tensor<b=8, d=16@x, e=4@y, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @collective_permute_changes_partial(%a: !mtf.tensor<b=8@x, f32, partial@y>) {
  // expected-error @+1 {{'mtf.collective_permute' op collective_permute may not change the pending partial axes}}
  %0 = "mtf.collective_permute"(%a) : (!mtf.tensor<b=8@x, f32, partial@y>) -> !mtf.tensor<b=8@x, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @collective_permute_changes_shard_shape(%a: !mtf.tensor<b=8@x, f32>) {
  // expected-error @+1 {{'mtf.collective_permute' op collective_permute keeps each device's shard shape: operand shard (2,), result shard (4,)}}
  %0 = "mtf.collective_permute"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@y, f32>
  return
}

// -----

func.func @gather_ids_share_a_table_dim(%t: !mtf.tensor<v=8, b=4, f32>, %i: !mtf.tensor<b=4, i32>) {
  // expected-error @+1 {{'mtf.gather' op ids and table share dimension(s) [b]: a batched lookup is not supported; rename the table's dimension}}
  %0 = "mtf.gather"(%t, %i) {dim = "v"} : (!mtf.tensor<v=8, b=4, f32>, !mtf.tensor<b=4, i32>) -> !mtf.tensor<b=4, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @as_partial_over_a_split_axis(%a: !mtf.tensor<b=8@x, f32>) {
  // expected-error @+1 {{'mtf.as_partial' op operand !mtf.tensor<b=8@x, f32> already varies along mesh axis 'x'}}
  %0 = "mtf.as_partial"(%a) {axes = ["x"]} : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8, f32, partial@x>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @as_partial_of_a_pending_max(%a: !mtf.tensor<f32, partial_max@x>) {
  // expected-error @+1 {{'mtf.as_partial' op operand !mtf.tensor<f32, partial_max@x> is pending a max, not a sum}}
  %0 = "mtf.as_partial"(%a) {axes = ["y"]} : (!mtf.tensor<f32, partial_max@x>) -> !mtf.tensor<f32, partial@(x,y)>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @as_partial_wrong_result(%a: !mtf.tensor<f32, partial@x>) {
  // expected-error @+1 {{'mtf.as_partial' op as_partial may not change the pending partial axes}}
  %0 = "mtf.as_partial"(%a) {axes = ["y"]} : (!mtf.tensor<f32, partial@x>) -> !mtf.tensor<f32, partial@y>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @top_k_larger_than_the_dim(%a: !mtf.tensor<b=4, v=8, f32>) {
  // expected-error @+1 {{'mtf.top_k' op k = 9 (the size of 'k') must be in [1, 8], the size of 'v'}}
  %0:2 = "mtf.top_k"(%a) {dim = "v"} : (!mtf.tensor<b=4, v=8, f32>) -> (!mtf.tensor<b=4, k=9, f32>, !mtf.tensor<b=4, k=9, i32>)
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @top_k_indices_not_i32(%a: !mtf.tensor<b=4, v=8, f32>) {
  // expected-error @+1 {{'mtf.top_k' op indices must have element type i32, got i64}}
  %0:2 = "mtf.top_k"(%a) {dim = "v"} : (!mtf.tensor<b=4, v=8, f32>) -> (!mtf.tensor<b=4, k=2, f32>, !mtf.tensor<b=4, k=2, i64>)
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @top_k_k_dim_moved(%a: !mtf.tensor<b=4, v=8, f32>) {
  // expected-error @+1 {{'mtf.top_k' op result names [k, b] must be the operand's [b, v] with 'v' replaced by one new name (the k dim)}}
  %0:2 = "mtf.top_k"(%a) {dim = "v"} : (!mtf.tensor<b=4, v=8, f32>) -> (!mtf.tensor<k=2, b=4, f32>, !mtf.tensor<k=2, b=4, i32>)
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @argmax_of_booleans(%a: !mtf.tensor<b=4, v=8, i1>) {
  // expected-error @+1 {{'mtf.argmax' op argmax needs a numeric operand, got i1}}
  %0 = "mtf.argmax"(%a) {dim = "v"} : (!mtf.tensor<b=4, v=8, i1>) -> !mtf.tensor<b=4, i32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @argmin_keeps_the_dim(%a: !mtf.tensor<b=4, v=8, f32>) {
  // expected-error @+1 {{'mtf.argmin' op result !mtf.tensor<b=4, v=8, i32> must have the operand's dims but 'v' ([b])}}
  %0 = "mtf.argmin"(%a) {dim = "v"} : (!mtf.tensor<b=4, v=8, f32>) -> !mtf.tensor<b=4, v=8, i32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @cumsum_changes_the_type(%a: !mtf.tensor<b=4, v=8, f32>) {
  // expected-error @+1 {{'mtf.cumsum' op result !mtf.tensor<b=4, v=8, f64> must have the operand's dims and element type (!mtf.tensor<b=4, v=8, f32>)}}
  %0 = "mtf.cumsum"(%a) {dim = "v"} : (!mtf.tensor<b=4, v=8, f32>) -> !mtf.tensor<b=4, v=8, f64>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @cumprod_unknown_dim(%a: !mtf.tensor<b=4, v=8, f32>) {
  // expected-error @+1 {{'mtf.cumprod' op}}
  %0 = "mtf.cumprod"(%a) {dim = "w"} : (!mtf.tensor<b=4, v=8, f32>) -> !mtf.tensor<b=4, v=8, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @dynamic_slice_start_not_i32(%a: !mtf.tensor<b=4, v=8, f32>, %s: !mtf.tensor<i64>) {
  // expected-error @+1 {{'mtf.dynamic_slice' op start must be a 0-d i32 tensor, got !mtf.tensor<i64>}}
  %0 = "mtf.dynamic_slice"(%a, %s) {dim = "v"} : (!mtf.tensor<b=4, v=8, f32>, !mtf.tensor<i64>) -> !mtf.tensor<b=4, v=2, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @dynamic_slice_window_too_large(%a: !mtf.tensor<b=4, v=8, f32>, %s: !mtf.tensor<i32>) {
  // expected-error @+1 {{'mtf.dynamic_slice' op the result's 'v' has size 9, not in [1, 8] (the operand's)}}
  %0 = "mtf.dynamic_slice"(%a, %s) {dim = "v"} : (!mtf.tensor<b=4, v=8, f32>, !mtf.tensor<i32>) -> !mtf.tensor<b=4, v=9, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @dynamic_update_slice_other_dim_differs(%a: !mtf.tensor<b=4, v=8, f32>, %u: !mtf.tensor<b=2, v=1, f32>, %s: !mtf.tensor<i32>) {
  // expected-error @+1 {{'mtf.dynamic_update_slice' op 'b' has size 4 in the operand but 2 in the update}}
  %0 = "mtf.dynamic_update_slice"(%a, %u, %s) {dim = "v"} : (!mtf.tensor<b=4, v=8, f32>, !mtf.tensor<b=2, v=1, f32>, !mtf.tensor<i32>) -> !mtf.tensor<b=4, v=8, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @attention_keys_and_values_of_two_lengths(%q: !mtf.tensor<l=4, d=8, f32>, %k: !mtf.tensor<m=6, d=8, f32>, %v: !mtf.tensor<m=5, d=8, f32>) {
  // expected-error @+1 {{'mtf.dot_product_attention' op dimension 'm' has sizes 6 and 5 among the query, key and value}}
  %0 = "mtf.dot_product_attention"(%q, %k, %v) {query_length = "l", key_length = "m", key_dim = "d", value_dim = "d", scale = 1.0 : f64} : (!mtf.tensor<l=4, d=8, f32>, !mtf.tensor<m=6, d=8, f32>, !mtf.tensor<m=5, d=8, f32>) -> !mtf.tensor<l=4, d=8, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @attention_mask_on_a_dim_the_weights_lack(%q: !mtf.tensor<l=4, d=8, f32>, %k: !mtf.tensor<m=6, d=8, f32>, %mask: !mtf.tensor<m=6, d=8, i1>) {
  // expected-error @+1 {{'mtf.dot_product_attention' op the mask !mtf.tensor<m=6, d=8, i1> has dims [d] the weights lack (weights: [l, m])}}
  %0 = "mtf.dot_product_attention"(%q, %k, %k, %mask) {query_length = "l", key_length = "m", key_dim = "d", value_dim = "d", scale = 1.0 : f64, has_mask = true} : (!mtf.tensor<l=4, d=8, f32>, !mtf.tensor<m=6, d=8, f32>, !mtf.tensor<m=6, d=8, f32>, !mtf.tensor<m=6, d=8, i1>) -> !mtf.tensor<l=4, d=8, f32>
  return
}

// -----

sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @attention_scale_zero(%q: !mtf.tensor<l=4, d=8, f32>, %k: !mtf.tensor<m=6, d=8, f32>) {
  // expected-error @+1 {{'mtf.dot_product_attention' op scale must be a finite non-zero number, got 0.0}}
  %0 = "mtf.dot_product_attention"(%q, %k, %k) {query_length = "l", key_length = "m", key_dim = "d", value_dim = "d", scale = 0.0 : f64} : (!mtf.tensor<l=4, d=8, f32>, !mtf.tensor<m=6, d=8, f32>, !mtf.tensor<m=6, d=8, f32>) -> !mtf.tensor<l=4, d=8, f32>
  return
}
