"""Optimizers written in `mtf` ops: SGD with momentum, Adam / AdamW, Adafactor.

The optimizer protocol (docs/training.md), which a user's own optimizer follows too:

- `state_dims(param_dims) -> {slot: dims}`: the state each parameter needs, as named dims,
  so propagation lays it out like its parameter (Adafactor's factored moments have a subset
  of the parameter's dims and follow those dims' layouts);
- `update(param, grad, state, t) -> (new_param, new_state)`: one step, in mtf ops on Tensors
  inside the step's Program; `t` (1, 2, ...) is an f32 scalar Tensor, so one compiled step
  serves every step;
- optionally `learning_rate_at(t) -> Tensor` (for `metrics=("learning_rate",)`) and
  `for_parameters(names) -> {name: optimizer}` (a variant per parameter: a weight-decay mask).

Learning rates and weight decay are numbers or schedules (`mi.schedules`), evaluated at the
count of updates already applied, t − 1, as optax does.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError

from meshir.api import _checks as checks
from meshir.api.ops import contraction as C
from meshir.api.ops import creation
from meshir.api.ops import elementwise as E
from meshir.api.programs._locations import located_error
from meshir.api.programs.dims import Dim
from meshir.api.programs.tensor import Tensor
from meshir.api.training.schedules import check_rate, value_at


def _hyper(opt, field: str, low: float = 0.0, high: float | None = None, optional: bool = False) -> None:
    """Check the hyperparameter `field` of `opt`: a finite real in [low, high) (None allowed
    when `optional`), stored as a float; a located MeshIRError at the optimizer's creation."""
    value = getattr(opt, field)
    if value is None and optional:
        return
    value = checks.real(value, f"{type(opt).__name__} {field}", minimum=low, below=high)
    object.__setattr__(opt, field, value)


def _rate(opt, field: str, optional: bool = False) -> None:
    """Check `field`, a learning rate or weight decay: a number >= 0 or a schedule."""
    object.__setattr__(opt, field, check_rate(getattr(opt, field), f"{type(opt).__name__} {field}", optional))


def _rms(x: Tensor) -> Tensor:
    return E.sqrt(C.reduce_sum(x * x) * (1.0 / x.type.num_elements))


@dataclass(frozen=True)
class SGD:
    """p <- p - lr * v with v <- momentum * v + g (Nesterov: p <- p - lr * (g + momentum * v));
    without momentum p <- p - lr * g (optax.sgd)."""

    learning_rate: float = 0.1
    momentum: float = 0.0
    nesterov: bool = False

    def __post_init__(self):
        _rate(self, "learning_rate")
        _hyper(self, "momentum")
        checks.flag(self.nesterov, "SGD nesterov")

    def state_dims(self, param_dims: list[Dim]) -> dict[str, list[Dim]]:
        return {"velocity": list(param_dims)} if self.momentum else {}

    def learning_rate_at(self, t: Tensor):
        return value_at(self.learning_rate, t)

    def update(self, param: Tensor, grad: Tensor, state: dict[str, Tensor], t: Tensor):
        lr = self.learning_rate_at(t)
        if not self.momentum:
            return param - grad * lr, {}
        velocity = state["velocity"] * self.momentum + grad
        step = grad + velocity * self.momentum if self.nesterov else velocity
        return param - step * lr, {"velocity": velocity}


@dataclass(frozen=True)
class Adam:
    """Adam with bias correction (optax.adam): m <- b1 m + (1 - b1) g, v <- b2 v + (1 - b2) g²,
    p <- p - lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + epsilon). `weight_decay` > 0 adds
    weight_decay * p inside the parentheses, scaled by lr (decoupled, optax.adamw); a
    `weight_decay_mask` (parameter names to decay, or a function of the name) limits it."""

    learning_rate: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    epsilon: float = 1e-8
    weight_decay: float = 0.0
    weight_decay_mask: object = None

    def __post_init__(self):
        _rate(self, "learning_rate")
        _rate(self, "weight_decay")
        _hyper(self, "epsilon")
        _hyper(self, "beta1", high=1.0)
        _hyper(self, "beta2", high=1.0)
        mask = self.weight_decay_mask
        if mask is not None and not callable(mask):
            names = checks.sequence([mask] if isinstance(mask, str) else mask, "Adam weight_decay_mask")
            for n in names:
                checks.identifier(n, "a parameter name of Adam weight_decay_mask")
            object.__setattr__(self, "weight_decay_mask", frozenset(names))

    def for_parameters(self, names) -> dict:
        """This optimizer per parameter, without weight decay where the mask says so."""
        mask = self.weight_decay_mask
        if mask is None or not self.weight_decay:
            return {n: self for n in names}
        if isinstance(mask, frozenset):
            unknown = sorted(mask - set(names))
            if unknown:
                raise located_error(f"Adam weight_decay_mask names {unknown}, which are not parameters of the step "
                                    f"({', '.join(names)})", MeshIRValueError)
            decayed = {n: n in mask for n in names}
        else:
            decayed = {}
            for n in names:
                verdict = mask(n)
                if not isinstance(verdict, (bool, np.bool_)):
                    raise located_error(f"Adam weight_decay_mask({n!r}) must return a bool, got "
                                        f"{checks.describe(verdict)}", MeshIRTypeError)
                decayed[n] = bool(verdict)
        plain = replace(self, weight_decay=0.0, weight_decay_mask=None)
        return {n: self if decayed[n] else plain for n in names}

    def state_dims(self, param_dims: list[Dim]) -> dict[str, list[Dim]]:
        return {"m": list(param_dims), "v": list(param_dims)}

    def learning_rate_at(self, t: Tensor):
        return value_at(self.learning_rate, t)

    def update(self, param: Tensor, grad: Tensor, state: dict[str, Tensor], t: Tensor):
        m = state["m"] * self.beta1 + grad * (1.0 - self.beta1)
        v = state["v"] * self.beta2 + grad * grad * (1.0 - self.beta2)
        m_hat = m / (1.0 - E.pow(_scalar(self.beta1, t), t))
        v_hat = v / (1.0 - E.pow(_scalar(self.beta2, t), t))
        step = m_hat / (E.sqrt(v_hat) + self.epsilon)
        if self.weight_decay:
            step = step + param * value_at(self.weight_decay, t)
        return param - step * self.learning_rate_at(t), {"m": m, "v": v}


def AdamW(learning_rate: float = 1e-3, weight_decay: float = 1e-2, **kwargs) -> Adam:
    """Adam with decoupled weight decay (Loshchilov & Hutter). The default decay, 1e-2, is
    PyTorch's and Mesh-TF's; optax.adamw's is 1e-4."""
    return Adam(learning_rate=learning_rate, weight_decay=weight_decay, **kwargs)


@dataclass(frozen=True)
class Adafactor:
    """Adafactor (Shazeer & Stern, 2018) as in Mesh-TensorFlow: second moments of a parameter
    with two dims of at least `min_dim_size_to_factor` are factored into a row and a column
    accumulator over its two largest dims; relative step size min(1e-2, 1/sqrt(t)) scaled by
    the parameter's RMS; decay 1 - t^-0.8; update clipping at RMS `clipping_threshold`.
    A `learning_rate` (a number or schedule) replaces the relative step and the parameter
    scale: optax.adafactor(learning_rate, multiply_by_parameter_scale=False)."""

    learning_rate: float | None = None  # None: the relative step size above
    decay_rate: float = 0.8
    epsilon1: float = 1e-30
    epsilon2: float = 1e-3
    clipping_threshold: float = 1.0
    min_dim_size_to_factor: int = 128

    def __post_init__(self):
        _rate(self, "learning_rate", optional=True)
        _hyper(self, "decay_rate")
        for field in ("epsilon1", "epsilon2", "clipping_threshold"):
            _hyper(self, field)
        if self.clipping_threshold == 0:
            raise located_error("Adafactor clipping_threshold must be positive, got 0.0", MeshIRValueError)
        checks.integer(self.min_dim_size_to_factor, "Adafactor min_dim_size_to_factor", minimum=1)

    def factored_dims(self, param_dims: list[Dim]) -> tuple[Dim, Dim] | None:
        """The two largest dims (the later one first on ties), if both are large enough."""
        if len(param_dims) < 2:
            return None
        ordered = sorted(param_dims, key=lambda d: (d.size, param_dims.index(d)))
        row, col = ordered[-2], ordered[-1]
        return (row, col) if row.size >= self.min_dim_size_to_factor else None

    def state_dims(self, param_dims: list[Dim]) -> dict[str, list[Dim]]:
        factored = self.factored_dims(param_dims)
        if factored is None:
            return {"v": list(param_dims)}
        row, col = factored
        return {"vr": [d for d in param_dims if d != col], "vc": [d for d in param_dims if d != row]}

    def update(self, param: Tensor, grad: Tensor, state: dict[str, Tensor], t: Tensor):
        mixing = E.pow(t, _scalar(-self.decay_rate, t))  # 1 at t=1: the first moment is g^2
        decay = 1.0 - mixing
        g2 = grad * grad + self.epsilon1
        factored = self.factored_dims(param.dims)
        if factored is None:
            v = state["v"] * decay + g2 * mixing
            new_state = {"v": v}
            update = grad * E.rsqrt(v)
        else:
            row, col = factored
            vr = state["vr"] * decay + _mean(g2, col) * mixing
            vc = state["vc"] * decay + _mean(g2, row) * mixing
            new_state = {"vr": vr, "vc": vc}
            row_factor = E.rsqrt(vr / _mean(vr, row))
            update = grad * row_factor * E.rsqrt(vc)
        update = update / E.maximum(_rms(update) * (1.0 / self.clipping_threshold), 1.0)
        rate = self.learning_rate_at(t)
        if self.learning_rate is None:
            rate = rate * E.maximum(_rms(param), self.epsilon2)
        return param - update * rate, new_state

    def learning_rate_at(self, t: Tensor):
        """The given rate, or the relative step min(1e-2, 1/sqrt(t)) (before the parameter scale)."""
        if self.learning_rate is None:
            return E.minimum(E.rsqrt(t), 1e-2)
        rate = value_at(self.learning_rate, t)
        return rate if isinstance(rate, Tensor) else _scalar(rate, t)


def _mean(x: Tensor, dim: Dim) -> Tensor:
    return C.reduce_sum(x, over=[dim.name]) * (1.0 / dim.size)


def _scalar(value: float, like: Tensor) -> Tensor:
    return creation.constant(value, [], dtype=like.dtype, program=like.program)


def check_optimizer(optimizer) -> None:
    """A clear error for objects that are not optimizers."""
    if not (hasattr(optimizer, "state_dims") and hasattr(optimizer, "update")):
        raise located_error(f"{checks.describe(optimizer)} is not an optimizer (SGD, Adam, AdamW, Adafactor)",
                            MeshIRTypeError)

