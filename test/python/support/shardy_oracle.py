"""Shardy as an oracle for MeshIR's sharding propagation (a test helper, not a test file).

A test writes one computation twice: as a MeshIR program and as StableHLO text with Shardy's
annotations. This module runs Shardy's propagation on the text, in MeshIR's own MLIR context
(`meshir.dialect.get_context()`: jax's dialect registry is appended there, so every `sdy-*`
pass parses), and reads back the sharding of every value, by name:

- Values are named by MLIR name locations. `function()` adds them: a body line
  `%h = stablehlo.maximum ...` gets `loc("h")`, an argument `x` gets `loc("x")`. The
  function's results are `result0`, `result1`, ... (MeshIR's default result names).
- Positional dims become MeshIR names through a per-value list the test gives:
  `dims={"x": ["batch", "d_model"], "h": ["batch", "d_ff"]}`. Only listed values are read.
- A layout is `{dim name: tuple of mesh axes}`, major to minor, `()` for replicated: the
  form of MeshIR's `TensorType.layout`, so the two sides compare with `==`. A Shardy
  sub-axis (which MeshIR cannot express) reads as its printed form, `#sdy<axis_ref"x":(1)2>`.

Which stage is read: the module right after the propagation pipeline. Every value there
still carries a `#sdy.sharding`: op results (`sdy.sharding = #sdy.sharding_per_value<[..]>`),
function arguments and results (arg/res attributes), `sdy.reshard` ops (their `sharding`).
Turning them into `mhlo.sharding` strings is XLA's export (`xla-sdy-stablehlo-export-
pipeline`), which is not among jaxlib's Python-visible passes and is not run. A value no
sharding reached carries none: it is replicated.

Pipelines (`STRATEGIES`):
- "shardy": `sdy-propagation-pipeline`, what jax runs: import, `sdy-apply-sharding-
  constraints`, `sdy-user-priority-propagate` (user priorities > op priorities > the
  aggressive strategy), export (closes shardings; constraints become `sdy.reshard`).
- "aggressive" / "basic": the same stages spelled out, the propagation pass's
  `propagation-strategy` option set, so only conflict resolution differs. (The expanded
  `sdy-propagation-pipeline` cannot be re-parsed with another strategy: some of its stages,
  e.g. `sdy-save-module`, are not registered for parsing.)

`explicit_reshards=True` runs the pipeline a second time followed by
`sdy-insert-explicit-reshards{enable-full-version=true}`: Shardy's decision of *where*
layouts meet. It adds `sdy.reshard` / `sdy.all_reduce` ops and may change an op's own
sharding to the one it computes in, so `ShardyResult.layouts` come from the first run and
only `ShardyResult.reshards` from the second.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from meshir._jax_private import ir, passmanager, sdy
from meshir.dialect import get_context

MESH = {"x": 4, "y": 2}

Layout = dict[str, tuple[str, ...]]

_STAGED = (
    "sdy-import-pipeline,sdy-apply-sharding-constraints,"
    "sdy-user-priority-propagate{{propagation-strategy={strategy} keep-sharding-rules=true}},"
    "sdy-export-pipeline"
)
STRATEGIES = {
    "shardy": "sdy-propagation-pipeline",
    "aggressive": _STAGED.format(strategy="aggressive"),
    "basic": _STAGED.format(strategy="basic"),
}
# jaxlib 0.12's sdy-export-pipeline ends by inlining meshes, on which the explicit-reshard pass
# segfaults (MeshIR's upstream guard refuses it): lift them back to `sdy.mesh` symbols first.
EXPLICIT_RESHARDS = "sdy-lift-inlined-meshes,func.func(sdy-insert-explicit-reshards{enable-full-version=true})"
_COLLECTIVES = ("sdy.reshard", "sdy.all_reduce", "sdy.all_gather", "sdy.all_slice", "sdy.all_to_all",
                "sdy.collective_permute", "sdy.reduce_scatter")


# -- writing StableHLO with Shardy annotations ---------------------------------------------
def tensor(shape, element: str = "f32") -> str:
    """`tensor<32x16xf32>`."""
    return "tensor<" + "".join(f"{n}x" for n in shape) + element + ">"


def mesh_op(mesh: dict[str, int] = MESH, name: str = "mesh") -> str:
    """`sdy.mesh @mesh = <["x"=4, "y"=2]>`."""
    axes = ", ".join(f'"{a}"={n}' for a, n in mesh.items())
    return f"sdy.mesh @{name} = <[{axes}]>"


def dim_sharding(axes) -> str:
    """One dim as MeshIR states it: None (free) -> `{?}` (open: propagation may shard it);
    `()` -> `{}` (closed, replicated); "x" -> `{"x"}`; ("x", "y") -> `{"x", "y"}` (closed).
    A trailing "?" keeps Shardy's open form, which MeshIR has no spelling for: ("x", "?") ->
    `{"x", ?}` (sharded on x, and propagation may add minor axes)."""
    if axes is None:
        return "{?}"
    axes = (axes,) if isinstance(axes, str) else tuple(axes)
    is_open = bool(axes) and axes[-1] == "?"
    axes = axes[:-1] if is_open else axes
    return "{" + ", ".join([f'"{a}"' for a in axes] + (["?"] if is_open else [])) + "}"


def dims_sharding(dims) -> str:
    """`[{"x"}, {?}]` from per-dim specs (see `dim_sharding`)."""
    return "[" + ", ".join(dim_sharding(d) for d in dims) + "]"


def sharding(dims, mesh: str = "mesh") -> str:
    """`#sdy.sharding<@mesh, [{"x"}, {?}]>`."""
    return f"#sdy.sharding<@{mesh}, {dims_sharding(dims)}>"


def constraint(value: str, dims, shape, mesh: str = "mesh") -> str:
    """The body of `sdy.sharding_constraint %value <@mesh, [...]> : tensor<...>`: MeshIR's
    `mtf.shard` (dims it does not name stay open)."""
    return f"sdy.sharding_constraint %{value} <@{mesh}, {dims_sharding(dims)}> : {tensor(shape)}"


def function(args: dict, body: list[str], returns: dict, name: str = "main", mesh=MESH,
             result_dims: dict | None = None) -> str:
    """A module with the mesh and one function.

    `args`: {name: (shape, per-dim specs)} — the specs as `dim_sharding` takes them, or None
    for an argument without `sdy.sharding` (all dims open, like MeshIR's free argument);
    `body`: op lines `%v = ...`, each gets `loc("v")`; `returns`: {value: shape};
    `result_dims`: {returned value: per-dim specs} for results with an `sdy.sharding`
    (MeshIR's layout written on the returned type).
    """
    params = []
    for arg, (shape, dims) in args.items():
        attr = "" if dims is None else " {sdy.sharding = " + sharding(dims) + "}"
        params.append(f'%{arg}: {tensor(shape)}{attr} loc("{arg}")')
    lines = []
    for line in body:
        match = re.match(r"\s*%([A-Za-z_][A-Za-z0-9_]*)\s*=", line)
        lines.append(f'  {line.strip()} loc("{match.group(1)}")' if match else f"  {line.strip()}")
    result_dims = result_dims or {}
    results = ", ".join(tensor(s) + (" {sdy.sharding = " + sharding(result_dims[v]) + "}" if v in result_dims else "")
                        for v, s in returns.items())
    types = ", ".join(tensor(s) for s in returns.values())
    values = ", ".join(f"%{v}" for v in returns)
    return "\n".join([
        mesh_op(mesh),
        f"func.func @{name}({', '.join(params)}) -> ({results}) {{",
        *lines,
        f"  return {values} : {types}",
        "}",
    ])


# -- running Shardy ------------------------------------------------------------------------
def run_pipeline(text: str, pipeline: str):
    """Parse `text` in MeshIR's context and run `builtin.module(<pipeline>)` on it."""
    with get_context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse(f"builtin.module({pipeline})").run(module.operation)
    return module


@dataclass(frozen=True)
class Reshard:
    """A layout change inserted between ops: the named value `value` (followed through
    earlier reshards) goes from `src` to `dst` by `kind` (`mtf.shard`, `sdy.reshard`,
    `sdy.all_reduce` — which completes a pending sum over `axes`)."""

    value: str
    src: Layout
    dst: Layout
    kind: str
    axes: tuple[str, ...] = ()


@dataclass
class ShardyResult:
    layouts: dict[str, Layout]
    reshards: list[Reshard] = field(default_factory=list)
    text: str = ""

    def __getitem__(self, name: str) -> Layout:
        return self.layouts[name]


def propagate(text: str, dims: dict[str, list[str]], strategy: str = "shardy",
              explicit_reshards: bool = False) -> ShardyResult:
    """Run Shardy on `text`; the layout of every value named in `dims`."""
    with get_context():
        result = _read(run_pipeline(text, STRATEGIES[strategy]), dims)
        if explicit_reshards:
            module = run_pipeline(text, STRATEGIES[strategy] + "," + EXPLICIT_RESHARDS)
            result.reshards = _read(module, dims).reshards
    return result


def _loc_name(loc) -> str | None:
    match = re.match(r'loc\("([^"]*)"', str(loc))
    return match.group(1) if match else None


def _axis_name(axis) -> str:
    a = sdy.AxisRefAttr(axis)
    return a.name if a.sub_axis_info is None else str(axis)


def _layout(attr, names: list[str]) -> Layout:
    dims = sdy.TensorShardingAttr(attr).dimension_shardings
    axes = [tuple(_axis_name(a) for a in sdy.DimensionShardingAttr(d).axes) for d in dims]
    if len(axes) != len(names):
        raise ValueError(f"sharding {attr} has {len(axes)} dims, names given: {names}")
    return dict(zip(names, axes))


def _layout_or_replicated(attr, names: list[str]) -> Layout:
    return _layout(attr, names) if attr is not None else {n: () for n in names}


def _attr_sharding(attrs_array, i: int):
    if attrs_array is None:
        return None
    attrs = ir.DictAttr(attrs_array[i])
    return attrs["sdy.sharding"] if "sdy.sharding" in attrs else None


def _read(module, dims: dict[str, list[str]]) -> ShardyResult:
    fn = next(op for op in module.body.operations if op.operation.name == "func.func")
    block = fn.regions[0].blocks[0]
    layouts: dict[str, Layout] = {}
    reshards: list[Reshard] = []
    name_of: dict = {}  # ir.Value -> the name of the value it is a (resharded) copy of
    layout_of: dict = {}  # ir.Value -> its layout, for values of listed names

    def record(value, name, attr):
        name_of[value] = name
        if name in dims:
            layout_of[value] = _layout_or_replicated(attr, dims[name])

    arg_attrs = fn.attributes["arg_attrs"] if "arg_attrs" in fn.attributes else None
    for i, arg in enumerate(block.arguments):
        name = _loc_name(arg.location) or f"arg{i}"
        record(arg, name, _attr_sharding(arg_attrs, i))
        if name in dims:
            layouts[name] = layout_of[arg]
    for op in block.operations:
        opname = op.operation.name
        if opname == "func.return":
            res_attrs = fn.attributes["res_attrs"] if "res_attrs" in fn.attributes else None
            for i in range(len(op.operation.operands)):
                if f"result{i}" in dims:
                    layouts[f"result{i}"] = _layout_or_replicated(_attr_sharding(res_attrs, i), dims[f"result{i}"])
            continue
        if opname in _COLLECTIVES:
            source = op.operation.operands[0]
            name, own = name_of.get(source), _loc_name(op.location)
            attr = op.operation.attributes["sharding" if opname == "sdy.reshard" else "out_sharding"]
            if own is not None and own != name and own in dims and own not in layouts:
                # A user's sharding constraint (the export made it a reshard) is a value of
                # its own; reshards Shardy inserts carry their source's or consumer's loc.
                record(op.result, own, attr)
                layouts[own] = layout_of[op.result]
                continue
            record(op.result, name, attr)
            if name in dims:
                axes = ()
                if "reduction_axes" in op.operation.attributes:
                    axes = tuple(re.findall(r'"([^"]+)"', str(op.operation.attributes["reduction_axes"])))
                reshards.append(Reshard(name, layout_of[source], layout_of[op.result], opname, axes))
            continue
        per_value = op.operation.attributes["sdy.sharding"] if "sdy.sharding" in op.operation.attributes else None
        shardings = sdy.TensorShardingPerValueAttr(per_value).shardings if per_value is not None else None
        base = _loc_name(op.location)
        for i, result in enumerate(op.operation.results):
            name = base if len(op.operation.results) == 1 else f"{base}#{i}"
            record(result, name, shardings[i] if shardings is not None else None)
            if name in dims:
                layouts[name] = layout_of[result]
    return ShardyResult(layouts, reshards, module.operation.get_asm(enable_debug_info=False))
