"""The table of op cases run by test_compile_ops.py: one small program per case, built with
the Python API, with its inputs, the dims its layout rules split, and how exactly the
devices must agree with the reference interpreter.

Every dim size divides 8 (and every size a slice, pad or concat produces does too), so every
layout rule below is legal on every mesh of MESHES; the pieces of `split_uneven_pieces` are the
exception, by design (mi.split drops the axes a piece's size does not divide).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np

import meshir as mi
from meshir.dialect.op_registry import INTERNAL, rule_of
from meshir.dialect.ops.elementwise import BINARY_CLASSES, UNARY_CLASSES

Dim = mi.Dim
B, D, H, K, N, G, S = Dim("b", 16), Dim("d", 32), Dim("h", 8), Dim("k", 32), Dim("n", 16), Dim("g", 8), Dim("s", 8)
V, C = Dim("v", 32), Dim("c", 16)  # a vocabulary (gather) and a depth / class dim (one_hot, cross_entropy)

#: Meshes by test id: 1-D of 2, 4, 8 devices and 2-D of 2x2, 4x2, 2x4.
MESHES = {
    "x2": {"x": 2},
    "x4": {"x": 4},
    "x8": {"x": 8},
    "x2y2": {"x": 2, "y": 2},
    "x4y2": {"x": 4, "y": 2},
    "x2y4": {"x": 2, "y": 4},
}

EXACT = "exact"
F32 = (1e-5, 1e-6)         # elementwise f32
SUM = (1e-5, 1e-5)         # f32 sums: the devices add partial sums in another order
BF16 = (1e-2, 1e-2)        # bf16 results (8-bit significand)
BF16_SUM = (2e-2, 0.15)    # bf16 pending sums are rounded on each device before the all_reduce
NORMAL = (2e-6, 4e-6)      # random_normal: log and cos are the backend's, a few ulps


@dataclass(frozen=True)
class Arg:
    """A program argument and how to draw its input: kind is "normal", "positive" (in
    [0.1, 3)), "int" / "ids" (integers in [low, high)), "bool", "nan" (normal with NaNs),
    "zeros" (normal with some exact zeros) or "wide" (normal times 10). `layout(mesh_id)` ->
    the argument's stated layout, or None."""

    name: str
    dims: tuple
    dtype: str = "f32"
    kind: str = "normal"
    low: int = 0
    high: int = 1
    layout: Callable | None = None


@dataclass(frozen=True)
class Case:
    """One program. `ops`: the API functions it covers; `body(mesh_id, *args)` builds the
    results (a Tensor or a tuple) inside the program; `split`: the dims layout rules split,
    in order of preference; `layouts(mesh_id)`: explicit rule sets instead; `tol`: EXACT or
    (rtol, atol); `check_rules`: a result dim named by a rule must have the rule's layout;
    `xfail(mesh_id, rules)`: the reason a run fails on a known MeshIR bug, or None.

    Programs are built on each mesh (`Program(..., mesh)`), not once without a mesh and
    compiled with `mesh=`: that crashes (see test_compile_ops.py)."""

    name: str
    ops: tuple[str, ...]
    args: tuple[Arg, ...]
    body: Callable
    split: tuple[str, ...] = ()
    tol: object = F32
    layouts: Callable | None = None
    check_rules: bool = True
    xfail: Callable | None = None


def draw(arg: Arg, rng: np.random.Generator) -> np.ndarray:
    shape = tuple(d.size for d in arg.dims)
    if arg.kind == "positive":
        value = rng.uniform(0.1, 3.0, shape)
    elif arg.kind in ("int", "ids"):
        value = rng.integers(arg.low, arg.high, shape)
    elif arg.kind == "bool":
        return rng.random(shape) < 0.5
    else:
        value = rng.standard_normal(shape)
        if arg.kind == "nan":
            value[rng.random(shape) < 0.1] = np.nan
        if arg.kind == "zeros":
            value[rng.random(shape) < 0.2] = 0.0
        if arg.kind == "wide":
            value = value * 10
    dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "i32": np.int32, "i64": np.int64, "i1": np.bool_}[arg.dtype]
    return np.asarray(value).astype(dtype)


# -- layout rule sets ----------------------------------------------------------------------------

def rules_id(rules: dict) -> str:
    """`{"b": "x", "d": ("y", "x")}` -> `b@x+d@yx`; `{}` -> `rep`."""
    if not rules:
        return "rep"
    return "+".join(f"{k}@{v if isinstance(v, str) else ''.join(v)}" for k, v in rules.items())


def generic_layouts(split: tuple[str, ...], mesh_id: str) -> list[dict]:
    """Replicated, the first split dim over x, and a third set: on 1-D meshes the second
    split dim over x; on 2-D meshes two dims over x and y (2x2), one dim over (x, y) (4x2),
    and y before x (2x4: the two dims over y and x, or one over (y, x))."""
    if not split:
        return [{}]
    sets = [{}, {split[0]: "x"}]
    two = len(split) > 1
    if mesh_id in ("x2", "x4", "x8"):
        if two:
            sets.append({split[1]: "x"})
    elif mesh_id == "x2y2":
        sets.append({split[0]: "x", split[1]: "y"} if two else {split[0]: ("x", "y")})
    elif mesh_id == "x4y2":
        sets.append({split[0]: ("x", "y")})
    else:
        sets.append({split[0]: "y", split[1]: "x"} if two else {split[0]: ("y", "x")})
    return sets


def layout_sets(case: Case, mesh_id: str) -> list[dict]:
    return case.layouts(mesh_id) if case.layouts else generic_layouts(case.split, mesh_id)


def two_d(mesh_id: str) -> bool:
    return "y" in MESHES[mesh_id]


# -- building --------------------------------------------------------------------------------------

def build(case: Case, mesh_id: str):
    """The case's Program on the mesh of `mesh_id`."""
    mesh = mi.Mesh(MESHES[mesh_id])
    with mi.Program(case.name, mesh) as prog:
        args = [
            prog.argument(a.name, list(a.dims), a.dtype, layout=a.layout(mesh_id) if a.layout else None)
            for a in case.args
        ]
        out = case.body(mesh_id, *args)
        for i, r in enumerate(out if isinstance(out, tuple) else (out,)):
            prog.result(r, name=f"r{i}")
    return prog


def inputs(case: Case, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {a.name: draw(a, rng) for a in case.args}


# -- the cases -------------------------------------------------------------------------------------

CASES: list[Case] = []


def case(name, ops, args, body, **kw):
    CASES.append(Case(name, tuple(ops.split()), tuple(args), body, **kw))


def f32(name, dims, kind="normal", **kw):
    return Arg(name, tuple(dims), "f32", kind, **kw)


# Unary: x [b, d], positive where the op needs it; the split dim alternates. The ops: every
# unary op class with a public builder (the op registry's), so a new one gets a case.
UNARY_FUNCTIONS = [rule_of("build", cls).__name__ for cls in UNARY_CLASSES.values() if rule_of("build", cls) != INTERNAL]
for i, op in enumerate(UNARY_FUNCTIONS):
    kind = "positive" if op in ("log", "sqrt", "rsqrt") else "wide" if op in ("floor", "sign") else "zeros" if op == "abs" else "normal"
    fn = getattr(mi, op)
    case(op, op, [f32("x", [B, D], kind)], lambda m, x, fn=fn: fn(x), split=("b", "d") if i % 2 else ("d", "b"))

case("unary_i32", "neg abs sign relu", [Arg("x", (B, D), "i32", "int", -50, 50)],
     lambda m, x: (mi.neg(x), mi.abs(x), mi.sign(x), mi.relu(x)), split=("d", "b"), tol=EXACT)
case("sigmoid_alias", "sigmoid", [f32("x", [B])], lambda m, x: mi.sigmoid(x), split=("b",))

# Casts.
case("cast_f32_i32", "cast", [f32("x", [B, D], "wide")], lambda m, x: mi.cast(x, "i32"), split=("b", "d"), tol=EXACT)
case("cast_f32_bf16", "cast", [f32("x", [B, D])], lambda m, x: mi.cast(x, "bf16"), split=("d", "b"), tol=EXACT)
case("cast_i32_f32", "cast", [Arg("x", (B, D), "i32", "int", -1000, 1000)], lambda m, x: mi.cast(x, "f32"),
     split=("b", "d"), tol=EXACT)
case("cast_f32_i1", "cast", [f32("x", [B, D], "zeros")], lambda m, x: mi.cast(x, "i1"), split=("d", "b"), tol=EXACT)

# Binary, broadcast by name: a [b, d] op c [h, d] -> [b, d, h].
_binary_split = [("b", "h"), ("d", "h"), ("h", "b")]
for i, op in enumerate(rule_of("build", cls).__name__ for cls in BINARY_CLASSES.values()):
    ka = "positive" if op == "pow" else "nan" if op in ("maximum", "minimum") else "normal"
    kc = "positive" if op == "div" else "normal"
    fn = getattr(mi, op)
    case(op, op, [f32("a", [B, D], ka), f32("c", [H, D], kc)], lambda m, a, c, fn=fn: fn(a, c),
         split=_binary_split[i % 3])

case("binary_i32", "add sub mul div maximum minimum pow",
     [Arg("a", (B, D), "i32", "int", -30, 30), Arg("c", (D,), "i32", "int", -4, 5)],
     lambda m, a, c: (a + c, a - c, a * c, mi.div(a, c), mi.maximum(a, c), mi.minimum(a, c), mi.pow(c, mi.abs(c))),
     split=("d", "b"), tol=EXACT)
case("binary_i64", "add mul", [Arg("a", (B, D), "i64", "int", -2**40, 2**40), Arg("c", (B,), "i64", "int", -9, 9)],
     lambda m, a, c: (a + c, a * c), split=("b", "d"), tol=EXACT)
case("binary_bf16", "add mul div", [Arg("a", (B, D), "bf16"), Arg("c", (D, H), "bf16", "positive")],
     lambda m, a, c: (a + c, a * c, a / c), split=("d", "h"), tol=BF16)
case("operators", "add sub mul div pow neg abs less equal",
     [f32("a", [B, D]), f32("c", [D], "positive")],
     lambda m, a, c: ((a + c) * 2.0 - a / c ** 2 + abs(-a), a < c, a == a, 1.0 - c),
     split=("b", "d"), tol=SUM)

# Compare: a [b, d] vs c [d] with small integers as floats, so equality happens.
for i, op in enumerate("equal not_equal less less_equal greater greater_equal".split()):
    fn = getattr(mi, op)
    case(op, op, [f32("a", [B, D], "int", low=-2, high=3), f32("c", [D], "int", low=-2, high=3)],
         lambda m, a, c, fn=fn: fn(a, c), split=("d", "b") if i % 2 else ("b", "d"), tol=EXACT)

case("select", "select where",
     [Arg("cond", (B, D), "i1", "bool"), f32("a", [B, D]), f32("c", [D])],
     lambda m, cond, a, c: (mi.select(cond, a, c), mi.where(cond, 0.5, a)), split=("d", "b"))

# Contraction.
case("einsum_matmul", "einsum", [f32("x", [B, K]), f32("w", [K, N])],
     lambda m, x, w: mi.einsum(x, w, output=[B, N]), split=("k", "n"), tol=SUM)
case("einsum_batched", "einsum", [f32("a", [G, B, K]), f32("c", [G, K, N])],
     lambda m, a, c: mi.einsum(a, c, output=["g", "b", "n"]), split=("g", "k"), tol=SUM)
case("einsum_3_operands", "einsum", [f32("x", [B, K]), f32("w", [K, N]), f32("s", [B, N])],
     lambda m, x, w, s: mi.einsum(x, w, s, output=[B, N]), split=("b", "k"), tol=SUM)
case("einsum_to_scalar", "einsum", [f32("x", [B, K]), f32("y", [B, K])],
     lambda m, x, y: mi.einsum(x, y, output=[]), split=("k", "b"), tol=SUM)
case("einsum_bf16", "einsum", [Arg("x", (B, K), "bf16"), Arg("w", (K, N), "bf16")],
     lambda m, x, w: mi.einsum(x, w, output=[B, N]), split=("k", "b"), tol=BF16_SUM)
case("einsum_bf16_to_f32", "einsum", [Arg("x", (B, K), "bf16"), Arg("w", (K, N), "bf16")],
     lambda m, x, w: mi.einsum(x, w, output=[B, N], dtype="float32"), split=("k", "n"), tol=SUM)

for op in ("reduce_sum", "reduce_max", "reduce_min"):
    fn = getattr(mi, op)
    case(f"{op}_one", op, [f32("x", [B, D])], lambda m, x, fn=fn: fn(x, over=["d"]), split=("d", "b"), tol=SUM)
    case(f"{op}_all", op, [f32("x", [B, D])], lambda m, x, fn=fn: fn(x), split=("b", "d"), tol=SUM)
case("reduce_sum_output", "reduce_sum", [f32("x", [B, D, H])], lambda m, x: mi.reduce_sum(x, output=["h", "b"]),
     split=("d", "h"), tol=SUM)

# Shape.
case("broadcast_new_dim", "broadcast", [f32("x", [D])], lambda m, x: mi.broadcast(x, [B, D]), split=("b", "d"))
case("broadcast_reorder", "broadcast", [f32("x", [B, D])], lambda m, x: mi.broadcast(x, [D, H, B]), split=("h", "b"))


def _reshape_layouts(first: str, merged: str):
    def layouts(mesh_id):
        third = {"x2": {merged: "x"}, "x4": {merged: "x"}, "x8": {merged: "x"}, "x2y2": {"h": "x", "n": "y"},
                 "x4y2": {merged: ("x", "y")}, "x2y4": {"b": "x", "h": "y"}}[mesh_id]
        return [{}, {first: "x"}, third]
    return layouts


HK = Dim("hk", 128)
case("reshape_merge", "reshape", [f32("x", [B, H, N])], lambda m, x: mi.reshape(x, [B, HK]),
     layouts=_reshape_layouts("h", "hk"))
case("reshape_split", "reshape", [f32("x", [B, HK])], lambda m, x: mi.reshape(x, [B, H, N]),
     layouts=_reshape_layouts("b", "hk"))
case("rename", "rename", [f32("x", [B, D])], lambda m, x: (mi.rename(x, "d", "e"), mi.rename(x, {"b": "a", "d": "e"})),
     split=("d", "b"))
case("transpose", "transpose", [f32("x", [B, D, H])], lambda m, x: mi.transpose(x, ["h", "b", "d"]), split=("h", "d"))

# slice / concat / pad / shift along a split dim (d is split) and along an unsplit one.
case("slice_split", "slice", [f32("x", [B, D])], lambda m, x: mi.slice(x, "d", 5, 16), split=("d", "b"))
case("slice_unsplit", "slice", [f32("x", [B, D])], lambda m, x: mi.slice(x, "d", 13, 8), split=("b",))
_cat_args = [f32("a", [B, Dim("d", 16)]), f32("c", [B, Dim("d", 8)]), f32("e", [B, Dim("d", 8)])]
case("concat_split", "concat", _cat_args, lambda m, a, c, e: mi.concat([a, c, e], "d"), split=("d", "b"))
case("concat_unsplit", "concat", _cat_args[:2], lambda m, a, c: mi.concat([c, a], "d"), split=("b",))
case("split_split", "split", [f32("x", [B, D])], lambda m, x: mi.split(x, "d", [8, 16, 8]), split=("d", "b"))
case("split_concat_unsplit", "split concat", [f32("x", [B, D])],
     lambda m, x: mi.concat(list(reversed(mi.split(x, "d", 4))), "d"), split=("b",))
# Pieces the rule's axes do not divide come out without them (mi.split's documented rule).
case("split_uneven_pieces", "split", [f32("x", [B, D])], lambda m, x: mi.split(x, "d", [3, 24, 5]),
     split=("d", "b"), check_rules=False)
case("pad_split", "pad", [f32("x", [B, Dim("d", 16)])], lambda m, x: mi.pad(x, "d", 3, 5, value=1.5), split=("d", "b"))
case("pad_unsplit", "pad", [f32("x", [B, Dim("d", 16)])], lambda m, x: mi.pad(x, "d", 8, 0), split=("b",))
case("shift_split", "shift", [f32("x", [B, D])], lambda m, x: mi.shift(x, "d", 9, fill=-1.0), split=("d", "b"))
case("shift_wrap_split", "shift", [f32("x", [B, D])], lambda m, x: mi.shift(x, "d", -11, wrap=True), split=("d", "b"))
case("shift_unsplit", "shift", [f32("x", [B, D])], lambda m, x: mi.shift(x, "d", -3), split=("b",))
case("shift_wrap_unsplit", "shift", [f32("x", [B, D])], lambda m, x: mi.shift(x, "b", 5, wrap=True), split=("d",))

# Creation.
case("constant_splat", "constant", [f32("x", [B, D])],
     lambda m, x: (x + mi.constant(2.5, [D]), mi.constant(7, [B, H], dtype="i32")), split=("d", "b"))
_dense = (np.arange(16 * 32).reshape(16, 32) * 0.25 - 50).astype(np.float32)
case("constant_dense", "constant", [],
     lambda m: (mi.constant(_dense, [B, D]), mi.constant(np.arange(32) % 5 == 0, [D], dtype="i1")),
     split=("b", "d"), tol=EXACT)
case("iota", "iota", [], lambda m: (mi.iota([B, D], "d"), mi.iota([B, D], "b", dtype="f32")), split=("d", "b"),
     tol=EXACT)
case("random_uniform", "random_uniform", [], lambda m: mi.random_uniform([B, D], seed=7, minval=-2.0, maxval=3.0),
     split=("b", "d"), tol=EXACT)
case("random_uniform_bf16", "random_uniform", [],
     lambda m: mi.random_uniform([D, H], seed=3, dtype="bf16"), split=("h", "d"), tol=EXACT)
case("random_normal", "random_normal", [], lambda m: mi.random_normal([B, D], seed=11, mean=1.0, stddev=2.0),
     split=("d", "b"), tol=NORMAL)
# A seed operand (a 0-d int32 argument, negative ones too), derived by fold_in, and dropout's.
_seed = Arg("seed", (), "i32", "int", -2**31, 2**31 - 1)
case("random_uniform_seed_operand", "random_uniform fold_in", [_seed, Arg("step", (), "i32", "int", 0, 1000)],
     lambda m, seed, step: (mi.random_uniform([B, D], seed, minval=-1.0), mi.random_uniform([D], mi.fold_in(seed, step)),
                            mi.fold_in(seed, 3)), split=("b", "d"), tol=EXACT)
case("random_normal_seed_operand", "random_normal", [_seed], lambda m, seed: mi.random_normal([B, D], seed - 1),
     split=("d", "b"), tol=NORMAL)
case("dropout_seed_operand", "dropout", [f32("x", [B, D]), _seed], lambda m, x, seed: mi.dropout(x, 0.3, seed),
     split=("d", "b"), tol=EXACT)

# Indexing, with ids out of range on both sides.
case("one_hot", "one_hot", [Arg("ids", (B, S), "i32", "ids", -2, 19)],
     lambda m, ids: (mi.one_hot(ids, C), mi.one_hot(ids, C, dtype="i32")), split=("c", "b"), tol=EXACT)


# Selection along split dims, with NaNs (float) and ties (small integers): values and indices
# exact. k = 4 of 32, k = the whole dim (8), and k = 1.
case("top_k", "top_k", [f32("x", [B, D], "nan"), f32("y", [B, S], "wide")],
     lambda m, x, y: (*mi.top_k(x, "d", Dim("kd", 4)), *mi.top_k(mi.floor(y), "s", Dim("ks", 8)),
                      mi.top_k(x, "b", Dim("kb", 1))[1]), split=("d", "b", "s", "kd"), tol=EXACT)
# Scans along split dims: every variant, f32 (NaN, exact sums and products of partial
# totals in another order) and i32 (exact).
case("cumsum_cumprod", "cumsum cumprod", [f32("x", [B, D], "nan"), Arg("n", (B, S), "i32", "int", -2, 3)],
     lambda m, x, n: (mi.cumsum(x, "d"), mi.cumsum(x, "b", exclusive=True, reverse=True),
                      mi.cumprod(x * 0.1 + 1.0, "d", reverse=True), mi.cumprod(x * 0.1 + 1.0, "b", exclusive=True),
                      mi.cumsum(n, "s", reverse=True), mi.cumprod(n, "s", exclusive=True)),
     split=("d", "b", "s"), tol=SUM)
# Attention: blockwise (4 blocks of keys) and causal, and the einsum-softmax-einsum form with a
# bias, along split batch, heads, query and key lengths (the key length is gathered).
case("dot_product_attention", "dot_product_attention",
     [f32("q", [B, S, H, K]), f32("kv", [B, N, H, K]), f32("bias", [H, S, N])],
     lambda m, q, kv, bias: (mi.dot_product_attention(q, kv, kv * 0.5, query_length="s", key_length="n", key_dim="k",
                                                      causal=True, block_size=4),
                             mi.dot_product_attention(q, kv, kv, query_length="s", key_length="n", key_dim="k",
                                                      bias=bias, implementation="xla")),
     split=("b", "h", "s", "n"), tol=SUM)
# Sampling: the same samples under every layout (a fixed and a runtime seed).
case("categorical", "categorical", [f32("logits", [B, C]), _seed],
     lambda m, logits, seed: (mi.categorical(logits, "c", 11), mi.categorical(logits, "c", seed, temperature=0.5)),
     split=("c", "b"), tol=EXACT)
# Windows at a runtime start (inside, across blocks, clamped past the end), along split dims.
case("dynamic_slices", "dynamic_slice dynamic_update_slice",
     [f32("x", [B, D], "nan"), Arg("start", (), "i32", "int", -4, 36), f32("u", [B, Dim("d", 8)])],
     lambda m, x, start, u: (mi.dynamic_slice(x, "d", start, 5), mi.dynamic_slice(x, "b", start - 3, 16),
                             mi.dynamic_update_slice(x, "d", start, u),
                             mi.dynamic_update_slice(x, "d", 30, mi.dynamic_slice(u, "d", start, 3))),
     split=("d", "b"), tol=EXACT, check_rules=False)  # a window of 5 or 3 comes out without the rule's axes
case("argmax_argmin", "argmax argmin", [f32("x", [B, D], "nan"), Arg("n", (B, S), "i32", "int", -3, 3)],
     lambda m, x, n: (mi.argmax(x, "d"), mi.argmin(x, "b"), mi.argmax(n, "s"), mi.argmin(n, "s")),
     split=("d", "s", "b"), tol=EXACT)

def _gather_layouts(mesh_id):
    third = {"x2": {"b": "x"}, "x4": {"b": "x"}, "x8": {"b": "x"}, "x2y2": {"b": "x", "v": "y"},
             "x4y2": {"v": ("x", "y")}, "x2y4": {"b": "y", "d": "x"}}[mesh_id]
    return [{}, {"v": "x"}, third]


case("gather", "gather", [f32("table", [V, Dim("d", 16)]), Arg("ids", (B, S), "i32", "ids", -3, 36)],
     lambda m, table, ids: mi.gather(table, ids, "v"), layouts=_gather_layouts, tol=SUM)


# Layout: shard and hand-written collectives, on arguments with stated layouts.
def _axis_layouts(mesh_id):
    """Rules on the dim the hand-written layouts leave alone (d), over an axis they do not
    use on 2-D meshes."""
    return [{}, {"d": "y"}, {"d": ("y",), "b": "x"}] if two_d(mesh_id) else [{}, {"b": "x"}]


def _shard_body(m, x):
    y = mi.shard(x * 2.0, {"b": ("x", "y") if two_d(m) else "x"})
    z = mi.shard(mi.exp(y), {"b": (), "d": "x"})
    return y, z


case("shard", "shard", [f32("x", [B, D])], _shard_body, layouts=_axis_layouts, check_rules=False)


def _split_b(m):
    return {"b": ("x", "y") if two_d(m) else "x"}


case("all_gather", "all_gather", [f32("x", [B, D], layout=_split_b)],
     lambda m, x: mi.exp(mi.all_gather(x, "b", "y" if two_d(m) else "x")),
     layouts=_axis_layouts, check_rules=False)
case("all_slice", "all_slice", [f32("x", [B, D], layout=lambda m: {"b": "x"} if two_d(m) else {"b": ()})],
     lambda m, x: mi.all_slice(x, "b", "y" if two_d(m) else "x") * 3.0,
     layouts=_axis_layouts, check_rules=False)


def _all_to_all_layouts(mesh_id):
    return [{}, {"h": "y"}] if two_d(mesh_id) else [{}, {"h": "x"}]


case("all_to_all", "all_to_all", [f32("x", [B, D, H], layout=_split_b)],
     lambda m, x: mi.all_to_all(x, "b", "d", "y" if two_d(m) else "x"),
     layouts=_all_to_all_layouts, check_rules=False)
case("collective_permute", "collective_permute", [f32("x", [B, D], layout=_split_b)],
     lambda m, x: mi.collective_permute(x, {"b": ("y", "x") if two_d(m) else "x"}),
     layouts=_axis_layouts, check_rules=False)


# A hand-written all_slice of a dim nobody laid out: a rule for that dim reaches the
# all_slice's operand, which propagation reshards to what the all_slice needs (a fixed bug).
def _free_slice_layouts(mesh_id):
    return [{}, {"d": "y"}, {"b": "y"}] if two_d(mesh_id) else [{}, {"b": "x"}]


case("all_slice_free_operand", "all_slice", [f32("x", [B, D])], lambda m, x: mi.all_slice(mi.exp(x), "b", "x"),
     layouts=_free_slice_layouts, check_rules=False)


# slice / pad / concat along h of an einsum pending over the contracted d (a linear use of a
# pending sum), with d and h split over different axes: the sum stays pending through the
# gather, the local op and the re-split (a fixed bug).
def _pending_layouts(mesh_id):
    third = {"x2y2": {"d": "y", "h": "x"}, "x4y2": {"d": "y", "h": "x"}, "x2y4": {"d": "x", "h": "y"}}.get(mesh_id, {"h": "x"})
    return [{}, {"d": "x"}, third]


H32 = Dim("h", 32)
case("slice_pending_sum", "slice einsum", [f32("x", [B, D]), f32("w", [D, H32])],
     lambda m, x, w: mi.slice(mi.einsum(x, w, output=[B, H32]), "h", 3, 16), layouts=_pending_layouts, tol=SUM)
case("pad_pending_sum", "pad einsum", [f32("x", [B, D]), f32("w", [D, N])],
     lambda m, x, w: mi.pad(mi.rename(mi.einsum(x, w, output=[B, N]), "n", "h"), "h", 4, 4), layouts=_pending_layouts,
     tol=SUM)
case("split_pending_sum", "split einsum", [f32("x", [B, D]), f32("w", [D, H32])],
     lambda m, x, w: mi.split(mi.einsum(x, w, output=[B, H32]), "h", [8, 24]), layouts=_pending_layouts, tol=SUM)
case("concat_pending_sum", "concat einsum", [f32("x", [B, D]), f32("w", [D, N])],
     lambda m, x, w: (lambda y: mi.concat([y, y * 2.0], "h"))(mi.rename(mi.einsum(x, w, output=[B, N]), "n", "h")),
     layouts=_pending_layouts, tol=SUM)


# Arguments with stated layouts that the rules disagree with, and arguments returned as
# results (twice).
def _stated(m):
    return {"d": ("y", "x")} if two_d(m) else {"d": "x"}


case("stated_layouts", "einsum reduce_sum", [f32("x", [B, D], layout=_stated), f32("w", [D, H], layout=lambda m: {"h": ()})],
     lambda m, x, w: (mi.einsum(x, w, output=[B, H]), mi.reduce_sum(x * 2.0, over=["b"])), split=("b", "d"), tol=SUM,
     check_rules=False)
case("passthrough", "", [f32("x", [B, D]), Arg("ids", (B,), "i32", "ids", 0, 9)], lambda m, x, ids: (x, ids, x),
     split=("b", "d"))

# Composites.
case("softmax", "softmax", [f32("x", [B, D])], lambda m, x: mi.softmax(x, "d"), split=("d", "b"))
case("log_softmax", "log_softmax", [f32("x", [B, D])], lambda m, x: mi.log_softmax(x, D), split=("d", "b"), tol=SUM)
case("layer_norm", "layer_norm", [f32("x", [B, D]), f32("scale", [D]), f32("bias", [D])],
     lambda m, x, scale, bias: mi.layer_norm(x, "d", scale=scale, bias=bias), split=("d", "b"), tol=SUM)
case("cross_entropy_ids", "cross_entropy one_hot", [f32("logits", [B, C]), Arg("ids", (B,), "i32", "ids", -1, 17)],
     lambda m, logits, ids: mi.cross_entropy(logits, ids, "c"), split=("c", "b"), tol=SUM)
case("cross_entropy_probs", "cross_entropy", [f32("logits", [B, C]), f32("p", [B, C], "positive")],
     lambda m, logits, p: mi.cross_entropy(logits, p / mi.reduce_sum(p, over=["c"]), "c"), split=("b", "c"), tol=SUM)
case("gelu", "gelu", [f32("x", [B, D])], lambda m, x: mi.gelu(x), split=("b", "d"))
case("mean_one", "mean", [f32("x", [B, D])], lambda m, x: mi.mean(x, over=["b"]), split=("b", "d"), tol=SUM)
case("mean_all", "mean", [f32("x", [B, D])], lambda m, x: mi.mean(x), split=("d", "b"), tol=SUM)
case("dropout", "dropout", [f32("x", [B, D])], lambda m, x: mi.dropout(x, 0.25, seed=5), split=("b", "d"))

#: Functions of docs/python-api.md that have no case here, and why.
NOT_COVERED = {
    "all_reduce": "needs a pending (partial) operand, which no Python API function produces",
    "reduce_scatter": "needs a pending (partial) operand, which no Python API function produces",
    "scan": "a loop takes a body: test_loops.py and test_loops_grad.py run loops on several meshes and layouts",
    "while_loop": "a loop takes a body: test_loops.py runs loops on several meshes and layouts",
}
