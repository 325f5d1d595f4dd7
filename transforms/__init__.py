"""meshir.transforms: the pass registry and MeshIR's passes (one file per pass)."""
from .registry import PASSES, PassInfo, PassOption, register_pass  # noqa: F401
