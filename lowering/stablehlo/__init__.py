"""meshir.lowering.stablehlo: `mtf` to StableHLO. Explicit mode: partitioned form to
per-device StableHLO, one `sdy.manual_computation` over all mesh axes per function, local
shapes inside, collectives with replica groups from the mesh (docs/partitioning.md). gspmd
mode (gspmd.py): propagated form to global StableHLO with `sdy.sharding_constraint`s, for
XLA's Shardy partitioner."""
from .lower import MODES, lower_function, lower_module  # noqa: F401
from .entry import entry_text  # noqa: F401
