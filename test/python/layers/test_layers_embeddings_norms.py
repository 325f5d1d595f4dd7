"""meshir.layers' embeddings (embed with and without learned positions, tied_logits) and
norms (layer_norm, rms_norm) against NumPy float64 references, through mi.interpret and
compiled on a 4x2 mesh under data-parallel, model-dim-split, 2-D and replicated layouts."""
from __future__ import annotations

import numpy as np

import layers_reference as R
import meshir as mi
from layers_support import close, evaluations, mesh, values
from meshir import layers as L

D = mi.Dim
B, S, M, V = 4, 8, 8, 16
b, l, m, v = D("batch", B), D("length", S), D("d_model", M), D("vocab", V)


def test_embed_and_tied_logits():
    with mi.Program("embeddings", mesh()) as prog:
        tokens = prog.argument("tokens", [b, l], dtype="i32")
        p = {n: prog.argument(n, dims) for n, dims in L.embedding_params(v, m, l).items()}
        plain = L.embed(tokens, {"embed": p["embed"]})
        positioned = L.embed(tokens, p)
        assert plain.names == positioned.names == ("batch", "length", "d_model")
        prog.result(plain, name="plain")
        prog.result(positioned, name="positioned")
        prog.result(L.tied_logits(positioned, p["embed"]), name="logits")
    assert list(L.embedding_params(v, m)) == ["embed"]
    rng = np.random.default_rng(0)
    ids = rng.integers(0, V, (B, S)).astype(np.int32)
    outside = [(0, 0, -1), (1, 3, V), (2, 7, V + 5), (3, 4, -7)]
    for i, j, t in outside:
        ids[i, j] = t
    p = values(rng, L.embedding_params(v, m, l), scale=1.0)
    want_plain = R.embed(ids, p["embed"])
    want_positioned = R.embed(ids, p["embed"], p["pos_embed"])
    want_logits = R.tied_logits(want_positioned, p["embed"])
    layouts = {"data": {"batch": "x"}, "vocab": {"vocab": "y"}, "2d": {"batch": "x", "vocab": "y"},
               "vocab-x-model-y": {"vocab": "x", "d_model": "y"}, "replicated": {}}
    for label, (plain, positioned, logits) in evaluations(prog, layouts, ids, *p.values()):
        close(plain, want_plain, label)
        close(positioned, want_positioned, label)
        close(logits, want_logits, label)
        for i, j, _ in outside:  # out-of-range ids: zero rows (just the position's row when there is one)
            assert not plain[i, j].any(), label
            np.testing.assert_array_equal(positioned[i, j], p["pos_embed"][j], err_msg=label)


# One row with a NaN, one with +inf, one with both; every other row finite.
NAN_AT, INF_AT, BOTH_AT = (1, 2, 3), (2, 5, 0), (3, 1)


def _poisoned(x: np.ndarray) -> np.ndarray:
    x = x.copy()
    x[NAN_AT] = np.nan
    x[INF_AT] = np.inf
    x[BOTH_AT][2], x[BOTH_AT][6] = np.nan, np.inf
    return x


def test_layer_norm_and_rms_norm_with_nan_and_inf_rows():
    with mi.Program("norms", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        p = {n: prog.argument(n, dims) for n, dims in L.norm_params(m).items()}
        rms_scale = prog.argument("rms_scale", L.norm_params(m, bias=False)["scale"])
        prog.result(L.layer_norm(x, p), name="layer_norm")
        prog.result(L.layer_norm(x, {"scale": p["scale"]}, epsilon=1e-3), name="layer_norm_no_bias")
        prog.result(L.rms_norm(x, {"scale": rms_scale}), name="rms_norm")
    assert list(L.norm_params(m)) == ["scale", "bias"] and list(L.norm_params(m, bias=False)) == ["scale"]
    rng = np.random.default_rng(1)
    x = _poisoned((rng.standard_normal((B, S, M)) * 2 + 0.5).astype(np.float32))
    p = values(rng, {**L.norm_params(m), "rms_scale": [m]}, scale=1.0)
    want = (R.layer_norm(x, p["scale"], p["bias"]), R.layer_norm(x, p["scale"], eps=1e-3),
            R.rms_norm(x, p["rms_scale"]))
    # The patterns NumPy gives: layer norm's rows with a NaN or an inf are all NaN (inf - inf);
    # RMS norm's +inf row is NaN where the inf was and 0 elsewhere (x / inf), its NaN rows NaN.
    for w in want:
        assert np.isnan(w[NAN_AT[:2]]).all() and np.isnan(w[BOTH_AT]).all()
    assert np.isnan(want[0][INF_AT[:2]]).all()
    rms_inf_row = want[2][INF_AT[:2]]
    assert np.isnan(rms_inf_row[0]) and not rms_inf_row[1:].any()
    finite = np.ones((B, S), bool)
    for row in (NAN_AT[:2], INF_AT[:2], BOTH_AT):
        finite[row] = False
    layouts = {"data": {"batch": "x"}, "model": {"d_model": "y"}, "2d": {"batch": "x", "d_model": "y"},
               "batch-length": {"batch": "x", "length": "y"}, "replicated": {}}
    for label, got in evaluations(prog, layouts, x, *p.values()):
        for g, w, name in zip(got, want, ("layer_norm", "layer_norm_no_bias", "rms_norm")):
            np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{label} {name}: NaN pattern")
            np.testing.assert_array_equal(np.isinf(g), np.isinf(w), err_msg=f"{label} {name}: inf pattern")
            assert np.isfinite(g[finite]).all(), (label, name)
            close(g[finite], w[finite], f"{label} {name}")
            close(g[INF_AT[:2]][1:], w[INF_AT[:2]][1:], f"{label} {name}")
