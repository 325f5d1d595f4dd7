"""What the layout search needs to know about a program, by dim name only.

Under layout rules every value's layout is its dims' axes (Mesh-TensorFlow's model), so a
program's cost under a rule set depends on its ops only through the names they touch. The
summary groups the ops of the entry function (loop bodies included, counted per iteration)
by that signature, so the search prices a few dozen groups per candidate whatever the
program's length, and layers that share names cost nothing more to search:

- `OpGroup`: the op's index space (name -> size), its result's dims, the names it reduces
  over or looks up (a split one leaves the result pending: an all_reduce), the names it
  needs whole (slice, concat, pad, shift: an all_gather when split), its arithmetic
  (`MtfOp.WORK`), and how many times the program runs such an op;
- `tensors`: every value's set of dims (no axis may split two dims of one tensor);
- `arguments`, `results`: the entry's values (memory per device);
- `temporaries`: the live temporaries of the entry at each point where they may peak, as
  counts per (dims, itemsize): memory_estimate.py's liveness walk (XLA's fusion and buffer
  reuse, loop bodies once), run once on the unpartitioned program, so any rule set's peak is
  the largest of these priced with its local sizes;
- `renamed`: name pairs an `mtf.rename` links (propagation may carry a split across);
- `unsplittable`: the dims a scan iterates over; `fixed`: dims a `mtf.shard` in the program
  or an argument's own layout pins to axes (constraints the search keeps).
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from meshir.dialect.ops import OP_CLASSES, RenameOp, ScanOp, ShardOp
from meshir.dialect.tensor_type import TensorType

from ..analysis.memory_estimate import Liveness


@dataclass(frozen=True)
class OpGroup:
    """Ops that cost the same under every layout: their signature and their count."""
    space: tuple[tuple[str, int], ...]   # the index space, name -> size
    result: tuple[str, ...]              # the result's dims
    reduced: tuple[str, ...]             # names reduced over (pending when split)
    whole: tuple[str, ...]               # names the op needs whole (gathered when split)
    work: str | None                     # MtfOp.WORK
    itemsize: int                        # bytes per result element


@dataclass
class ProgramSummary:
    dims: dict[str, int] = field(default_factory=dict)            # name -> size (the gcd of its sizes)
    groups: Counter = field(default_factory=Counter)          # OpGroup -> count (per run)
    tensors: set = field(default_factory=set)                 # frozensets of dim names
    arguments: list = field(default_factory=list)             # ((name, size)..., itemsize) per argument
    results: list = field(default_factory=list)
    temporaries: list = field(default_factory=list)           # Counters: ((name, size)..., itemsize) -> live count
    unsplittable: set = field(default_factory=set)
    renamed: set = field(default_factory=set)                  # {old, new} name pairs of mtf.rename
    fixed: dict = field(default_factory=dict)                  # dim -> axes tuple


def summarize(fn) -> ProgramSummary:
    """The summary of function `fn` (an mtf function, before propagation)."""
    out = ProgramSummary()
    block = fn.regions[0].blocks[0]
    for arg in block.arguments:
        t = _tensor(arg)
        if t is not None:
            out.arguments.append((_dims(t), t.dtype.itemsize))
            _note(out, t)
            _pin(out, t)  # an argument's own layout (prog.argument(..., layout=)) is kept
    _walk(block, 1, out)
    for op in block.operations:
        if op.operation.name == "func.return":
            for v in op.operation.operands:
                t = _tensor(v)
                if t is not None:
                    out.results.append((_dims(t), t.dtype.itemsize))
            returned = set(op.operation.operands) | set(block.arguments)
            out.temporaries = Liveness(_signature_count, Counter, LiveProfiles).peak(block, returned).totals()
    return out


class LiveProfiles:
    """The live totals of a walk that no other one covers, each a Counter of live buffers per
    (dims, itemsize): under any rule set the peak is one of them. Past `LIMIT` the two oldest
    merge into their elementwise max, an over-estimate that keeps the list short."""
    LIMIT = 64

    def __init__(self):
        self.kept: list[Counter] = []

    def offer(self, total: Counter, live) -> None:
        if any(_covers(k, total) for k in self.kept):
            return
        self.kept = [k for k in self.kept if not _covers(total, k)] + [total]
        if len(self.kept) > self.LIMIT:
            self.kept[:2] = [self.kept[0] | self.kept[1]]

    def totals(self) -> list[Counter]:
        return self.kept


def _covers(a: Counter, b: Counter) -> bool:
    return all(a[k] >= n for k, n in b.items())


def _signature_count(value) -> Counter:
    t = _tensor(value)
    return Counter({(_dims(t), t.dtype.itemsize): 1}) if t is not None else Counter()


def _dims(t: TensorType) -> tuple[tuple[str, int], ...]:
    return tuple((d.name, d.size) for d in t.dims)


def _tensor(value) -> TensorType | None:
    try:
        return TensorType.from_mlir(value.type)
    except ValueError:
        return None


def _note(out: ProgramSummary, t: TensorType) -> None:
    out.tensors.add(frozenset(t.names))
    for d in t.dims:  # a name with several sizes (pad, slice, microbatches): what divides them all
        out.dims[d.name] = math.gcd(out.dims.get(d.name, 0), d.size)


def _pin(out: ProgramSummary, t: TensorType) -> None:
    for d in t.dims:
        if d.axes:
            out.fixed[d.name] = tuple(d.axes)


def _walk(block, repeats: int, out: ProgramSummary) -> None:
    for op in block.operations:
        cls = OP_CLASSES.get(op.operation.name)
        operands = [t for t in map(_tensor, op.operation.operands) if t is not None]
        results = [t for t in map(_tensor, op.operation.results) if t is not None]
        for t in operands + results:
            _note(out, t)
        inner = repeats
        if isinstance(op, ScanOp):
            out.unsplittable.add(op.attributes["dim"].value) if "dim" in op.attributes else None
            inner = repeats * op.attributes["length"].value
        for region in op.operation.regions:
            for b in region.blocks:
                for arg in b.arguments:
                    t = _tensor(arg)
                    if t is not None:
                        _note(out, t)
                _walk(b, inner, out)
        if cls is None or not results:
            continue
        if isinstance(op, RenameOp) and operands:  # position by position
            out.renamed |= {frozenset(p) for p in zip(operands[0].names, results[0].names) if p[0] != p[1]}
        if isinstance(op, ShardOp) and "cut" not in op.attributes:
            _pin(out, results[0])
        if getattr(cls, "IS_COLLECTIVE", False) or getattr(cls, "CHANGES_LAYOUT", False):
            continue
        out.groups[_group(op, cls, operands, results[0])] += repeats


def _group(op, cls, operands: list[TensorType], result: TensorType) -> OpGroup:
    space: dict[str, int] = {}
    for t in operands + [result]:
        for d in t.dims:
            space[d.name] = d.size
    pending = set(op.lookup_dims())  # a lookup split over A leaves the result pending over A
    if cls.REDUCTION is not None and cls.FACTORS == "by_name":
        kept = set(result.names)
        pending |= {n for t in operands for n in t.names if n not in kept}
    reduced, whole = tuple(sorted(pending)), tuple(sorted(set(op.whole_dims()) - pending))
    return OpGroup(tuple(sorted(space.items())), tuple(result.names), reduced, whole, cls.WORK,
                   result.dtype.itemsize)
