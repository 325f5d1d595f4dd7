"""`mtf-insert-collectives`: make every op computable on local shards.

Walks each function in program order after propagation:
- an `mtf.shard` becomes the cheapest collective sequence (collectives/reshard_plan.py);
- a dim an op cuts or joins along (slice, concat, pad, shift) is gathered first, and the
  result re-split afterwards, except where the op reads only near each position and the
  rows it reads fit in a neighbouring block (a shift by at most the block size): that dim
  stays split and the op exchanges halos with its neighbours (dialect/halo.py);
- contractions, reductions and lookups over split names leave their result *pending*
  (`partial@axes`); a pending sum with one use stays lazy through linear ops (adds of pending
  values add locally; an add of sums pending over different axes, or of a pending sum and a
  replicated scalar, first makes both pending over the union by `mtf.as_partial`, which
  moves nothing) and is all-reduced right before its first non-linear use, or
  reduce-scattered when a reshard wants the axis split (dialect/linearity.py); one with
  several uses is reduced once and shared;
- function results are never pending.
Every collective, and every op exchanging halos, records `bytes_per_device`; with
`explain=true` each collective also records why it exists (`mtf.provenance`,
dialect/provenance.py: the op that needs it, the dims it changes, the rules or annotations
behind each side), reported as a remark at its location. The output is the partitioned form
of docs/partitioning.md, checked by `partitioned.verify_partitioned`.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.attributes import to_attribute
from meshir.dialect.diagnostics import Diagnostic, MeshIRError
from meshir.dialect.halo import split_halos
from meshir.dialect.linearity import joined_sums, lazy_operands
from meshir.dialect.local_semantics import result_partial
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.ops import AsPartialOp, LoopOp, ShardOp, YieldOp, is_collective
from meshir.dialect.partitioned import verify_partitioned
from meshir.dialect.provenance import PENDING_KEY, PROVENANCE_ATTR, RESHARD_KEY, WHOLE_KEY, Provenance, carried
from meshir.dialect.signature import defined_functions, is_mtf_function, refresh_function_type
from meshir.dialect.walk import values_within
from meshir.dialect.tensor_type import TensorType, format_axes

from ..collectives.provenance import (
    completed_reduction,
    halo_exchange,
    remark,
    shard_provenance,
    whole_dim,
    written_provenance,
)
from ..collectives.reshard_plan import plan_reshard
from ..analysis.cost_model import HALO_EXCHANGE, CostModel, collective_bytes, halo_bytes
from ..analysis.cost_model_options import CostModelOptions
from ..infra.registry import IRForm, ModulePass, option, register_pass

#: What this pass establishes and `mtf-lower-to-stablehlo{mode=explicit}` needs; the pass
#: manager checks it once, between the two (docs/partitioning.md).
PARTITIONED = IRForm("partitioned", verify_partitioned)


@register_pass
@dataclass
class InsertCollectivesPass(CostModelOptions, ModulePass):
    NAME = "mtf-insert-collectives"
    SUMMARY = "Turn reshards and pending reductions into collectives so every op runs on local shards"
    explain: bool = option(
        False, "record on each collective why it exists (mtf.provenance) and report it as a remark at its location")

    def output_form(self) -> IRForm:
        return PARTITIONED

    @classmethod
    def with_model(cls, model: CostModel, explain: bool = False) -> "InsertCollectivesPass":
        """The pass planning by `model`."""
        return cls(**cls.options_of(model), explain=explain)

    def apply(self, module_op) -> list[Diagnostic]:
        meshes = module_meshes(module_op)
        model = self.cost_model()
        remarks: list[Diagnostic] = []
        for fn in defined_functions(module_op):
            if not is_mtf_function(fn):
                continue  # plain StableHLO (or other) functions have nothing to partition
            mesh = function_mesh(fn, meshes)
            if mesh is not None:
                with fn.context:
                    remarks += _FunctionRewriter(fn, mesh.shape, model, self.explain).run()
        return remarks


def is_mtf_value(value) -> bool:
    t = value.type
    return t.typeid == ir.OpaqueType.static_typeid and ir.OpaqueType(t).dialect_namespace == "mtf"


def _type(value) -> TensorType:
    return TensorType.from_mlir(value.type)


class _FunctionRewriter:
    def __init__(self, fn, mesh_shape, model: CostModel, explain: bool):
        self.fn, self.mesh, self.model, self.explain = fn, mesh_shape, model, explain
        self.reduced: dict = {}  # pending value -> its all-reduced value
        self.pending: dict = {}  # pending value -> the Provenance of its pending reduction
        self.remarks: list[Diagnostic] = []

    def run(self) -> list[Diagnostic]:
        """Rewrite the function; the remarks of `explain`."""
        block = self.fn.regions[0].blocks[0]
        self._check_laid_out(block)
        self._rewrite_block(block)
        refresh_function_type(self.fn)
        return self.remarks

    def _rewrite_block(self, block) -> None:
        for op in list(block.operations):
            if isinstance(op, YieldOp) or op.operation.name == "func.return":
                self._rewrite_return(op)
            elif isinstance(op, ShardOp):
                self._rewrite_shard(op)
            elif is_collective(op):
                self._record_bytes(op)
            elif isinstance(op, LoopOp):
                self._rewrite_loop(op)
            elif op.operation.name.startswith("mtf."):
                self._rewrite_compute(op)

    def _rewrite_loop(self, op) -> None:
        """A loop takes no pending operand (its body is isolated); its body is rewritten
        like a function's, its yield like a return."""
        loc = op.location
        for k, v in enumerate(op.operation.operands):
            if _type(v).partial:
                op.operation.operands[k] = self._reduced(v, op, loc, op.operation.name,
                                                         "a loop's operand is never pending")
        for region in op.operation.regions:
            for block in region.blocks:
                self._rewrite_block(block)

    def _check_laid_out(self, block) -> None:
        diags = []
        for v in values_within(block):
            try:
                t = _type(v)
            except ValueError:
                continue
            free = [d.name for d in t.dims if d.axes is None]
            if free:
                loc = getattr(v.owner, "location", None) or self.fn.location  # block args: the function
                diags.append(Diagnostic(loc, f"{v.get_name()} has dims without a layout ({', '.join(free)}): "
                                             f"run mtf-propagate-sharding first"))
        if diags:
            raise MeshIRError("\n".join(str(d) for d in diags), diags)

    # -- emitting collectives ------------------------------------------------------------
    def _emit_steps(self, value, target: TensorType, before, loc, ip=None, why=None):
        """Collectives from `value`'s type to `target`, inserted before `before` (or at `ip`);
        `why()`: their Provenance, asked for only with `explain`."""
        ip = ip or ir.InsertionPoint(before)
        steps = plan_reshard(_type(value), target, self.mesh, self.model)
        why = why() if self.explain and steps and why is not None else None
        recorded = why.to_attribute() if why is not None else None
        for step in steps:
            attrs = {k: to_attribute(v) for k, v in step.attributes.items()}
            attrs["bytes_per_device"] = to_attribute(step.bytes_per_device)
            if recorded is not None:
                attrs[PROVENANCE_ATTR] = recorded
            op = step.op(step.result, [value], attrs, loc=loc, ip=ip)
            if recorded is not None:
                self.remarks.append(remark(op, step.bytes_per_device, why))
            value = op.result
        return value

    def _reduced(self, value, before, loc, needed_by: str, reason: str):
        """`value` with its pending reduction completed (one all_reduce, shared by later uses);
        `needed_by` (an op name) cannot take it pending, for `reason`."""
        if value not in self.reduced:
            self.reduced[value] = self._emit_steps(
                value, _type(value).without_partial(), before, loc,
                why=lambda: completed_reduction(self.pending.get(value), needed_by, reason, _type(value)))
        return self.reduced[value]

    # -- per op ----------------------------------------------------------------------------
    def _rewrite_return(self, op) -> None:
        name = op.operation.name
        why = "a function result is never pending" if name == "func.return" else "a carried value is never pending"
        for k, v in enumerate(op.operation.operands):
            if is_mtf_value(v) and _type(v).partial:  # a function may also return plain tensors
                # A return built without a location: the reduction is placed where the value was.
                loc = op.location if op.location != ir.Location.unknown() else _defined_at(v, op.location)
                op.operation.operands[k] = self._reduced(v, op, loc, name, why)

    def _rewrite_shard(self, op) -> None:
        loc, why = carried(op.location)
        source, target = op.operation.operands[0], op.result
        value = self._emit_steps(source, _type(target), op, loc, why=lambda: Provenance.merged([
            why.get(RESHARD_KEY) or shard_provenance(op, _type(source), _type(target), op.attr("reshard")),
            self.pending.get(source)]))  # a pending operand: what made it pending, too
        target.replace_all_uses_with(value)
        op.operation.erase()

    def _record_bytes(self, op) -> None:
        if "bytes_per_device" not in op.operation.attributes:
            axes = op.attr("axes") if "axes" in op.ATTRIBUTES else tuple(self.mesh)
            op.operation.attributes["bytes_per_device"] = to_attribute(
                collective_bytes(op.kind(), op.input_type, axes, self.mesh))
        if self.explain and PROVENANCE_ATTR not in op.operation.attributes:
            why = written_provenance(op, op.changed_dims())
            op.operation.attributes[PROVENANCE_ATTR] = why.to_attribute()
            self.remarks.append(remark(op, ir.IntegerAttr(op.operation.attributes["bytes_per_device"]).value, why))

    def _rewrite_compute(self, op) -> None:
        loc, why = carried(op.location)
        if why:
            op.operation.location = loc  # what propagation carried for this pass ends here
        name = op.operation.name
        halos = self._keep_halos(op, why.get(WHOLE_KEY))
        whole = [d for d in op.whole_dims() if d not in halos]
        kept_operands, kept_results = op.kept_split_values()
        for dim in whole:
            self._gather_operands(op, dim, why.get(WHOLE_KEY), kept_operands)
        for k, v in enumerate(op.operation.operands):
            # A pending value with several uses is reduced once and shared (Mesh-TensorFlow's
            # lazy all-reduce caches its reduction): one all_reduce instead of one per use.
            if _type(v).partial and (v in self.reduced or len(list(v.uses)) > 1):
                op.operation.operands[k] = self._reduced(v, op, loc, name, f"{name} is one of several uses of a pending "
                                                                          "value, which is reduced once and shared")
        types = [_type(v) for v in op.operation.operands]
        result = _type(op.operation.results[0])  # several results (split's pieces) are pending alike
        union = joined_sums(op, types, result)
        if union is not None:
            self._join_pending(op, loc, union)
            types = [_type(v) for v in op.operation.operands]
        for k, lazy in enumerate(lazy_operands(op, types, result)):
            if types[k].partial and not lazy:
                op.operation.operands[k] = self._reduced(op.operation.operands[k], op, loc, name,
                                                         f"{name} cannot compute on a pending value")
        types = [_type(v) for v in op.operation.operands]
        for i, result in enumerate(op.operation.results):
            t = _type(result)
            axes, reduction = result_partial(op, types, t)
            final = t.with_partial(axes, reduction)
            if i in kept_results:  # computed in the kept operand's layout of the whole dims
                source = types[min(kept_operands)]
                computed = final.with_layout({d: source.dim(d).axes or () for d in whole})
            else:
                computed = final.with_layout({d: () for d in whole})
            result.set_type(computed.to_mlir())
            if axes and self.explain:  # made pending here, and/or kept pending through a linear op
                self.pending[result] = Provenance.merged(
                    [why.get(PENDING_KEY)] + [self.pending.get(v) for v in op.operation.operands])
            if computed != final:
                self._resplit(op, result, final, why.get(WHOLE_KEY))

    def _join_pending(self, op, loc, union: tuple[str, ...]) -> None:
        """Make every operand of `op` (a sum of its operands) pending over `union`: each takes
        an `mtf.as_partial` over the axes it lacks, which moves nothing, so the sum stays lazy
        and one all-reduce completes it later instead of one per operand now."""
        for k, v in enumerate(op.operation.operands):
            t = _type(v)
            lacking = tuple(a for a in union if a not in t.partial)
            if not lacking:
                continue
            attrs = {"axes": to_attribute(lacking), "bytes_per_device": to_attribute(0)}
            joined = AsPartialOp(AsPartialOp.result_of(t, {"axes": lacking}), [v], attrs, loc=loc,
                                 ip=ir.InsertionPoint(op))
            if self.explain:
                why = Provenance(op.operation.name, (), f"{op.operation.name} sums values pending over different "
                                 f"axes: each is made pending over {format_axes(union)}, so that one all-reduce "
                                 "completes them later")
                joined.operation.attributes[PROVENANCE_ATTR] = why.to_attribute()
                self.remarks.append(remark(joined, 0, why))
                if v in self.pending:
                    self.pending[joined.result] = self.pending[v]
            op.operation.operands[k] = joined.result

    def _keep_halos(self, op, why: Provenance | None) -> dict:
        """The dims `op` computes along by a halo exchange instead of a gather (they stay
        split; dialect/halo.py), with the exchange's bytes (and with `explain`, its
        provenance) recorded on the op."""
        types = [_type(v) for v in op.operation.operands] + [_type(r) for r in op.operation.results]
        halos = split_halos(op, types, self.mesh)
        attrs = op.operation.attributes
        if halos:
            sent = sum(halo_bytes(types[0], h.dim, h.low, h.high, self.mesh) for h in halos.values())
            attrs["bytes_per_device"] = to_attribute(sent)
            if self.explain:
                exchange = halo_exchange(op, tuple(halos), why)
                attrs[PROVENANCE_ATTR] = exchange.to_attribute()
                self.remarks.append(remark(op, sent, exchange, HALO_EXCHANGE))
        elif merged := op.merge_bytes(types[0], self.mesh):
            # An op along a split dim that merges what each device found: a selection's
            # candidates, a scan's block totals, a slice's window (MtfOp.merged_dims).
            attrs["bytes_per_device"] = to_attribute(merged)
        else:
            for name in ("bytes_per_device", PROVENANCE_ATTR):
                if name in attrs:
                    del attrs[name]  # gathered: the op itself sends nothing
        return halos

    def _gather_operands(self, op, dim: str, why: Provenance | None, kept=frozenset()) -> None:
        """Make `dim` whole in every operand but the `kept` ones (ops that cut or join along it
        need it so)."""
        for k, v in enumerate(op.operation.operands):
            t = _type(v)
            if k not in kept and t.has(dim) and t.dim(dim).axes:
                op.operation.operands[k] = self._emit_steps(v, t.with_layout({dim: ()}), op, op.location,
                                                            why=lambda: whole_dim(op, dim, why))

    def _resplit(self, op, result, final: TensorType, why: Provenance | None) -> None:
        """Split the result computed whole to its final layout, for every user."""
        uses = [(use.owner, use.operand_number) for use in result.uses]
        resplit = self._emit_steps(result, final, None, op.location, ir.InsertionPoint.after(op),
                                   why=lambda: whole_dim(op, None, why, final))
        for owner, number in uses:
            owner.operands[number] = resplit


def _defined_at(value, fallback):
    """The location of the op that defines `value` (a block argument: `fallback`)."""
    owner = value.owner
    return carried(owner.location)[0] if hasattr(owner, "location") else fallback
