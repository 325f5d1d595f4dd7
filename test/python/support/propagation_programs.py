"""One small program, written twice: StableHLO for Shardy and mtf for MeshIR (a test helper).

A case (`Case`) states a computation once, in the terms both sides share: named dims, the
shardings Shardy's test writes (Shardy's spelling, per dim), and ops. This module renders it:

- `stablehlo(case)`: the module `shardy_oracle.propagate` runs, and the dim names to read
  each value back with. dot_general's contracting and batching dims come from the names.
- `mtf_program(case, layouts)`: the mtf module, every value's type carrying `layouts` (one
  per value name); `written_layouts(case)` gives the translation of Shardy's annotations.
  With `uses`, the layout each op reads each operand in (Shardy's realisation,
  shardy_realisation.py), an `mtf.shard` converts an operand where it differs: then every
  op's operands already agree with it and MeshIR's propagation has nothing left to choose.

Per-dim sharding spelling (`T`, `shard`, `result=`): "?" open and empty (`{?}`, MeshIR: free),
"" closed and empty (`{}`, `@()`), "a" or "a,b" closed (`{"a", "b"}`, `@(a,b)`), "a,?" open
with axes (`{"a", ?}`; MeshIR's written layouts are closed, so `@a`).

Translation: an op's result sharding (`sdy.sharding_per_value`) is the layout written on the
op's result type (a user's sharding of the same priority as an argument's, as in Shardy);
`sdy.sharding_constraint` is `mtf.shard`; a function result's sharding is the layout written
on the returned value's type. `rename` exists only in mtf (a value's dims are named
once, so contracting a value with itself needs a second name): Shardy reads its operand.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import shardy_oracle as so

Dims = tuple[tuple[str, int], ...]  # (name, size), major to minor
PerDim = tuple  # per dim: None (free) or a tuple of mesh axes (() replicated)
VALUE_ATTR = "test.value_name"  # names an op's result in the mtf text (propagation keeps it)


@dataclass(frozen=True)
class Value:
    """A function argument: its dims and Shardy's per-dim spec (None: no `sdy.sharding`)."""

    dims: Dims
    spec: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Op:
    """One op defining the value `name`. `out`: result dims as the constructor got them;
    `spec`: the constraint (`shard`) or the op's result sharding (others), None if none."""

    name: str
    kind: str
    operands: tuple[str, ...]
    out: str = ""
    spec: tuple[str, ...] | None = None
    dim: str = ""  # concat's dim


@dataclass(frozen=True)
class Case:
    """A Shardy propagation test, translated. `source`: its file in Shardy's propagation
    tests; `returns`: (value, function result spec or None); `note`: how the translation
    departs from Shardy's test."""

    name: str
    source: str
    mesh: dict
    args: dict[str, Value]
    ops: tuple[Op, ...]
    returns: tuple[tuple[str, tuple[str, ...] | None], ...]
    note: str = ""
    dims: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "dims", _value_dims(self))

    def result_dims(self, i: int) -> Dims:
        return self.dims[self.returns[i][0]]


# -- writing cases ---------------------------------------------------------------------------
def dims_of(text: str) -> Dims:
    """`"i=8 k=16"` -> (("i", 8), ("k", 16))."""
    return tuple((n, int(s)) for n, s in (d.split("=") for d in text.split()))


def T(dims: str, *spec: str) -> Value:
    """An argument: `T("i=8 k=8", "a,?", "?")`; no spec: no `sdy.sharding`."""
    return Value(dims_of(dims), tuple(spec) if spec else None)


def add(name: str, lhs: str, rhs: str, result=None) -> Op:
    return Op(name, "add", (lhs, rhs), spec=result)


def dot(name: str, lhs: str, rhs: str, out: str, result=None) -> Op:
    """`out`: the result's dim names; names in both operands but not in `out` are contracted."""
    return Op(name, "dot", (lhs, rhs), out, result)


def broadcast(name: str, operand: str, out: str, result=None) -> Op:
    return Op(name, "broadcast", (operand,), out, result)


def concat(name: str, operands: list[str], dim: str, result=None) -> Op:
    return Op(name, "concat", tuple(operands), spec=result, dim=dim)


def shard(name: str, operand: str, *spec: str) -> Op:
    return Op(name, "shard", (operand,), spec=tuple(spec))


def rename(name: str, operand: str, out: str) -> Op:
    return Op(name, "rename", (operand,), out)


def _value_dims(case: Case) -> dict[str, Dims]:
    dims = {n: v.dims for n, v in case.args.items()}
    for op in case.ops:
        first = dims[op.operands[0]]
        if op.kind in ("add", "shard"):
            dims[op.name] = first
        elif op.kind == "dot":
            size = dict(first + dims[op.operands[1]])
            dims[op.name] = tuple((n, size[n]) for n in op.out.split())
        elif op.kind == "broadcast":
            dims[op.name] = dims_of(op.out)
        elif op.kind == "rename":
            dims[op.name] = tuple(zip(op.out.split(), (s for _, s in first)))
        elif op.kind == "concat":
            total = sum(dict(dims[o])[op.dim] for o in op.operands)
            dims[op.name] = tuple((n, total if n == op.dim else s) for n, s in first)
        else:
            raise ValueError(f"unknown op kind {op.kind!r}")
    return dims


# -- Shardy's side ---------------------------------------------------------------------------
def oracle_spec(spec: str):
    """A per-dim spec as `shardy_oracle.dim_sharding` takes it."""
    if spec == "?":
        return None
    return tuple(spec.split(",")) if spec else ()


def aliases(case: Case) -> dict[str, str]:
    """{mtf-only value: the Shardy value it is} (renames, followed through)."""
    alias: dict[str, str] = {}
    for op in case.ops:
        if op.kind == "rename":
            alias[op.name] = alias.get(op.operands[0], op.operands[0])
    return alias


def stablehlo(case: Case) -> tuple[str, dict[str, list[str]]]:
    """(StableHLO text, {value: dim names}) for `shardy_oracle.propagate`."""
    alias, dims = aliases(case), case.dims
    args = {n: ([s for _, s in v.dims], None if v.spec is None else [oracle_spec(d) for d in v.spec])
            for n, v in case.args.items()}
    body = [_stablehlo_op(op, [alias.get(o, o) for o in op.operands], dims) for op in case.ops if op.kind != "rename"]
    returns = {alias.get(v, v): [s for _, s in dims[v]] for v, _ in case.returns}
    result_dims = {alias.get(v, v): [oracle_spec(d) for d in spec] for v, spec in case.returns if spec is not None}
    text = so.function(args, body, returns, mesh=case.mesh, result_dims=result_dims)
    read = {n: [d for d, _ in dims[n]] for n in [*case.args, *(op.name for op in case.ops if op.kind != "rename")]}
    read.update({f"result{i}": [d for d, _ in case.result_dims(i)] for i in range(len(case.returns))})
    return text, read


def _stablehlo_op(op: Op, operands: list[str], dims: dict[str, Dims]) -> str:
    result = so.tensor([s for _, s in dims[op.name]])
    types = [so.tensor([s for _, s in dims[o]]) for o in op.operands]
    names = [[n for n, _ in dims[o]] for o in op.operands]
    attr = ""
    if op.spec is not None and op.kind != "shard":
        spec = so.dims_sharding([oracle_spec(d) for d in op.spec])
        attr = " {sdy.sharding = #sdy.sharding_per_value<[<@mesh, " + spec + ">]>}"
    refs = ", ".join(f"%{o}" for o in operands)
    if op.kind == "add":
        return f"%{op.name} = stablehlo.add {refs}{attr} : {result}"
    if op.kind == "shard":
        shape = [s for _, s in dims[op.name]]
        return f"%{op.name} = " + so.constraint(operands[0], [oracle_spec(d) for d in op.spec], shape)
    if op.kind == "broadcast":
        kept = [[n for n, _ in dims[op.name]].index(n) for n in names[0]]
        return f"%{op.name} = stablehlo.broadcast_in_dim {refs}, dims = {kept}{attr} : ({types[0]}) -> {result}"
    if op.kind == "concat":
        along = names[0].index(op.dim)
        return f"%{op.name} = stablehlo.concatenate {refs}, dim = {along}{attr} : ({', '.join(types)}) -> {result}"
    lhs, rhs = names
    out = op.out.split()
    batch = [n for n in lhs if n in rhs and n in out]
    contracted = [n for n in lhs if n in rhs and n not in out]
    expected = batch + [n for n in lhs if n not in rhs] + [n for n in rhs if n not in lhs]
    if out != expected:
        raise ValueError(f"{op.name}: dot_general's result dims are batch, lhs free, rhs free: {expected}, not {out}")
    batching = f"batching_dims = {[lhs.index(n) for n in batch]} x {[rhs.index(n) for n in batch]}, " if batch else ""
    return (f"%{op.name} = stablehlo.dot_general {refs}, {batching}contracting_dims = "
            f"{[lhs.index(n) for n in contracted]} x {[rhs.index(n) for n in contracted]}{attr} : "
            f"({types[0]}, {types[1]}) -> {result}")


# -- MeshIR's side ---------------------------------------------------------------------------
def mtf_layout(spec: tuple[str, ...] | None, rank: int) -> PerDim:
    """Shardy's per-dim spec as a written mtf layout (open dims with axes become closed)."""
    if spec is None:
        return (None,) * rank
    return tuple(None if d == "?" else tuple(a for a in d.split(",") if a and a != "?") for d in spec)


def written_layouts(case: Case) -> dict[str, PerDim]:
    """The translation of Shardy's annotations: every value free but arguments, constraints,
    annotated ops' results and the returned values (merged with what they carry)."""
    out = {n: mtf_layout(v.spec, len(v.dims)) for n, v in case.args.items()}
    for op in case.ops:
        out[op.name] = mtf_layout(op.spec, len(case.dims[op.name]))
    for value, spec in case.returns:
        if spec is None:
            continue
        merged = []
        for have, want in zip(out[value], mtf_layout(spec, len(case.dims[value]))):
            if have is not None and want is not None and have != want:
                raise ValueError(f"{case.name}: {value} is annotated twice, differently")
            merged.append(want if have is None else have)
        out[value] = tuple(merged)
    return out


def mtf_type(dims: Dims, layout: PerDim) -> str:
    """`!mtf.tensor<i=8@a, k=8, f32>` (None: free; (): `@()`; several axes: `@(a,b)`)."""
    parts = []
    for (name, size), axes in zip(dims, layout):
        at = "" if axes is None else "@" + (axes[0] if len(axes) == 1 else "(" + ",".join(axes) + ")")
        parts.append(f"{name}={size}{at}")
    return "!mtf.tensor<" + ", ".join(parts + ["f32"]) + ">"


_MTF_OP = {"add": "mtf.add", "dot": "mtf.einsum", "broadcast": "mtf.broadcast", "concat": "mtf.concat",
           "shard": "mtf.shard", "rename": "mtf.rename"}


def mtf_program(case: Case, layouts: dict[str, PerDim], uses: dict | None = None,
                returned: list[PerDim] | None = None) -> str:
    """The case as mtf text, each value's type carrying `layouts[value]` (a rename: its
    operand's). With `uses` ({(op, operand index): layout}) and `returned` (per result),
    operands and results are converted by mtf.shard where their layout differs."""
    ssa: dict[str, tuple[str, PerDim]] = {}  # value -> (SSA name, layout) users see
    converted: dict[tuple[str, PerDim], str] = {}  # one mtf.shard per value and layout
    lines: list[str] = []

    def typed(value: str) -> str:
        return mtf_type(case.dims[value], ssa[value][1])

    def convert(value: str, layout: PerDim | None, ref: str) -> tuple[str, str]:
        if layout is None or layout == ssa[value][1]:
            return ssa[value][0], typed(value)
        want = mtf_type(case.dims[value], layout)
        if (value, layout) not in converted:
            lines.append(f'%{ref} = "mtf.shard"({ssa[value][0]}) : ({typed(value)}) -> {want}')
            converted[(value, layout)] = f"%{ref}"
        return converted[(value, layout)], want

    for name in case.args:
        ssa[name] = (f"%{name}", layouts[name])
    params = [f"%{name}: {typed(name)}" for name in case.args]
    for op in case.ops:
        refs, types = zip(*(convert(o, (uses or {}).get((op.name, i)), f"{op.name}_in{i}")
                            for i, o in enumerate(op.operands)))
        ssa[op.name] = (f"%{op.name}", ssa[op.operands[0]][1] if op.kind == "rename" else layouts[op.name])
        attrs = ([f'dim = "{op.dim}"'] if op.kind == "concat" else []) + [f'{VALUE_ATTR} = "{op.name}"']
        lines.append(f'%{op.name} = "{_MTF_OP[op.kind]}"({", ".join(refs)}) {{{", ".join(attrs)}}} : '
                     f'({", ".join(types)}) -> {typed(op.name)}')
    refs, types = zip(*(convert(v, returned[i] if returned else None, f"result{i}")
                        for i, (v, _) in enumerate(case.returns)))
    results, types = ", ".join(refs), ", ".join(types)
    return "\n".join([
        so.mesh_op(case.mesh),
        f"func.func @main({', '.join(params)}) -> ({types}) {{",
        *(f"  {line}" for line in lines),
        f"  return {results} : {types}",
        "}",
    ]) + "\n"
