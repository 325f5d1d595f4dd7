"""Halo exchange: `mtf.shift` along a split dim keeps the dim split and brings only the
|offset| boundary rows from the neighbouring block (collective_permute), when they fit in
one block; a longer shift gathers the dim as before.

Every layout of a small shift program (the dim split over one axis or two, in either
order, with the other dim split or not) on the meshes {"x":8}, {"x":4,"y":2} and
{"x":2,"y":4}, offsets ±1, ±(block size), one past the block (the gather fallback) and
beyond the dim, wrap on and off, fills 0, -1.5, NaN and ±inf, data holding NaN and ±inf,
blocks of one row: every device's shard against a NumPy loop written here (not the
interpreter's code). The partitioned IR records the cost model's bytes on each halo shift,
and the compiled HLO of a halo shift has a collective-permute and no all-gather.
"""
from __future__ import annotations

import functools
import itertools
import math

import ml_dtypes
import numpy as np
import pytest

import meshir as mi
from meshir.dialect.signature import entry_function
from meshir.dialect.tensor_type import TensorType

MESHES = {"x8": {"x": 8}, "x4y2": {"x": 4, "y": 2}, "x2y4": {"x": 2, "y": 4}}
B = 4
FILLS = [0.0, -1.5, float("nan"), float("inf"), float("-inf")]


def shift_oracle(x: np.ndarray, axis: int, offset: int, wrap: bool, fill: float) -> np.ndarray:
    """out[i] = x[i - offset] along `axis`, element by element: wrapped around, or `fill`
    where i - offset leaves the dim."""
    n = x.shape[axis]
    out = np.empty_like(x)
    for i in range(n):
        src = i - offset
        dst = [slice(None)] * x.ndim
        dst[axis] = i
        if wrap:
            src %= n
        if 0 <= src < n:
            take = [slice(None)] * x.ndim
            take[axis] = src
            out[tuple(dst)] = x[tuple(take)]
        else:
            out[tuple(dst)] = np.asarray(fill).astype(x.dtype)
    return out


def layouts(mesh_id: str) -> list[dict]:
    """`d` over every axis and every ordered pair of axes; with one axis left, `b` over it too."""
    axes = list(MESHES[mesh_id])
    out = []
    for k in (1, 2):
        for d_axes in itertools.permutations(axes, k):
            out.append({"d": d_axes})
            rest = [a for a in axes if a not in d_axes]
            if rest:
                out.append({"d": d_axes, "b": rest[0]})
    return out


def block_rows(mesh_id: str, rules: dict, d: int) -> int:
    return d // math.prod(MESHES[mesh_id][a] for a in rules["d"])


def shifts_for(block: int, d: int) -> list[tuple[int, bool, float]]:
    """(offset, wrap, fill): ±1, ±block, one past the block, the whole dim; each with and
    without wrap, fills cycling through FILLS."""
    offsets = sorted({1, -1, block, -block, block + 1, -(block + 1), d - 1, d})
    fills = itertools.cycle(FILLS)
    return [(k, wrap, next(fills)) for k in offsets for wrap in (False, True)]


def nearest(offset: int, wrap: bool, d: int) -> int:
    """The fewest rows a shift moves: with wrap, a shift by d - 1 is one by -1."""
    if not wrap:
        return offset
    k = offset % d
    return k - d if k > d - k else k


def data(d: int, dtype=np.float32) -> np.ndarray:
    rng = np.random.default_rng(d)
    x = rng.standard_normal((B, d)) * 10
    if np.issubdtype(dtype, np.floating) or dtype == ml_dtypes.bfloat16:
        x[0, 0], x[1, -1], x[2, d // 2], x[3, 1 % d] = np.nan, np.inf, -np.inf, np.nan
    return x.astype(dtype)


def build(mesh_id: str, d: int, shifts, dtype: str = "f32"):
    with mi.Program("shifts", mi.Mesh(MESHES[mesh_id])) as prog:
        x = prog.argument("x", [mi.Dim("b", B), mi.Dim("d", d)], dtype)
        for i, (k, wrap, fill) in enumerate(shifts):
            prog.result(mi.shift(x, "d", k, wrap=wrap, fill=fill), name=f"r{i}")
    return prog


def shift_ops(module) -> list:
    fn = entry_function(module)
    return [op for op in fn.regions[0].blocks[0].operations if op.operation.name == "mtf.shift"]


def check_results(exe, x, shifts, mesh_id, rules):
    got = exe(x=x)
    got = got if isinstance(got, tuple) else (got,)
    wide = np.float32 if x.dtype == ml_dtypes.bfloat16 else x.dtype  # NumPy compares bf16 NaNs unequal
    for (k, wrap, fill), g in zip(shifts, got):
        want = shift_oracle(x, 1, k, wrap, fill).astype(wide)
        what = f"shift by {k} (wrap={wrap}, fill={fill}) on {mesh_id} with {rules}"
        np.testing.assert_array_equal(np.asarray(g).astype(wide), want, err_msg=what)
        for shard in g.addressable_shards:
            np.testing.assert_array_equal(np.asarray(shard.data).astype(wide), want[shard.index],
                                          err_msg=f"{what}, {shard.device}")


CASES = [(m, r, d) for m in MESHES for r in layouts(m) for d in (8, 16)]


def _id(case) -> str:
    mesh_id, rules, d = case
    return f"{mesh_id}-" + "+".join(f"{k}@{''.join(v)}" for k, v in rules.items()) + f"-d{d}"


@pytest.mark.parametrize("mesh_id, rules, d", CASES, ids=[_id(c) for c in CASES])
def test_shift_on_every_layout_matches_numpy(mesh_id, rules, d):
    block = block_rows(mesh_id, rules, d)
    shifts = shifts_for(block, d)
    prog = build(mesh_id, d, shifts)
    exe = mi.compile(prog, layout=rules)
    check_results(exe, data(d), shifts, mesh_id, rules)

    mesh = MESHES[mesh_id]
    b_local = B // (mesh[rules["b"]] if "b" in rules else 1)
    for (k, wrap, _), op in zip(shifts, shift_ops(exe.partitioned_module)):
        operand = TensorType.from_mlir(op.operation.operands[0].type)
        halo = abs(nearest(k, wrap, d)) <= block
        assert bool(operand.dim("d").axes) == halo, f"shift by {k} (wrap={wrap}): operand {operand}"
        assert TensorType.from_mlir(op.result.type).dim("d").axes == (tuple(rules["d"]) if halo else ())
        if halo:  # |k| rows of the rest of the shard, f32
            sent = op.operation.attributes["bytes_per_device"]
            assert int(str(sent).split(" ")[0]) == abs(nearest(k, wrap, d)) * b_local * 4
        else:
            assert "bytes_per_device" not in op.operation.attributes


@pytest.mark.parametrize("dtype", ["bf16", "i32"])
def test_shift_of_other_element_types(dtype):
    np_dtype = {"bf16": ml_dtypes.bfloat16, "i32": np.int32}[dtype]
    shifts = [(1, False, -1.0), (-2, False, 3.0), (3, True, 0.0), (-1, True, 0.0), (5, False, 2.0)]
    rules = {"d": ("y", "x")}
    exe = mi.compile(build("x4y2", 16, shifts, dtype), layout=rules)
    check_results(exe, data(16, np_dtype), shifts, "x4y2", rules)


@functools.lru_cache(maxsize=None)
def compiled_hlo(mesh_id: str, rules_items: tuple, offset: int, wrap: bool) -> str:
    prog = build(mesh_id, 16, [(offset, wrap, -1.0)])
    return mi.compile(prog, layout=dict(rules_items)).compiled_hlo_text()


@pytest.mark.parametrize("mesh_id, rules", [("x8", {"d": "x"}), ("x4y2", {"d": ("x", "y")}),
                                            ("x2y4", {"d": "y", "b": "x"})])
@pytest.mark.parametrize("offset, wrap", [(1, False), (-2, False), (15, True)])
def test_halo_shift_compiles_to_collective_permute_without_all_gather(mesh_id, rules, offset, wrap):
    hlo = compiled_hlo(mesh_id, tuple(rules.items()), offset, wrap)
    assert "collective-permute" in hlo
    assert "all-gather" not in hlo


def test_shift_past_the_block_still_gathers():
    hlo = compiled_hlo("x8", (("d", "x"),), 3, False)  # blocks of 2 rows
    assert "all-gather" in hlo


def test_one_row_shift_on_8_devices_sends_one_row_not_the_dim():
    exe = mi.compile(build("x8", 64, [(1, False, 0.0)]), layout={"d": "x"})
    (record,) = exe.compile_report.collectives
    assert (record.kind, record.axes, record.bytes_per_device) == ("collective_permute", ("x",), B * 4) and record.halo


@pytest.mark.parametrize("wrap", [False, True])
def test_gradient_through_a_halo_shift(wrap):
    """d/dx sum(w * shift(x, k)) = shift(w, -k) with fill 0 (or wrapped)."""
    d, k = 16, 2
    with mi.Program("loss", mi.Mesh(MESHES["x4y2"])) as prog:
        x = prog.argument("x", [mi.Dim("b", B), mi.Dim("d", d)])
        w = prog.argument("w", [mi.Dim("b", B), mi.Dim("d", d)])
        prog.result(mi.reduce_sum(w * mi.shift(x, "d", k, wrap=wrap, fill=7.0), over=["b", "d"]), name="loss")
    grad = mi.grad(prog, wrt=["x"])
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((B, d)).astype(np.float32), rng.standard_normal((B, d)).astype(np.float32)
    exe = mi.compile(grad, layout={"d": ("x", "y")})
    got = exe(x=xv, w=wv)
    got = got[0] if isinstance(got, tuple) else got
    np.testing.assert_allclose(np.asarray(got), shift_oracle(wv, 1, -k, wrap, 0.0), rtol=1e-6)
    assert any("bytes_per_device" in op.operation.attributes for op in shift_ops(exe.partitioned_module))


def test_halo_bytes_are_the_rows_sent():
    from meshir.transforms.analysis.cost_model import halo_bytes

    t = TensorType.parse("!mtf.tensor<b=8@x, d=64@y, bf16>")
    assert halo_bytes(t, "d", 3, 0, {"x": 2, "y": 4}) == 3 * 4 * 2  # 3 rows of b/2, 2-byte elements
    assert halo_bytes(t, "d", 1, 2, {"x": 2, "y": 4}) == 3 * 4 * 2
    assert halo_bytes(t, "d", 1, 0, {"x": 2, "y": 1}) == 0  # one block: nobody sends


@pytest.mark.parametrize("wrap", [False, True])
def test_shift_along_an_axis_of_size_one_sends_nothing(wrap):
    with mi.Program("q", mi.Mesh({"x": 8, "y": 1})) as prog:
        x = prog.argument("x", [mi.Dim("b", 8), mi.Dim("d", 4)], layout={"d": "y", "b": "x"})
        prog.result(mi.shift(x, "d", 1, wrap=wrap, fill=-2.0), name="y")
    exe = mi.compile(prog)
    v = data(4)[:, :4].repeat(2, axis=0)
    np.testing.assert_array_equal(np.asarray(exe(x=v)), shift_oracle(v, 1, 1, wrap, -2.0))
    assert exe.compile_report.total_bytes_per_device == 0
    assert "collective-permute" not in exe.compiled_hlo_text()
