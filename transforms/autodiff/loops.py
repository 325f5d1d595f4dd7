"""Reverse mode through `mtf.scan` (static trip count): the backward pass is a reverse scan.

The forward scan is rebuilt to also stack the carry each iteration starts from (one stacked
result per carried value: what the backward needs saved). The backward scan runs from the
last index to the first; each iteration recomputes the body's ops from the saved carry, that
iteration's x slices and the invariants (the body is checkpointed at iteration boundaries:
memory grows with the carry, not with the body's intermediates; the saved carry is read through a
cut, `mtf.shard {cut = [every dim]}`, so it is saved in the carry's layout), then pulls back through
them the cotangents of the next carry and of that iteration's ys. It carries the carry's
cotangent and the invariants' summed cotangents, and stacks the xs' cotangents.

Every float block argument of the body gets a cotangent (activity inside the body is not
narrowed to the active carries): unused ones are zeros that canonicalization erases where
nothing reads them. `mtf.while` has no static trip count and no VJP: its rule says so.

The rules take a list of the results' cotangents, None where a result got none (rules.py);
the backward scan sweeps its body with gradient.py's functions, imported where called
(gradient.py imports this module).
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect.ops import ScanOp, ShardOp, WhileOp, YieldOp
from meshir.dialect.tensor_type import TensorType
from meshir.dialect.walk import clone_ops, named_attributes

from .emitter import Emitter, free, type_of
from .gradient import AutodiffError, active_values, pull_back
from .rules import vjp


@vjp(ScanOp)
def _scan(em, op, ct, wanted):
    """Every float operand gets a cotangent; the driver keeps the active ones'."""
    op, saved = _saving_carries(op)
    return _backward_scan(em, op, saved, ct)


@vjp(WhileOp)
def _while(em, op, ct, wanted):
    raise AutodiffError(op.location, f"cannot differentiate through '{op.operation.name}': its trip count is not "
                        "static (differentiate an mi.scan or mi.fori_loop)", located=True)


def _float(value) -> bool:
    return type_of(value).is_float


def _step_dim(op) -> str:
    """The scanned dim's name; a fori_loop's gets one no carried value uses."""
    dim = op.attr("dim")
    if dim:
        return dim
    names = {n for v in op.operation.operands for n in type_of(v).names}
    dim = "steps"
    while dim in names:
        dim += "_"
    return dim


def type_of_stacked(t, dim: str, length: int):
    """`t` stacked along a new leading dim `dim` (a scan's stacked result)."""
    return TensorType.make([(dim, length)] + [(d.name, d.size) for d in t.dims], t.element_type)


def _saving_carries(op):
    """`op` rebuilt to also stack each iteration's starting carry: (the new op, those
    stacked values). Uses of the old results move to the new op's."""
    carries, length, dim = op.carried, op.attr("length"), _step_dim(op)
    block = op.operation.regions[0].blocks[0]
    args = list(block.arguments)[1:1 + carries]
    old_types = [r.type for r in op.operation.results]
    saved_types = [type_of_stacked(type_of(a), dim, length).to_mlir() for a in args]
    attrs = dict(named_attributes(op.operation))
    attrs["dim"] = ir.StringAttr.get(dim)
    with op.location:
        new = ScanOp(old_types + saved_types, list(op.operation.operands), attrs, loc=op.location,
                     ip=ir.InsertionPoint(op))
    block.append_to(new.operation.regions[0])
    body = new.operation.regions[0].blocks[0]
    old_yield = list(body.operations)[-1]
    YieldOp([], list(old_yield.operation.operands) + list(body.arguments)[1:1 + carries], loc=old_yield.location,
            ip=ir.InsertionPoint(old_yield))
    old_yield.operation.erase()
    for old, fresh in zip(op.operation.results, new.operation.results):
        old.replace_all_uses_with(fresh)
    op.operation.erase()
    return new, list(new.operation.results)[len(old_types):]


def _backward_scan(em: Emitter, op, saved: list, result_cts: list) -> dict:
    carries, xs_n, inv_n = op.carried, op.xs_count, op.invariant_count
    length, dim = op.attr("length"), op.attr("dim")
    operands = list(op.operation.operands)
    carry_in, xs, invariants = operands[:carries], operands[carries:carries + xs_n], operands[carries + xs_n:]
    body = op.operation.regions[0].blocks[0]
    fwd_args = list(body.arguments)
    n_ys = len(op.operation.results) - carries - len(saved)
    ys_results = list(op.operation.results)[carries:carries + n_ys]

    float_carries = [k for k in range(carries) if _float(carry_in[k])]
    float_invs = [m for m in range(inv_n) if _float(invariants[m])]
    float_ys = [j for j in range(n_ys) if _float(ys_results[j])]
    float_xs = [j for j in range(xs_n) if _float(xs[j])]

    def ct_or_zeros(ct, value):
        return ct if ct is not None else em.zeros(free(type_of(value)))

    # the backward scan's operands: carried cotangents, then xs, then invariants
    init_ct = [ct_or_zeros(result_cts[k], op.operation.results[k]) for k in float_carries]
    init_inv = [em.zeros(free(type_of(invariants[m]))) for m in float_invs]
    ys_cts = [ct_or_zeros(result_cts[carries + j], ys_results[j]) for j in float_ys]
    b_carry = init_ct + init_inv
    b_xs = list(saved) + list(xs) + ys_cts
    b_operands = b_carry + b_xs + list(invariants)

    slice_type = lambda v: free(type_of(v)).with_dims(d for d in free(type_of(v)).dims if d.name != dim)  # noqa: E731
    arg_types = [type_of(fwd_args[0])] + [free(type_of(v)) for v in b_carry] + [slice_type(v) for v in b_xs] \
        + [free(type_of(v)) for v in invariants]
    i64 = ir.IntegerType.get_signless(64)
    attrs = {"length": ir.IntegerAttr.get(i64, length), "carries": ir.IntegerAttr.get(i64, len(b_carry)),
             "invariants": ir.IntegerAttr.get(i64, len(invariants)), "dim": ir.StringAttr.get(dim),
             "reverse": ir.BoolAttr.get(True)}
    result_types = [free(type_of(v)) for v in b_carry] + [type_of_stacked(slice_type(xs[j]), dim, length)
                                                          for j in float_xs]
    backward = ScanOp(result_types, b_operands, attrs, loc=em.loc, ip=em.ip)  # its body is filled below
    block = backward.operation.regions[0].blocks.append(*[t.to_mlir() for t in arg_types])
    args = list(block.arguments)
    i_arg = args[0]
    ct_args = args[1:1 + len(init_ct)]
    inv_ct_args = args[1 + len(init_ct):1 + len(b_carry)]
    rest = args[1 + len(b_carry):]
    carry_slices, x_slices = rest[:carries], rest[carries:carries + xs_n]
    y_ct_slices = rest[carries + xs_n:carries + xs_n + len(float_ys)]
    inv_args = rest[carries + xs_n + len(float_ys):]

    # recompute the body's ops from this iteration's saved carry (read through a cut: the
    # saved stack keeps the carry's layout, this body reshards what it reads) and slices
    def cut(a):
        names = ir.ArrayAttr.get([ir.StringAttr.get(d) for d in free(type_of(a)).names])
        return ShardOp(free(type_of(a)).to_mlir(), [a], {"cut": names}, loc=em.loc, ip=ir.InsertionPoint(block)).result

    read = [cut(a) for a in carry_slices]
    mapping = dict(zip(fwd_args, [i_arg] + read + x_slices + inv_args))
    fwd_ops = list(body.operations)
    clone_ops(fwd_ops[:-1], mapping, ir.InsertionPoint(block))  # after the cuts: the block holds just these
    recomputed = list(block.operations)
    yielded = [mapping.get(v, v) for v in fwd_ops[-1].operation.operands]

    # pull back through them
    inner = Emitter(ir.InsertionPoint(block), em.loc)
    sources = [carry_slices[k] for k in float_carries] + [x_slices[j] for j in float_xs] \
        + [inv_args[m] for m in float_invs]
    unsupported: set = set()
    active = active_values(set(sources), recomputed, unsupported)
    cts: dict = {}
    seeds = [(yielded[k], ct_args[n]) for n, k in enumerate(float_carries)] \
        + [(yielded[carries + j], y_ct_slices[n]) for n, j in enumerate(float_ys)]
    for value, ct in seeds:
        if value in active:
            ct = inner.fit(ct, free(type_of(value)))
            cts[value] = inner.add(cts[value], ct) if value in cts else ct
    for f in reversed(recomputed):
        pull_back(inner, f, cts, active, unsupported)
    inner.loc = em.loc
    def ct_of(value):
        return cts[value] if value in cts else inner.zeros(free(type_of(value)))

    new_ct = [ct_of(carry_slices[k]) for k in float_carries]
    new_inv = [inner.add(inv_ct_args[n], cts[inv_args[m]]) if inv_args[m] in cts else inv_ct_args[n]
               for n, m in enumerate(float_invs)]
    x_cts = [ct_of(x_slices[j]) for j in float_xs]
    YieldOp([], new_ct + new_inv + x_cts, loc=em.loc, ip=ir.InsertionPoint(block))

    out = list(backward.operation.results)
    pulled = {k: out[n] for n, k in enumerate(float_carries)}
    pulled.update({carries + xs_n + m: out[len(init_ct) + n] for n, m in enumerate(float_invs)})
    pulled.update({carries + j: out[len(b_carry) + n] for n, j in enumerate(float_xs)})
    return pulled
