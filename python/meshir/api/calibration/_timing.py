"""Timing calls the way every MeshIR measurement does: interleaved rounds, each run ending in
`block_until_ready`, so a slow phase of a shared machine affects every contender alike.
(`mi.calibrate` and the benchmarks share it.)"""
from __future__ import annotations

import time


def interleaved_times(calls: dict, reps: int, warmup: int = 1) -> dict:
    """{key: [seconds of each timed run]} of each `calls[key]()` (which returns what to block
    on): `warmup` untimed rounds, then `reps` rounds of one run of each call."""
    import jax

    for _ in range(warmup):
        for call in calls.values():
            jax.block_until_ready(call())
    times = {k: [] for k in calls}
    for _ in range(reps):
        for k, call in calls.items():
            start = time.perf_counter()
            jax.block_until_ready(call())
            times[k].append(time.perf_counter() - start)
    return times
