"""The memory budget `mi.compile` keeps: MeshIR's estimate before XLA compiles, and on a TPU
target the chip's HBM and XLA:TPU's own figure after.

The estimate (`exe.compile_report.memory`) is checked first, so a program that cannot fit is
refused in seconds, before XLA spends time on it. Results that live in donated arguments'
buffers count once, as XLA counts them (argument + output + temp - alias).

On a TPU topology (tpu.py) the budget defaults to the HBM each device has as XLA:TPU
allocates it, and XLA:TPU's own figure, exact and known once it compiles, decides: it is
checked after compiling, and where XLA:TPU itself runs out of HBM the refusal names the
largest tensors MeshIR estimated. The estimate models XLA:CPU's fusion and buffer reuse
(within ±25% there); XLA:TPU needs less, so before it compiles only a program whose estimate
is over TPU_ESTIMATE_MARGIN times the budget is refused.
"""
from __future__ import annotations

from meshir.dialect import MeshIRError
from meshir.dialect.call_site import without_location
from meshir.lowering.runtime.donation import donation_aliases
from meshir.lowering.runtime.tpu import hbm_per_device, topology_of
from meshir.transforms.analysis.memory_estimate import format_bytes, shard_bytes

#: On the papers' training steps (benchmarks/results/tpu_papers.md) MeshIR's estimate came out
#: 1.07-1.45 times XLA:TPU's memory per device; a program whose estimate is within twice the
#: budget is left to XLA:TPU's own figure.
TPU_ESTIMATE_MARGIN = 2.0

ADVICE = ("split a large tensor's dims over more mesh axes (a layout rule such as {'d_ff': ('x', 'y')}), "
          "or use a larger mesh")


def limit(budget: int | None, tpu_devices=None) -> tuple[int | None, str | None]:
    """The bytes per device the estimate must fit (`budget`; on a TPU topology's devices by
    default their HBM), and the words that name a TPU target in a refusal (else None)."""
    if tpu_devices is None:
        return budget, None
    hbm, target = hbm_per_device(tpu_devices), f"TPU topology {topology_of(tpu_devices)!r}"
    if budget is not None or hbm is None:
        return budget, target
    return hbm, f"{target} ({format_bytes(hbm)} of HBM per device, as XLA:TPU allocates)"


def donated_result_bytes(sig, donate, mesh_shape: dict) -> int:
    """Bytes per device of the results that XLA writes into donated arguments' buffers."""
    return sum(shard_bytes(sig.result_types[r], mesh_shape) for r in donation_aliases(sig, donate).values())


def largest_rows(estimate) -> list[str]:
    """One line per tensor of the estimate's largest: name, type with layout, kind, bytes."""
    return [f"  {t.value}: {t.type} ({t.kind}) {format_bytes(t.bytes)} per device" for t in estimate.largest]


def check_estimate(report, budget: int, donated: int = 0, target: str | None = None) -> None:
    """Refuse the program when MeshIR's estimate per device, less the `donated` results,
    exceeds `budget` (on a TPU `target`, TPU_ESTIMATE_MARGIN times it). `target` names the
    TPU topology and what the budget is, for the message."""
    estimate = report.memory
    margin = TPU_ESTIMATE_MARGIN if target else 1.0
    if estimate is None or estimate.total - donated <= margin * budget:
        return
    rows = largest_rows(estimate)
    parts = ", ".join(f"{k.replace('_', ' ')} {format_bytes(v)}" for k, v in estimate.categories.items())
    donation = f"; less {format_bytes(donated)} of results in donated buffers" if donated else ""
    where = (f"compiling for {target}, " if target else "")
    over = (f"over {margin:g} times the memory budget of {format_bytes(budget)} (refused before XLA:TPU compiles; "
            "within that margin XLA:TPU's own figure decides)" if target else
            f"over the memory budget of {format_bytes(budget)}")
    raise MeshIRError(
        f"{where}the program needs about {format_bytes(estimate.total - donated)} per device ({parts}{donation}) "
        f"by MeshIR's estimate, {over}; the largest tensors per device:\n" + "\n".join(rows) + "\n" + ADVICE)


def check_compiled(memory: dict | None, budget: int, topology: str) -> None:
    """Refuse a compile-only program whose compiled memory per device exceeds `budget`: on a
    TPU target XLA's figure is the chip's, known before anything runs."""
    if memory is None or memory["total"] <= budget:
        return
    parts = ", ".join(f"{k} {format_bytes(memory[k])}" for k in ("argument", "output", "temp", "alias"))
    raise MeshIRError(
        f"compiled by XLA:TPU for {topology!r}, the program needs {format_bytes(memory['total'])} per device "
        f"({parts}), over the memory budget of {format_bytes(budget)}: {ADVICE}")


def out_of_hbm(error: MeshIRError, report, topology: str) -> MeshIRError:
    """XLA:TPU's refusal of a program over the chip's HBM, with the largest tensors per device
    by MeshIR's estimate (XLA names only its total)."""
    rows = [] if report.memory is None else largest_rows(report.memory)
    first = without_location(str(error)).splitlines()[0]
    return MeshIRError(f"XLA:TPU cannot fit the program in the HBM of {topology!r}'s devices: {first}\n"
                       + ("the largest tensors per device by MeshIR's estimate:\n" + "\n".join(rows) + "\n"
                          if rows else "") + ADVICE)
