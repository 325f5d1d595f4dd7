"""Collectives read from compiled (post-partitioning, per-device) HLO text, with the bytes
each sends per device.

Every `all-reduce`, `all-gather`, `reduce-scatter`, `all-to-all` and `collective-permute`
instruction (and the `-start` halves of their async forms; `-done` halves are skipped) is
parsed for its result shape, its operands' shapes (looked up by name in the same
computation) and its replica groups (`{{0,1},{2,3}}`, the iota form `[4,2]<=[2,4]T(1,0)`, or
`{}` = all partitions, or Shardy's `mesh['x'=4,'y'=2] {'x'}`). Bytes per device use the ring
formulas of MeshIR's planner (the collective classes of dialect/ops/collectives.py, which the
cost model reads), with B the bytes of one device's operand and n the group size:

    all-reduce          2 (n-1)/n B
    all-gather          (n-1) B
    reduce-scatter      (n-1)/n B
    all-to-all          (n-1)/n B
    collective-permute  B if some device sends to another device, else 0

`summarize` counts a collective inside a loop body once (the benchmark cases have no loops);
given `computation_repeats(hlo_text)` it counts it once per iteration, from the trip count
XLA records on each `while` (`known_trip_count`; XLA:TPU records none, so there the count is
read from the loop's condition, body and initial tuple), nested loops multiplied.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field

import numpy as np

from meshir.dialect.ops import OP_CLASSES

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")

ELEMENT_BYTES = {
    "pred": 1, "s8": 1, "u8": 1, "f8e4m3fn": 1, "f8e5m2": 1, "s4": 1, "u4": 1,
    "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "f32": 4,
    "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
}

_ARRAY = re.compile(r"\b([a-z][a-z0-9]*)\[([0-9,]*)\]")
# "%name = <shape> <opcode>(<operands>), attrs"  (the shape may be a tuple "(f32[..], ...)")
_INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.+?)\s+([a-z][a-z0-9\-]*)\((.*)$")
_COMPUTATION = re.compile(r"^\s*(?:ENTRY\s+)?%?([\w.\-]+)\s*\((.*)\)\s*->\s*.*\{\s*$")
_PARAM = re.compile(r"([\w.\-]+):\s*((?:\([^)]*\))|(?:[a-z][a-z0-9]*\[[0-9,]*\](?:\{[^}]*\})?))")
_NUM_PARTITIONS = re.compile(r"num_partitions=(\d+)")


def shape_bytes(shape_text: str) -> int:
    """Bytes of an HLO shape (an array or a tuple of arrays); tokens and opaque count 0."""
    total = 0
    for elem, dims in _ARRAY.findall(shape_text):
        if elem not in ELEMENT_BYTES:
            continue
        total += math.prod(int(d) for d in dims.split(",") if d) * ELEMENT_BYTES[elem]
    return total


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split at `sep` outside any brackets."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _operands_and_attrs(rest: str) -> tuple[list[str], str]:
    """`rest` is what follows the opcode's '(': the operand list up to its matching ')', then attributes."""
    depth = 1
    for i, ch in enumerate(rest):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return _split_top(rest[:i]), rest[i + 1:]
    return _split_top(rest), ""


def _attr(attrs: str, key: str) -> str | None:
    """The value of `key=` in an attribute list (balanced braces/brackets kept whole)."""
    m = re.search(r"\b" + re.escape(key) + r"=", attrs)
    if not m:
        return None
    value = _split_top(attrs[m.end():])
    return value[0] if value else None


_MESH_GROUPS = re.compile(r"replica_groups=mesh\[([^\]]*)\](?:,\s*device_ids=\((?:[^()]|\([^()]*\))*\))?\s*\{([^}]*)\}")


def replica_group_shape(attrs: str, num_partitions: int) -> tuple[int, int]:
    """(devices per group, number of groups) of a collective's `replica_groups`, in any of
    XLA's forms: explicit `{{0,1},{2,3}}`, iota `[2,4]<=[4,2]T(1,0)`, mesh axes
    `mesh['a'=4,'b'=2] {'b'}` (sub-axes `'b':(1)2`), or absent / `{}` (all partitions)."""
    m = _MESH_GROUPS.search(attrs)
    if m:
        sizes = {k.strip("'\" "): int(v) for k, v in re.findall(r"([^,=]+)=(\d+)", m.group(1))}
        n = 1
        for axis in _split_top(m.group(2)):
            sub = re.match(r"(.+?):\((\d+)\)(\d+)$", axis)
            n *= int(sub.group(3)) if sub else sizes[axis.strip("'\" ")]
        total = math.prod(sizes.values())
        return n, total // n
    text = _attr(attrs, "replica_groups")
    if text is None or text.strip() in ("{}", ""):
        return num_partitions, 1
    text = text.strip()
    if text.startswith("{"):
        groups = re.findall(r"\{([0-9,\s]*)\}", text[1:-1])
        return len([v for v in groups[0].split(",") if v.strip()]), len(groups)
    m = re.match(r"\[(\d+),(\d+)\]<=", text)
    if not m:
        raise ValueError(f"unrecognised replica groups {text!r}")
    return int(m.group(2)), int(m.group(1))


@dataclass
class HloCollective:
    kind: str                   # one of KINDS
    name: str                   # the HLO instruction name
    computation: str
    result_shape: str
    operand_shapes: list[str]
    group_size: int
    num_groups: int
    operand_bytes: int          # B: bytes of one device's operands
    bytes_per_device: int
    groups: list | None = field(default=None, repr=False)  # device groups (permute: pairs); None: mesh form

    def to_json(self) -> dict:
        out = asdict(self)
        del out["groups"]
        return out


def replica_groups(attrs: str, num_partitions: int) -> list[list[int]] | None:
    """The device groups of `replica_groups` in the explicit, iota or absent form (None for
    the mesh-axes form, whose device order this parser does not know)."""
    if _MESH_GROUPS.search(attrs):
        return None
    text = (_attr(attrs, "replica_groups") or "").strip()
    if text in ("{}", ""):
        return [list(range(num_partitions))]
    if text.startswith("{"):
        return [[int(v) for v in g.split(",") if v.strip()] for g in re.findall(r"\{([0-9,\s]*)\}", text[1:-1])]
    m = re.match(r"\[(\d+),(\d+)\]<=\[([0-9,]+)\](?:T\(([0-9,]+)\))?", text)
    dims = [int(d) for d in m.group(3).split(",")]
    ids = np.arange(math.prod(dims)).reshape(dims)
    if m.group(4):
        ids = ids.transpose([int(a) for a in m.group(4).split(",")])
    return ids.reshape(int(m.group(1)), int(m.group(2))).tolist()


#: The mtf collective class of each HLO collective: its ring formula (`ring_bytes`,
#: dialect/ops/collectives.py) is the one the cost model prices MeshIR's collectives with.
_CLASSES = {cls.kind().replace("_", "-"): cls for cls in OP_CLASSES.values() if cls.IS_COLLECTIVE}


def collective_bytes(kind: str, operand_bytes: int, n: int, sends: bool = True) -> int:
    """Bytes one device sends: MeshIR's own ring formulas (the collective classes')."""
    if kind not in KINDS:
        raise ValueError(kind)
    if kind == "collective-permute" and not sends:
        return 0
    return _CLASSES[kind].ring_bytes(operand_bytes, n)


def _operand_bytes_from_result(kind: str, result_bytes: int, n: int) -> int:
    if kind == "all-gather":
        return result_bytes // n
    if kind == "reduce-scatter":
        return result_bytes * n
    return result_bytes


def _instructions(hlo_text: str):
    """(partitions, computation, shapes, name, shape, opcode, rest) of every instruction of
    the HLO module(s) in `hlo_text`, in order: `partitions` the module's num_partitions,
    `shapes` the shapes by name of the computation's parameters and instructions so far
    (an instruction's operands are named, not shaped, in compiled HLO)."""
    partitions, computation, shapes = 1, "", {}
    for line in hlo_text.splitlines():
        m = _NUM_PARTITIONS.search(line)
        if line.startswith("HloModule") and m:
            partitions = int(m.group(1))
        m = _COMPUTATION.match(line)
        if m and "=" not in line.split("(")[0]:
            computation, shapes = m.group(1), dict(_PARAM.findall(m.group(2)))
            continue
        m = _INSTR.match(line)
        if m:
            name, shape, opcode, rest = m.groups()
            shapes[name] = shape
            yield partitions, computation, shapes, name, shape, opcode, rest


def _operand_names(operands: list[str]) -> list[str]:
    return [o.split()[-1].lstrip("%") for o in operands]


def parse_collectives(hlo_text: str) -> list[HloCollective]:
    """Every collective instruction of every computation of the HLO module(s) in `hlo_text`."""
    found = []
    for partitions, computation, shapes, name, shape, opcode, rest in _instructions(hlo_text):
        kind = opcode[:-len("-start")] if opcode.endswith("-start") else opcode
        if kind not in KINDS:
            continue
        operands, attrs = _operands_and_attrs(rest)
        operand_shapes = [shapes.get(o, "") for o in _operand_names(operands)]
        result_bytes = shape_bytes(shape)
        if opcode.endswith("-start") and shape.startswith("("):
            # async start: the result tuple holds (operands..., results..., contexts); use operands
            result_bytes = shape_bytes(_split_top(shape[1:-1])[-1]) if kind != "collective-permute" else result_bytes
        if kind == "collective-permute":
            pairs = re.findall(r"\{(\d+),(\d+)\}", _attr(attrs, "source_target_pairs") or "")
            groups = [[int(a), int(b)] for a, b in pairs]
            n, num_groups = 2, len(groups)
            sends = any(a != b for a, b in groups)
        else:
            (n, num_groups), sends = replica_group_shape(attrs, partitions), True
            groups = replica_groups(attrs, partitions)
        b = sum(shape_bytes(s) for s in operand_shapes) if all(operand_shapes) else 0
        if not b:
            b = _operand_bytes_from_result(kind, result_bytes, n)
        found.append(HloCollective(kind, name, computation, shape, operand_shapes, n, num_groups, b,
                                   collective_bytes(kind, b, n, sends), groups))
    return found


_CALLEE = re.compile(r"\b(body|condition|to_apply|calls|true_computation|false_computation)=%?([\w.\-]+)")
_BRANCHES = re.compile(r"\bbranch_computations=\{([^}]*)\}")
_TRIP_COUNT = re.compile(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(\d+)')


def _instruction_tables(hlo_text: str) -> tuple[dict, dict]:
    """Each computation's instructions by name, as (opcode, operands, attributes), and the
    name of each computation's ROOT."""
    tables: dict[str, dict[str, tuple[str, list[str], str]]] = {}
    roots: dict[str, str] = {}
    computation = ""
    for line in hlo_text.splitlines():
        m = _COMPUTATION.match(line)
        if m and "=" not in line.split("(")[0]:
            computation = m.group(1)
            continue
        m = _INSTR.match(line)
        if m:
            name, _, opcode, rest = m.groups()
            operands, attrs = _operands_and_attrs(rest)
            tables.setdefault(computation, {})[name] = (opcode, operands, attrs)
            if line.lstrip().startswith("ROOT"):
                roots[computation] = name
    return tables, roots


_PASS_THROUGH = ("copy", "bitcast", "convert", "reshape")


def _source(table: dict, name: str) -> tuple | None:
    """The instruction `name` stands for, through copies, bitcasts and converts."""
    op = table.get(name)
    while op is not None and op[0] in _PASS_THROUGH and op[1]:
        op = table.get(_operand_names(op[1])[0])
    return op


def _integer_constant(table: dict, name: str) -> int | None:
    op = _source(table, name)
    if op is None or op[0] != "constant" or not op[1] or not re.fullmatch(r"-?\d+", op[1][0].strip()):
        return None
    return int(op[1][0])


def _tuple_index(table: dict, name: str) -> int | None:
    """k when `name` is element k of its computation's parameter tuple."""
    op = _source(table, name)
    found = re.search(r"\bindex=(\d+)", op[2]) if op is not None and op[0] == "get-tuple-element" else None
    return int(found.group(1)) if found else None


def inferred_trip_count(tables: dict, roots: dict, computation: str, while_name: str) -> int | None:
    """The trip count of a `while` that records none (XLA:TPU's compiled HLO keeps no
    `known_trip_count`), read from the loop itself: a condition `counter < N` (a tuple
    element against a constant), a body that adds 1 to that element, and a constant start in
    the loop's initial tuple give N - start; None for any other loop."""
    _, operands, attrs = tables[computation][while_name]
    names = dict(re.findall(r"\b(condition|body)=%?([\w.\-]+)", attrs))
    cond, body = tables.get(names.get("condition")), tables.get(names.get("body"))
    if cond is None or body is None or not operands:
        return None
    compare = cond[roots[names["condition"]]]
    if compare[0] != "compare" or "direction=LT" not in compare[2] or len(compare[1]) != 2:
        return None
    counter, limit = _tuple_index(cond, _operand_names(compare[1])[0]), _integer_constant(cond, _operand_names(compare[1])[1])
    step = _source(body, roots[names["body"]])
    if counter is None or limit is None or step is None or step[0] != "tuple" or counter >= len(step[1]):
        return None
    add = _source(body, _operand_names(step[1])[counter])
    if add is None or add[0] != "add" or len(add[1]) != 2:
        return None
    a, b = _operand_names(add[1])
    if not ((_tuple_index(body, a) == counter and _integer_constant(body, b) == 1)
            or (_tuple_index(body, b) == counter and _integer_constant(body, a) == 1)):
        return None
    start = _source(tables[computation], _operand_names(operands)[0])
    if start is None or start[0] != "tuple" or counter >= len(start[1]):
        return None
    first = _integer_constant(tables[computation], _operand_names(start[1])[counter])
    return None if first is None else max(limit - first, 0)


def computation_repeats(hlo_text: str) -> dict[str, int | None]:
    """How many times one run of the entry computation runs each computation: a while's body
    (and condition) its caller's count times the loop's trip count (XLA's `known_trip_count`,
    else `inferred_trip_count`), None when neither is known; any other callee its caller's
    count; summed over the call sites."""
    calls: dict[str, list[tuple[str, int | None]]] = {}  # callee -> [(caller, factor)]
    tables: tuple[dict, dict] | None = None  # parsed on the first loop without a recorded count
    entry, computation = None, ""
    for line in hlo_text.splitlines():
        m = _COMPUTATION.match(line)
        if m and "=" not in line.split("(")[0]:
            computation = m.group(1)
            if line.lstrip().startswith("ENTRY"):
                entry = computation
            continue
        if "=" not in line:
            continue
        trip = _TRIP_COUNT.search(line)
        is_while = re.search(r"\swhile\(", line) is not None
        count = int(trip.group(1)) if trip else None
        if is_while and count is None and (m := _INSTR.match(line)):
            tables = tables or _instruction_tables(hlo_text)
            count = inferred_trip_count(*tables, computation, m.group(1))
        for key, callee in _CALLEE.findall(line):
            factor = count if is_while and key in ("body", "condition") else 1
            calls.setdefault(callee, []).append((computation, factor))
        for group in _BRANCHES.findall(line):
            for callee in _split_top(group):
                calls.setdefault(callee.lstrip("%"), []).append((computation, 1))
    memo: dict[str, int | None] = {}

    def repeats(name: str, seen=()) -> int | None:
        if name == entry or name not in calls:
            return 1
        if name not in memo:
            total = 0
            for caller, factor in calls[name]:
                r = None if caller in seen else repeats(caller, seen + (name,))
                if r is None or factor is None:
                    total = None
                    break
                total += r * factor
            memo[name] = total
        return memo[name]

    names = set(calls) | {entry} if entry else set(calls)
    return {name: repeats(name) for name in names}


def summarize(collectives: list[HloCollective], repeats: dict[str, int | None] | None = None) -> dict:
    """{kind: {"count", "bytes_per_device"}} for the kinds present, plus totals. With
    `repeats` (computation_repeats), a collective counts once per run of its computation
    (`count` stays the number of instructions); one whose count is unknown (a while without a
    known trip count) counts once and is listed in `unknown_repeats`."""
    by_kind, unknown = {}, []
    for c in collectives:
        times = 1 if repeats is None else repeats.get(c.computation, 1)
        if times is None:
            unknown.append(c.name)
            times = 1
        entry = by_kind.setdefault(c.kind, {"count": 0, "bytes_per_device": 0})
        entry["count"] += 1
        entry["bytes_per_device"] += c.bytes_per_device * times
    out = {"by_kind": by_kind, "count": len(collectives),
           "bytes_per_device": sum(e["bytes_per_device"] for e in by_kind.values())}
    if unknown:
        out["unknown_repeats"] = unknown
    return out


_DOT_DIMS = re.compile(r"lhs_contracting_dims=\{([0-9,]*)\}")


def dot_flops(hlo_text: str) -> int | None:
    """Matmul FLOPs per device of one run of the entry computation: 2 x the result's
    elements x the contracted size for every `dot`, times the runs of its computation
    (computation_repeats: a loop body once per iteration, which XLA's cost analysis counts
    once); None when some loop's trip count is unknown. Operand shapes are looked up by name
    in the dot's computation (its instructions and parameters)."""
    repeats = computation_repeats(hlo_text)
    total = 0
    for _, computation, shapes, _, shape, opcode, rest in _instructions(hlo_text):
        if opcode != "dot":
            continue
        operands, attrs = _operands_and_attrs(rest)
        lhs = shapes.get(_operand_names(operands)[0]) if operands else None
        contracting = _DOT_DIMS.search(attrs)
        if lhs is None or contracting is None:
            raise ValueError(f"dot_flops: cannot read the operands of {shape} dot({rest[:120]}")
        lhs_dims = [int(d) for d in _ARRAY.search(lhs).group(2).split(",") if d]
        out_dims = [int(d) for d in _ARRAY.search(shape).group(2).split(",") if d]
        k = math.prod(lhs_dims[int(i)] for i in contracting.group(1).split(",") if i)
        times = repeats.get(computation, 1)
        if times is None:
            return None
        total += 2 * math.prod(out_dims) * k * times
    return total
