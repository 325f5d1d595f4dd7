"""Where Shardy's layouts meet, read per op (a test helper for propagation_costs.py).

Shardy's propagation gives each value a layout; it does not say, where an op's operands and
result disagree, which of them is resharded. `sdy-insert-explicit-reshards` decides that:
after it every op's operands agree with the op's own sharding (the layout it computes in),
`sdy.reshard` converting them, and its result is resharded after it where consumers want
another layout. This module runs Shardy's pipeline followed by that pass and reads, by the
case's value names: each argument's layout, each op's compute layout, the layout each op
reads each operand in, and the layout each result is returned in. Layouts are positional
(per dim, a tuple of axes), as `propagation_programs.mtf_program` takes them.
"""
from __future__ import annotations

from dataclasses import dataclass

import shardy_oracle as so
from meshir._jax_private import ir, sdy
from meshir.dialect import get_context
from propagation_programs import Case, PerDim, stablehlo


@dataclass
class Realisation:
    computes: dict[str, PerDim]  # arguments' layouts and the layout each op computes in
    uses: dict[tuple[str, int], PerDim]  # (op, operand index) -> the layout the op reads it in
    returned: list[PerDim]  # per function result


def realise(case: Case) -> Realisation:
    text, _ = stablehlo(case)
    with get_context():
        module = so.run_pipeline(text, so.STRATEGIES["shardy"] + "," + so.EXPLICIT_RESHARDS)
        return _read(module, case)


def _per_dim(attr, value) -> PerDim:
    if attr is None:
        return ((),) * ir.RankedTensorType(value.type).rank
    return tuple(tuple(so._axis_name(a) for a in sdy.DimensionShardingAttr(d).axes)
                 for d in sdy.TensorShardingAttr(attr).dimension_shardings)


def _read(module, case: Case) -> Realisation:
    fn = next(op for op in module.body.operations if op.operation.name == "func.func")
    block = fn.regions[0].blocks[0]
    arg_attrs = fn.attributes["arg_attrs"] if "arg_attrs" in fn.attributes else None
    constraints = {op.name for op in case.ops if op.kind == "shard"}
    at: dict = {}  # ir.Value -> its layout
    found = Realisation({}, {}, [])
    for name, arg, i in zip(case.args, block.arguments, range(len(case.args))):
        at[arg] = found.computes[name] = _per_dim(so._attr_sharding(arg_attrs, i), arg)
    for op in block.operations:
        kind, name = op.operation.name, so._loc_name(op.location)
        operands = list(op.operation.operands)
        if kind == "func.return":
            found.returned = [at[v] for v in operands]
        elif kind in so._COLLECTIVES:  # a conversion Shardy inserted, or a user's constraint
            attrs = op.operation.attributes
            at[op.result] = _per_dim(attrs["sharding" if kind == "sdy.reshard" else "out_sharding"], op.result)
            if name in constraints and name not in found.computes:
                found.computes[name], found.uses[(name, 0)] = at[op.result], at[operands[0]]
        else:
            attr = op.operation.attributes["sdy.sharding"] if "sdy.sharding" in op.operation.attributes else None
            sharding = sdy.TensorShardingPerValueAttr(attr).shardings[0] if attr is not None else None
            at[op.result] = found.computes[name] = _per_dim(sharding, op.result)
            for i, v in enumerate(operands):
                found.uses[(name, i)] = at[v]
    missing = [op.name for op in case.ops if op.kind != "rename" and op.name not in found.computes]
    if missing:
        raise ValueError(f"{case.name}: no op named {missing} after Shardy's explicit reshards")
    return found
