"""Composite functions built from `mtf` ops (not ops themselves): softmax, log_softmax,
layer_norm, cross_entropy, gelu, dropout, mean. Each is written so that propagation and
partitioning see only primitive ops."""
from __future__ import annotations

import math

import numpy as np

from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError

from meshir.api import _checks as checks
from meshir.api.ops import contraction as C
from meshir.api.ops import creation
from meshir.api.ops import elementwise as E
from meshir.api.ops import selection
from meshir.api.ops._builder import dispatching, runtime_arguments
from meshir.api.programs._locations import located_error
from meshir.api.programs.tensor import Tensor
from meshir.api.ops.indexing import one_hot

#: The public functions; meshir.api re-exports exactly these.
__all__ = ["categorical", "cross_entropy", "dropout", "fold_in", "gelu", "layer_norm", "log_softmax", "mean", "softmax"]

#: fold_in's multiplier: 2**32 / golden ratio, odd, as an int32 (its multiples spread evenly).
FOLD_MULTIPLIER = 0x9E3779B1 - 2**32


def _name(x: Tensor, dim, what: str) -> str:
    return checks.dim_name(dim, x, what)


def _float(x: Tensor, what: str) -> None:
    checks.tensor(x, f"the operand of mi.{what}")
    if not x.type.is_float:
        raise located_error(f"{what} needs a float tensor, got element type {x.dtype}", MeshIRTypeError)


@dispatching
def softmax(x: Tensor, dim) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) along `dim` (numerically stable)."""
    _float(x, "softmax")
    name = _name(x, dim, "softmax")
    e = E.exp(x - E.stop_gradient(C.reduce_max(x, over=[name])))
    return e / C.reduce_sum(e, over=[name])


@dispatching
def log_softmax(x: Tensor, dim) -> Tensor:
    """x - logsumexp(x) along `dim` (numerically stable)."""
    _float(x, "log_softmax")
    name = _name(x, dim, "log_softmax")
    shifted = x - E.stop_gradient(C.reduce_max(x, over=[name]))
    return shifted - E.log(C.reduce_sum(E.exp(shifted), over=[name]))


@dispatching
def mean(x: Tensor, over=None, output=None) -> Tensor:
    """Average over `over` (or the dims absent from `output`; default: all dims)."""
    _float(x, "mean")
    total = C.reduce_sum(x, output=output, over=over)
    count = x.type.num_elements // max(total.type.num_elements, 1)
    return total * (1.0 / count)


@dispatching
def layer_norm(x: Tensor, dim, scale: Tensor | None = None, bias: Tensor | None = None, epsilon: float = 1e-6) -> Tensor:
    """(x - mean) / sqrt(var + epsilon) along `dim`, then `* scale + bias` if given."""
    _float(x, "layer_norm")
    name = _name(x, dim, "layer_norm")
    checks.optional_tensor(scale, "the scale of mi.layer_norm")
    checks.optional_tensor(bias, "the bias of mi.layer_norm")
    epsilon = checks.real(epsilon, "the epsilon of mi.layer_norm", minimum=0.0)
    centered = x - mean(x, over=[name])
    variance = mean(centered * centered, over=[name])
    y = centered * E.rsqrt(variance + epsilon)
    if scale is not None:
        y = y * scale
    if bias is not None:
        y = y + bias
    return y


@dispatching
def cross_entropy(logits: Tensor, targets: Tensor, dim) -> Tensor:
    """-sum(targets * log_softmax(logits)) along the class dim `dim`.

    `targets` are probabilities over `dim` (e.g. a one_hot), or integer class ids without
    `dim` (turned into a one_hot).
    """
    _float(logits, "cross_entropy")
    name = _name(logits, dim, "cross_entropy")
    checks.tensor(targets, "the targets of mi.cross_entropy")
    if targets.type.is_integer and name not in targets.names:
        targets = one_hot(targets, logits.dim(name), dtype=logits.dtype)
    return -C.reduce_sum(targets * log_softmax(logits, name), over=[name])


@dispatching
def gelu(x: Tensor) -> Tensor:
    """GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    _float(x, "gelu")
    inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * 0.5 * (E.tanh(inner) + 1.0)


@dispatching
@runtime_arguments("seed")
def dropout(x: Tensor, rate: float, seed) -> Tensor:
    """Zero each element with probability `rate`, scale the rest by 1/(1-rate).

    The mask is a function of (seed, global index), so every layout drops the same elements.
    `seed`: an int (the same mask on every call) or a 0-d int32 Tensor (a new mask for each
    value: a training step's seed, `mi.fold_in(seed, layer)` for each layer).
    """
    _float(x, "dropout")
    given, rate = rate, checks.real(rate, "dropout rate")
    creation.seed_operands(seed, "mi.dropout")  # checked before the rate shortcut below
    if not 0.0 <= rate < 1.0:
        raise located_error(f"dropout rate must be in [0, 1), got {given!r}", MeshIRValueError)
    if rate == 0.0:
        return x
    keep = creation.random_uniform(x.dims, seed, dtype=x.dtype, program=x.program) >= rate
    return E.select(keep, x * (1.0 / (1.0 - rate)), 0.0)


@dispatching
@runtime_arguments("seed")
def categorical(logits: Tensor, dim, seed, temperature: float = 1.0) -> Tensor:
    """An i32 sample of `dim` at every position of `logits`' other dims, with probabilities
    softmax(logits / temperature) along `dim`, by the Gumbel-max trick as
    jax.random.categorical: argmax(logits / temperature + g), g = -log(-log(u)), u uniform in
    [tiny, 1) in f32. The noise is a function of (seed, global index), so every layout draws
    the same samples; `seed` is an int or a 0-d int32 Tensor (a new draw for each value)."""
    _float(logits, "categorical")
    name = checks.dim_name(dim, logits, "mi.categorical: dim")
    creation.seed_operands(seed, "mi.categorical")
    given, temperature = temperature, checks.real(temperature, "temperature of mi.categorical")
    if not (temperature > 0 and math.isfinite(temperature)):
        raise located_error(f"mi.categorical: temperature must be a positive finite number, got {given!r}",
                            MeshIRValueError)
    x = logits if logits.dtype == "f32" else E.cast(logits, "f32")
    u = creation.random_uniform(x.dims, seed, minval=float(np.finfo(np.float32).tiny), program=x.program)
    noise = -E.log(-E.log(u))
    return selection.argmax((x if temperature == 1.0 else x / temperature) + noise, name)


@dispatching
def fold_in(seed, data) -> Tensor:
    """A new seed from `seed` and an integer `data` (a step, a layer or microbatch index), as
    jax.random.fold_in: seed * 0x9E3779B1 + data in int32, wrapping. Distinct data under one
    seed give distinct seeds, and the random ops hash each seed, so their draws are unrelated.
    Both may be ints or 0-d int32 Tensors (at least one a Tensor); the result is a Tensor."""
    for value, what in ((seed, "seed"), (data, "data")):
        if isinstance(value, Tensor):
            creation.int32_scalar(value, f"the {what} of mi.fold_in")
        else:
            checks.integer(value, f"the {what} of mi.fold_in")
    tensors = [v for v in (seed, data) if isinstance(v, Tensor)]
    if not tensors:
        raise located_error("mi.fold_in needs a Tensor seed or data (with two ints, compute the seed in Python)",
                            MeshIRTypeError)

    def as_tensor(v):
        if isinstance(v, Tensor):
            return v
        wrapped = (int(v) + 2**31) % 2**32 - 2**31  # the int's int32 bits, as the seed attribute uses them
        return creation.constant(wrapped, [], dtype="i32", program=tensors[0].program)

    return as_tensor(seed) * FOLD_MULTIPLIER + as_tensor(data)
