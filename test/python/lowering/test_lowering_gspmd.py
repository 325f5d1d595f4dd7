"""mtf-lower-to-stablehlo{mode=gspmd} through `mi.compile(..., mode="gspmd")`: global
StableHLO with Shardy shardings, partitioned by XLA, must compute what explicit mode and the
reference interpreter compute.

Every case is built for each mesh ({"x": 8}, {"x": 4, "y": 2}, {"x": 2, "y": 4}) with layout
rules that fit it, compiled in both modes and compared with `mi.interpret`: exactly for
integers, booleans and random_uniform, to 1e-5 for other floats. Every op family appears at
least once: elementwise (unary, binary, compare, select, cast, bf16), einsum, reductions,
shape ops (broadcast, transpose, rename, reshape, slice, concat, pad, shift), creation
(constant, iota), random, one_hot/gather, and mtf.shard.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import meshir as mi
from meshir.dialect import get_context
from meshir.dialect.signature import entry_function, signature
from meshir.lowering.runtime import Executable
from meshir.lowering.runtime import hlo_collectives as hlo_stats
from meshir.transforms import Pipeline, parse_pipeline

MESHES = {"8": {"x": 8}, "4x2": {"x": 4, "y": 2}, "2x4": {"x": 2, "y": 4}}
COLLECTIVE = re.compile(r"\b(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(-start)?\(")
RNG = np.random.default_rng(0)


def normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def rules(mesh: dict, **layout) -> dict:
    """Layout rules naming only the mesh's axes (on the 1-D mesh, the "y" rules go)."""
    return {name: axes for name, axes in layout.items() if all(a in mesh for a in ((axes,) if isinstance(axes, str) else axes))}


# -- the programs: case(mesh) -> (program, layout rules, inputs, names of exact results) --------
def ffn(mesh):
    b, m, f = mi.Dim("batch", 16), mi.Dim("d_model", 16), mi.Dim("d_ff", 32)
    with mi.Program("ffn", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [b, m])
        w1 = prog.argument("w1", [m, f])
        w2 = prog.argument("w2", [f, m])
        h = mi.relu(mi.einsum(x, w1, output=[b, f]))
        prog.result(mi.einsum(h, w2, output=[b, m]), name="y")
    return prog, rules(mesh, batch="x", d_ff="y"), dict(x=normal(16, 16), w1=normal(16, 32), w2=normal(32, 16)), ()


def attention(mesh):
    b, h, s, k, m = mi.Dim("batch", 8), mi.Dim("heads", 8), mi.Dim("seq", 8), mi.Dim("d_k", 4), mi.Dim("d_model", 16)
    kv = mi.Dim("kv", 8)
    with mi.Program("attention", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [b, s, m])
        wq = prog.argument("wq", [m, h, k])
        wk = prog.argument("wk", [m, h, k])
        wv = prog.argument("wv", [m, h, k])
        wo = prog.argument("wo", [h, k, m])
        q = mi.einsum(x, wq, output=[b, h, s, k])
        keys = mi.rename(mi.einsum(x, wk, output=[b, h, s, k]), "seq", "kv")
        values = mi.rename(mi.einsum(x, wv, output=[b, h, s, k]), "seq", "kv")
        probs = mi.softmax(mi.einsum(q, keys, output=[b, h, s, kv]) * 0.5, kv)
        out = mi.einsum(probs, values, output=[b, h, s, k])
        prog.result(mi.einsum(out, wo, output=[b, s, m]), name="y")
    inputs = dict(x=normal(8, 8, 16), wq=normal(16, 8, 4), wk=normal(16, 8, 4), wv=normal(16, 8, 4), wo=normal(8, 4, 16))
    return prog, rules(mesh, batch="x", heads="y"), inputs, ()


def reductions(mesh):
    r, c = mi.Dim("rows", 16), mi.Dim("cols", 16)
    with mi.Program("reductions", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [r, c])
        n = prog.argument("n", [r, c], dtype="i32")
        prog.result(mi.reduce_sum(x, over=[c]), name="sum")
        prog.result(mi.reduce_max(x, over=[r]), name="max")
        prog.result(mi.reduce_min(x, output=[]), name="min")
        prog.result(mi.reduce_sum(n, over=[r]), name="isum")
        prog.result(mi.mean(x, over=[r]), name="mean")
    n = RNG.integers(-100, 100, (16, 16)).astype(np.int32)
    return prog, rules(mesh, rows="x", cols="y"), dict(x=normal(16, 16), n=n), ("isum",)


def reshapes(mesh):
    b, h, d, k = mi.Dim("b", 8), mi.Dim("h", 8), mi.Dim("d", 4), mi.Dim("k", 2)
    with mi.Program("reshapes", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [b, h, d])
        flat = mi.tanh(mi.reshape(x, [b, mi.Dim("hd", 32)]))
        split = mi.reshape(flat, [b, mi.Dim("h2", 4), mi.Dim("d2", 8)])
        moved = mi.transpose(mi.rename(split, "h2", "g"), ["d2", "b", "g"])
        wide = mi.broadcast(moved, [mi.Dim("d2", 8), b, mi.Dim("g", 4), k])
        prog.result(mi.reduce_sum(wide * mi.iota([k], "k", dtype="f32"), over=[k]), name="y")
    return prog, rules(mesh, b="x", h="y"), dict(x=normal(8, 8, 4)), ()


def slices(mesh):
    b, t = mi.Dim("b", 8), mi.Dim("t", 16)
    with mi.Program("slices", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [b, t], layout={"t": "y" if "y" in mesh else "x"})  # a rule would not divide 6
        head, tail = mi.slice(x, "t", 2, 8), mi.slice(x, "t", 10, 6)
        joined = mi.concat([tail, head], "t")
        padded = mi.pad(joined, "t", 1, 1, value=0.5)
        prog.result(mi.shift(padded, "t", 3, wrap=True), name="rotated")
        prog.result(mi.shift(padded, "t", -2, fill=-1.0) + x, name="shifted")
    return prog, rules(mesh, b="x") if "y" in mesh else {}, dict(x=normal(8, 16)), ()


def embedding(mesh):
    b, s, v, d = mi.Dim("batch", 8), mi.Dim("seq", 8), mi.Dim("vocab", 32), mi.Dim("d", 16)
    with mi.Program("embedding", mi.Mesh(mesh)) as prog:
        table = prog.argument("table", [v, d])
        ids = prog.argument("ids", [b, s], dtype="i32")
        prog.result(mi.gather(table, ids, "vocab"), name="rows")
        prog.result(mi.einsum(mi.one_hot(ids, v), table, output=[b, s, d]), name="via_one_hot")
    ids = RNG.integers(-2, 34, (8, 8)).astype(np.int32)  # some out of range: zero rows
    layout = rules(mesh, batch="x", vocab="y") if "y" in mesh else {"vocab": "x"}
    return prog, layout, dict(table=normal(32, 16), ids=ids), ()


def randoms(mesh):
    b, d = mi.Dim("b", 16), mi.Dim("d", 16)
    with mi.Program("randoms", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [b, d])
        prog.result(mi.random_uniform([b, d], seed=3, minval=-2.0, maxval=5.0), name="uniform")
        prog.result(mi.random_uniform([d, b], seed=4, dtype="bf16"), name="uniform_bf16")
        prog.result(mi.random_normal([b, d], seed=5, mean=1.0, stddev=2.0), name="normal")
        prog.result(mi.dropout(x, 0.25, seed=7), name="dropout")
    return prog, rules(mesh, b="x", d="y"), dict(x=normal(16, 16)), ("uniform", "uniform_bf16")


def elementwise(mesh):
    b, d = mi.Dim("b", 8), mi.Dim("d", 8)
    table = np.arange(64, dtype=np.float32).reshape(8, 8) / 7.0 - 3.0
    with mi.Program("elementwise", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [b, d])
        n = prog.argument("n", [b, d], dtype="i32")
        pos = mi.abs(x) + 0.5
        c = mi.constant(table, [b, d])
        unary = (mi.exp(x) + mi.log(pos) + mi.sqrt(pos) + mi.rsqrt(pos) + mi.tanh(x) + mi.sigmoid(x)
                 + mi.sin(x) + mi.cos(x) + mi.floor(x) + mi.sign(x) - mi.neg(c))
        binary = mi.maximum(x, c) * mi.minimum(x, c) / pos + mi.pow(pos, c) - x
        prog.result(unary + binary, name="floats")
        prog.result(mi.where(mi.greater(x, c), x, c * 2.0), name="selected")
        ints = n / 3 + mi.iota([b, d], "d") * n - mi.cast(mi.floor(x * 10.0), "i32")
        prog.result(ints, name="ints")
        prog.result(mi.cast(x, "bf16") * mi.cast(c, "bf16") + 1.0, name="bf16")
        prog.result(mi.less_equal(mi.cast(n, "f32"), c), name="compare")
    n = RNG.integers(-50, 50, (8, 8)).astype(np.int32)
    return prog, rules(mesh, b="x", d="y"), dict(x=normal(8, 8), n=n), ("ints", "bf16", "compare")


def shards(mesh):
    b, d = mi.Dim("b", 16), mi.Dim("d", 16)
    with mi.Program("shards", mi.Mesh(mesh)) as prog:
        x = prog.argument("x", [b, d], layout={"b": "x"})
        moved = mi.shard(mi.tanh(x), {"d": "x", "b": ()})
        total = mi.reduce_sum(moved * 2.0, over=["b"])
        prog.result(mi.shard(total, {"d": ()}), name="y")
        prog.result(moved, name="moved")
    return prog, {}, dict(x=normal(16, 16)), ()


CASES = [ffn, attention, reductions, reshapes, slices, embedding, randoms, elementwise, shards]


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def check_same(prog, got, want, exact, where):
    for name, g, w in zip(prog.result_names, as_tuple(got), as_tuple(want)):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (where, name)
        if name in exact or not np.issubdtype(w.dtype, np.floating):
            np.testing.assert_array_equal(g, w, err_msg=f"{where}: {name}")
        else:
            w = w.astype(np.float64)  # 1e-5 of the result's scale: sums cancel, rounding does not
            scale = max(1.0, float(np.abs(w[np.isfinite(w)]).max(initial=0.0)))
            np.testing.assert_allclose(g.astype(np.float64), w, rtol=1e-5, atol=1e-5 * scale, err_msg=f"{where}: {name}")


@pytest.mark.parametrize("mesh", list(MESHES), ids=list(MESHES))
@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_gspmd_and_explicit_match_the_interpreter(case, mesh):
    prog, layout, inputs, exact = case(MESHES[mesh])
    want = as_tuple(mi.interpret(prog, **inputs))
    for mode in ("gspmd", "explicit"):
        exe = mi.compile(prog, layout=layout, mode=mode)
        got = as_tuple(exe(**inputs))
        check_same(prog, got, want, exact, f"{case.__name__} on {mesh}, {mode}")
        for value, sharding, t in zip(got, exe.out_shardings, exe.signature.result_types):
            assert value.sharding.is_equivalent_to(sharding, t.rank), (mode, t, value.sharding)
        if mode == "gspmd":
            text = exe.stablehlo_text()
            assert "sdy.manual_computation" not in text and "sdy.sharding_constraint" in text



def _collectives(hlo: str) -> list[str]:
    return [m.group(1) for m in COLLECTIVE.finditer(hlo)]


def test_xla_partitions_the_gspmd_ffn():
    """The global module is partitioned by XLA: per-device shapes and one all-reduce over y
    (the d_ff contraction), as explicit mode's mtf.all_reduce."""
    prog, layout, inputs, _ = ffn(MESHES["4x2"])
    gspmd, explicit = (mi.compile(prog, layout=layout, mode=m) for m in ("gspmd", "explicit"))
    text = gspmd.stablehlo_text()
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>' in text
    assert re.search(r'sdy.sharding_constraint %\d+ <@mesh, \[\{"x"\}, \{"y"\}\]> : tensor<16x32xf32>', text)
    assert "tensor<16x32xf32>" in text  # global shapes
    hlo = gspmd.compiled_hlo_text()
    assert _collectives(hlo) == ["all-reduce"], _collectives(hlo)
    # groups of y (in any of XLA's printed forms: explicit on jax 0.10, iota `[4,2]<=[8]` later)
    assert [c.groups for c in hlo_stats.parse_collectives(hlo)] == [[[0, 1], [2, 3], [4, 5], [6, 7]]]
    assert "f32[4,16]" in hlo and "f32[16,16]" in hlo  # x's and w1's shards: 16/4 rows, 32/2 cols
    assert _collectives(explicit.compiled_hlo_text()).count("all-reduce") == 1
    assert "gspmd mode" in gspmd.report() and "inserted by XLA's partitioner" in gspmd.report()


def test_gspmd_lowering_accepts_partitioned_input():
    """After mtf-insert-collectives, pending values are global sums and the collectives are
    identities: the lowered module computes the same and keeps only sharding constraints."""
    prog, layout, inputs, _ = ffn(MESHES["4x2"])
    with get_context():
        module = prog.module.operation.clone()
    Pipeline(parse_pipeline(
        "builtin.module(mtf-propagate-sharding{rules=\"batch:x,d_ff:y\"}, mtf-insert-collectives)")).run(module)
    assert '"mtf.all_reduce"' in str(module)
    sig = signature(entry_function(module, None))
    Pipeline(parse_pipeline("builtin.module(mtf-lower-to-stablehlo{mode=gspmd})")).run(module)
    text = str(module)
    assert "all_reduce" not in text and "manual_computation" not in text
    exe = Executable(module, mi.Mesh(MESHES["4x2"]), sig, mode="gspmd")
    np.testing.assert_allclose(np.asarray(exe(**inputs)), mi.interpret(prog, **inputs), rtol=1e-5, atol=1e-5)
    assert _collectives(exe.compiled_hlo_text()) == ["all-reduce"]


def test_gspmd_refuses_unpropagated_input():
    prog, _, _, _ = ffn(MESHES["4x2"])
    with get_context():
        module = prog.module.operation.clone()
    with pytest.raises(mi.MeshIRError, match="has dims without a layout; gspmd mode lowers propagated IR"):
        Pipeline(parse_pipeline("builtin.module(mtf-lower-to-stablehlo{mode=gspmd})")).run(module)
