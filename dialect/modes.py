"""The lowering modes, defined once: the pass option, the lowering, the runtime and
`mi.compile` all read them from here.

- explicit: MeshIR partitions (mtf-insert-collectives), per-device StableHLO in
  `sdy.manual_computation` with collectives;
- gspmd: the propagated module is lowered to global StableHLO with sharding constraints and
  XLA's Shardy partitioner inserts the collectives.
"""
from __future__ import annotations

import typing
from typing import Literal

from .diagnostics import MeshIRError

Mode = Literal["explicit", "gspmd"]
MODES: tuple[str, ...] = typing.get_args(Mode)
EXPLICIT, GSPMD = MODES


def check_mode(mode) -> str:
    """`mode` if it is one of MODES, else a MeshIRError naming them."""
    if mode not in MODES:
        raise MeshIRError(f"unknown mode '{mode}' (expected one of {', '.join(MODES)})")
    return mode
