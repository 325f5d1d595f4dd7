"""`mtf-auto-layout`: choose each function's layout rules by search, before propagation.

Afterwards every function with a mesh carries `mtf.layout_rules`: the rules it had (fixed
points of the search, as are its `mtf.shard` pins) and the ones the search chose
(transforms/layout_search/: summary, model, branch and bound, then the best few measured by
partitioning for real). The rest of the pipeline is unchanged:

    meshir-opt --mtf-auto-layout="memory-budget=16GiB" --mtf-propagate-sharding ...
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from meshir._jax_private import ir
from meshir.dialect.attribute_names import LAYOUT_RULES
from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.signature import defined_functions

from ..layout_search.choose import choose_layout
from ..analysis.cost_model_options import CostModelOptions
from .inline_calls import inline_calls
from ..analysis.memory_estimate import parse_bytes
from ..infra.registry import ModulePass, option, register_pass
from .shard_update import drop_parameter_markers


@register_pass
@dataclass
class AutoLayoutPass(CostModelOptions, ModulePass):
    NAME = "mtf-auto-layout"
    SUMMARY = "Choose the layout rules of each function by a search over which mesh axes each named dim takes"
    memory_budget: str = option("", 'bytes per device no candidate may exceed, e.g. "16GiB" (empty: none)')
    goal: Literal["time", "bytes", "memory"] = option("time", "what the chosen rules minimise per device")
    time_limit: float = option(10.0, "seconds of search before the best found is taken")

    def apply(self, module_op) -> None:
        if not self.time_limit > 0:  # nan included
            raise MeshIRError(f"time-limit must be a positive number of seconds, got {self.time_limit}")
        budget = parse_bytes(self.memory_budget, "memory-budget") if self.memory_budget.strip() else None
        meshes = module_meshes(module_op)
        inlined = module_op.clone()  # the search sees a callee's tensors (mi.remat) as mi.compile does
        inline_calls(inlined)
        inlined_fns = {_name(f): f for f in defined_functions(inlined)}
        for fn in defined_functions(module_op):
            mesh = function_mesh(fn, meshes)
            if mesh is None or "sym_visibility" in fn.attributes:  # a callee takes its callers' layouts
                continue
            with fn.context:
                choice = choose_layout(inlined, inlined_fns[_name(fn)], mesh, self.cost_model(), self.goal, budget,
                                       self.time_limit)
                if choice.chosen.shard_update is False:  # cheaper without weight-update sharding
                    drop_parameter_markers(module_op)
                rules = {k: v for k, v in choice.chosen.rules.items() if v}
                fn.attributes[LAYOUT_RULES] = ir.DictAttr.get(
                    {k: ir.ArrayAttr.get([ir.StringAttr.get(a) for a in v]) for k, v in sorted(rules.items())})


def _name(fn) -> str:
    return fn.attributes["sym_name"].value
