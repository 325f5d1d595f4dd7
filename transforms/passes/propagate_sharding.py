"""`mtf-propagate-sharding`: give every dim of every value a layout.

From what the user stated — `mtf.shard` constraints, layouts written on argument, result and
op types, and Mesh-TensorFlow layout rules — propagate layouts by name through every op,
forward and backward, strongest statement first (see propagation/solver.py). Dims nobody
constrains become replicated (`@()`). Where two layouts of one name meet, an explicit
`mtf.shard` is left for collective insertion.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.call_graph import callees_first
from meshir.dialect.diagnostics import Diagnostic, MeshIRError, located_error
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.signature import function_name, functions
from meshir.dialect.layout_rules import LayoutRules
from meshir.dialect.tensor_type import TensorType

from ..propagation.layout_sources import call_provenance
from ..propagation.loops import hoist_invariant_reshards
from ..propagation.op_rules import op_rules
from ..propagation.program_values import index_function
from ..propagation.reshards import reshard_operand, rewrite_function
from ..propagation.seeds import (
    check_rules_on_mesh,
    check_shard_conflicts,
    fixed_dims,
    rule_seeds,
)
from ..propagation.conflicts import solve_by_cost
from ..analysis.cost_model import BYTES, CostModel
from ..analysis.cost_model_options import CostModelOptions
from ..infra.registry import ModulePass, option, register_pass
from .shard_update import parameter_markers


@register_pass
@dataclass
class PropagateShardingPass(CostModelOptions, ModulePass):
    NAME = "mtf-propagate-sharding"
    SUMMARY = "Give every dim of every value a layout, from shard constraints, annotations and layout rules"
    rules: LayoutRules = option(
        LayoutRules(),
        'layout rules added to each function\'s mtf.layout_rules, e.g. "batch:x,d_ff:(x,y)" or "batch:x;d_ff:y"; '
        "an axis the mesh lacks is an error (the Python API drops it with a warning unless strict=True)",
    )

    @classmethod
    def with_model(cls, model: CostModel, rules: LayoutRules = LayoutRules()) -> "PropagateShardingPass":
        """The pass resolving conflicts by `model`."""
        return cls(**cls.options_of(model), rules=rules)

    def apply(self, module_op) -> None:
        waiting = parameter_markers(module_op)
        if waiting:
            raise located_error(waiting[0].location, "this mtf.shard waits for mtf-shard-update (it marks a layout "
                                "of parameter sharding); run mtf-shard-update before mtf-propagate-sharding")
        meshes = module_meshes(module_op)
        model = self.cost_model()
        for fn in callees_first(module_op, f"{self.NAME} cannot propagate layouts through recursive calls"):
            propagate_function(fn, function_mesh(fn, meshes), self.rules, model)


def propagate_function(fn, mesh, extra_rules: LayoutRules | None = None, model: CostModel = BYTES) -> int:
    """Propagate layouts through one function in place; returns the reshards inserted.
    `extra_rules` are checked against the mesh here (strictly: the Python API has dropped the
    axes the mesh lacks already, unless its caller asked for strict=True); the function's own `mtf.layout_rules`
    were checked by the verifier. Conflicts between statements of one priority go to the
    outcome `model` prices lower (propagation/conflicts.py)."""
    calls = _calls(fn)
    for call, callee in calls:
        _adopt_callee_results(call, callee)
    values = index_function(fn)
    extra_rules = extra_rules or LayoutRules()
    if mesh is None:
        if extra_rules and extra_rules.origin is not None:  # from Python: every axis is unknown
            check_rules_on_mesh(extra_rules, None, extra_rules.origin)
        if extra_rules:
            raise MeshIRError(f"{fn.location}: layout rules given but function has no mesh",
                              [Diagnostic(fn.location, "layout rules given but the function has no mesh (set mtf.mesh)")])
        return 0
    check_rules_on_mesh(extra_rules, mesh, extra_rules.origin or fn.location)
    rules = LayoutRules.from_attribute(fn).merged(extra_rules)
    check_shard_conflicts(values)
    rules_of_ops = [r for op in values.ops for r in op_rules(op, values)]
    solver = solve_by_cost(values, rules_of_ops, mesh.shape, fixed_dims(values), rule_seeds(values, rules, mesh, extra_rules), model)
    with fn.context:
        inserted = rewrite_function(fn, values, rules_of_ops, solver, mesh)
        hoist_invariant_reshards(fn)
        for call, callee in calls:
            inserted += _reshard_call_operands(call, callee)
    return inserted


def _calls(fn) -> list:
    """(func.call op, callee func op) for calls to functions defined in the module."""
    module = fn.operation.parent
    by_name = {function_name(f): f for f in functions(module)}
    out = []
    for op in fn.regions[0].blocks[0].operations:
        if op.operation.name == "func.call":
            callee = by_name.get(ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value)
            if callee is not None:
                out.append((op, callee))
    return out


def _callee_types(callee):
    return ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value)


def _adopt_callee_results(call, callee) -> None:
    """Callees are propagated first: a call's results have the callee's result layouts."""
    for result, t in zip(call.operation.results, _callee_types(callee).results):
        result.set_type(t)


def _reshard_call_operands(call, callee) -> int:
    """Operands laid out otherwise than the callee's arguments are resharded before the call."""
    inserted = 0
    for k, t in enumerate(_callee_types(callee).inputs):
        have = call.operation.operands[k].type
        if have != t:
            need = TensorType.from_mlir(t)
            why = call_provenance(function_name(callee), k, TensorType.from_mlir(have), need)
            reshard_operand(call, k, need, why)
            inserted += 1
    return inserted
