"""The passes that partition a program for `mi.compile`, in order: one list for the
compiler, `explain()`'s alternatives and the layout search's measurements."""
from __future__ import annotations

from meshir.dialect.modes import EXPLICIT

from .canonicalize import CanonicalizePass
from .insert_collectives import InsertCollectivesPass
from .propagate_sharding import PropagateShardingPass
from .shard_update import with_shard_update


def partition_passes(module, rules, model, mode: str = EXPLICIT) -> list:
    """mi.compile's passes before the lowering of `module`, for `rules` (LayoutRules) and
    `model`; mtf-shard-update first where it has weight-update sharding's layouts to decide."""
    passes = with_shard_update([PropagateShardingPass.with_model(model, rules)], module.operation, rules)
    if mode == EXPLICIT:  # gspmd mode lowers the propagated module: XLA inserts the collectives
        # explain: each collective records why it exists, for exe.explain() and the report
        passes.append(InsertCollectivesPass.with_model(model, explain=True))
    # mtf-canonicalize once every layout is decided: merging equal ops and erasing dead ones
    # (collectives included) can then only lower the work and the bytes sent (docs/decisions.md).
    passes.append(CanonicalizePass())
    return passes
