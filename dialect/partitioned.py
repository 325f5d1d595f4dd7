"""The partitioned-form verifier: the invariants `mtf-insert-collectives` establishes and
`mtf-lower-to-stablehlo` relies on (docs/partitioning.md)."""
from __future__ import annotations

from .diagnostics import Diagnostic
from .halo import halos_of
from .layout_projection import merge_layouts, reshape_groups
from .linearity import lazy_operands
from .local_semantics import result_partial
from .mesh import function_mesh, module_meshes
from .ops import OP_CLASSES, LoopOp, ShardOp, YieldOp, is_collective
from .signature import defined_functions
from .tensor_type import TensorType, format_axes
from .verdicts import Verdicts
from .walk import ops_within


def verify_partitioned(module) -> list[Diagnostic]:
    """Diagnostics for every op of `module` that is not computable on local shards."""
    diags: list[Diagnostic] = []
    meshes = module_meshes(module.operation)
    for fn in defined_functions(module):
        mesh = function_mesh(fn, meshes)
        if mesh is None:
            continue
        for op in ops_within(fn.regions[0].blocks[0]):  # loop bodies too
            problem = _op_problem(op, mesh)
            if problem:
                diags.append(Diagnostic(op.location, f"'{op.operation.name}' op is not partitioned: {problem}"))
    return diags


def _types(values) -> list[TensorType | None]:
    out = []
    for v in values:
        try:
            out.append(TensorType.from_mlir(v.type))
        except ValueError:
            out.append(None)
    return out


def _problem(op, mesh) -> str | None:
    mesh_shape = mesh.shape
    name = op.operation.name
    operands, results = _types(op.operation.operands), _types(op.operation.results)
    for t in operands + results:
        if t is not None and any(d.axes is None for d in t.dims):
            return f"{t} has dims without a layout"
    if name == "func.return" or isinstance(op, YieldOp):
        pending = [t for t in operands if t is not None and t.partial]
        return f"returns a pending value {pending[0]}" if pending else None
    if name not in OP_CLASSES:
        return None
    if isinstance(op, LoopOp):
        for what, want, got in op.layout_pairs():
            if want != got:
                return f"{what} is {got}, its loop carries {want}"
        return None
    if isinstance(op, ShardOp):
        return "mtf.shard must have become collectives"
    if is_collective(op):
        return None if "bytes_per_device" in op.operation.attributes else "collective without bytes_per_device"
    for t, lazy in zip(operands, lazy_operands(op, operands, results[0].without_partial())):
        if t.partial and not lazy:
            return f"reads the pending value {t} where it is not linear"
    halos = halos_of(op, operands + results, mesh_shape)
    if any(h.fits for h in halos.values()) and "bytes_per_device" not in op.operation.attributes:
        return "halo exchange without bytes_per_device"
    kept_operands, kept_results = op.kept_split_values()
    kept, whole = [], []  # the values that keep the whole dims split, and the others
    for values, kept_indices in ((operands, kept_operands), (results, kept_results)):
        for k, t in enumerate(values):
            (kept if k in kept_indices else whole).append(t)
    for dim in op.whole_dims():
        halo = halos.get(dim)
        if halo is not None and halo.fits:
            continue
        why = f" (a halo of {max(halo.low, halo.high)} rows does not fit in blocks of {halo.block})" if halo else ""
        if len({t.dim(dim).axes for t in kept}) > 1:
            return f"'{dim}' must be laid out alike in the values that keep it split: {', '.join(map(str, kept))}"
        for t in whole:
            if t.has(dim) and t.dim(dim).axes:
                return f"'{dim}' must be whole on every device, got @{format_axes(t.dim(dim).axes)} in {t}{why}"
    problem = _layouts_disagree(op, operands, results, mesh_shape, halos)
    if problem:
        return problem
    for result in results:  # the pieces of a split are pending alike
        axes, reduction = result_partial(op, operands, result)
        if (result.partial, result.partial_reduction if result.partial else "sum") != (axes, reduction if axes else "sum"):
            return f"result must be pending over {format_axes(axes) if axes else 'no axes'}, got {result}"
    return None


def _layouts_disagree(op, operands, results, mesh_shape, halos) -> str | None:
    factors, result = op.FACTORS, results[0]
    if factors == "positional":
        src = operands[0]
        if [d.axes for d in src.dims] != [d.axes for d in result.dims]:
            return f"rename must keep layouts position by position: {src} -> {result}"
        return None
    if factors == "reshape":
        for g in reshape_groups(operands[0], result, 0, 1):
            a = merge_layouts([operands[0].size(d) for d in g.operand_dims], [operands[0].dim(d).axes for d in g.operand_dims], mesh_shape)
            b = merge_layouts([result.size(d) for d in g.result_dims], [result.dim(d).axes for d in g.result_dims], mesh_shape)
            if a is None or a != b:
                return f"reshape groups {g.operand_dims} -> {g.result_dims} are not laid out alike: {operands[0]} -> {result}"
        return None
    skip = (set(op.whole_dims()) - set(halos)) | set(op.lookup_dims())
    seen: dict[str, tuple] = {}
    owner: dict[str, str] = {}
    for t in operands + results:
        for d in t.dims:
            if d.name in skip:
                continue
            if d.name in seen and seen[d.name] != d.axes:
                return f"'{d.name}' is @{format_axes(seen[d.name])} and @{format_axes(d.axes)} among the operands and result"
            seen[d.name] = d.axes
            for a in d.axes:
                if owner.setdefault(a, d.name) != d.name:
                    return f"mesh axis '{a}' splits both '{owner[a]}' and '{d.name}' in one op"
    return None


_op_problem = Verdicts(_problem)
