"""meshir.transforms: the passes (`passes/`, one file each, and the packages that do the work
of the large ones: `propagation/`, `collectives/`, `autodiff/`), their infrastructure
(`infra/`: registry, pipeline syntax, pass manager) and the analyses they share (`analysis/`).

Importing it imports no pass: `PASSES` imports a pass's module when the pass is asked for by
name (infra/registry.py).
"""
from .infra.registry import PASSES, ModulePass, PassInfo, PassOption, option, register_pass  # noqa: F401
from .infra.pass_manager import PassPipelineError, Pipeline, build_pass_manager  # noqa: F401
from .infra.pipeline_syntax import PipelineError, parse_pipeline  # noqa: F401
