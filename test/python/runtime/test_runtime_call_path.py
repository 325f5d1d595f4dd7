"""The call path of an Executable (docs/runtime.md): jax's C++ dispatch for a signature seen
before, the fast path for a structure seen before, the checked path when neither matches,
donation checks and process-local inputs. Oracle: NumPy on the same inputs."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import meshir as mi
from meshir.lowering.runtime import arguments
from meshir.lowering.runtime.executable import Executable
from conftest import donated_views_stay_alive

ROWS, COLS = mi.Dim("rows", 16), mi.Dim("cols", 8)
MESHES = [{"x": 4, "y": 2}, {"x": 8}, {"x": 2, "y": 4}, {"x": 1}]
RNG = np.random.default_rng(5)


def step_program(mesh_axes, dtype="f32"):
    """w_i <- w_i * scale + x (three carried arguments, a NumPy-fed x and a scalar)."""
    mesh = mi.Mesh(mesh_axes)
    first = next(iter(mesh_axes))
    with mi.Program("step", mesh) as prog:
        x = prog.argument("x", [ROWS, COLS], dtype=dtype)
        scale = prog.argument("scale", [], dtype=dtype)
        for i in range(3):
            w = prog.argument(f"w{i}", [ROWS, COLS], dtype=dtype)
            prog.result(w * scale + x, name=f"w{i}")
    return prog, {"rows": first}


def reference(ws, x, scale):
    return {n: w * scale + x for n, w in ws.items()}


@pytest.fixture
def checked_path_calls(monkeypatch):
    """How many calls went to the checked path (arguments.place_arguments)."""
    calls = []
    original = arguments.place_arguments

    def counting(*a, **k):
        calls.append(1)
        return original(*a, **k)

    monkeypatch.setattr("meshir.lowering.runtime.executable.place_arguments", counting)
    return calls


@pytest.fixture
def python_calls(monkeypatch):
    """How many calls ran in Python (Executable._run) rather than in jax's C++ dispatch alone."""
    calls = []
    original = Executable._run

    def counting(self, values, **kwargs):
        calls.append(1)
        return original(self, values, **kwargs)

    monkeypatch.setattr(Executable, "_run", counting)
    return calls


@pytest.mark.parametrize("axes", MESHES, ids=lambda a: "x".join(map(str, a.values())))
@pytest.mark.parametrize("donate", [False, True], ids=["kept", "donated"])
def test_training_loop_takes_the_fast_path_and_matches_numpy(axes, donate, checked_path_calls, python_calls):
    prog, layout = step_program(axes)
    exe = mi.compile(prog, layout=layout, donate=donate)
    ws = {f"w{i}": RNG.standard_normal((16, 8)).astype(np.float32) for i in range(3)}
    want, carried = dict(ws), dict(ws)
    for t in range(5):
        x = RNG.standard_normal((16, 8)).astype(np.float32)
        if t == 2:
            x[0, 0], x[1, 1], x[2, 2] = np.nan, np.inf, -np.inf
        scale = np.float32(0.5 + t)
        out = dict(zip(exe.signature.result_names, exe(x=x, scale=scale, **carried)))
        want = reference(want, x, scale)
        for n in ws:
            np.testing.assert_allclose(np.asarray(out[n]), want[n], rtol=1e-5, atol=1e-5)  # XLA may fuse into an FMA
            assert out[n].sharding is exe.in_shardings[exe.signature.arg_names.index(n)]
        if donate and t and not donated_views_stay_alive():  # the loop viewed them with np.asarray
            assert all(v.is_deleted() for v in carried.values())
        carried = {n: out[n] for n in ws}
    assert not checked_path_calls  # NumPy of the exact dtype, results fed back: never the checked path
    # two signatures (NumPy weights, then the results fed back), each run in Python once; then
    # jax's C++ dispatch repeats the call alone
    assert len(python_calls) == 2


def test_calls_jax_dispatch_cannot_repeat_run_in_python_with_the_same_results(python_calls):
    prog, layout = step_program({"x": 4, "y": 2})
    exe = mi.compile(prog, layout=layout, donate=True)
    ws = {f"w{i}": RNG.standard_normal((16, 8)).astype(np.float32) for i in range(3)}
    x = RNG.standard_normal((16, 8)).astype(np.float32)
    state = dict(zip(exe.signature.result_names, exe(x=x, scale=np.float32(1), **ws)))
    state = dict(zip(exe.signature.result_names, exe(x=x, scale=np.float32(1), **state)))
    want = {n: w + 2 * x for n, w in ws.items()}
    assert len(python_calls) == 2
    # float64 NumPy has the signature of the float32 call (jax's canonical dtype): converted in
    # Python, never by jax's dispatch; a Python float has a weak type: another signature
    for scale in (np.float64(1), 1.0):
        state = dict(zip(exe.signature.result_names, exe(x=x.astype(np.float64), scale=scale, **state)))
        want = {n: w + x for n, w in want.items()}
    assert len(python_calls) == 4
    with jax.disable_jit():  # jax's dispatch refuses to run then; MeshIR runs in Python
        state = dict(zip(exe.signature.result_names, exe(x=x, scale=np.float32(1), **state)))
    want = {n: w + x for n, w in want.items()}
    assert len(python_calls) == 5
    for n in ws:
        np.testing.assert_allclose(np.asarray(state[n]), want[n], rtol=1e-6, atol=1e-6)


def test_arguments_fed_back_by_position_are_the_same_arrays(checked_path_calls):
    prog, layout = step_program({"x": 4, "y": 2})
    exe = mi.compile(prog, layout=layout)
    names = exe.signature.arg_names
    first = exe(*[np.ones(t.shape, t.dtype) for t in exe.signature.arg_types])
    args = [jax.device_put(np.ones((16, 8), np.float32), exe.in_shardings[0]), np.float32(2), *first]
    placed = exe._placed(args)
    assert [p is a for p, a in zip(placed, args)] == [n != "scale" for n in names]
    assert not checked_path_calls


def test_inputs_the_fast_path_does_not_recognise_take_the_checked_path(checked_path_calls):
    prog, layout = step_program({"x": 4, "y": 2})
    exe = mi.compile(prog, layout=layout)
    ws = {f"w{i}": RNG.standard_normal((16, 8)).astype(np.float32) for i in range(3)}
    x = RNG.standard_normal((16, 8)).astype(np.float32)
    carried = dict(zip(exe.signature.result_names, exe(x=x, scale=1.0, **ws)))
    assert not checked_path_calls  # a Python float converts alone; the call stays on the fast path
    # a jax.Array laid out otherwise: resharded by the checked path, same numbers
    other = NamedSharding(exe.in_shardings[0].mesh, P(None, "y"))
    moved = {n: jax.device_put(v, other) for n, v in carried.items()}
    out = dict(zip(exe.signature.result_names, exe(x=x, scale=np.float32(2), **moved)))
    assert len(checked_path_calls) == 1
    for n in ws:
        np.testing.assert_allclose(np.asarray(out[n]), (ws[n] + x) * 2 + x, rtol=1e-6, atol=1e-6)
    # float64 NumPy and int lists for an f32 argument: converted per argument, still the fast path
    out = exe(x=x.astype(np.float64), scale=[[2]][0][0], **carried)
    np.testing.assert_allclose(np.asarray(out[0]), (ws["w0"] + x) * 2 + x, rtol=1e-6, atol=1e-6)
    assert len(checked_path_calls) == 1


@pytest.mark.parametrize("axes", MESHES, ids=lambda a: "x".join(map(str, a.values())))
def test_a_deleted_array_is_a_located_error_after_fast_calls(axes):
    prog, layout = step_program(axes)
    exe = mi.compile(prog, layout=layout, donate=True)
    ws = {f"w{i}": np.ones((16, 8), np.float32) for i in range(3)}
    x = np.ones((16, 8), np.float32)
    first = dict(zip(exe.signature.result_names, exe(x=x, scale=np.float32(1), **ws)))
    second = dict(zip(exe.signature.result_names, exe(x=x, scale=np.float32(1), **first)))
    with pytest.raises(mi.MeshIRError, match=r"argument 'w0' of @step: the jax.Array passed for it has been "
                                             r"deleted") as info:
        exe(x=x, scale=np.float32(1), **first)  # first was donated to the second call
    assert "test_runtime_call_path.py" in str(info.value)
    second["w1"].delete()
    with pytest.raises(mi.MeshIRError, match="argument 'w1' of @step: the jax.Array passed for it has been deleted"):
        exe(x=x, scale=np.float32(1), **second)
    assert not second["w0"].is_deleted()  # nothing ran, nothing was donated


@pytest.mark.parametrize("axes", [{"x": 4, "y": 2}, {"x": 1}], ids=["4x2", "one-device"])
def test_a_donated_array_passed_twice_is_refused_on_the_fast_path(axes):
    # one device: jax's dispatch runs the call unchecked, PJRT refuses it, MeshIR names the arguments
    prog, layout = step_program(axes)
    exe = mi.compile(prog, layout=layout, donate=True)
    ws = {f"w{i}": np.ones((16, 8), np.float32) for i in range(3)}
    x = np.ones((16, 8), np.float32)
    out = dict(zip(exe.signature.result_names, exe(x=x, scale=np.float32(1), **ws)))
    with pytest.raises(mi.MeshIRError, match=r"arguments 'w0' and 'w2' of @step are the same jax.Array, but "
                                             r"'w0' is donated"):
        exe(x=x, scale=np.float32(1), w0=out["w0"], w1=out["w1"], w2=out["w0"])
    assert not out["w0"].is_deleted()
    # an undonated argument may repeat: the x of one call is any array of its layout
    kept = mi.compile(prog, layout=layout)
    same = kept(x=out["w0"], scale=np.float32(1), w0=out["w0"], w1=out["w0"], w2=out["w0"])
    np.testing.assert_allclose(np.asarray(same[2]), np.asarray(out["w0"]) * 2, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("value, message", [
    (np.full((16, 8), 2**40, np.int64), r"argument 'x' of @step: values in \[1099511627776, 1099511627776\] do "
                                        r"not fit element type i32"),
    (np.ones((16, 4), np.int32), r"argument 'x' of @step: expected global shape \[rows=16, cols=8\], got \(16, 4\)"),
    (np.ones((16, 8), np.float32), r"argument 'x' of @step: expected element type i32 \(int32\), got float32"),
])
def test_host_arrays_off_the_exact_form_get_the_full_checks(value, message):
    prog, layout = step_program({"x": 4, "y": 2}, dtype="i32")
    exe = mi.compile(prog, layout=layout)
    good = {"x": np.ones((16, 8), np.int32), "scale": np.int32(2), **{f"w{i}": np.ones((16, 8), np.int32)
                                                                        for i in range(3)}}
    for _ in range(2):  # the second call is jax's C++ dispatch's to repeat
        np.testing.assert_array_equal(np.asarray(exe(**good)[0]), np.full((16, 8), 3))
    with pytest.raises(mi.MeshIRError, match=message):
        exe(**{**good, "x": value})


@pytest.mark.parametrize("dtype, np_dtype", [("f64", np.float64), ("bf16", "bfloat16"), ("i64", np.int64)])
def test_wide_and_narrow_element_types_on_the_fast_path(dtype, np_dtype, checked_path_calls):
    import ml_dtypes

    np_dtype = ml_dtypes.bfloat16 if np_dtype == "bfloat16" else np_dtype
    prog, layout = step_program({"x": 2, "y": 4}, dtype=dtype)
    exe = mi.compile(prog, layout=layout)
    ws = {f"w{i}": (np.arange(128).reshape(16, 8) % 7 + i).astype(np_dtype) for i in range(3)}
    x, scale = (np.arange(128).reshape(16, 8) % 3).astype(np_dtype), np.array(2, np_dtype)
    out = dict(zip(exe.signature.result_names, exe(x=x, scale=scale, **ws)))
    again = dict(zip(exe.signature.result_names, exe(x=x, scale=scale, **out)))
    for n, w in ws.items():
        assert again[n].dtype == np.dtype(np_dtype)
        want = (w.astype(np.float64) * 2 + x.astype(np.float64)) * 2 + x.astype(np.float64)
        np.testing.assert_array_equal(np.asarray(again[n]).astype(np.float64), want)
    assert not checked_path_calls


def test_process_local_parts_in_one_process_are_the_whole_array():
    prog, layout = step_program({"x": 4, "y": 2})
    exe = mi.compile(prog, layout=layout)
    ws = {f"w{i}": RNG.standard_normal((16, 8)).astype(np.float32) for i in range(3)}
    x = RNG.standard_normal((16, 8)).astype(np.float32)
    out = exe(x=mi.process_local(x), scale=np.float32(3), **ws)
    np.testing.assert_allclose(np.asarray(out[1]), ws["w1"] * 3 + x, rtol=1e-6, atol=1e-6)
    with pytest.raises(mi.MeshIRError, match=r"argument 'x' of @step: this process's part of global shape "
                                             r"\[rows=16, cols=8\] is \(16, 8\), got \(4, 8\)"):
        exe(x=mi.process_local(x[:4]), scale=np.float32(3), **ws)
    with pytest.raises(mi.MeshIRError, match=r"argument 'x' of @step: expected element type f32 \(float32\), got "
                                             r"complex64"):
        exe(x=mi.process_local(x.astype(np.complex64)), scale=np.float32(3), **ws)

