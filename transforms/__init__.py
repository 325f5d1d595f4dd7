"""meshir.transforms: the pass registry and MeshIR's passes (one file per pass)."""
from .registry import PASSES, ModulePass, PassInfo, PassOption, option, register_pass  # noqa: F401
from . import all_passes  # noqa: F401,E402  (fills PASSES)
from .pass_manager import PassPipelineError, Pipeline, build_pass_manager  # noqa: F401,E402
from .pipeline_syntax import PipelineError, parse_pipeline  # noqa: F401,E402
