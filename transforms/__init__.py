"""meshir.transforms: the pass registry and MeshIR's passes (one file per pass).

Importing it imports no pass: `PASSES` imports a pass's module when the pass is asked for by
name (registry.py).
"""
from .registry import PASSES, ModulePass, PassInfo, PassOption, option, register_pass  # noqa: F401
from .pass_manager import PassPipelineError, Pipeline, build_pass_manager  # noqa: F401
from .pipeline_syntax import PipelineError, parse_pipeline  # noqa: F401
