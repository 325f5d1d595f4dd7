"""mtf-lower-to-stablehlo, run: partitioned programs are lowered, compiled for N CPU devices
and executed; every device's shard must equal its block of what the reference interpreter
computes on the global inputs.

Programs are written by hand in partitioned form with a small text generator (`Prog`,
`ty`): layouts come from a per-test dict `{name: axes}`, every other dim is `@()`.
Which block a device holds is asked of jax (`NamedSharding.devices_indices_map`), so the
lowering's device/block conventions are checked against jax's, not against themselves.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import Mesh as JaxMesh
from jax.sharding import NamedSharding, PartitionSpec

from meshir import _jax_private as jp
from meshir.dialect import parse_module
from meshir.dialect.interpreter import interpret
from meshir.dialect.op_registry import INTERNAL, rule_of
from meshir.dialect.ops.elementwise import BINARY_CLASSES, COMPARE_CLASSES, UNARY_CLASSES
from meshir.dialect.signature import entry_function, signature
from meshir.dialect.tensor_type import TensorType
from meshir.lowering.stablehlo import entry_text, lower_module
from meshir.transforms import Pipeline, parse_pipeline

MESHES = {"2": {"x": 2}, "4": {"x": 4}, "2x2": {"x": 2, "y": 2}, "4x2": {"x": 4, "y": 2}}
COLLECTIVES = {"all_reduce", "all_gather", "reduce_scatter", "all_slice", "all_to_all", "collective_permute"}


# -- writing partitioned programs ---------------------------------------------------------------
def ty(spec: str, layout: dict | None = None, partial: str = "") -> str:
    """`ty("b=8, d=4, f32", {"b": "x"})` -> `!mtf.tensor<b=8@x, d=4@(), f32>`; `partial` is
    appended as written (`"partial@y"`)."""
    *dims, elem = [s.strip() for s in spec.split(",")]
    layout = layout or {}
    parts = []
    for d in dims:
        name = d.split("=")[0]
        parts.append(f"{d}@{axes_text(layout.get(name, ()))}")
    return "!mtf.tensor<" + ", ".join(parts + [elem] + ([partial] if partial else [])) + ">"


def axes_text(axes) -> str:
    """`x` or `(x,y)`: mesh axes as a type writes them."""
    axes = (axes,) if isinstance(axes, str) else tuple(axes)
    return axes[0] if len(axes) == 1 else "(" + ",".join(axes) + ")"


def axes_attr(axes) -> str:
    """`["x", "y"]`: mesh axes as a collective's attribute."""
    axes = (axes,) if isinstance(axes, str) else tuple(axes)
    return "[" + ", ".join(f'"{a}"' for a in axes) + "]"


class Prog:
    """A one-function module in partitioned form, written op by op."""

    def __init__(self, mesh: str):
        self.mesh = MESHES[mesh]
        self.args: list[tuple[str, str]] = []
        self.lines: list[str] = []

    def arg(self, name: str, t: str):
        self.args.append((name, t))
        return (f"%{name}", t)

    def op(self, name: str, operands, t: str, attrs: str = ""):
        ssa = f"%t{len(self.lines)}"
        if name in COLLECTIVES:
            attrs = ", ".join(filter(None, [attrs, "bytes_per_device = 0 : i64"]))
        attr_text = f" {{{attrs}}}" if attrs else ""
        self.lines.append(
            f'{ssa} = "mtf.{name}"({", ".join(v for v, _ in operands)}){attr_text} : '
            f'({", ".join(t for _, t in operands)}) -> {t}'
        )
        return (ssa, t)

    def text(self, results: dict) -> str:
        mesh = ", ".join(f'"{a}"={s}' for a, s in self.mesh.items())
        params = ", ".join(f'%{n}: {t} {{mtf.name = "{n}"}}' for n, t in self.args)
        outs = ", ".join(f'{t} {{mtf.name = "{n}"}}' for n, (_, t) in results.items())
        rets = ", ".join(v for v, _ in results.values())
        types = ", ".join(t for _, t in results.values())
        body = "\n".join("  " + line for line in self.lines)
        return (
            f"sdy.mesh @mesh = <[{mesh}]>\n"
            f"func.func @f({params}) -> ({outs}) attributes {{mtf.mesh = @mesh}} {{\n{body}\n"
            f"  return {rets} : {types}\n}}\n"
        )


# -- inputs ---------------------------------------------------------------------------------
def sample(t: TensorType, rng, low=-3.0, high=3.0) -> np.ndarray:
    """Random values of `t`'s global shape: floats in [low, high), integers in [low, high], bools."""
    if t.element_type == "i1":
        return rng.random(t.shape) < 0.5
    if t.is_integer:
        return rng.integers(int(low), int(high) + 1, t.shape).astype(t.dtype)
    return rng.uniform(low, high, t.shape).astype(t.dtype)


# -- the private PJRT harness ----------------------------------------------------------------
def _spec(t: TensorType) -> PartitionSpec:
    return PartitionSpec(*[tuple(d.axes) if d.axes else None for d in t.dims])


def _sharding(mesh, t: TensorType):
    """Where jax puts `t`: a NamedSharding on the mesh (one device without a mesh)."""
    return NamedSharding(mesh, _spec(t)) if isinstance(mesh, JaxMesh) else jax.sharding.SingleDeviceSharding(mesh)


def run_partitioned(text: str, mesh_axes: dict, inputs: dict | None = None, rng=None, pipeline: str = "", **sample_range):
    """Interpret `text` on global inputs (given or sampled), run `pipeline` (MeshIR passes
    that partition it, if it is not written partitioned), lower it, run it on the mesh's
    devices; return [(name, result type, expected global array, {device: shard})]."""
    module, diags = parse_module(text, source_name="test.mlir")
    assert not diags, "\n".join(map(str, diags))
    sig = signature(entry_function(module))
    rng = rng or np.random.default_rng(0)
    inputs = dict(inputs or {})
    for name, t in zip(sig.arg_names, sig.arg_types):
        inputs.setdefault(name, sample(t, rng, **sample_range))
    expected = interpret(module, **inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    if pipeline:
        Pipeline(parse_pipeline(f"builtin.module({pipeline})")).run(module)
        sig = signature(entry_function(module))  # the passes lay out free results
    lower_module(module)
    devices = jax.devices()[: int(np.prod(list(mesh_axes.values())))]
    mesh = JaxMesh(np.array(devices).reshape(tuple(mesh_axes.values())), tuple(mesh_axes)) if mesh_axes else devices[0]
    exe = jp.compile_and_load(entry_text(module), devices)
    with jax.enable_x64(True):  # f64 and i64 arguments keep their type
        args = [jax.device_put(inputs[n], _sharding(mesh, t)) for n, t in zip(sig.arg_names, sig.arg_types)]
        outputs = exe.execute_sharded(args).disassemble_into_single_device_arrays()
    results = []
    for name, t, want, shards in zip(sig.result_names, sig.result_types, expected, outputs):
        got = {next(iter(s.devices())): np.asarray(s) for s in shards}
        results.append((name, t, want, got))
    return mesh, results


def check(prog: Prog, results: dict, **options):
    """Run `prog` partitioned and compare every device's shard with its block of the
    interpreter's result (bit-exact when `exact`, or for integers and bools)."""
    check_text(prog.text(results), prog.mesh, **options)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.atleast_1d(a).view(np.uint8)


def check_text(text: str, mesh_axes: dict, exact: bool = False, rtol=None, atol=None, **run_args):
    """`check` for a module written by hand (`mesh_axes` {} for a function without a mesh)."""
    mesh, outputs = run_partitioned(text, mesh_axes, **run_args)
    for name, t, want, got in outputs:
        blocks = _sharding(mesh, t).devices_indices_map(t.shape)
        assert set(got) == set(blocks)
        for device, index in blocks.items():
            shard, block = got[device], want[index]
            where = f"result '{name}' {t} on device {device.id}"
            assert shard.shape == block.shape and shard.dtype == block.dtype, where
            if exact or not t.is_float:
                np.testing.assert_array_equal(_bits(shard) if t.is_float else shard,
                                              _bits(block) if t.is_float else block, err_msg=where)
            else:
                tol = {"f32": 2e-5, "f64": 1e-12, "bf16": 1e-2, "f16": 2e-3}[t.element_type]
                np.testing.assert_allclose(shard.astype(np.float64), block.astype(np.float64), equal_nan=True,
                                           rtol=rtol or tol, atol=atol if atol is not None else tol, err_msg=where)


# -- layouts per mesh ----------------------------------------------------------------------------
#: (mesh, layout of names b and d): b=8, d=4 divide by every split below.
BD_LAYOUTS = [
    ("2", {"b": "x"}),
    ("2", {"d": "x"}),
    ("4", {"b": "x"}),
    ("2x2", {"b": "x", "d": "y"}),
    ("2x2", {"b": ("y", "x")}),
    ("4x2", {"b": ("x", "y")}),
    ("4x2", {"b": "y", "d": "x"}),
]


def _ids(cases):
    """`2x2-b@x,d@y` for a (mesh, layout) case."""
    return [m + "-" + (",".join(f"{k}@{axes_text(v)}" for k, v in lay.items()) or "repl") for m, lay in cases]


# -- elementwise ----------------------------------------------------------------------------------
#: The unary ops users build (the op registry's), and those of them integers may take (a trait).
UNARY_FLOAT = [n for n, cls in UNARY_CLASSES.items() if rule_of("build", cls) != INTERNAL]
UNARY_INT = [n for n in UNARY_FLOAT if "i32" in UNARY_CLASSES[n].OPERAND_TYPES]


@pytest.mark.parametrize("elem", ["f32", "bf16", "i32"])
@pytest.mark.parametrize("mesh,layout", BD_LAYOUTS[::2], ids=_ids(BD_LAYOUTS[::2]))
def test_unary_ops(mesh, layout, elem):
    p = Prog(mesh)
    t = ty(f"b=8, d=4, {elem}", layout)
    x = p.arg("x", t)
    ops = UNARY_INT if elem == "i32" else UNARY_FLOAT
    check(p, {op: p.op(op, [x], t) for op in ops})


@pytest.mark.parametrize("elem", ["f32", "bf16", "i32"])
@pytest.mark.parametrize("mesh,layout", BD_LAYOUTS, ids=_ids(BD_LAYOUTS))
def test_binary_compare_select_broadcast_by_name(mesh, layout, elem):
    """x[b, d] op y[d]: y is broadcast along b on every device (replicated over b's axes)."""
    p = Prog(mesh)
    tx, ty_, tb = ty(f"b=8, d=4, {elem}", layout), ty(f"d=4, {elem}", layout), ty("b=8, d=4, i1", layout)
    x, y = p.arg("x", tx), p.arg("y", ty_)
    results = {op: p.op(op, [x, y], tx) for op in BINARY_CLASSES}
    results.update({op: p.op(op, [y, x], tb) for op in COMPARE_CLASSES})
    results["select"] = p.op("select", [results["gt"], x, y], tx)
    # i32: small exponents (negative ones too) and zero divisors; floats: positive bases for pow.
    low, high = (-2, 3) if elem == "i32" else (0.25, 3.0)
    check(p, results, low=low, high=high)


@pytest.mark.parametrize("mesh,layout", [BD_LAYOUTS[0], BD_LAYOUTS[5]], ids=_ids([BD_LAYOUTS[0], BD_LAYOUTS[5]]))
def test_booleans_compare_max_min_select(mesh, layout):
    """i1 compares as unsigned (false < true), as jax does."""
    p = Prog(mesh)
    tb, td = ty("b=8, d=4, i1", layout), ty("d=4, i1", layout)
    x, y = p.arg("x", tb), p.arg("y", td)
    results = {op: p.op(op, [x, y], tb) for op in ["eq", "ne", "lt", "le", "gt", "ge", "max", "min"]}
    results["select"] = p.op("select", [x, y, results["lt"]], tb)
    check(p, results)


CASTS = [("f32", ["i32", "i64", "i1", "bf16", "f16", "f64"]), ("bf16", ["i32", "f32", "i1"]),
         ("i32", ["f32", "i1", "i64", "bf16"]), ("i1", ["f32", "i32"]), ("f64", ["i32", "f32"])]


@pytest.mark.parametrize("src,targets", CASTS, ids=[s for s, _ in CASTS])
@pytest.mark.parametrize("mesh,layout", [BD_LAYOUTS[3], BD_LAYOUTS[5]], ids=_ids([BD_LAYOUTS[3], BD_LAYOUTS[5]]))
def test_cast(mesh, layout, src, targets):
    """Float to integer truncates, saturates and maps NaN to 0, as in the interpreter."""
    p = Prog(mesh)
    x = p.arg("x", ty(f"b=8, d=4, {src}", layout))
    rng = np.random.default_rng(1)
    value = sample(TensorType.parse(x[1]), rng, -40, 40)
    if src in ("f32", "f64"):
        value.reshape(-1)[:6] = [np.nan, np.inf, -np.inf, 3e9, -3e9, 2.0**31]
    check(p, {f"to_{t}": p.op("cast", [x], ty(f"b=8, d=4, {t}", layout)) for t in targets}, exact=True,
          inputs={"x": value})


# -- contractions and reductions --------------------------------------------------------------------
def _matmul_chain(mesh, la, lw, lr, elem):
    """a[b, k] . w[k, n] -> r[b, n]; k split over some axes makes it partial, then all_reduce."""
    p = Prog(mesh)
    a = p.arg("a", ty(f"b=8, k=8, {elem}", la))
    w = p.arg("w", ty(f"k=8, n=4, {elem}", lw))
    part = p.op("einsum", [a, w], ty(f"b=8, n=4, {elem}", lr, partial_over(la, "k")))
    return p, {"r": reduced(p, part, ty(f"b=8, n=4, {elem}", lr), la, "k")}


MATMULS = [
    ("2", {"b": "x"}, {}, {"b": "x"}),
    ("2", {"k": "x"}, {"k": "x"}, {}),
    ("2x2", {"b": "x", "k": "y"}, {"k": "y"}, {"b": "x"}),
    ("2x2", {"k": "x"}, {"k": "x", "n": "y"}, {"n": "y"}),
    ("4x2", {"k": ("x", "y")}, {"k": ("x", "y")}, {}),
    ("4x2", {"b": "y", "k": "x"}, {"k": "x"}, {"b": "y"}),
    ("4", {"k": "x"}, {"k": "x"}, {}),
]


@pytest.mark.parametrize("elem", ["f32", "bf16", "i32"])
@pytest.mark.parametrize("case", MATMULS, ids=[f"{c[0]}-{i}" for i, c in enumerate(MATMULS)])
def test_einsum_matmul_with_partial_sum(case, elem):
    p, results = _matmul_chain(*case, elem)
    # bf16 partial sums are rounded on each device before the all_reduce adds them: an ulp
    # of the largest partial sum (|values| < 32) is the error to allow.
    check(p, results, atol=0.125 if elem == "bf16" else None, low=-3, high=3)


def split_axes(layout: dict, names) -> list[str]:
    """The mesh axes `layout` splits the dims `names` over, in order."""
    return [a for n in names for a in ((layout[n],) if isinstance(layout.get(n), str) else layout.get(n, ()))]


def partial_over(layout: dict, names, keyword: str = "partial") -> str:
    """The pending marker a local contraction over `names` leaves (`""` if none is split)."""
    axes = split_axes(layout, names)
    return f"{keyword}@{axes_text(axes)}" if axes else ""


def reduced(p: Prog, value, t: str, layout: dict, names, kind: str = "sum"):
    """`value` (pending over the axes of `names`) all-reduced to `t`, if it is pending."""
    axes = split_axes(layout, names)
    return p.op("all_reduce", [value], t, f'reduction = "{kind}", axes = {axes_attr(axes)}') if axes else value


@pytest.mark.parametrize("mesh,layout", [("2x2", {"h": "x", "b": "y"}), ("4x2", {"h": "y", "q": "x"}), ("4", {"c": "x"}),
                                         ("2x2", {"c": ("y", "x")})],
                         ids=["2x2-h@x,b@y", "4x2-h@y,q@x", "4-c@x", "2x2-c@(y,x)"])
def test_einsum_batch_three_operands_outer_and_single(mesh, layout):
    p = Prog(mesh)
    q = p.arg("q", ty("b=4, h=2, q=8, c=8, f32", layout))
    k = p.arg("k", ty("b=4, h=2, c=8, v=4, f32", layout))
    s = p.arg("s", ty("v=4, e=2, f32", layout))
    o = p.arg("o", ty("b=4, f32", layout))
    three, single = ty("h=2, b=4, q=8, e=2, f32", layout), ty("v=4, b=4, f32", layout)
    results = {
        "three": reduced(p, p.op("einsum", [q, k, s], ty("h=2, b=4, q=8, e=2, f32", layout, partial_over(layout, "cv"))),
                         three, layout, "cv"),
        "outer": p.op("einsum", [s, o], ty("b=4, e=2, v=4, f32", layout)),
        "single": reduced(p, p.op("einsum", [k], ty("v=4, b=4, f32", layout, partial_over(layout, "hc"))), single, layout, "hc"),
    }
    check(p, results)


REDUCE_LAYOUTS = [("2", {"b": "x"}), ("2x2", {"b": "x", "d": "y"}), ("4x2", {"b": ("x", "y")}), ("4", {"d": "x"})]


@pytest.mark.parametrize("elem", ["f32", "bf16", "i32"])
@pytest.mark.parametrize("mesh,layout", REDUCE_LAYOUTS, ids=_ids(REDUCE_LAYOUTS))
def test_reductions_over_split_dims_then_all_reduce(mesh, layout, elem):
    """reduce over b: partial over b's axes (sum, max, min), completed by all_reduce."""
    p = Prog(mesh)
    x = p.arg("x", ty(f"b=8, d=4, c=2, {elem}", layout))
    out = ty(f"c=2, d=4, {elem}", layout)
    results = {}
    for kind in ("sum", "max", "min"):
        keyword = {"sum": "partial", "max": "partial_max", "min": "partial_min"}[kind]
        r = p.op(f"reduce_{kind}", [x], ty(f"c=2, d=4, {elem}", layout, partial_over(layout, "b", keyword)))
        results[kind] = reduced(p, r, out, layout, "b", kind)
    check(p, results, atol=0.125 if elem == "bf16" else None)


# -- shape ops -----------------------------------------------------------------------------------
@pytest.mark.parametrize("mesh,layout", BD_LAYOUTS, ids=_ids(BD_LAYOUTS))
def test_broadcast_transpose_rename(mesh, layout):
    p = Prog(mesh)
    x = p.arg("x", ty("b=8, d=4, f32", layout))
    lay_n = {**layout, "n": next((a for a in ("y", "x") if a not in split_axes(layout, "bd") and a in p.mesh), ())}
    renamed = {"e" if k == "b" else k: v for k, v in layout.items()}
    check(p, {
        "broadcast": p.op("broadcast", [x], ty("d=4, n=2, b=8, f32", lay_n)),
        "transpose": p.op("transpose", [x], ty("d=4, b=8, f32", layout)),
        "rename": p.op("rename", [x], ty("e=8, d=4, f32", renamed)),
    }, exact=True)


RESHAPES = [  # (mesh, operand layout, result layout): merges and splits laid out alike
    ("2", {"a": "x"}, {"ab": "x"}),
    ("2x2", {"a": "x", "c": "y"}, {"ab": "x", "c": "y"}),
    ("4x2", {"a": ("x", "y")}, {"ab": ("x", "y")}),
    ("2x2", {"a": ("x", "y"), "b": ()}, {"ab": ("x", "y")}),
]


@pytest.mark.parametrize("mesh,src,dst", RESHAPES, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(RESHAPES)])
def test_reshape_merge_and_split(mesh, src, dst):
    p = Prog(mesh)
    x = p.arg("x", ty("a=8, b=3, c=2, f32", src))
    merged = p.op("reshape", [x], ty("ab=24, c=2, f32", dst))
    check(p, {"merged": merged, "split": p.op("reshape", [merged], ty("a=8, b=3, c=2, f32", src))}, exact=True)


ALONG_D = [("2", {"b": "x"}), ("2x2", {"b": ("x", "y")}), ("4x2", {"b": ("y", "x")}), ("4", {"b": "x"})]


@pytest.mark.parametrize("elem", ["f32", "i32"])
@pytest.mark.parametrize("mesh,layout", ALONG_D, ids=_ids(ALONG_D))
def test_slice_concat_pad_shift_along_a_whole_dim(mesh, layout, elem):
    p = Prog(mesh)
    x = p.arg("x", ty(f"b=8, d=6, {elem}", layout))
    sliced = p.op("slice", [x], ty(f"b=8, d=3, {elem}", layout), 'dim = "d", start = 2')
    results = {
        "slice": sliced,
        "concat": p.op("concat", [x, sliced, x], ty(f"b=8, d=15, {elem}", layout), 'dim = "d"'),
        "pad": p.op("pad", [x], ty(f"b=8, d=9, {elem}", layout), 'dim = "d", low = 1, high = 2, value = 2.5'),
    }
    for name, attrs in [("shift_fill", "offset = 2, fill = -1.0"), ("shift_back", "offset = -1"),
                        ("shift_wrap", "offset = -4, wrap = true"), ("shift_all", "offset = 7, fill = 3.0")]:
        results[name] = p.op("shift", [x], ty(f"b=8, d=6, {elem}", layout), f'dim = "d", {attrs}')
    check(p, results, exact=True)


# -- creation ------------------------------------------------------------------------------------
CREATE_LAYOUTS = [("2", {"b": "x"}), ("4", {"d": "x"}), ("2x2", {"b": "y", "d": "x"}), ("4x2", {"b": ("x", "y")}),
                  ("4x2", {"b": ("y", "x"), "d": ()})]


def _dense(values: np.ndarray, elem: str) -> str:
    text = np.array2string(values, separator=", ", threshold=np.inf).replace("\n", "")
    text = text.replace("True", "true").replace("False", "false")
    mlir_elem = "f32" if elem == "bf16" else elem
    return f"dense<{text}> : tensor<{'x'.join(map(str, values.shape))}x{mlir_elem}>"


@pytest.mark.parametrize("mesh,layout", CREATE_LAYOUTS, ids=_ids(CREATE_LAYOUTS))
def test_constants_and_iota(mesh, layout):
    p = Prog(mesh)
    rng = np.random.default_rng(3)
    results = {}
    for elem, values in [("f32", rng.normal(size=(8, 4)).astype(np.float32)), ("bf16", rng.normal(size=(8, 4)).astype(np.float32)),
                         ("i32", rng.integers(-9, 9, (8, 4)).astype(np.int32)), ("i1", rng.random((8, 4)) < 0.5)]:
        results[f"dense_{elem}"] = p.op("constant", [], ty(f"b=8, d=4, {elem}", layout), f"value = {_dense(values, elem)}")
    results["splat"] = p.op("constant", [], ty("b=8, d=4, f32", layout), "value = 1.5 : f64")
    results["splat_dense"] = p.op("constant", [], ty("b=8, d=4, i32", layout), "value = dense<7> : tensor<8x4xi32>")
    for elem in ("i32", "f32", "bf16", "i64"):
        results[f"iota_b_{elem}"] = p.op("iota", [], ty(f"b=8, d=4, {elem}", layout), 'dim = "b"')
    results["iota_d"] = p.op("iota", [], ty("b=8, d=4, f32", layout), 'dim = "d"')
    check(p, results, exact=True)


@pytest.mark.parametrize("mesh,layout", CREATE_LAYOUTS, ids=_ids(CREATE_LAYOUTS))
def test_random_is_the_interpreters(mesh, layout):
    """Uniform bit for bit in every float type; normal to a few ulps (log1p and cos)."""
    p = Prog(mesh)
    results = {f"uniform_{e}": p.op("random_uniform", [], ty(f"b=8, d=4, {e}", layout), "seed = 7, minval = -2.0, maxval = 3.0")
               for e in ("f32", "bf16", "f16", "f64")}
    results["uniform_unit"] = p.op("random_uniform", [], ty("b=8, d=4, c=3, f32", layout), "seed = 123456789")
    check(p, results, exact=True)
    p = Prog(mesh)
    results = {f"normal_{e}": p.op("random_normal", [], ty(f"b=8, d=4, {e}", layout), "seed = 5, mean = 1.0, stddev = 2.0")
               for e in ("f32", "bf16", "f64")}
    check(p, results, rtol=1e-5, atol=1e-5)


# -- indexing --------------------------------------------------------------------------------------
ONE_HOT = [("2", {"b": "x"}), ("2", {"k": "x"}), ("2x2", {"b": "x", "k": "y"}), ("4x2", {"k": ("x", "y")})]


@pytest.mark.parametrize("mesh,layout", ONE_HOT, ids=_ids(ONE_HOT))
def test_one_hot_with_split_depth(mesh, layout):
    p = Prog(mesh)
    ids = p.arg("ids", ty("b=8, s=2, i32", layout))
    check(p, {"f32": p.op("one_hot", [ids], ty("b=8, k=8, s=2, f32", layout)),
              "i1": p.op("one_hot", [ids], ty("k=8, s=2, b=8, i1", layout))}, exact=True, low=-1, high=9)


GATHERS = [("2", {"v": "x"}), ("2", {"b": "x"}), ("2x2", {"v": "x", "e": "y"}), ("2x2", {"v": ("y", "x")}),
           ("4x2", {"b": "x", "e": "y"}), ("4x2", {"v": ("x", "y")}), ("4", {"e": "x"})]


@pytest.mark.parametrize("elem", ["f32", "i64"])
@pytest.mark.parametrize("mesh,layout", GATHERS, ids=_ids(GATHERS))
def test_gather_rows_from_a_table_split_or_not(mesh, layout, elem):
    """Split vocabulary: each device looks up its rows, zeros elsewhere, then all_reduce."""
    p = Prog(mesh)
    table = p.arg("table", ty(f"v=8, e=4, {elem}", layout))
    ids = p.arg("ids", ty("b=8, i32", layout))
    out = ty(f"b=8, e=4, {elem}", layout)
    rows = p.op("gather", [table, ids], ty(f"b=8, e=4, {elem}", layout, partial_over(layout, "v")), 'dim = "v"')
    check(p, {"rows": reduced(p, rows, out, layout, "v")}, exact=True, low=-1, high=9)


# -- collectives ---------------------------------------------------------------------------------------
def _chain(p: Prog, x, steps):
    """Apply collectives one after another; `steps` are (op, attrs, result layout)."""
    results = {}
    for i, (name, attrs, layout) in enumerate(steps):
        x = p.op(name, [x], ty("b=8, d=8, f32", layout), attrs)
        results[f"{i}_{name}"] = x
    return results


GATHER_SLICE = [
    ("2", {"b": "x"}, [("all_gather", 'dim = "b", axes = ["x"]', {}), ("all_slice", 'dim = "d", axes = ["x"]', {"d": "x"})]),
    ("2x2", {"b": ("x", "y")}, [("all_gather", 'dim = "b", axes = ["y"]', {"b": "x"}),
                                ("all_slice", 'dim = "d", axes = ["y"]', {"b": "x", "d": "y"}),
                                ("all_gather", 'dim = "b", axes = ["x"]', {"d": "y"})]),
    ("2x2", {"b": ("y", "x")}, [("all_gather", 'dim = "b", axes = ["y", "x"]', {}),
                                ("all_slice", 'dim = "b", axes = ["y", "x"]', {"b": ("y", "x")})]),
    ("4x2", {"b": ("x", "y")}, [("all_gather", 'dim = "b", axes = ["y"]', {"b": "x"}),
                                ("all_slice", 'dim = "d", axes = ["y"]', {"b": "x", "d": "y"}),
                                ("all_gather", 'dim = "d", axes = ["y"]', {"b": "x"}),
                                ("all_gather", 'dim = "b", axes = ["x"]', {}),
                                ("all_slice", 'dim = "b", axes = ["y", "x"]', {"b": ("y", "x")})]),
    ("4", {"d": "x"}, [("all_gather", 'dim = "d", axes = ["x"]', {}), ("all_slice", 'dim = "b", axes = ["x"]', {"b": "x"})]),
]
TO_ALL = [
    ("2", {"b": "x"}, [("all_to_all", 'src_dim = "b", dst_dim = "d", axes = ["x"]', {"d": "x"})]),
    ("2x2", {"b": ("x", "y")}, [("all_to_all", 'src_dim = "b", dst_dim = "d", axes = ["y"]', {"b": "x", "d": "y"}),
                                ("all_to_all", 'src_dim = "b", dst_dim = "d", axes = ["x"]', {"d": ("y", "x")})]),
    ("4x2", {"b": "x", "d": "y"}, [("all_to_all", 'src_dim = "b", dst_dim = "d", axes = ["x"]', {"d": ("y", "x")}),
                                   ("all_to_all", 'src_dim = "d", dst_dim = "b", axes = ["y", "x"]', {"b": ("y", "x")})]),
]
PERMUTES = [
    ("2x2", {"b": "x", "d": "y"}, [("collective_permute", "", {"b": "y", "d": "x"})]),
    ("2x2", {"b": ("x", "y")}, [("collective_permute", "", {"b": ("y", "x")})]),
    ("2x2", {"b": "x"}, [("collective_permute", "", {"b": "y"}), ("collective_permute", "", {"b": "x"})]),
    ("4x2", {"b": ("x", "y")}, [("collective_permute", "", {"b": ("y", "x")})]),
]
MOVES = GATHER_SLICE + TO_ALL + PERMUTES


@pytest.mark.parametrize("mesh,layout,steps", MOVES, ids=[f"{m}-{s[0][0]}-{i}" for i, (m, _, s) in enumerate(MOVES)])
def test_data_movement_collectives(mesh, layout, steps):
    p = Prog(mesh)
    check(p, _chain(p, p.arg("x", ty("b=8, d=8, f32", layout)), steps), exact=True)


SCATTERS = [("2", {}, "x", "d"), ("2x2", {"b": "x"}, "y", "b"), ("2x2", {"d": "y"}, "x", "b"), ("4x2", {"b": "y"}, "x", "d"),
            ("4x2", {}, ("x", "y"), "b")]


@pytest.mark.parametrize("kind", ["sum", "max"])
@pytest.mark.parametrize("mesh,layout,axes,dim", SCATTERS, ids=[f"{m}-{d}-{i}" for i, (m, _, _, d) in enumerate(SCATTERS)])
def test_reduce_scatter_of_a_partial_reduction(mesh, layout, axes, dim, kind):
    """reduce over k split over `axes`, then reduce_scatter onto `dim`."""
    p = Prog(mesh)
    lay_k = {**layout, "k": axes}
    x = p.arg("x", ty("b=8, k=8, d=8, f32", lay_k))
    keyword = {"sum": "partial", "max": "partial_max"}[kind]
    part = p.op(f"reduce_{kind}", [x], ty("b=8, d=8, f32", layout, partial_over(lay_k, "k", keyword)))
    axes_t = (axes,) if isinstance(axes, str) else axes
    scattered = {**layout, dim: tuple(split_axes(layout, dim)) + axes_t}
    out = p.op("reduce_scatter", [part], ty("b=8, d=8, f32", scattered), f'reduction = "{kind}", dim = "{dim}", axes = {axes_attr(axes)}')
    check(p, {"scattered": out})


# -- scalars, functions without a mesh, other element types ---------------------------------------
def test_scalars_random_and_reductions_to_a_scalar():
    p = Prog("4x2")
    x = p.arg("x", ty("b=8, d=4, f32", {"b": ("x", "y")}))
    ids = p.arg("ids", ty("i32"))
    table = p.arg("table", ty("v=8, e=4, f32", {"v": "x", "e": "y"}))
    total = p.op("reduce_sum", [x], ty("f32", {}, "partial@(x,y)"))
    rows = p.op("gather", [table, ids], ty("e=4, f32", {"e": "y"}, "partial@x"), 'dim = "v"')
    check(p, {
        "total": p.op("all_reduce", [total], ty("f32"), 'reduction = "sum", axes = ["x", "y"]'),
        "scaled": p.op("mul", [x, p.op("constant", [], ty("f32"), "value = 2.0")], ty("b=8, d=4, f32", {"b": ("x", "y")})),
        "random": p.op("random_uniform", [], ty("f32"), "seed = 3"),
        "row": p.op("all_reduce", [rows], ty("e=4, f32", {"e": "y"}), 'reduction = "sum", axes = ["x"]'),
        "hot": p.op("one_hot", [ids], ty("k=8, i32", {"k": "x"})),
        "same": x,
    }, inputs={"ids": np.array(5, np.int32)})


def test_function_without_a_mesh_runs_on_one_device():
    t = "!mtf.tensor<b=4, d=3, f32>"
    text = (f'func.func @f(%a: {t} {{mtf.name = "a"}}) -> ({t}, !mtf.tensor<d=3, f32>) {{\n'
            f'  %0 = "mtf.tanh"(%a) : ({t}) -> {t}\n'
            f'  %1 = "mtf.reduce_sum"(%0) : ({t}) -> !mtf.tensor<d=3, f32>\n'
            f"  return %0, %1 : {t}, !mtf.tensor<d=3, f32>\n}}\n")
    check_text(text, {})


@pytest.mark.parametrize("elem", ["f16", "i64", "f64"])
def test_other_element_types_through_collectives(elem):
    p = Prog("4x2")
    x = p.arg("x", ty(f"b=8, k=8, {elem}", {"b": "x", "k": "y"}))
    part = p.op("reduce_sum", [x], ty(f"b=8, {elem}", {"b": "x"}, "partial@y"))
    summed = p.op("all_reduce", [part], ty(f"b=8, {elem}", {"b": "x"}), 'reduction = "sum", axes = ["y"]')
    check(p, {"gathered": p.op("all_gather", [summed], ty(f"b=8, {elem}"), 'dim = "b", axes = ["x"]'),
              "moved": p.op("all_to_all", [x], ty(f"b=8, k=8, {elem}", {"b": ("x", "y")}), 'src_dim = "k", dst_dim = "b", axes = ["y"]')},
          low=-3, high=3)


FFN = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @ffn(%x: !mtf.tensor<batch=8, d_model=16, f32> {mtf.name = "x"}, %w1: !mtf.tensor<d_model=16, d_ff=32, f32> {mtf.name = "w1"},
               %w2: !mtf.tensor<d_ff=32, d_model=16, f32> {mtf.name = "w2"}) -> (!mtf.tensor<batch=8, d_model=16, f32> {mtf.name = "y"})
    attributes {mtf.mesh = @mesh, mtf.layout_rules = {batch = [RULE_B], d_ff = [RULE_F]}} {
  %0 = "mtf.einsum"(%x, %w1) : (!mtf.tensor<batch=8, d_model=16, f32>, !mtf.tensor<d_model=16, d_ff=32, f32>) -> !mtf.tensor<batch=8, d_ff=32, f32>
  %1 = "mtf.relu"(%0) : (!mtf.tensor<batch=8, d_ff=32, f32>) -> !mtf.tensor<batch=8, d_ff=32, f32>
  %2 = "mtf.einsum"(%1, %w2) : (!mtf.tensor<batch=8, d_ff=32, f32>, !mtf.tensor<d_ff=32, d_model=16, f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
  %3 = "mtf.reduce_sum"(%2) : (!mtf.tensor<batch=8, d_model=16, f32>) -> !mtf.tensor<batch=8, f32>
  %4 = "mtf.broadcast"(%3) : (!mtf.tensor<batch=8, f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
  %5 = "mtf.sub"(%2, %4) : (!mtf.tensor<batch=8, d_model=16, f32>, !mtf.tensor<batch=8, d_model=16, f32>) -> !mtf.tensor<batch=8, d_model=16, f32>
  return %5 : !mtf.tensor<batch=8, d_model=16, f32>
}
"""


@pytest.mark.parametrize("batch,d_ff", [('"x"', '"y"'), ('"y"', '"x"'), ("", '"x", "y"')])
def test_propagate_insert_collectives_and_lower_a_feed_forward_block(batch, d_ff):
    """The whole pipeline on a global program: layouts from rules, collectives inserted,
    lowered, run on 8 devices."""
    text = FFN.replace("RULE_B", batch).replace("RULE_F", d_ff)
    # Sums of ~500 cancel to ~1: allow the rounding of the larger terms.
    check_text(text, {"x": 4, "y": 2}, pipeline="mtf-propagate-sharding, mtf-insert-collectives", atol=1e-3)


@pytest.mark.parametrize("mesh,lay", [("2x2", {"b": "x", "k": "y"}), ("4x2", {"k": ("x", "y")}), ("4", {"k": "x"})],
                         ids=["2x2", "4x2", "4"])
def test_linear_uses_keep_a_sum_pending_until_the_all_reduce(mesh, lay):
    """Each device works on its summand; the all_reduce at the end completes the sum."""
    p = Prog(mesh)
    pend = partial_over(lay, "k")
    a = p.arg("a", ty("b=8, k=8, f32", lay))
    c = p.arg("c", ty("b=8, f32", lay))
    s1 = p.op("reduce_sum", [a], ty("b=8, f32", lay, pend))
    s2 = p.op("einsum", [a, p.arg("w", ty("k=8, f32", lay))], ty("b=8, f32", lay, pend))
    v = p.op("add", [p.op("neg", [s1], ty("b=8, f32", lay, pend)), s2], ty("b=8, f32", lay, pend))
    v = p.op("mul", [v, c], ty("b=8, f32", lay, pend))
    v = p.op("div", [v, c], ty("b=8, f32", lay, pend))
    v = p.op("pad", [v], ty("b=10, f32", lay, pend), 'dim = "b", low = 1, high = 1') if "b" not in lay else v
    out_t = "b=10, f32" if "b" not in lay else "b=8, f32"
    v = p.op("broadcast", [v], ty(out_t.replace("b=", "e=2, b="), lay, pend))
    check(p, {"sum": reduced(p, v, ty(out_t.replace("b=", "e=2, b="), lay), lay, "k")}, low=0.5, high=2.0)
