"""The Python API builds the expected `mtf` IR, and reports bad input at the user's line."""
import re

import numpy as np
import pytest

import meshir as mi

MESH = mi.Mesh({"x": 4, "y": 2})
B, M, F = mi.Dim("batch", 8), mi.Dim("d_model", 16), mi.Dim("d_ff", 64)


def ops_of(prog):
    """(op name, result type text) for every op of the program's function, in order."""
    fn = next(op for op in prog.module.body.operations if op.operation.name == "func.func")
    return [(op.operation.name, str(op.operation.results[0].type) if op.operation.results else None)
            for op in fn.regions[0].blocks[0].operations]


def test_ffn_builds_the_design_example():
    with mi.Program("ffn", MESH, layout={"batch": "x", "d_ff": "y"}) as prog:
        x = prog.argument("x", [B, M])
        w1 = prog.argument("w1", [M, F])
        w2 = prog.argument("w2", [F, M])
        prog.result(mi.einsum(mi.relu(mi.einsum(x, w1, output=[B, F])), w2, output=[B, M]), name="y")
    text = str(prog.module)
    assert 'sdy.mesh @mesh = <["x"=4, "y"=2]>' in text
    assert 'mtf.layout_rules = {batch = ["x"], d_ff = ["y"]}' in text and "mtf.mesh = @mesh" in text
    assert '!mtf.tensor<batch=8, d_model=16, f32> {mtf.name = "x"}' in text
    assert '{mtf.name = "y"}' in text
    assert ops_of(prog) == [
        ("mtf.einsum", "!mtf.tensor<batch=8, d_ff=64, f32>"),
        ("mtf.relu", "!mtf.tensor<batch=8, d_ff=64, f32>"),
        ("mtf.einsum", "!mtf.tensor<batch=8, d_model=16, f32>"),
        ("func.return", None),
    ]
    assert prog.argument_names == ("x", "w1", "w2") and prog.result_names == ("y",)
    # The printed module parses back and verifies.
    module, diags = mi.parse_module(text)
    assert not diags and not mi.verify_module(module)


def test_argument_layout_goes_into_the_type():
    with mi.Program("p", MESH) as prog:
        x = prog.argument("x", [B, M], layout={"batch": ("x", "y"), "d_model": ()})
        prog.result(x)
    assert str(x.type) == "!mtf.tensor<batch=8@(x,y), d_model=16@(), f32>"


OPERATORS = [
    (lambda a, b: a + b, "mtf.add"), (lambda a, b: a - b, "mtf.sub"), (lambda a, b: a * b, "mtf.mul"),
    (lambda a, b: a / b, "mtf.div"), (lambda a, b: a ** b, "mtf.pow"), (lambda a, b: a < b, "mtf.lt"),
    (lambda a, b: a <= b, "mtf.le"), (lambda a, b: a > b, "mtf.gt"), (lambda a, b: a >= b, "mtf.ge"),
    (lambda a, b: a == b, "mtf.eq"), (lambda a, b: a != b, "mtf.ne"),
]


@pytest.mark.parametrize("fn, op_name", OPERATORS)
def test_operators_broadcast_by_name(fn, op_name):
    with mi.Program("p") as prog:
        a = prog.argument("a", [B, M])
        b = prog.argument("b", [F, B])
        prog.result(fn(a, b))
    name, result = ops_of(prog)[0]
    elem = "i1" if op_name in ("mtf.lt", "mtf.le", "mtf.gt", "mtf.ge", "mtf.eq", "mtf.ne") else "f32"
    assert name == op_name and result == f"!mtf.tensor<batch=8, d_model=16, d_ff=64, {elem}>"


def test_python_numbers_become_scalar_constants_of_the_tensor_type():
    with mi.Program("p") as prog:
        a = prog.argument("a", [B], dtype="i32")
        prog.result(2 - (-a))
    assert ops_of(prog)[:3] == [
        ("mtf.neg", "!mtf.tensor<batch=8, i32>"),
        ("mtf.constant", "!mtf.tensor<i32>"),
        ("mtf.sub", "!mtf.tensor<batch=8, i32>"),
    ]


def test_every_op_function_builds_its_op():
    n, v = mi.Dim("n", 4), mi.Dim("vocab", 10)
    with mi.Program("p", MESH) as prog:
        a = prog.argument("a", [B, M])
        ids = prog.argument("ids", [B], dtype="i32")
        p = prog.argument("p", [B, M], layout={"batch": "x"})
        built = {
            "mtf.exp": mi.exp(a), "mtf.cast": mi.cast(a, "bf16"), "mtf.select": mi.select(a > 0.0, a, 0.0),
            "mtf.max": mi.maximum(a, 1.0), "mtf.min": mi.minimum(a, 1.0),
            "mtf.reduce_sum": mi.reduce_sum(a, over=[M]), "mtf.reduce_max": mi.reduce_max(a, output=[M]),
            "mtf.reduce_min": mi.reduce_min(a),
            "mtf.broadcast": mi.broadcast(a, [n, M, "batch"]), "mtf.reshape": mi.reshape(a, [mi.Dim("flat", 128)]),
            "mtf.rename": mi.rename(a, "batch", "b2"), "mtf.transpose": mi.transpose(a, [M, B]),
            "mtf.slice": mi.slice(a, M, 4, 8), "mtf.concat": mi.concat([a, a], "batch"),
            "mtf.pad": mi.pad(a, M, 1, 2), "mtf.shift": mi.shift(a, B, 1, wrap=True),
            "mtf.constant": mi.constant(np.ones((8,), np.float32), [B]), "mtf.iota": mi.iota([B, M], B),
            "mtf.random_uniform": mi.random_uniform([B], seed=1), "mtf.random_normal": mi.random_normal([B], seed=2),
            "mtf.one_hot": mi.one_hot(ids, v), "mtf.gather": mi.gather(mi.constant(0.0, [v, M]), ids, v),
            "mtf.shard": mi.shard(a, {"d_model": "y"}),
            "mtf.all_gather": mi.all_gather(p, "batch", "x"), "mtf.all_slice": mi.all_slice(a, "d_model", "y"),
            "mtf.all_to_all": mi.all_to_all(p, "batch", "d_model", "x"),
        }
        prog.result(a)
    expected_types = {
        "mtf.cast": "!mtf.tensor<batch=8, d_model=16, bf16>", "mtf.reduce_sum": "!mtf.tensor<batch=8, f32>",
        "mtf.reduce_max": "!mtf.tensor<d_model=16, f32>", "mtf.reduce_min": "!mtf.tensor<f32>",
        "mtf.broadcast": "!mtf.tensor<n=4, d_model=16, batch=8, f32>", "mtf.reshape": "!mtf.tensor<flat=128, f32>",
        "mtf.rename": "!mtf.tensor<b2=8, d_model=16, f32>", "mtf.transpose": "!mtf.tensor<d_model=16, batch=8, f32>",
        "mtf.slice": "!mtf.tensor<batch=8, d_model=8, f32>", "mtf.concat": "!mtf.tensor<batch=16, d_model=16, f32>",
        "mtf.pad": "!mtf.tensor<batch=8, d_model=19, f32>", "mtf.iota": "!mtf.tensor<batch=8, d_model=16, i32>",
        "mtf.one_hot": "!mtf.tensor<batch=8, vocab=10, f32>", "mtf.gather": "!mtf.tensor<batch=8, d_model=16, f32>",
        "mtf.shard": "!mtf.tensor<batch=8, d_model=16@y, f32>",
        "mtf.all_gather": "!mtf.tensor<batch=8@(), d_model=16, f32>",
        "mtf.all_slice": "!mtf.tensor<batch=8, d_model=16@y, f32>",
        "mtf.all_to_all": "!mtf.tensor<batch=8@(), d_model=16@x, f32>",
    }
    for op_name, tensor in built.items():
        assert tensor.value.owner.name == op_name
        if op_name in expected_types:
            assert str(tensor.type) == expected_types[op_name], op_name


def test_collective_permute_swaps_axes_of_equal_size():
    with mi.Program("p", mi.Mesh({"x": 2, "y": 2})) as prog:
        a = prog.argument("a", [B, M], layout={"batch": ("x", "y")})
        swapped = mi.collective_permute(a, {"batch": ("y", "x")})
        moved = mi.collective_permute(prog.argument("b", [B, M], layout={"d_model": "x"}), {"d_model": "y"})
        prog.result(swapped)
    assert str(swapped.type) == "!mtf.tensor<batch=8@(y,x), d_model=16, f32>"
    assert str(moved.type) == "!mtf.tensor<batch=8, d_model=16@y, f32>"
    with pytest.raises(mi.MeshIRError, match="keeps each device's shard shape"):
        with mi.Program("q", MESH) as prog:
            mi.collective_permute(prog.argument("a", [B], layout={"batch": "x"}), {"batch": "y"})


def test_partial_sums_reduce_through_collectives():
    with mi.Program("p", MESH) as prog:
        a = prog.argument("a", [B, M])
        # A hand-written partial value: all_slice then reduce_scatter need partial types, so
        # parse them instead of building from scratch.
        prog.result(a)
    text = '''sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @f(%a: !mtf.tensor<batch=8, d=16, f32, partial@(x,y)>) -> !mtf.tensor<batch=8@y, d=16, f32> {
  %0 = "mtf.all_reduce"(%a) {reduction = "sum", axes = ["x"]} : (!mtf.tensor<batch=8, d=16, f32, partial@(x,y)>) -> !mtf.tensor<batch=8, d=16, f32, partial@y>
  %1 = "mtf.reduce_scatter"(%0) {reduction = "sum", dim = "batch", axes = ["y"]} : (!mtf.tensor<batch=8, d=16, f32, partial@y>) -> !mtf.tensor<batch=8@y, d=16, f32>
  return %1 : !mtf.tensor<batch=8@y, d=16, f32>
}'''
    module, diags = mi.parse_module(text)
    assert not diags and not mi.verify_module(module)


def _error(build):
    with pytest.raises(mi.MeshIRError) as info:
        build()
    message = str(info.value)
    # Every API error is located at this test file's line.
    assert re.match(r".*test_api_build\.py:\d+:\d+: error: ", message), message
    return message


def test_bad_input_errors_are_located_and_clear():
    def two_sizes():
        with mi.Program("p") as prog:
            prog.argument("a", [B]) + prog.argument("b", [mi.Dim("batch", 4)])

    assert "dimension 'batch' has size 8 in one operand and 4" in _error(two_sizes)

    def unknown_output_dim():
        with mi.Program("p") as prog:
            mi.einsum(prog.argument("a", [B, M]), output=["d_ff"])

    assert "unknown dimension 'd_ff' in einsum output" in _error(unknown_output_dim)

    def indivisible():
        with mi.Program("p", MESH) as prog:
            prog.argument("a", [mi.Dim("batch", 6)], layout={"batch": "x"})

    assert "'batch' of size 6 is not divisible by 4" in _error(indivisible)

    def unknown_axis():
        with mi.Program("p", MESH) as prog:
            prog.argument("a", [B], layout={"batch": "z"})

    assert "unknown mesh axis 'z'" in _error(unknown_axis)

    def axis_twice():
        with mi.Program("p", MESH) as prog:
            prog.argument("a", [B, M], layout={"batch": "x", "d_model": "x"})

    assert "mesh axis 'x' is used more than once" in _error(axis_twice)

    def wrong_element_type():
        with mi.Program("p") as prog:
            mi.exp(prog.argument("a", [B], dtype="i32"))

    assert "'mtf.exp' op operand element type i32 is not supported" in _error(wrong_element_type)

    def unknown_dtype():
        with mi.Program("p") as prog:
            mi.cast(prog.argument("a", [B]), "f8")

    assert "unknown element type 'f8'" in _error(unknown_dtype)

    def rule_with_missing_axis():
        mi.Program("p", MESH, layout={"batch": "q"}, strict=True)  # without strict: a warning

    assert "layout rule for 'batch' names unknown mesh axis 'q'" in _error(rule_with_missing_axis)

    def bad_collective():
        with mi.Program("p", MESH) as prog:
            mi.all_gather(prog.argument("a", [B], layout={"batch": "x"}), "batch", "y")

    assert "'mtf.all_gather' op operand 'batch'@x does not end with the gathered axes y" in _error(bad_collective)

    def integer_constant_from_float():
        with mi.Program("p") as prog:
            prog.argument("a", [B], dtype="i32") + 0.5

    assert "0.5 is not an integer" in _error(integer_constant_from_float)

    def duplicate_argument():
        with mi.Program("p") as prog:
            prog.argument("a", [B])
            prog.argument("a", [B])

    assert "argument 'a' is declared twice" in _error(duplicate_argument)

    def value_of_another_program():
        with mi.Program("p") as p1:
            a = p1.argument("a", [B])
        with mi.Program("q") as p2:
            p2.result(a)

    assert "must be a value built in it" in _error(value_of_another_program)

    def slice_out_of_bounds():
        with mi.Program("p") as prog:
            mi.slice(prog.argument("a", [B]), "batch", 6, 4)

    assert "slice [6, 10) is out of bounds of 'batch' of size 8" in _error(slice_out_of_bounds)


def test_finished_program_refuses_new_ops():
    with mi.Program("p") as prog:
        a = prog.argument("a", [B])
        prog.result(a)
    with pytest.raises(mi.MeshIRError, match="program 'p' is finished"):
        mi.relu(a)


def test_no_active_program_for_creation_ops():
    with pytest.raises(mi.MeshIRError, match="no active Program"):
        mi.iota([B], "batch")


def test_dim_and_mesh_validation():
    with pytest.raises(mi.MeshIRError, match="sizes must be positive"):
        mi.Dim("a", 0)
    with pytest.raises(mi.MeshIRError, match="not an identifier"):
        mi.Dim("a b", 2)
    with pytest.raises(mi.MeshIRError, match="sizes must be positive"):
        mi.Mesh({"x": 0})
    assert MESH.size == 8 and MESH.axis_names == ("x", "y")
