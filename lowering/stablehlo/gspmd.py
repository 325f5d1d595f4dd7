"""gspmd mode: global StableHLO annotated with Shardy shardings, partitioned by XLA.

The input is `mtf` after `mtf-propagate-sharding` (every dim laid out, reshards written as
`mtf.shard`); the output of `mtf-insert-collectives` is accepted too. Each function becomes a
public `func.func` with the same global signature and `sdy.sharding`s as in explicit mode,
whose body is the *global* program:

- every op is lowered by the explicit mode's rule in a global `FunctionLowering` (no mesh: one device,
  whole dims, every block offset 0), so both modes share one implementation per op;
- each op's result is followed by `sdy.sharding_constraint` with its propagated layout
  (closed dims: XLA may not choose another), unless the value is already constrained alike;
- `mtf.shard` and the collectives are identities in global semantics (the interpreter's):
  they lower to the constraint of their result's layout alone;
- the ops whose explicit-mode rule does not suit a program XLA partitions have a
  "lower_global" rule of their own (dialect/op_registry.py), used on a mesh in gspmd mode;
- a pending (`partial`) value is its global sum, which the global ops compute directly; it
  gets no constraint (a sharding describes blocks of a complete value), the collective or
  layout of its consumer says where the sum is settled. Arguments and results may not be
  pending: a caller has no summands to give, and PJRT returns complete arrays.

XLA's Shardy partitioner then inserts the collectives (see docs/decisions.md, "gspmd mode").
"""
from __future__ import annotations

from meshir.dialect.diagnostics import Diagnostic
from meshir.dialect.mesh import Mesh, function_mesh, module_meshes
from meshir.dialect.op_registry import rule
from meshir.dialect.ops import OP_CLASSES, CumprodOp, CumsumOp, EinsumOp, OneHotOp
from meshir.dialect.signature import defined_functions
from meshir.dialect.tensor_type import TensorType

from . import collectives, contraction, cumulative, indexing
from .builder import Builder
from .types import Local, sharding_attr_text


# A shard or a collective never changes a global value (a shard's "lower" rule is this one).
rule("lower_global", *(cls for cls in OP_CLASSES.values() if cls.IS_COLLECTIVE))(collectives.identity)
# XLA partitions a max/min over a split dim with an all-reduce that drops NaN.
rule("lower_global", *contraction.REDUCTIONS)(contraction.reduce_rule(partitioned_by_xla=True))
# The literal forms, not scatter_add.py's per-device peephole: XLA partitions these.
rule("lower_global", EinsumOp)(contraction.einsum)
rule("lower_global", OneHotOp)(indexing.one_hot)


@rule("lower_global", CumsumOp, CumprodOp)
def cumulative_along_whole_dim(p, op) -> Local:
    """cumsum/cumprod with their dim constrained whole first. XLA's partitioner scans a split
    dim by padding halos of the scan's operand, and shares those halos between two scans of
    one operand whatever their init value: cumsum and cumprod of one array along a split dim
    give zeros for the product (jax.jit with NamedSharding does too with jax 0.10.2; fixed
    by 0.12.0.1; docs/decisions.md). XLA gathers the dim for a whole-block window anyway."""
    (x,) = p.operands(op)
    whole = op.input_type.with_layout({op.attr("dim"): ()})
    return cumulative.scan_of(p, op, p.after.constrain(x, whole))


class Constraints:
    """`after` hook of `FunctionLowering.lower_block`: the sharding constraint of each op's result.

    Remembers the sharding each program value is known to have (the arguments' from the
    signature), so an op that returns its operand unchanged (a shard to the same layout, a
    no-op reshape) adds no second constraint.
    """

    def __init__(self, b: Builder, mesh: Mesh, arg_types, args: list[Local]):
        self.b, self.mesh = b, mesh
        self.known = {v.name: sharding_attr_text(t, mesh) for t, v in zip(arg_types, args)}

    def __call__(self, op, value: Local, k: int = 0) -> Local:
        return self.constrain(value, TensorType.from_mlir(op.operation.results[k].type))

    def constrain(self, value: Local, t: TensorType) -> Local:
        """`value` constrained to `t`'s layout (unless it is known to have it, or is pending)."""
        if t.partial:
            return value
        sharding = sharding_attr_text(t, self.mesh)
        if self.known.get(value.name) == sharding:
            return value
        out = sharding_constraint(self.b, value, sharding)
        self.known[out.name] = sharding
        return out


def sharding_constraint(b: Builder, v: Local, sharding: str) -> Local:
    """`%c = sdy.sharding_constraint %v <@mesh, [...]>` (generic form, at `b.location`)."""
    out = Local(b.fresh(), v.shape, v.elem)
    line = f'{out.name} = "sdy.sharding_constraint"({v.name}) {{sharding = {sharding}}} : ({v.type}) -> {out.type}'
    b.lines.append(line + (f" {b.location}" if b.location else ""))
    return out


def verify_global(module) -> list[Diagnostic]:
    """What gspmd mode needs of its input: in a function with a mesh every dim has a layout
    (run mtf-propagate-sharding first); no argument or result is pending."""
    diags: list[Diagnostic] = []
    meshes = module_meshes(module.operation)
    for fn in defined_functions(module):
        mesh = function_mesh(fn, meshes)
        block = fn.regions[0].blocks[0]
        for i, arg in enumerate(block.arguments):
            t = _mtf_type(arg.type)
            if t is not None and t.partial:
                diags.append(Diagnostic(fn.location, f"'func.func' op argument #{i} is pending ({t}); "
                                        "arguments must be complete values"))
            if mesh is not None and t is not None and _free(t):
                diags.append(Diagnostic(fn.location, f"'func.func' op argument #{i} {t} has dims without a "
                                        "layout; gspmd mode lowers propagated IR (run mtf-propagate-sharding first)"))
        for op in block.operations:
            name = op.operation.name
            if name == "func.return":
                for i, v in enumerate(op.operation.operands):
                    t = _mtf_type(v.type)
                    if t is not None and t.partial:
                        diags.append(Diagnostic(op.location, f"'func.return' op returns the pending value {t} "
                                                f"(result #{i}); results must be complete values"))
                continue
            if mesh is None:
                continue
            for v in op.operation.results:
                t = _mtf_type(v.type)
                if t is not None and _free(t):
                    diags.append(Diagnostic(op.location, f"'{name}' op result {t} has dims without a layout; gspmd "
                                            "mode lowers propagated IR (run mtf-propagate-sharding first)"))
    return diags


def _mtf_type(t) -> TensorType | None:
    try:
        return TensorType.from_mlir(t)
    except ValueError:
        return None


def _free(t: TensorType) -> bool:
    return any(d.axes is None for d in t.dims)
