"""Memory per device of a partitioned program, before XLA runs: the cost model's memory slot.

The estimate is **arguments + results + peak live temporaries** per device, every tensor
counted as its shard (`cost_model.shard_bytes`), compared against XLA's `memory_analysis`
(argument + output + temp − alias). Arguments and results are exact from the signature; the
temporaries come from a liveness walk over the partitioned function that counts only the
buffers that survive XLA's fusion (docs/decisions.md, "Memory per device"):

- **a buffer** is the result of an op XLA does not fuse into its consumer: a contraction
  (`einsum`), a reduction, a collective, a gather, one_hot, a loop, and a shape op that moves
  data (concat, pad, slice, shift); an elementwise or layout-only op (add, relu, broadcast,
  rename, reshape, transpose, constant) is a buffer only when a contraction, a collective, a
  gather, a loop or the return reads it (those read materialized operands), or when several
  ops read it (computed once rather than in each reader); otherwise it is fused into its
  consumer and keeps its own inputs' buffers alive until that consumer runs;
- **in place**: an elementwise result or an all_reduce whose operand's buffer dies there, with
  the same size, reuses that buffer (XLA's buffer sharing); an all_reduce whose result is
  returned computes in the output's buffer, so its single-use operand is no temporary;
- **liveness**: a buffer lives from its op to its last (possibly fused) use; arguments and
  returned values are not temporaries (XLA counts them as argument and output);
- **loops**: a loop body's own peak counts once, at the loop (a value in a scan body is live
  per iteration, not times the length), on top of what is live around the loop.

For a `mi.train_step` (results `loss`, then parameters and optimizer state under their
argument names, state arguments `<param>__<slot>`) the arguments split into parameters,
optimizer state and data, and the gradients (one per parameter, in its layout, or in its
update layout under weight-update sharding) are named among the temporaries.
"""
from __future__ import annotations

import re
import math
from dataclasses import dataclass, field

from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.signature import entry_function, signature
from meshir.dialect.tensor_type import TensorType
from meshir.dialect.update_sharding import update_split

from meshir.dialect.diagnostics import MeshIRValueError


def shard_bytes(t: TensorType, mesh_shape: dict[str, int]) -> int:
    """Bytes of one device's shard of `t`."""
    return math.prod(t.local_shape(mesh_shape)) * t.dtype.itemsize


@dataclass(frozen=True)
class TensorBytes:
    """One tensor per device: its name (argument or result name, else SSA value), its type
    with layout, and the bytes of one device's shard."""

    value: str
    type: str
    bytes: int
    kind: str  # "argument", "result" or "temporary"


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes per device of one call. `total` = arguments + results + peak temporaries, what
    XLA's argument + output + temp − alias measures (without donation)."""

    arguments: int
    results: int
    temporaries: int
    #: Categories: for a train step, parameters, optimizer state, gradients (inside
    #: temporaries), activations (the temporaries' rest) and data; otherwise arguments,
    #: results and activations (= temporaries).
    categories: dict[str, int] = field(default_factory=dict)
    #: The tensors live at the peak and the arguments and results, largest first.
    largest: tuple[TensorBytes, ...] = ()
    train_step: bool = False

    @property
    def total(self) -> int:
        return self.arguments + self.results + self.temporaries


def _memory(op) -> str | None:
    """The op's MEMORY trait (dialect/ops/base.py); None for another dialect's op."""
    return getattr(op, "MEMORY", None)


def _materializes_operands(op) -> bool:
    """Whether a fused value `op` reads becomes a buffer (the return, too, like a yield)."""
    return _memory(op) in ("materializes_operands", "in_place") or bool(op.operation.regions) or \
        op.operation.name == "func.return"


def _type(value):
    try:
        return TensorType.from_mlir(value.type)
    except Exception:  # a non-mtf value (an index, a token): no bytes
        return None


class PeakBytes:
    """The largest live total of a walk, in bytes per device, and what was live then."""

    def __init__(self):
        self.best, self.at = 0, []

    def offer(self, total: int, live: dict) -> None:
        if total > self.best:
            self.best, self.at = total, list(live.items())

    def totals(self) -> list:
        return [self.best]


class Liveness:
    """Peak live temporaries of a block (and the blocks nested in its ops), in the amounts
    `amount(value)` gives, added from `zero()`; `peaks()` makes what keeps the peak. With bytes
    per device and `PeakBytes` this is `estimate_memory`'s; the layout search walks the
    unpartitioned program once with counts per tensor signature instead
    (transforms/layout_search/summary.py) and prices every rule set from that one walk."""

    def __init__(self, amount, zero=int, peaks=PeakBytes):
        self.amount, self.zero, self.peaks = amount, zero, peaks

    def peak(self, block, returned: set):
        """The `peaks()` of `block`'s temporaries; values in `returned` and the block's
        arguments are not temporaries."""
        ops = list(block.operations)
        # Which fused values must be materialized: read by an op that needs a buffer.
        materialized = set()
        for op in ops:
            if _materializes_operands(op):
                materialized.update(op.operation.operands)
            # a value several ops read is computed once, into a buffer (fusing it into each
            # reader would repeat the work)
            materialized.update(r for r in op.operation.results if len(list(r.uses)) > 1)
        roots, last_use, buffers = {}, {}, {}
        for i, op in enumerate(ops):
            for o in op.operation.operands:
                for r in roots.get(o, ()):
                    last_use[r] = i
            for res in op.operation.results:
                if _memory(op) == "fused" and res not in materialized:
                    roots[res] = frozenset(r for o in op.operation.operands for r in roots.get(o, ()))
                else:
                    roots[res] = frozenset((res,))
                    buffers[res] = i
        live, current, peaks = {}, self.zero(), self.peaks()
        for i, op in enumerate(ops):
            inner = [t for region in op.operation.regions for b in region.blocks
                     for t in self.peak(b, set()).totals()] or [self.zero()]
            new = [r for r in op.operation.results if buffers.get(r) == i and r not in returned]
            for res in new:
                size = self.amount(res)
                reuse = None
                if _memory(op) in ("fused", "in_place"):
                    reuse = next((r for o in op.operation.operands for r in roots.get(o, ())
                                  if r in live and last_use.get(r) == i and live[r] == size), None)
                if reuse is not None:
                    del live[reuse]
                    current -= size
                live[res] = size
                current += size
            for t in inner:
                peaks.offer(current + t, live)
            for r in [r for r in live if last_use.get(r, i) <= i]:
                current -= live.pop(r)
        return peaks


def _output_backed(block, outputs: set) -> set:
    """Operands that an in-place collective (an all_reduce) turns into a result: XLA
    computes them in the output's buffer, so they are not temporaries either."""
    backed = set()
    for op in block.operations:
        if _memory(op) == "in_place" and op.operation.results[0] in outputs:
            operand = op.operation.operands[0]
            if len(list(operand.uses)) == 1:
                backed.add(operand)
    return backed


def estimate_memory(module, function: str | None = None, limit: int = 10) -> MemoryEstimate:
    """Bytes per device of `module`'s entry function (a partitioned mtf module: after
    mtf-insert-collectives), without compiling it."""
    fn = entry_function(module, function)
    mesh = function_mesh(fn, module_meshes(module.operation))
    mesh_shape = dict(mesh.axes) if mesh is not None else {}
    sig = signature(fn)
    block = fn.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    returned = set(ret.operation.operands) | _output_backed(block, set(ret.operation.operands))
    arg_bytes = [shard_bytes(t, mesh_shape) for t in sig.arg_types]
    res_bytes = [shard_bytes(t, mesh_shape) for t in sig.result_types]
    peak = Liveness(lambda v: shard_bytes(t, mesh_shape) if (t := _type(v)) is not None else 0).peak(
        block, returned | set(block.arguments))
    temps, at_peak = peak.best, peak.at
    tensors = [TensorBytes(n, str(t), b, "argument") for n, t, b in zip(sig.arg_names, sig.arg_types, arg_bytes)]
    tensors += [TensorBytes(n, str(t), b, "result") for n, t, b in zip(sig.result_names, sig.result_types, res_bytes)]
    tensors += [TensorBytes(v.get_name(), str(_type(v)), b, "temporary") for v, b in at_peak]
    tensors.sort(key=lambda t: -t.bytes)
    args = dict(zip(sig.arg_names, zip(sig.arg_types, arg_bytes)))
    params = [n for n in sig.result_names if n in args and "__" not in n]
    state = [n for n in sig.arg_names if "__" in n and n.split("__", 1)[0] in params]
    train = bool(params) and "loss" in sig.result_names
    if train:
        split = update_split(fn)  # weight-update sharding: gradients in their update layout
        gradients = sum(shard_bytes(args[p][0].with_layout({split[p][0]: split[p][1]}), mesh_shape) if p in split
                        else args[p][1] for p in params)
        categories = {
            "parameters": sum(args[p][1] for p in params),
            "optimizer_state": sum(args[s][1] for s in state),
            "data": sum(b for n, (_, b) in args.items() if n not in params and n not in state),
            "gradients": gradients,
            "activations": max(temps - gradients, 0),
            "results": sum(res_bytes),
        }
    else:
        categories = {"arguments": sum(arg_bytes), "results": sum(res_bytes), "activations": temps}
    return MemoryEstimate(sum(arg_bytes), sum(res_bytes), temps, categories, tuple(tensors[:limit]), train)


def format_bytes(n: int) -> str:
    """`n` bytes in binary units ("1.5 MiB"), exact bytes below 1 KiB."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


BYTE_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
              "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_bytes(text: str, what: str = "memory_budget") -> int:
    """Bytes from text such as "16GiB", "512MiB", "1.5GB", "1000" (binary and decimal units)."""

    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", text)
    if m is None:
        raise MeshIRValueError(f"{what} must be a number of bytes with a unit (e.g. \"16GiB\", \"1.5GB\"), "
                               f"got {text!r}")
    unit = m.group(2).lower() or "b"
    if unit not in BYTE_UNITS:
        raise MeshIRValueError(f"{what} {text!r}: unknown unit {m.group(2)!r} (expected one of "
                               "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)")
    value = float(m.group(1)) * BYTE_UNITS[unit]
    if not value < 2**63:  # "1e400B" is inf
        raise MeshIRValueError(f"{what} {text!r} is more bytes than any device has (at most 2**63)")
    return int(value)
