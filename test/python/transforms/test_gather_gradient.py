"""The table's gradient of an embedding lookup (mtf.gather) is a scatter-add in the compiled
program (lowering/stablehlo/scatter_add.py), on every layout of table and ids, and it means
exactly what the IR's einsum(one_hot(ids), ct) means: repeated ids add up, out-of-range ids
get no gradient (for finite values: jax.grad of `table[ids]`), and a non-finite cotangent
spreads as the literal einsum's `0 * inf` does — equal to NumPy's einsum in float64, to the
reference interpreter and to gspmd mode."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi

V, D, B, S = mi.Dim("v", 16), mi.Dim("d", 8), mi.Dim("b", 8), mi.Dim("s", 3)
MESHES = {"4x2": {"x": 4, "y": 2}, "8": {"x": 8}, "1": {"x": 1}}
LAYOUTS = {
    "4x2": [{}, {"v": "y"}, {"d": "x"}, {"b": "x"}, {"v": "y", "b": "x"}, {"v": ("x", "y")}, {"d": "y", "b": "x"}],
    "8": [{}, {"v": "x"}, {"d": "x"}, {"b": "x"}],
    "1": [{}, {"v": "x"}, {"b": "x"}],
}
CASES = [(m, layout) for m, layouts in LAYOUTS.items() for layout in layouts]


def embedding_loss(mesh):
    with mi.Program("embedding", mi.Mesh(MESHES[mesh])) as prog:
        table = prog.argument("table", [V, D])
        ids = prog.argument("ids", [B, S], dtype="i32")
        ct = prog.argument("ct", [B, S, D])
        prog.result(mi.reduce_sum(mi.gather(table, ids, "v") * ct), name="loss")
    return prog


def inputs(seed=0):
    """Ids with repeats and out-of-range ones on both sides; a cotangent with NaN and inf at
    in-range ids (and at out-of-range ids, where they must vanish)."""
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((V.size, D.size)).astype(np.float32)
    ids = rng.integers(-3, V.size + 3, (B.size, S.size)).astype(np.int32)
    ids[0, :] = [5, 5, 5]
    ids[1, :] = [-1, V.size, 11]
    ct = rng.standard_normal((B.size, S.size, D.size)).astype(np.float32)
    ct[2, 0, 1], ids[2, 0] = np.nan, 7
    ct[3, 1, 4], ids[3, 1] = np.inf, 9
    ct[1, 0, 2] = ct[1, 1, 3] = np.nan  # at ids -1 and 16: dropped
    return table, ids, ct


def scatter_add_reference(ids, ct):
    """sum over positions p with ids[p] = k of ct[p], in float64; out-of-range ids dropped."""
    out = np.zeros((V.size, D.size))
    keep = (ids >= 0) & (ids < V.size)
    np.add.at(out, ids[keep], ct[keep].astype(np.float64))
    return out


def literal_reference(ids, ct):
    """einsum(one_hot(ids), ct) in float64 with NumPy: 0 * NaN and 0 * inf are NaN."""
    hot = (ids[..., None] == np.arange(V.size)).astype(np.float64)
    return np.einsum("bsv,bsd->vd", hot, ct.astype(np.float64))


def test_references_agree_with_jax_grad_on_finite_values():
    table, ids, ct = inputs()
    ct = np.nan_to_num(ct, nan=0.5, posinf=2.0)
    valid = ((ids >= 0) & (ids < V.size))[..., None]

    def lookup(t):  # mtf.gather: zero rows for out-of-range ids (no negative indexing)
        rows = jnp.where(valid, t[jnp.clip(ids, 0, V.size - 1)], 0.0)
        return jnp.sum(rows * ct.astype(np.float64))

    with jax.enable_x64(True):
        want = np.asarray(jax.grad(lookup)(table.astype(np.float64)))
    np.testing.assert_allclose(want, scatter_add_reference(ids, ct), rtol=1e-12)
    np.testing.assert_allclose(want, literal_reference(ids, ct), rtol=1e-12)


@pytest.mark.parametrize("mesh, layout", CASES, ids=[f"{m}-{','.join(f'{k}:{v}' for k, v in l.items()) or 'replicated'}"
                                                    for m, l in CASES])
def test_table_gradient_is_a_scatter_add(mesh, layout):
    table, ids, ct = inputs()
    exe = mi.compile(mi.grad(embedding_loss(mesh), wrt=["table"]), layout=layout)
    text = exe.stablehlo_text()
    assert "stablehlo.scatter" in text and "dot_general" not in text, text
    got = np.asarray(exe(table=table, ids=ids, ct=ct))
    want = literal_reference(ids, ct)
    # columns 1-4 hold a non-finite cotangent: NaN in every row but row 9's own inf
    assert np.isnan(np.delete(want[:, 1:5], [9 * 4 + 3], axis=None)).all() and np.isinf(want[9, 4])
    assert np.isfinite(want[:, [0, 5, 6, 7]]).all()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # NaN where NaN, inf where inf


@pytest.mark.parametrize("finite", [True, False], ids=["finite", "non-finite"])
def test_gradient_matches_interpreter_and_gspmd_mode(finite):
    table, ids, ct = inputs()
    if finite:
        ct = np.nan_to_num(ct, nan=0.5, posinf=2.0)
    grad = mi.grad(embedding_loss("4x2"), wrt=["table"])
    want = mi.interpret(grad, table=table, ids=ids, ct=ct)
    for mode in ("explicit", "gspmd"):
        got = mi.compile(grad, layout={"v": "y", "b": "x"}, mode=mode)(table=table, ids=ids, ct=ct)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5, err_msg=mode)
