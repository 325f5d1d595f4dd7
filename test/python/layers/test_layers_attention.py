"""meshir.layers.attention against NumPy float64 references: multi-head attention causal and
not, grouped-query (2 key/value heads of 2 query heads each) and multi-query (one key/value
head), cross-attention over a memory of another length; through mi.interpret and compiled on
a 4x2 mesh with batch, heads, kv_heads split (and 2-D) and replicated. Compiled gradients of a
scalar loss match float64 central differences of the NumPy reference, entry by entry."""
from __future__ import annotations

import numpy as np

import layers_reference as R
import meshir as mi
from layers_support import close, evaluations, mesh, values
from meshir import layers as L

D = mi.Dim
B, S, T, M, K = 4, 8, 12, 8, 4
b, l, m, k = D("batch", B), D("length", S), D("d_model", M), D("d_k", K)


def test_multi_head_causal_non_causal_and_cross_attention():
    h = D("heads", 4)
    dims = L.attention_params(m, h, k)
    assert {n: [d.name for d in ds] for n, ds in dims.items()} == {
        "wq": ["d_model", "heads", "d_k"], "wk": ["d_model", "heads", "d_k"], "wv": ["d_model", "heads", "d_k"],
        "wo": ["heads", "d_k", "d_model"]}
    with mi.Program("mha", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        memory = prog.argument("memory", [b, D("length", T), m])  # another length: keys and values only
        p = {n: prog.argument(n, ds) for n, ds in dims.items()}
        causal = L.attention(x, p)
        assert causal.names == ("batch", "length", "d_model")
        prog.result(causal, name="causal")
        prog.result(L.attention(x, p, causal=False), name="non_causal")
        cross = L.attention(x, p, memory=memory, causal=False)
        assert cross.shape == (B, S, M)
        prog.result(cross, name="cross")
    rng = np.random.default_rng(0)
    xv, mv = (rng.standard_normal((B, n, M)).astype(np.float32) for n in (S, T))
    p = values(rng, dims)
    want = (R.attention(xv, *p.values(), causal=True), R.attention(xv, *p.values(), causal=False),
            R.attention(xv, *p.values(), causal=False, memory=mv))
    assert not np.allclose(want[0], want[1], atol=1e-3)  # the mask matters
    layouts = {"data": {"batch": "x"}, "heads": {"heads": "y"}, "2d": {"batch": "x", "heads": "y"},
               "replicated": {}}
    for label, got in evaluations(prog, layouts, xv, mv, *p.values()):
        for g, w, name in zip(got, want, ("causal", "non_causal", "cross")):
            close(g, w, f"{label} {name}")


def test_the_first_query_sees_only_the_first_position():
    """Causal: position 0's output is v_0 projected, whatever the later positions hold."""
    h = D("heads", 2)
    with mi.Program("first", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        p = {n: prog.argument(n, ds) for n, ds in L.attention_params(m, h, k).items()}
        prog.result(L.attention(x, p), name="y")
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((B, S, M)).astype(np.float32)
    p = values(rng, L.attention_params(m, h, k))
    changed = xv.copy()
    changed[:, 1:] = rng.standard_normal((B, S - 1, M)) * 100
    exe = mi.compile(prog, layout={"batch": "x", "heads": "y"})
    first = np.einsum("bm,mhk,hkn->bn", xv[:, 0].astype(np.float64), p["wv"], p["wo"])
    for inputs in (xv, changed):
        close(np.asarray(exe(inputs, *p.values()))[:, 0], first)


def test_grouped_query_and_multi_query_attention():
    g, h = D("kv_heads", 2), D("heads", 2)
    dims = L.attention_params(m, h, k, kv_heads=g)
    assert {n: [d.name for d in ds] for n, ds in dims.items()} == {
        "wq": ["d_model", "kv_heads", "heads", "d_k"], "wk": ["d_model", "kv_heads", "d_k"],
        "wv": ["d_model", "kv_heads", "d_k"], "wo": ["kv_heads", "heads", "d_k", "d_model"]}
    with mi.Program("gqa", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        p = {n: prog.argument(n, ds) for n, ds in dims.items()}
        prog.result(L.attention(x, p, kv_heads="kv_heads"), name="causal")
        prog.result(L.attention(x, p, kv_heads="kv_heads", causal=False), name="non_causal")
    rng = np.random.default_rng(2)
    xv = rng.standard_normal((B, S, M)).astype(np.float32)
    p = values(rng, dims)
    want = [R.grouped_query_attention(xv, *p.values(), causal=c) for c in (True, False)]
    # Two key/value heads: not the same as one shared by all four query heads.
    assert not np.allclose(want[0], R.grouped_query_attention(
        xv, p["wq"], p["wk"][:, :1].repeat(2, 1), p["wv"][:, :1].repeat(2, 1), p["wo"]), atol=1e-3)
    layouts = {"data": {"batch": "x"}, "heads": {"heads": "y"}, "kv_heads": {"kv_heads": "y"},
               "2d": {"batch": "x", "kv_heads": "y"}}
    for label, got in evaluations(prog, layouts, xv, *p.values()):
        for gv, w in zip(got, want):
            close(gv, w, label)

    one, h4 = D("kv_heads", 1), D("heads", 4)
    mq_dims = L.attention_params(m, h4, k, kv_heads=one)
    with mi.Program("mqa", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        p = {n: prog.argument(n, ds) for n, ds in mq_dims.items()}
        prog.result(L.attention(x, p, kv_heads="kv_heads"), name="y")
    p = values(rng, mq_dims)
    want = R.grouped_query_attention(xv, *p.values())
    # Multi-query: all four query heads use the one key/value head, i.e. multi-head attention
    # with wk, wv repeated over the heads.
    close(want, R.attention(xv, p["wq"][:, 0], p["wk"].repeat(4, 1), p["wv"].repeat(4, 1), p["wo"][0]))
    layouts = {"heads": {"heads": "y"}, "2d": {"batch": "x", "heads": "y"}}
    for label, (got,) in evaluations(prog, layouts, xv, *p.values()):
        close(got, want, label)


def test_sequence_parallel_attention_and_ffn():
    """Megatron's sequence parallelism (between the layers, `length` split over the axis of
    heads and d_ff; examples/lm/model.py's way) computes what the plain layers compute."""
    h, f = D("heads", 4), D("d_ff", 16)
    with mi.Program("sp", mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        pa = {n: prog.argument(n, ds) for n, ds in L.attention_params(m, h, k).items()}
        pf = {n: prog.argument(n, ds) for n, ds in L.ffn_params(m, f).items()}
        x = mi.shard(x, {"length": "y"})
        y = mi.shard(x + L.attention(mi.reshard(x, {"length": ()}), pa, sequence_parallel="y"), {"length": "y"})
        prog.result(y + L.ffn(mi.reshard(y, {"length": ()}), pf, sequence_parallel="y"), name="y")
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((B, S, M)).astype(np.float32)
    pa, pf = values(rng, L.attention_params(m, h, k)), values(rng, L.ffn_params(m, f))
    y = xv + R.attention(xv, *pa.values())
    want = y + R.ffn(y, **pf)
    layouts = {"sequence-parallel": {"batch": "x", "heads": "y", "d_ff": "y"}}
    for label, (got,) in evaluations(prog, layouts, xv, *pa.values(), *pf.values(), interpret=False):
        close(got, want, label)


# -- gradients ---------------------------------------------------------------------------------

def _loss_program(name, dims, **kwargs):
    """mean(attention(x)^2), causal."""
    with mi.Program(name, mesh()) as prog:
        x = prog.argument("x", [b, l, m])
        p = {n: prog.argument(n, ds) for n, ds in dims.items()}
        y = L.attention(x, p, **kwargs)
        prog.result(mi.mean(y * y), name="loss")
    return prog


def _finite_difference_gradient(loss, p: dict, name: str, eps: float = 1e-5) -> np.ndarray:
    """d loss / d p[name] in float64, each entry a central difference."""
    w = {n: v.astype(np.float64) for n, v in p.items()}
    out = np.zeros(w[name].shape)
    for i in np.ndindex(out.shape):
        base = w[name][i]
        w[name][i] = base + eps
        up = loss(**w)
        w[name][i] = base - eps
        down = loss(**w)
        w[name][i] = base
        out[i] = (up - down) / (2 * eps)
    return out


def _close_gradient(got, want, label):
    scale = np.abs(want).max()
    assert scale > 1e-3, label  # a gradient worth comparing
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * scale, err_msg=label)


def test_gradients_match_float64_finite_differences():
    rng = np.random.default_rng(4)
    xv = rng.standard_normal((B, S, M)).astype(np.float32)

    h = D("heads", 4)
    dims = L.attention_params(m, h, k)
    p = values(rng, dims)
    names = ["wq", "wk", "wv", "wo"]
    grad = mi.grad(_loss_program("mha_loss", dims), wrt=names)

    def mha_loss(wq, wk, wv, wo):
        return np.mean(R.attention(xv, wq, wk, wv, wo) ** 2)

    want = [_finite_difference_gradient(mha_loss, p, n) for n in names]
    layouts = {"data": {"batch": "x"}, "2d": {"batch": "x", "heads": "y"}}
    for label, got in evaluations(grad, layouts, xv, *p.values()):
        for name, g, w in zip(names, got, want):
            _close_gradient(g, w, f"{label} d/d{name}")

    g, hq = D("kv_heads", 2), D("heads", 2)
    dims = L.attention_params(m, hq, k, kv_heads=g)
    p = values(rng, dims)
    grad = mi.grad(_loss_program("gqa_loss", dims, kv_heads="kv_heads"), wrt=["wq", "wk"])

    def gqa_loss(wq, wk, wv, wo):
        return np.mean(R.grouped_query_attention(xv, wq, wk, wv, wo) ** 2)

    want = [_finite_difference_gradient(gqa_loss, p, n) for n in ("wq", "wk")]
    layouts = {"kv_heads": {"batch": "x", "kv_heads": "y"}}
    for label, got in evaluations(grad, layouts, xv, *p.values(), interpret=False):
        for name, gv, w in zip(("wq", "wk"), got, want):
            _close_gradient(gv, w, f"{label} d/d{name}")
