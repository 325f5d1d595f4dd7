"""Bad input to `mi.compile` and to the Executable it returns: each is a MeshIRError (not a
TypeError, KeyError, jax or XLA error) whose message says what is wrong. And inputs that look
wrong but are fine: a jax.Array laid out otherwise (resharded), float64 for an f32 argument.

Known MeshIR bugs are marked xfail (strict): rule errors whose message starts with
`loc(unknown)` instead of the user's line, and malformed `layout=` / `mesh=` / program
arguments that raise TypeError or AttributeError instead of a MeshIRError.
"""
from __future__ import annotations

import inspect

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import meshir as mi

MESH = mi.Mesh({"x": 4, "y": 2})
BATCH, D, N = mi.Dim("batch", 8), mi.Dim("d", 16), mi.Dim("n", 8)


def raises(fn, *fragments: str) -> str:
    """Call `fn`; it must raise a MeshIRError whose message holds every fragment. Returns it."""
    with pytest.raises(BaseException) as info:
        fn()
    error = info.value
    assert isinstance(error, mi.MeshIRError), f"expected a MeshIRError, got {type(error).__name__}: {error}"
    message = str(error)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


@pytest.fixture(scope="module")
def ffn():
    """y[batch, n] = x[batch, d] . w[d, n] + ids[batch], on the 4x2 mesh, batch over x."""
    with mi.Program("ffn", MESH) as prog:
        x = prog.argument("x", [BATCH, D])
        w = prog.argument("w", [D, N], layout={"n": "y"})
        ids = prog.argument("ids", [BATCH], dtype="i32")
        prog.result(mi.einsum(x, w, output=["batch", "n"]) + mi.cast(ids, "f32"), name="y")
    return prog, mi.compile(prog, layout={"batch": "x"})


@pytest.fixture(scope="module")
def good():
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((8, 16)).astype(np.float32),
            "w": rng.standard_normal((16, 8)).astype(np.float32),
            "ids": rng.integers(-5, 5, 8).astype(np.int32)}


def expected(values):
    return values["x"].astype(np.float32) @ values["w"] + values["ids"][:, None]


def check(result, values):
    np.testing.assert_allclose(np.asarray(result), expected(values), rtol=1e-5, atol=1e-5)
    assert result.sharding.spec == P("x", "y")


def test_good_inputs_run(ffn, good):
    check(ffn[1](**good), good)


# -- arguments -----------------------------------------------------------------------------------

def test_wrong_argument_name_lists_the_known_names(ffn, good):
    prog, exe = ffn
    values = dict(good)
    values["idz"] = values.pop("ids")
    message = raises(lambda: exe(**values), "@ffn has no argument 'idz'", "(arguments: x, w, ids)")
    # The reference interpreter refuses it with the same words (each located at its own call).
    assert raises(lambda: mi.interpret(prog, **values)).split(": error: ", 1)[1] == message.split(": error: ", 1)[1]


def test_unknown_extra_argument(ffn, good):
    raises(lambda: ffn[1](**good, z=good["x"]), "@ffn has no argument 'z'", "(arguments: x, w, ids)")


def test_missing_arguments_are_named(ffn, good):
    exe = ffn[1]
    raises(lambda: exe(x=good["x"], w=good["w"]), "@ffn is missing argument 'ids'", "(arguments: x, w, ids)")
    raises(lambda: exe(x=good["x"]), "@ffn is missing arguments 'w', 'ids'")
    raises(lambda: exe(), "@ffn is missing arguments 'x', 'w', 'ids'")


def test_argument_given_twice(ffn, good):
    raises(lambda: ffn[1](good["x"], **good), "argument 'x' of @ffn is given twice (by position and by name)")


def test_too_many_positional_arguments(ffn, good):
    raises(lambda: ffn[1](good["x"], good["w"], good["ids"], good["ids"]),
           "@ffn takes 3 arguments (x, w, ids), got 4 positional")


def test_argument_or_result_declared_twice():
    with mi.Program("dup", MESH) as prog:
        a = prog.argument("a", [BATCH])
        line = inspect.currentframe().f_lineno + 1
        message = raises(lambda: prog.argument("a", [BATCH]), "argument 'a' is declared twice in program 'dup'")
        assert message.startswith(f"{__file__}:{line}:"), message
        prog.result(a, name="r")
        raises(lambda: prog.result(a * 2.0, name="r"), "result 'r' is declared twice in program 'dup'")


def test_wrong_shape_names_the_dims(ffn, good):
    exe = ffn[1]
    raises(lambda: exe(**dict(good, x=good["x"].T)),
           "argument 'x' of @ffn: expected global shape [batch=8, d=16], got (16, 8)")
    raises(lambda: exe(**dict(good, ids=good["ids"][:4])),
           "argument 'ids' of @ffn: expected global shape [batch=8], got (4,)")
    raises(lambda: exe(**dict(good, x=1.0)), "argument 'x' of @ffn: expected global shape [batch=8, d=16], got ()")
    raises(lambda: exe(**dict(good, x=jax.numpy.asarray(good["x"].T))),
           "argument 'x' of @ffn: expected global shape [batch=8, d=16], got (16, 8)")


def test_wrong_element_type(ffn, good):
    exe = ffn[1]
    raises(lambda: exe(**dict(good, ids=good["ids"].astype(np.float32))),
           "argument 'ids' of @ffn: expected element type i32 (int32), got float32")
    raises(lambda: exe(**dict(good, x=good["x"].astype(np.complex64))),
           "argument 'x' of @ffn: expected element type f32 (float32), got complex64")
    raises(lambda: exe(**dict(good, ids=jax.numpy.asarray(good["ids"], jax.numpy.float32))),
           "argument 'ids' of @ffn: expected element type i32 (int32), got float32")
    raises(lambda: exe(**dict(good, ids=np.full(8, 2**40, np.int64))),
           "argument 'ids' of @ffn: values in [1099511627776, 1099511627776] do not fit element type i32")
    raises(lambda: exe(**dict(good, x=None)), "argument 'x' of @ffn: expected element type f32 (float32), got object")
    raises(lambda: exe(**dict(good, x=[[1.0], [2.0, 3.0]])), "argument 'x' of @ffn: cannot convert list to an array")


def test_only_bools_go_into_i1():
    with mi.Program("mask", MESH) as prog:
        m = prog.argument("m", [BATCH], dtype="i1")
        prog.result(mi.select(m, mi.constant(1.0, [BATCH]), 0.0), name="r")
    exe = mi.compile(prog, layout={"batch": ("x", "y")})
    raises(lambda: exe(m=np.ones(8, np.float32)), "argument 'm' of @mask: expected element type i1 (bool), got float32")
    raises(lambda: exe(m=np.ones(8, np.int32)), "argument 'm' of @mask: expected element type i1 (bool), got int32")
    np.testing.assert_array_equal(np.asarray(exe(m=np.arange(8) % 3 == 0)), (np.arange(8) % 3 == 0).astype(np.float32))


def test_traced_values_of_the_wrong_shape_are_refused(ffn, good):
    """Inside jax.jit a call is embedded in jax's program (test/python/interop/test_in_jax.py);
    its arguments are checked as a direct call's."""
    exe = ffn[1]
    raises(lambda: jax.jit(lambda x: exe(x=x, w=good["w"], ids=good["ids"]))(good["x"][:, :1]),
           "argument 'x' of @ffn: expected global shape")


# -- inputs that are fine ------------------------------------------------------------------------

def test_jax_arrays_laid_out_otherwise_are_resharded(ffn, good):
    exe = ffn[1]
    mesh = exe.jax_mesh
    other = {"x": NamedSharding(mesh, P("y", "x")), "w": NamedSharding(mesh, P(("x", "y"), None)),
             "ids": NamedSharding(mesh, P("y"))}
    placed = {k: jax.device_put(v, other[k]) for k, v in good.items()}
    assert placed["x"].sharding != exe.in_shardings[0]
    check(exe(**placed), good)
    # On one device, and on a jax mesh with other axis names over the devices in reverse order.
    check(exe(**{k: jax.device_put(v, jax.devices()[3]) for k, v in good.items()}), good)
    reverse = jax.sharding.Mesh(np.array(jax.devices()[:8][::-1]).reshape(2, 4), ("a", "b"))
    check(exe(**{k: jax.device_put(v, NamedSharding(reverse, P("b"))) for k, v in good.items()}), good)
    # The caller's arrays are untouched.
    np.testing.assert_array_equal(np.asarray(placed["x"]), good["x"])
    assert placed["x"].sharding == other["x"]


def test_results_feed_back_as_inputs(ffn, good):
    exe = ffn[1]
    y = exe(**good)
    with mi.Program("again", MESH) as prog:
        prog.result(mi.exp(prog.argument("y", [BATCH, N])), name="e")
    again = mi.compile(prog, layout={"n": "x"})          # another layout: y is resharded
    np.testing.assert_allclose(np.asarray(again(y=y)), np.exp(expected(good)), rtol=1e-5)


def test_float64_numpy_input_to_f32_argument(ffn, good):
    prog, exe = ffn
    wide = dict(good, x=good["x"].astype(np.float64) + 1e-12, w=good["w"].astype(np.float64))
    check(exe(**wide), good)
    np.testing.assert_allclose(mi.interpret(prog, **wide), expected(good), rtol=1e-5, atol=1e-5)


def test_narrower_kinds_are_converted(ffn, good):
    exe = ffn[1]
    ints = dict(good, x=np.arange(128).reshape(8, 16) % 7, ids=good["ids"].astype(np.int8))
    check(exe(**ints), dict(good, x=(np.arange(128).reshape(8, 16) % 7).astype(np.float32)))
    check(exe(**dict(good, x=jax.numpy.asarray(good["x"], jax.numpy.float16))),
          dict(good, x=good["x"].astype(np.float16).astype(np.float32)))


# -- meshes --------------------------------------------------------------------------------------

def test_mesh_larger_than_the_devices_says_how_to_get_more():
    have = len(jax.devices())          # starts the backend, so the device count is frozen
    want = 2 * have
    with mi.Program("big", mi.Mesh({"x": want})) as prog:
        prog.result(prog.argument("a", [mi.Dim("b", want)]) * 2.0, name="r")
    raises(lambda: mi.compile(prog, layout={"b": "x"}),
           f'mesh @mesh = <["x"={want}]> needs {want} devices, but the cpu backend has {have}',
           f'jax.config.update("jax_num_cpu_devices", {want})',
           f"XLA_FLAGS=--xla_force_host_platform_device_count={want}")


def test_compile_mesh_different_from_the_programs_mesh(ffn):
    prog = ffn[0]
    raises(lambda: mi.compile(prog, mesh={"x": 8}),
           'compile(mesh=@mesh = <["x"=8]>) differs from the program\'s mesh @mesh = <["x"=4, "y"=2]>')
    raises(lambda: mi.compile(prog, mesh={"y": 2, "x": 4}), "differs from the program's mesh")
    raises(lambda: mi.compile(prog, mesh=mi.Mesh({"x": 2, "y": 4})), "differs from the program's mesh")
    # The program's own mesh, by value (even under another symbol name), is fine.
    assert mi.compile(prog, mesh={"x": 4, "y": 2}).mesh.shape == {"x": 4, "y": 2}
    assert mi.compile(prog, mesh=mi.Mesh({"x": 4, "y": 2}, name="other")).mesh.size == 8


def test_program_without_mesh_and_no_mesh_argument():
    with mi.Program("nomesh") as prog:
        prog.result(prog.argument("a", [BATCH]) * 2.0, name="r")
    raises(lambda: mi.compile(prog),
           "the program has no mesh: give one with Program(..., mesh) or compile(..., mesh=...)")
    # The interpreter needs no mesh.
    np.testing.assert_array_equal(mi.interpret(prog, a=np.arange(8, dtype=np.float32)), 2.0 * np.arange(8))


def test_unknown_mode(ffn):
    raises(lambda: mi.compile(ffn[0], mode="bogus"), "unknown mode 'bogus' (expected one of explicit, gspmd)")


# -- layout rules that cannot be realised ---------------------------------------------------------

@pytest.fixture(scope="module")
def six():
    """a[batch=6, d=16] -> exp on a 1-D mesh of 4; returns (program, line of the argument)."""
    with mi.Program("six", mi.Mesh({"x": 4})) as prog:
        line = inspect.currentframe().f_lineno + 1
        a = prog.argument("a", [mi.Dim("batch", 6), D])
        prog.result(mi.exp(a), name="r")
    return prog, line


def test_rule_that_does_not_divide(six):
    raises(lambda: mi.compile(six[0], layout={"batch": "x"}),
           "layout rule batch:x does not divide dimension 'batch' of size 6 (mesh axes x have 4 devices)",
           "!mtf.tensor<batch=6, d=16, f32>")


def test_rule_naming_an_unknown_axis_with_strict(six):
    raises(lambda: mi.compile(six[0], layout={"batch": "z"}, strict=True),
           "layout rule for 'batch' names unknown mesh axis 'z'", '["x"=4]')


def test_rule_naming_an_axis_twice(six):
    raises(lambda: mi.compile(six[0], layout={"d": ("x", "x")}), "layout rule for 'd' names a mesh axis twice: (x,x)")


def test_rules_splitting_two_dims_of_one_tensor_over_one_axis(ffn):
    raises(lambda: mi.compile(ffn[0], layout={"batch": "x", "d": "x"}),
           "layout rules split both 'batch' and 'd' of !mtf.tensor<batch=8, d=16, f32> over mesh axis 'x'")


def test_rule_error_on_an_argument_starts_at_the_arguments_line(six):
    prog, line = six
    message = raises(lambda: mi.compile(prog, layout={"batch": "x"}), "does not divide dimension 'batch'")
    assert message.startswith(f"{__file__}:{line}:"), message


def test_rule_clash_names_the_value_and_the_compile_line_that_gave_the_rules():
    """The error is at the einsum that met the clashing rules; a note names the user's
    mi.compile line and the rules of it involved (not the rules the program already had)."""
    with mi.Program("clash", MESH, layout={"n": "y"}) as prog:
        x, w = prog.argument("x", [BATCH, D]), prog.argument("w", [D, N])
        einsum_line = inspect.currentframe().f_lineno + 1
        prog.result(mi.einsum(x, w, output=["batch", "n"]), name="y")
    compile_line = inspect.currentframe().f_lineno + 1
    message = raises(lambda: mi.compile(prog, layout={"batch": "y", "d": "x"}), "split both 'batch' and 'n'")
    lines = message.splitlines()
    assert lines[0].startswith(f"{__file__}:{einsum_line}:"), message
    assert lines[-1].startswith(f"{__file__}:{compile_line}:") and lines[-1].endswith(
        ": note: layout rule batch:y given here"), message
    message = raises(lambda: mi.compile(six_like(), layout={"batch": "x"}), "does not divide")
    assert message.splitlines()[-1].endswith("note: layout rule batch:x given here"), message


def six_like():
    with mi.Program("six", mi.Mesh({"x": 4})) as prog:
        prog.result(mi.exp(prog.argument("a", [mi.Dim("batch", 6), D])), name="r")
    return prog


def test_rule_error_does_not_start_with_an_unknown_location(six):
    message = raises(lambda: mi.compile(six[0], layout={"batch": "z"}, strict=True), "unknown mesh axis 'z'")
    assert not message.startswith("loc(unknown)"), message


# -- malformed arguments to compile: MeshIRError, not TypeError or AttributeError ----------------

@pytest.mark.parametrize("kwargs", [
    {"layout": {"batch": 3}},          # TypeError: 'int' object is not iterable
    {"layout": ["batch"]},             # AttributeError: 'list' object has no attribute 'items'
    {"mesh": "x"},                     # AttributeError: 'str' object has no attribute 'axes'
    {"program": 42},                   # AttributeError: 'int' object has no attribute 'operation'
], ids=["rule-axes-int", "layout-list", "mesh-str", "not-a-program"])
def test_malformed_compile_arguments(ffn, kwargs):
    kwargs = dict(kwargs)
    program = kwargs.pop("program", ffn[0])
    with pytest.raises(mi.MeshIRError):
        mi.compile(program, **kwargs)
