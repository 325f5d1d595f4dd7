"""Mixture of experts as GShard trained it: a router picks each token's top-k experts, each
expert takes at most `capacity` tokens of each group, and the experts' feed-forward layers
run where the `experts` dim is split, reached by one all-to-all each way.

    x           [group, tokens, d_model]      group: split over the data axis (e.g. batch)
    router      [d_model, experts_unsplit]    (moe_params)
    w1, w_gate  [experts, d_model, d_ff]      w_gate only for a gated (SwiGLU) expert
    w2          [experts, d_ff, d_model]

Gating runs on each group separately (GShard's groups): softmax over experts; the first
choice of every token in the group is placed before any second choice, in token order, at
the next free slot of its expert; a choice that finds its expert full is dropped (the token
then skips that expert: its output is the other choices' share, or zero). Top-2 gates are
renormalized over the two choices (GShard); a top-1 gate is the router's probability
(Switch). The auxiliary loss is GShard's: E^2 * mean over groups and experts of (fraction of
the group's first choices that went to the expert) x (mean router probability of it).

The layouts one rule set cannot express are written as names, as Mesh-TensorFlow did:
gating and the dispatched tensor use `experts_unsplit` (never split), the experts' inputs
and outputs `<group>_unsplit`; the renames from one to the other are the all-to-alls. Rules
split `experts` over the data axis (the one splitting `group`) and may name
`<group>_unsplit` for what is left of the data split (e.g. batch:(y,x), experts:x,
batch_unsplit:y), and `d_ff` over a model axis.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from meshir.api.ops import composites, elementwise
from meshir.api.ops.contraction import einsum, reduce_sum
from meshir.api.ops.creation import random_uniform
from meshir.api.ops.cumulative import cumsum
from meshir.api.ops.indexing import one_hot
from meshir.api.ops.selection import argmax
from meshir.api.ops.shape import rename, reshape, transpose
from meshir.api.programs.dims import Dim
from meshir.api.programs.tensor import Tensor

from . import _checks as checks
from .feedforward import ACTIVATIONS

__all__ = ["MoEOutput", "SECOND_POLICIES", "expert_capacity", "moe", "moe_params", "unsplit"]

#: What happens to the choices after the first: "all" dispatches every one; "random"
#: dispatches choice i with probability min(1, gate_i / second_threshold) (GShard's random
#: routing; needs a seed).
SECOND_POLICIES = ("all", "random")


def unsplit(name: str) -> str:
    """The name of a dim's never-split twin (`experts` -> `experts_unsplit`)."""
    return f"{name}_unsplit"


@dataclass(frozen=True)
class MoEOutput:
    """What `moe` returns: `output` with x's dims; `aux_loss` (0-d), the load-balancing loss
    times its weight, to add to the model's loss; `dropped` (0-d), the fraction of the
    token-to-expert assignments made that found their expert full."""

    output: Tensor
    aux_loss: Tensor
    dropped: Tensor


def moe_params(d_model: Dim, experts: Dim, d_ff: Dim, gated: bool = False) -> dict[str, list[Dim]]:
    """The parameters' dims, in argument order: router, w1, (w_gate), w2."""
    out = {"router": [d_model, Dim(unsplit(experts.name), experts.size)], "w1": [experts, d_model, d_ff]}
    if gated:
        out["w_gate"] = [experts, d_model, d_ff]
    out["w2"] = [experts, d_ff, d_model]
    return out


def expert_capacity(group_size: int, experts: int, k: int, capacity_factor: float) -> int:
    """Slots per expert per group: ceil(k * capacity_factor * group_size / experts), at least
    1 and at most the group size (capacity factor 1: room for every assignment when the
    router balances perfectly; GShard's 2N/E for top-2)."""
    return max(1, min(group_size, math.ceil(k * capacity_factor * group_size / experts - 1e-9)))


def _check_options(layer, k, experts, capacity_factor, aux_loss_weight, second_policy, second_threshold, seed):
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise checks.error(f"{layer}: k must be a positive int, got {k!r}")
    if k > experts:
        raise checks.error(f"{layer}: k={k} is larger than the number of experts ({experts})")
    if not isinstance(capacity_factor, (int, float)) or isinstance(capacity_factor, bool) or \
            not capacity_factor > 0 or math.isinf(capacity_factor):
        raise checks.error(f"{layer}: the capacity factor must be a finite number > 0, got {capacity_factor!r}")
    if not isinstance(aux_loss_weight, (int, float)) or not aux_loss_weight >= 0 or math.isinf(aux_loss_weight):
        raise checks.error(f"{layer}: the auxiliary loss weight must be a finite number >= 0, got "
                           f"{aux_loss_weight!r}")
    if second_policy not in SECOND_POLICIES:
        raise checks.error(f"{layer}: unknown second_policy {second_policy!r} (expected one of "
                           f"{', '.join(SECOND_POLICIES)})")
    if second_policy == "random" and k > 1:
        if seed is None:
            raise checks.error(f"{layer}: second_policy='random' needs a seed (an int or a 0-d i32 Tensor)")
        if not second_threshold > 0:
            raise checks.error(f"{layer}: second_threshold must be > 0, got {second_threshold!r}")


def moe(x, p, *, k: int = 2, capacity_factor: float = 1.25, group: str = "batch", tokens: str = "length",
        group_size: int | None = None, d_model: str = "d_model", experts: str = "experts", d_ff: str = "d_ff",
        activation: str | None = None, aux_loss_weight: float = 1e-2, second_policy: str = "all",
        second_threshold: float = 0.2, seed=None) -> MoEOutput:
    """The mixture-of-experts feed-forward layer on x [group, tokens, d_model] (any order).

    `k`: experts per token (1: Switch, 2: GShard). `capacity_factor`: see expert_capacity
    (GShard trained with 1.25 and evaluated with 2.0). `group_size`: tokens per gating group;
    None makes each index of `group` (each sequence) one group, a number regroups the
    group x tokens tokens in row-major order into groups of that many (the group count must
    still divide as `group` does). `activation`: of the experts' hidden layer (a name of
    meshir.layers.ACTIVATIONS; default "relu", or "silu" when gated). `aux_loss_weight`:
    multiplies the returned auxiliary loss. `second_policy`, `second_threshold`, `seed`: see
    SECOND_POLICIES."""
    layer = "meshir.layers.moe"
    p = checks.params(p, ["router", "w1", "w2"], layer, optional=["w_gate"])
    checks.tensor(x, layer, "the input")
    checks.exact_dims(x, [group, tokens, d_model], layer, "the input")
    eu = unsplit(experts)
    checks.exact_dims(p["router"], [d_model, eu], layer, "the parameter 'router'")
    for name in ("w1", "w_gate"):
        if name in p:
            checks.exact_dims(p[name], [experts, d_model, d_ff], layer, f"the parameter '{name}'")
    checks.exact_dims(p["w2"], [experts, d_ff, d_model], layer, "the parameter 'w2'")
    n_experts = checks.size(p["w1"], experts)
    if checks.size(p["router"], eu) != n_experts:
        raise checks.error(f"{layer}: the router {p['router'].type} scores {checks.size(p['router'], eu)} experts "
                           f"but w1 {p['w1'].type} has {n_experts}")
    for name, t in p.items():
        if d_model in t.names:
            checks.same_size(x, t, d_model, layer, "the input", f"the parameter '{name}'")
    _check_options(layer, k, n_experts, capacity_factor, aux_loss_weight, second_policy, second_threshold, seed)
    if seed is not None and not (isinstance(seed, Tensor) or (isinstance(seed, int) and not isinstance(seed, bool))):
        raise checks.error(f"{layer}: the seed must be an int or a 0-d i32 Tensor, got {seed!r}", checks.MeshIRTypeError)
    gated = "w_gate" in p
    activation = activation or ("silu" if gated else "relu")
    if activation not in ACTIVATIONS:
        raise checks.error(f"{layer}: unknown activation {activation!r} (expected one of {', '.join(ACTIVATIONS)})")

    original = [Dim(n, s) for n, s in zip(x.names, x.shape)]
    m = Dim(d_model, checks.size(x, d_model))
    if group_size is not None:
        x, g, s = _regrouped(x, group, tokens, m, group_size, layer)
    else:
        g, s = Dim(group, checks.size(x, group)), Dim(tokens, checks.size(x, tokens))
    e, e_u = Dim(experts, n_experts), Dim(eu, n_experts)
    c = Dim("expert_capacity", expert_capacity(s.size, n_experts, k, capacity_factor))
    dispatch, combine, aux, dropped = _gating(x, p["router"], g, s, e_u, c, k, second_policy, second_threshold, seed)

    # Dispatch: each expert's slots, still split like the groups; renamed, they are split
    # like the experts (the all-to-all).
    g_u = Dim(unsplit(group), g.size)
    expert_in = einsum(x, _as(dispatch, x), output=[e_u, g, c, m])
    expert_in = rename(expert_in, {eu: experts, group: g_u.name})
    f = Dim(d_ff, checks.size(p["w1"], d_ff))
    act = ACTIVATIONS[activation]
    hidden = einsum(expert_in, p["w1"], output=[e, g_u, c, f])
    hidden = act(einsum(expert_in, p["w_gate"], output=[e, g_u, c, f])) * hidden if gated else act(hidden)
    expert_out = einsum(hidden, p["w2"], output=[e, g_u, c, m])
    # Combine: back to the groups' split (the other all-to-all), weighted by the gates.
    expert_out = rename(expert_out, {experts: eu, g_u.name: group})
    y = einsum(expert_out, _as(combine, expert_out), output=[g, s, m])
    if group_size is not None:  # back to [group, tokens] in the order the tokens were regrouped
        y = reshape(y, [Dim(group, checks.size_of(original, group)), Dim(tokens, checks.size_of(original, tokens)), m])
    y = transpose(y, original) if [d.name for d in original] != y.names else y
    return MoEOutput(y, aux * float(aux_loss_weight), dropped)


def _as(t, like):
    return t if t.dtype == like.dtype else elementwise.cast(t, like.dtype)


def _regrouped(x, group, tokens, m, group_size, layer):
    """x [group, tokens, d_model] as [group (the number of groups), tokens (group_size), d_model]."""
    total = checks.size(x, group) * checks.size(x, tokens)
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1 or total % group_size:
        raise checks.error(f"{layer}: group_size must be a positive int that divides the {total} tokens "
                           f"({group} x {tokens}), got {group_size!r}")
    ordered = [Dim(group, checks.size(x, group)), Dim(tokens, checks.size(x, tokens)), m]
    if x.names != [d.name for d in ordered]:
        x = transpose(x, ordered)
    g, s = Dim(group, total // group_size), Dim(tokens, group_size)
    return reshape(x, [g, s, m]), g, s


def _gating(x, router, g, s, e_u, c, k, second_policy, second_threshold, seed):
    """(dispatch [g, s, e_u, c] of 0/1, combine [g, s, e_u, c] of gate weights, the unweighted
    auxiliary loss, the dropped fraction), in f32."""
    E = e_u.size
    logits = einsum(x, router, output=[g, s, e_u])
    gates = composites.softmax(logits if logits.dtype == "f32" else elementwise.cast(logits, "f32"), e_u.name)
    remaining = gates
    choices = []  # (expert index [g, s], one-hot mask [g, s, e_u], gate [g, s])
    for i in range(k):
        index = argmax(remaining, e_u.name)
        mask = one_hot(index, e_u)
        gate = reduce_sum(gates * mask, over=[e_u.name])
        if i == 0:
            # GShard's balancing loss: the fraction of first choices per expert times the
            # mean router probability, both per group, E^2 times their mean.
            density = composites.mean(mask, over=[s.name])
            proxy = composites.mean(gates, over=[s.name])
            aux = composites.mean(density * proxy) * float(E * E)
        if i < k - 1:
            remaining = remaining * (1.0 - mask)
        choices.append((index, mask, gate))
    if k > 1:  # renormalized over the k choices
        denominator = choices[0][2]
        for _, _, gate in choices[1:]:
            denominator = denominator + gate
        denominator = denominator + 1e-9
        choices = [(index, mask, gate / denominator) for index, mask, gate in choices]
    if second_policy == "random" and k > 1:
        kept = []
        for i, (index, mask, gate) in enumerate(choices):
            if i:
                draw_seed = composites.fold_in(seed, i) if isinstance(seed, Tensor) else (seed * 7919 + i) % 2**31
                draw = random_uniform([g, s], draw_seed)
                mask = mask * elementwise.cast(elementwise.less(draw, gate * (1.0 / second_threshold)), "f32")
            kept.append((index, mask, gate))
        choices = kept
    # Slots: all first choices of a group in token order, then all second choices, ...; a
    # choice past its expert's capacity is dropped.
    dispatch = combine = None
    used = None      # [g, e_u] slots taken by earlier choices
    made = placed = None
    for _, mask, gate in choices:
        position = cumsum(mask, s.name, exclusive=True)
        if used is not None:
            position = position + used
        position = position * mask
        fits = mask * elementwise.cast(elementwise.less(position, float(c.size)), "f32")
        used = reduce_sum(fits, over=[s.name]) if used is None else used + reduce_sum(fits, over=[s.name])
        made = reduce_sum(mask) if made is None else made + reduce_sum(mask)
        placed = reduce_sum(fits) if placed is None else placed + reduce_sum(fits)
        slot = one_hot(elementwise.cast(reduce_sum(position, over=[e_u.name]), "i32"), c)
        assigned = einsum(fits, slot, output=[g, s, e_u, c])
        weighted = assigned * gate
        dispatch = assigned if dispatch is None else dispatch + assigned
        combine = weighted if combine is None else combine + weighted
    dropped = 1.0 - placed / made
    return dispatch, combine, aux, dropped
