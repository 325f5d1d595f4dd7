"""mtf-canonicalize inside `mi.compile`: a program with duplicated and dead ops, and with
every fold of the pass, computes what the reference interpreter (which runs the program as
written) and NumPy compute, NaN, infinities and the sign of zeros included, on 1-D and 2-D
meshes, in explicit and gspmd mode; and the compiled module is smaller for it.
"""
from __future__ import annotations

import numpy as np
import pytest

import meshir as mi
from meshir.dialect import get_context
from meshir.dialect.partitioned import verify_partitioned
from meshir.transforms.passes.canonicalize import CanonicalizePass
from op_cases import MESHES

A, B, C = 8, 16, 4


def _program(mesh: dict) -> mi.Program:
    with mi.Program("canonicalize", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [mi.Dim("a", A), mi.Dim("b", B)], "f32")
        w = prog.argument("w", [mi.Dim("b", B), mi.Dim("c", C)], "f32")
        # Duplicated: two relus, two einsums of them (two pending sums when b is split).
        h1 = mi.einsum(mi.relu(x), w, output=["a", "c"])
        h2 = mi.einsum(mi.relu(x), w, output=["a", "c"])
        prog.result(mi.add(h1, h2), name="twice")
        # Dead: an exp and a contraction nobody uses.
        mi.exp(x)
        mi.einsum(mi.tanh(x), w, output=["a", "c"])
        # Folds: each result is x computed the long way.
        prog.result(mi.add(x, mi.constant(-0.0)), name="plus_minus_zero")
        prog.result(mi.sub(x, mi.constant(0.0)), name="minus_zero")
        prog.result(mi.mul(mi.constant(1.0), x), name="times_one")
        prog.result(mi.div(x, mi.constant(1.0)), name="over_one")
        prog.result(mi.neg(mi.neg(x)), name="neg_neg")
        prog.result(mi.maximum(x, x), name="max_self")
        flat = mi.reshape(mi.reshape(x, [mi.Dim("n", A * B)]), [mi.Dim("m", B), mi.Dim("k", A)])
        prog.result(mi.reshape(flat, [mi.Dim("a", A), mi.Dim("b", B)]), name="reshapes")
        prog.result(mi.transpose(mi.transpose(x, ["b", "a"]), ["a", "b"]), name="transposes")
        prog.result(mi.pad(mi.slice(x, "b", 0, B), "b", 0, 0, value=1.0), name="slice_pad")
        # Not folded: x + 0.0 turns -0.0 into +0.0.
        prog.result(mi.add(x, mi.constant(0.0)), name="plus_zero")
    return prog


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((A, B)).astype(np.float32)
    x[0, 1], x[1, 3], x[2, 5], x[3, 7] = np.nan, np.inf, -np.inf, -0.0
    x[4, :] = -0.0
    x[5, :] = np.nan
    w = rng.standard_normal((B, C)).astype(np.float32)
    w[2, 1] = np.inf
    return x, w


def _expected(x, w) -> dict:
    r = np.maximum(x, np.float32(0))  # np.maximum keeps NaN, as mtf.relu does
    h = np.einsum("ab,bc->ac", r.astype(np.float64), w.astype(np.float64))
    return {
        "twice": h + h,
        "plus_minus_zero": x + np.float32(-0.0),
        "minus_zero": x - np.float32(0.0),
        "times_one": x * np.float32(1.0),
        "over_one": x / np.float32(1.0),
        "neg_neg": -(-x),  # noqa: B002  (the oracle of folding neg(neg(x)))
        "max_self": np.maximum(x, x),
        "reshapes": x,
        "transposes": x,
        "slice_pad": x,
        "plus_zero": x + np.float32(0.0),
    }


#: Results that are x itself: bit for bit, -0.0 included.
SAME_BITS = ("plus_minus_zero", "minus_zero", "times_one", "over_one", "neg_neg", "max_self", "reshapes",
             "transposes", "slice_pad")


def _layouts(mesh: dict) -> list[dict]:
    axes = list(mesh)
    rules = [{}, {"b": axes[0]}, {"a": axes[0]}]
    if len(axes) > 1:
        rules.append({"a": axes[0], "b": axes[1]})
    return rules


def _params():
    for mesh_id in ("x4", "x2y4"):
        for layout in _layouts(MESHES[mesh_id]):
            for mode in ("explicit", "gspmd"):
                yield pytest.param(mesh_id, layout, mode, id=f"{mesh_id}-{'_'.join(f'{k}:{v}' for k, v in layout.items()) or 'replicated'}-{mode}")


@pytest.mark.parametrize("mesh_id, layout, mode", list(_params()))
def test_compiled_program_with_duplicated_and_dead_ops_matches_interpreter(mesh_id, layout, mode):
    prog = _program(MESHES[mesh_id])
    x, w = _inputs()
    exe = mi.compile(prog, layout=layout, mode=mode)
    got = dict(zip(prog.result_names, exe(x=x, w=w)))
    interpreted = dict(zip(prog.result_names, mi.interpret(prog, x=x, w=w)))
    for name, want in _expected(x, w).items():
        value, ref = np.asarray(got[name]), np.asarray(interpreted[name])
        if name == "twice":
            np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-5, equal_nan=True, err_msg=name)
            np.testing.assert_allclose(ref, want, rtol=1e-5, atol=1e-5, equal_nan=True, err_msg=name)
            continue
        np.testing.assert_array_equal(ref, want, err_msg=f"interpreter {name}")
        np.testing.assert_array_equal(value, want, err_msg=name)
        if name in SAME_BITS:
            assert value.tobytes() == x.tobytes(), f"{name} is not x bit for bit"
            assert np.array_equal(np.signbit(ref), np.signbit(x)), f"interpreter {name}: sign of zero"
    assert verify_partitioned(exe.partitioned_module) == [] or mode != "explicit"
    ops = [op.operation.name for op in exe.partitioned_module.regions[0].blocks[0].operations[-1].regions[0].blocks[0].operations]
    assert ops.count("mtf.relu") == 1 and "mtf.exp" not in ops and "mtf.tanh" not in ops
    assert ops.count("mtf.einsum") == 1 and "mtf.transpose" not in ops
    if not layout:  # reshapes compose where no layout is split (see ReshapeOp.fold)
        assert "mtf.reshape" not in ops
    assert ops.count("mtf.add") == 2  # h + h, and x + 0.0
    if mode == "explicit" and layout.get("b"):  # one pending sum, completed once
        assert [c.kind for c in exe.compile_report.collectives].count("all_reduce") == 1


def test_canonicalize_only_lowers_bytes_of_the_uncanonicalized_pipeline():
    """The same program through propagation and insert-collectives, with and without the pass:
    the pass removes the dead contraction's and the duplicate's collectives, adds none."""
    from meshir.api.compilation.compile_report import CompileReport
    from meshir.transforms.passes.insert_collectives import InsertCollectivesPass

    prog = _program(MESHES["x4"])
    module = mi.propagate(prog, layout={"b": "x"})
    InsertCollectivesPass().apply(module)
    before = CompileReport(module, mode="explicit").collectives
    with get_context():
        canonical = module.operation.clone()
    CanonicalizePass().apply(canonical)
    after = CompileReport(canonical, mode="explicit").collectives
    assert sum(c.bytes_per_device for c in after) < sum(c.bytes_per_device for c in before)
    assert len(after) < len(before)
