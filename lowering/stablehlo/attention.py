"""Dot-product attention and its gradient on local shards, in blocks of keys.

The operands go to canonical axes [batch..., query, d] and [batch..., key, d] (the batch
dims in q's order), in f32. `implementation="blockwise"` runs a `stablehlo.while` over
blocks of `block_size` keys with a running max `m`, sum `l` and output `acc` (Rabe and
Staats's memory-efficient attention): each step holds [batch..., query, block], never the
whole weights. The keys are padded to a whole number of blocks and the padded keys masked
with -inf. `implementation="xla"` is the same arithmetic on one block of every key, without
a loop: einsum, softmax, einsum.

The gradient (flash attention's backward) first runs the forward's scan without the output
to get each row's max m and sum l, then scans the key blocks again: P = exp(S - m) / l, dV_j = Pᵀ·dO,
dS = P ∘ (dO·V_jᵀ - rowsum(dO ∘ O)), zero where a logit was hidden; dQ accumulates dS·K_j,
and dK_j = dSᵀ·Q and dV_j are written at the block's place. A bias's cotangent is dS,
summed over the dims it lacks.

The key length and key dim are whole on every device (mtf-insert-collectives gathers them);
a query length split over axes A puts the block of queries at its offset for `causal`.
"""
from __future__ import annotations

import numpy as np

from meshir.dialect.op_registry import rule
from meshir.dialect.ops import DotProductAttentionGradOp, DotProductAttentionOp
from meshir.dialect.ops.attention import MASK_VALUE

from . import builder as hlo
from .context import FunctionLowering
from .contraction import dot_general
from .device import block_index
from .loops import INDEX, while_loop
from .types import Local, compute_element


class _Attention:
    """One attention op's operands on canonical axes, and the facts the blocks need."""

    def __init__(self, p: FunctionLowering, op, values: list[Local]):
        b = self.b = p.b
        q_t, k_t, v_t = op.operand_types[:3]
        self.length, self.keys = op.attr("query_length"), op.attr("key_length")
        key_dim, value_dim = op.attr("key_dim"), op.attr("value_dim")
        self.batch = [n for n in q_t.names if n not in (self.length, key_dim)]
        self.q_names = [*self.batch, self.length, key_dim]
        self.k_names = [*self.batch, self.keys, key_dim]
        self.v_names = [*self.batch, self.keys, value_dim]
        self.weights = [*self.batch, self.length, self.keys]
        elem = self.elem = compute_element(values[0].elem)  # f32 for bf16/f16
        self.q = _to(b, values[0], q_t.names, self.q_names, elem)
        self.nb = len(self.batch)
        k, v = (_broadcast(b, x, t.names, names, self.q.shape[:self.nb], elem)
                for x, t, names in ((values[1], k_t, self.k_names), (values[2], v_t, self.v_names)))
        self.L, self.M = self.q.shape[-2], k.shape[-2]  # the key length is whole: local = global
        self.block, self.blocks = op.key_blocks()
        pad = self.blocks * self.block - self.M
        self.k, self.v = (_pad_along(b, x, self.nb, pad, 0.0) for x in (k, v))
        self.scale, self.causal = op.attr("scale"), op.attr("causal")
        axes = p.split_axes(q_t, q_t.index(self.length))
        offset = hlo.binary(b, "multiply", block_index(b, p.mesh, axes), hlo.constant(b, self.L, INDEX))
        global_length = self.L * (int(np.prod([p.mesh.shape[a] for a in axes])) if axes else 1)
        shift = hlo.constant(b, self.M - global_length, INDEX, (self.L,))
        # The last key a query sees (causal), as a position along the padded keys.
        self.last = hlo.binary(b, "add", hlo.binary(b, "add", hlo.iota(b, (self.L,), 0, INDEX),
                                                    hlo.scalar_to(b, offset, (self.L,))), shift)
        self.extras: dict[str, tuple[Local, list[str], list[str]]] = {}  # role -> (value, its names, own names)
        for role in ("mask", "bias"):
            i = op.extra_index(role)
            if i is None:
                continue
            t = op.operand_types[i]
            names = [n for n in self.weights if n in t.names]
            x = _to(b, values[i], t.names, names, elem if role == "bias" else "i1")
            if self.keys in names:
                x = _pad_along(b, x, names.index(self.keys), pad, False if role == "mask" else 0.0)
            self.extras[role] = (x, names, list(t.names))

    def state(self) -> list[Local]:
        """The invariants a loop body reads, in a fixed order (regions see only their state)."""
        return [self.q, self.k, self.v, self.last] + [self.extras[r][0] for r in ("mask", "bias") if r in self.extras]

    def take(self, values: list[Local]):
        """The invariants back from a loop body's state."""
        self.q, self.k, self.v, self.last = values[:4]
        rest = values[4:]
        for r in ("mask", "bias"):
            if r in self.extras:
                x, names, own = self.extras[r]
                self.extras[r] = (rest.pop(0), names, own)

    def block_starts(self, i: Local, rank: int, axis: int) -> list[Local]:
        """The start indices of key block `i` in an array of `rank` whose keys are on `axis`."""
        zero = hlo.constant(self.b, 0, INDEX)
        start = hlo.binary(self.b, "multiply", i, hlo.constant(self.b, self.block, INDEX))
        return [start if a == axis else zero for a in range(rank)]

    def block_of(self, x: Local, i: Local, axis: int) -> Local:
        """Key block `i` of `x`, whose keys are on `axis`."""
        sizes = tuple(self.block if a == axis else n for a, n in enumerate(x.shape))
        return hlo.dynamic_slice(self.b, x, self.block_starts(i, x.rank, axis), sizes)

    def key_block(self, x: Local, i: Local) -> Local:
        """Block `i` of keys of a canonical [batch..., key, d] array."""
        return self.block_of(x, i, self.nb)

    def _extra_block(self, role: str, i: Local) -> Local:
        """The mask or bias of block `i`, broadcast to [batch..., query, block]."""
        b, (x, names, _) = self.b, self.extras[role]
        if self.keys in names:
            x = self.block_of(x, i, names.index(self.keys))
        shape = (*self.q.shape[:-1], self.block)
        return hlo.broadcast_in_dim(b, x, shape, [self.weights.index(n) for n in names])

    def logits(self, i: Local) -> tuple[Local, Local | None]:
        """The scaled, biased, masked logits of block `i` [batch..., query, block], and where
        they were seen (None: everywhere), hidden logits replaced by MASK_VALUE, padded keys -inf."""
        b, nb = self.b, self.nb
        s = dot_general(b, self.q, self.key_block(self.k, i), [(a, a) for a in range(nb)], [(nb + 1, nb + 1)])
        s = hlo.binary(b, "multiply", s, hlo.splat_like(b, self.scale, s))
        if "bias" in self.extras:
            s = hlo.binary(b, "add", s, self._extra_block("bias", i))
        start = self.block_starts(i, 1, 0)[0]
        pos = hlo.binary(b, "add", hlo.iota(b, (self.L, self.block), 1, INDEX),
                         hlo.scalar_to(b, start, (self.L, self.block)))
        rows = list(range(nb, nb + 2))
        seen = None
        if self.causal:
            last = hlo.broadcast_in_dim(b, self.last, (self.L, self.block), [0])
            seen = hlo.broadcast_in_dim(b, hlo.compare(b, "LE", pos, last), s.shape, rows)
        if "mask" in self.extras:
            mask = self._extra_block("mask", i)
            seen = mask if seen is None else hlo.binary(b, "and", seen, mask)
        if seen is not None:
            s = hlo.select(b, seen, s, hlo.splat_like(b, MASK_VALUE, s))
        if self.blocks * self.block > self.M:
            real = hlo.broadcast_in_dim(b, hlo.compare(b, "LT", pos, hlo.constant(b, self.M, INDEX, pos.shape)),
                                        s.shape, rows)
            s = hlo.select(b, real, s, hlo.splat_like(b, -np.inf, s))
            seen = real if seen is None else hlo.binary(b, "and", seen, real)
        return s, seen

    def rows(self, x: Local) -> Local:
        """A per-row [batch..., query] value broadcast along the block."""
        return hlo.broadcast_in_dim(self.b, x, (*x.shape, self.block), list(range(x.rank)))


def _to(b, x: Local, names, canonical, elem: str) -> Local:
    """`x` (dims `names`) with its dims in `canonical`'s order, as `elem`."""
    names = list(names)
    return hlo.convert(b, hlo.transpose(b, x, [names.index(n) for n in canonical]), elem)


def _broadcast(b, x: Local, names, canonical, batch_shape, elem: str) -> Local:
    """A key or value on the canonical axes, broadcast along the batch dims it lacks
    (grouped-query attention: one key head for several query heads)."""
    present = [n for n in canonical if n in names]
    x = _to(b, x, names, present, elem)
    shape = (*batch_shape, *x.shape[-2:])
    return hlo.broadcast_in_dim(b, x, shape, [canonical.index(n) for n in present])


def _pad_along(b, x: Local, axis: int, amount: int, value) -> Local:
    if not amount:
        return x
    return hlo.pad(b, x, hlo.constant(b, value, x.elem), axis, 0, amount)


def _blocks(a: _Attention, carried: list[Local], step) -> list[Local]:
    """`step(i, carried) -> carried` over the key blocks: a while loop, or one call when the
    keys are one block (the "xla" form)."""
    b = a.b
    if a.blocks == 1:
        return step(hlo.constant(b, 0, INDEX), carried)
    invariants = a.state()
    n = len(carried)

    def cond(args):
        return hlo.compare(b, "LT", args[0], hlo.constant(b, a.blocks, INDEX))

    def body(args):
        a.take(args[1 + n:])
        out = step(args[0], args[1:1 + n])
        return [hlo.binary(b, "add", args[0], hlo.constant(b, 1, INDEX))] + out + args[1 + n:]

    saved = a.state()
    results = while_loop(b, [hlo.constant(b, 0, INDEX)] + carried + invariants, cond, body)
    a.take(saved)
    return results[1:1 + n]


def _softmax_scan(a: _Attention, with_output: bool) -> list[Local]:
    """(m, l[, acc]): each row's running max and sum of exp over every key block, and the
    unnormalised output."""
    b, rows = a.b, a.q.shape[:-1]
    carried = [hlo.constant(b, -np.inf, a.elem, rows), hlo.constant(b, 0.0, a.elem, rows)]
    if with_output:
        carried.append(hlo.constant(b, 0.0, a.elem, (*rows, a.v.shape[-1])))

    def step(i, state):
        s, _ = a.logits(i)
        m = hlo.binary(b, "maximum", state[0], hlo.reduce(b, s, [s.rank - 1], "max"))
        correction = hlo.unary(b, "exponential", hlo.binary(b, "subtract", state[0], m))
        e = hlo.unary(b, "exponential", hlo.binary(b, "subtract", s, a.rows(m)))
        total = hlo.binary(b, "add", hlo.binary(b, "multiply", state[1], correction), hlo.reduce(b, e, [e.rank - 1], "sum"))
        out = [m, total]
        if with_output:
            nb = a.nb
            pv = dot_general(b, e, a.key_block(a.v, i), [(d, d) for d in range(nb)], [(nb + 1, nb)])
            scaled = hlo.binary(b, "multiply", state[2], hlo.broadcast_in_dim(b, correction, pv.shape,
                                                                              list(range(correction.rank))))
            out.append(hlo.binary(b, "add", scaled, pv))
        return out

    return _blocks(a, carried, step)


def _back(b, x: Local, canonical, names, elem) -> Local:
    """A canonical value back in the op's own dim order and element type, summed over the
    canonical dims `names` lacks (a shared key's cotangent over the query heads)."""
    canonical = list(canonical)
    x = hlo.reduce(b, x, [d for d, n in enumerate(canonical) if n not in names], "sum")
    kept = [n for n in canonical if n in names]
    return hlo.convert(b, hlo.transpose(b, x, [kept.index(n) for n in names]), elem)


@rule("lower", DotProductAttentionOp)
def dot_product_attention(p: FunctionLowering, op) -> Local:
    a = _Attention(p, op, p.operands(op))
    _, total, acc = _softmax_scan(a, with_output=True)
    out = hlo.binary(a.b, "divide", acc, hlo.broadcast_in_dim(a.b, total, acc.shape, list(range(total.rank))))
    result = op.result_type
    return _back(a.b, out, [*a.batch, a.length, op.attr("value_dim")], result.names, result.element_type)


@rule("lower", DotProductAttentionGradOp)
def dot_product_attention_grad(p: FunctionLowering, op) -> list[Local]:
    values = p.operands(op)
    a = _Attention(p, op, values)
    b, nb = a.b, a.nb
    out_t, ct_t = op.operand_types[-2:]
    value_dim = op.attr("value_dim")
    rows_names = [*a.batch, a.length, value_dim]
    out, ct = (_to(b, x, t.names, rows_names, a.elem) for x, t in zip(values[-2:], (out_t, ct_t)))
    # P = exp(S - m) / l, not exp(S - log-sum-exp): a fully hidden row has m = MASK_VALUE, where
    # f32 cannot hold m + log(l) apart from m. With one block of keys, m and l come from the
    # block's own logits; with several, from a first scan.
    one_pass = a.blocks == 1
    stats = [] if one_pass else list(_softmax_scan(a, with_output=False))
    if stats:
        stats[1] = hlo.binary(b, "divide", hlo.splat_like(b, 1.0, stats[1]), stats[1])
    delta = hlo.reduce(b, hlo.binary(b, "multiply", ct, out), [out.rank - 1], "sum")
    bias = a.extras.get("bias")
    carried = [hlo.constant(b, 0.0, a.elem, a.q.shape), hlo.constant(b, 0.0, a.elem, a.k.shape),
               hlo.constant(b, 0.0, a.elem, a.v.shape)]
    if bias is not None:
        carried.append(hlo.constant(b, 0.0, a.elem, bias[0].shape))
    carried += [ct, delta, *stats]  # read-only, carried so that the loop body sees them
    batch = [(d, d) for d in range(nb)]

    def step(i, state):
        dq, dk, dv, *rest = state
        dbias = rest.pop(0) if bias is not None else None
        ct, delta, *stats = rest
        s, seen = a.logits(i)
        m = stats[0] if stats else hlo.reduce(b, s, [s.rank - 1], "max")
        e = hlo.unary(b, "exponential", hlo.binary(b, "subtract", s, a.rows(m)))
        if stats:
            inverse = stats[1]
        else:
            total = hlo.reduce(b, e, [e.rank - 1], "sum")
            inverse = hlo.binary(b, "divide", hlo.splat_like(b, 1.0, total), total)
        prob = hlo.binary(b, "multiply", e, a.rows(inverse))
        v_block, k_block = a.key_block(a.v, i), a.key_block(a.k, i)
        dv_block = dot_general(b, prob, ct, batch, [(nb, nb)])
        dp = dot_general(b, ct, v_block, batch, [(nb + 1, nb + 1)])
        ds = hlo.binary(b, "multiply", prob, hlo.binary(b, "subtract", dp, a.rows(delta)))
        if seen is not None:
            ds = hlo.select(b, seen, ds, hlo.splat_like(b, 0.0, ds))
        scale = hlo.splat_like(b, a.scale, ds)
        ds_scaled = hlo.binary(b, "multiply", ds, scale)
        dq = hlo.binary(b, "add", dq, dot_general(b, ds_scaled, k_block, batch, [(nb + 1, nb)]))
        dk_block = dot_general(b, ds_scaled, a.q, batch, [(nb, nb)])
        at = a.block_starts(i, dk.rank, nb)
        dk = hlo.dynamic_update_slice(b, dk, dk_block, at) if a.blocks > 1 else dk_block
        dv = hlo.dynamic_update_slice(b, dv, dv_block, at) if a.blocks > 1 else dv_block
        out = [dq, dk, dv]
        if dbias is not None:
            _, names, _ = bias
            piece = hlo.reduce(b, ds, [d for d, n in enumerate(a.weights) if n not in names], "sum")
            if a.keys in names:
                starts = a.block_starts(i, piece.rank, names.index(a.keys))
                dbias = hlo.dynamic_update_slice(b, dbias, piece, starts) if a.blocks > 1 else piece
            else:
                dbias = hlo.binary(b, "add", dbias, piece)
            out.append(dbias)
        return out + [ct, delta, *stats]

    grads = _blocks(a, carried, step)
    q_t, k_t, v_t = op.operand_types[:3]
    dq, dk, dv = grads[:3]
    dk, dv = (hlo.slice_along(b, x, nb, 0, a.M) for x in (dk, dv))
    results = [_back(b, dq, a.q_names, q_t.names, q_t.element_type),
               _back(b, dk, a.k_names, k_t.names, k_t.element_type),
               _back(b, dv, a.v_names, v_t.names, v_t.element_type)]
    if bias is not None:
        dbias, names, own = grads[3], bias[1], bias[2]
        if a.keys in names:
            dbias = hlo.slice_along(b, dbias, names.index(a.keys), 0, a.M)
        bias_t = op.operand_types[op.extra_index("bias")]
        results.append(_back(b, dbias, names, own, bias_t.element_type))
    return results
