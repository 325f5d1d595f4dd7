"""meshir.lowering.stablehlo: `mtf` in partitioned form to per-device StableHLO (explicit
mode): one `sdy.manual_computation` over all mesh axes per function, local shapes inside,
collectives with replica groups from the mesh (docs/partitioning.md)."""
from .lower import MODES, lower_function, lower_module  # noqa: F401
from .entry import entry_text  # noqa: F401,E402
