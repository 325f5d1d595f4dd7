"""API objects that wrap MLIR handles stay valid, or say why not, after their owner moved on.

A Tensor returned by `prog.call(...)` wraps the result of a `func.call` that the program
inlines when its `with` block ends; reading it afterwards read freed memory (SIGSEGV). Its
type is now read once at creation, and its MLIR value is refused with a MeshIRError.
"""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import meshir as mi

A = mi.Dim("a", 8)


def _called():
    with mi.Program("inner") as inner:
        x = inner.argument("x", [A])
        inner.result(mi.relu(x), name="y")
    with mi.Program("outer", mi.Mesh({"x": 2})) as outer:
        x = outer.argument("x", [A])
        (y,) = outer.call(inner, x)
        z = mi.exp(y)
        outer.result(y + z, name="y")
    return outer, x, y, z


def test_call_result_read_after_the_program_closed_keeps_its_type():
    outer, x, y, z = _called()
    assert y.shape == (8,) and y.names == ("a",) and y.dtype == "f32"
    assert "inlined call result" in repr(y)
    assert z.shape == (8,) and x.shape == (8,)  # values that survive inlining keep working
    assert "%" in repr(z)


def test_call_result_value_after_inlining_is_a_located_error():
    outer, _, y, _ = _called()
    with pytest.raises(mi.MeshIRError, match=r"test_api_lifetime\.py:\d+:\d+: error: .*inlined call result.*"
                                             r"call of program 'outer' that was inlined"):
        y.value  # noqa: B018
    with mi.Program("other") as other:
        w = other.argument("w", [A])
        with pytest.raises(mi.MeshIRError, match="different Programs"):
            mi.add(w, y)
        other.result(w)


def test_program_dropped_and_collected_leaves_tensors_readable():
    outer, x, y, z = _called()
    del outer
    gc.collect()
    assert (y.shape, z.shape, x.shape) == ((8,), (8,), (8,))
    assert str(y.type) == "!mtf.tensor<a=8, f32>"


def test_called_program_still_runs_after_its_tensors_were_read():
    outer, _, y, _ = _called()
    y.shape  # noqa: B018
    v = np.linspace(-1, 1, 8, dtype=np.float32)
    want = np.maximum(v, 0) + np.exp(np.maximum(v, 0))
    np.testing.assert_allclose(np.asarray(mi.compile(outer, layout={"a": "x"})(x=v)), want, rtol=1e-6)
    np.testing.assert_allclose(mi.interpret(outer, x=v), want, rtol=1e-6)


READ_AFTER_CLOSE = textwrap.dedent("""
    import meshir as mi
    a = mi.Dim("a", 8)
    with mi.Program("inner") as inner:
        x = inner.argument("x", [a]); inner.result(mi.relu(x), name="y")
    with mi.Program("outer") as outer:
        (y,) = outer.call(inner, outer.argument("x", [a]))
        outer.result(y, name="y")
    print(y.shape, y.dims, y.names, repr(y), str(y.type))
    try:
        y.value
    except mi.MeshIRError as e:
        print("refused")
""")


def test_reading_a_call_result_after_close_does_not_crash_the_process():
    # In a subprocess: the failure was a segmentation fault that would take pytest down.
    run = subprocess.run([sys.executable, "-c", READ_AFTER_CLOSE], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONFAULTHANDLER="1"))
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines()[-1] == "refused" and "(8,)" in run.stdout
