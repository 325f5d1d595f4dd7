"""What the tests of meshir.layers share: the 4x2 mesh, seeded random values, and a runner
that evaluates a program with mi.interpret and compiled under several layouts."""
from __future__ import annotations

import numpy as np
import pytest

import meshir as mi

MESH_SHAPE = {"x": 4, "y": 2}
RTOL, ATOL = 1e-4, 1e-5


def mesh() -> mi.Mesh:
    return mi.Mesh(MESH_SHAPE)


def values(rng: np.random.Generator, dims_by_name: dict, scale: float = 0.5) -> dict[str, np.ndarray]:
    """Random f32 values for `{name: [Dim, ...]}` (e.g. a layer's `*_params`), in its order."""
    return {n: (rng.standard_normal([d.size for d in dims]) * scale).astype(np.float32)
            for n, dims in dims_by_name.items()}


def as_numpy(out) -> tuple[np.ndarray, ...]:
    """A program's results (one array, or a named tuple of them) as a tuple of NumPy arrays."""
    return tuple(np.asarray(v) for v in out) if isinstance(out, tuple) else (np.asarray(out),)


def evaluations(prog, layouts: dict[str, dict], *args, interpret: bool = True):
    """[(label, results as NumPy arrays)]: mi.interpret's (unless `interpret` is False), then
    the program compiled under each layout's rules."""
    out = [("interpret", as_numpy(mi.interpret(prog, *args)))] if interpret else []
    for label, rules in layouts.items():
        exe = mi.compile(prog, layout=rules)
        out.append((label, as_numpy(exe(*args))))
    return out


def close(got, want, label: str = "", rtol: float = RTOL, atol: float = ATOL) -> None:
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64), want, rtol=rtol, atol=atol, err_msg=label)


def raised(call) -> mi.MeshIRError:
    with pytest.raises(mi.MeshIRError) as info:
        call()
    return info.value
