"""The passes that partition a program for `mi.compile`, in order: one list for the
compiler, `explain()`'s alternatives and the layout search's measurements.

The passes are looked up by name in the registry, which imports a pass's module when it is
first asked for: `import meshir` builds programs without loading the partitioner."""
from __future__ import annotations

from meshir.dialect.modes import EXPLICIT

from ..infra.registry import PASSES
from .shard_update import with_shard_update


def partition_passes(module, rules, model, mode: str = EXPLICIT) -> list:
    """mi.compile's passes before the lowering of `module`, for `rules` (LayoutRules) and
    `model`; mtf-shard-update first where it has weight-update sharding's layouts to decide."""
    passes = with_shard_update([PASSES["mtf-propagate-sharding"].with_model(model, rules)], module.operation, rules)
    if mode == EXPLICIT:  # gspmd mode lowers the propagated module: XLA inserts the collectives
        # explain: each collective records why it exists, for exe.explain() and the report
        passes.append(PASSES["mtf-insert-collectives"].with_model(model, explain=True))
    # mtf-canonicalize once every layout is decided: merging equal ops and erasing dead ones
    # (collectives included) can then only lower the work and the bytes sent (docs/decisions.md).
    passes.append(PASSES["mtf-canonicalize"]())
    return passes
