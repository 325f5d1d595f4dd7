"""Learning-rate (and weight-decay) schedules: functions of the step, computed inside the step.

    lr = mi.schedules.warmup_cosine_decay(peak=1e-3, warmup_steps=100, decay_steps=2000)
    step = mi.train_step(loss, mi.AdamW(lr, weight_decay=1e-2))

Conventions are optax's, so a schedule written for optax gives the same numbers here: a
schedule is evaluated at `count`, the number of updates already applied (0 at the first
step: `step=t` gives count t − 1), and a schedule past its end holds its end value. Each
schedule is a frozen dataclass; calling it on a scalar f32 Tensor builds `mtf` ops (so one
compiled step serves the whole schedule), on a number or NumPy array it computes the same
formula with NumPy (for plots, logs and tests). A user's own schedule is any callable of the
count Tensor that returns a scalar Tensor.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError

from meshir.api import _checks as checks
from meshir.api.ops import creation
from meshir.api.ops import elementwise as E
from meshir.api.programs._locations import located_error
from meshir.api.programs.tensor import Tensor

__all__ = ["Schedule", "constant", "cosine_decay", "join", "linear", "linear_warmup", "piecewise_constant",
           "warmup_cosine_decay"]


class _NumPy:
    """The few functions the formulas need, on numbers and NumPy arrays."""

    minimum, maximum, cos = staticmethod(np.minimum), staticmethod(np.maximum), staticmethod(np.cos)

    @staticmethod
    def where(cond, a, b):
        return np.where(cond, a, b)


class _Mtf:
    """The same functions as `mtf` ops on scalar Tensors."""

    minimum, maximum, cos = staticmethod(E.minimum), staticmethod(E.maximum), staticmethod(E.cos)

    @staticmethod
    def where(cond, a, b):
        like = cond.program
        return E.select(cond, _tensor(a, like), _tensor(b, like))


def _tensor(x, program):
    return x if isinstance(x, Tensor) else creation.constant(float(x), [], dtype="f32", program=program)


def _backend(count):
    if isinstance(count, Tensor):
        if not count.type.is_float or count.dims:
            raise located_error(f"a schedule's count must be a scalar float Tensor, got {count.type}",
                                MeshIRTypeError)
        return _Mtf
    if isinstance(count, (bool, np.bool_)):
        raise located_error(f"a schedule's count must be a number, got {checks.describe(count)}", MeshIRTypeError)
    try:
        return _NumPy if np.asarray(count).dtype.kind in "iuf" else None
    except TypeError:
        return None


class Schedule:
    """Base of the built-in schedules: `schedule(count)` on a Tensor or on numbers."""

    def __call__(self, count):
        ops = _backend(count)
        if ops is None:
            raise located_error(f"a schedule's count must be a scalar float Tensor or a number, got "
                                f"{checks.describe(count)}", MeshIRTypeError)
        value = self._value(ops, count if ops is _Mtf else np.asarray(count, dtype=np.float64))
        return value if ops is _Mtf else (float(value) if np.ndim(value) == 0 else value)

    def _value(self, ops, count):
        raise NotImplementedError


def _steps(value, what: str) -> int:
    return checks.integer(value, what, minimum=0)


@dataclass(frozen=True)
class _Constant(Schedule):
    value: float

    def _value(self, ops, count):
        return count * 0.0 + self.value


@dataclass(frozen=True)
class _Linear(Schedule):
    init: float
    end: float
    transition_steps: int
    transition_begin: int = 0

    def _value(self, ops, count):
        if self.transition_steps == 0:  # optax: a constant schedule of `init`
            return count * 0.0 + self.init
        done = ops.minimum(ops.maximum(count - float(self.transition_begin), 0.0), float(self.transition_steps))
        return (self.init - self.end) * (1.0 - done * (1.0 / self.transition_steps)) + self.end


@dataclass(frozen=True)
class _CosineDecay(Schedule):
    init: float
    decay_steps: int
    alpha: float = 0.0
    exponent: float = 1.0

    def _value(self, ops, count):
        done = ops.minimum(count, float(self.decay_steps))
        cosine = (ops.cos(done * (math.pi / self.decay_steps)) + 1.0) * 0.5
        shaped = cosine if self.exponent == 1.0 else cosine**self.exponent
        return (shaped * (1.0 - self.alpha) + self.alpha) * self.init


@dataclass(frozen=True)
class _PiecewiseConstant(Schedule):
    init: float
    boundaries_and_scales: tuple[tuple[int, float], ...]

    def _value(self, ops, count):
        value = count * 0.0 + self.init
        for boundary, scale in self.boundaries_and_scales:  # from `boundary` on, times `scale`
            value = ops.where(count < float(boundary), value, value * scale)
        return value


@dataclass(frozen=True)
class _Join(Schedule):
    schedules: tuple
    boundaries: tuple[int, ...]

    def _value(self, ops, count):
        value = _call(self.schedules[0], count)
        for boundary, schedule in zip(self.boundaries, self.schedules[1:]):
            value = ops.where(count < float(boundary), value, _call(schedule, count - float(boundary)))
        return value


def _call(schedule, count):
    """A schedule of a join: a built-in one, or the user's callable (Tensor counts only)."""
    value = schedule(count)
    if isinstance(count, Tensor):
        value = checks.tensor(value, "the value of a schedule")
        if value.dims or not value.type.is_float:
            raise located_error(f"a schedule must return a scalar float Tensor, got {value.type}", MeshIRTypeError)
    return value


def constant(value: float) -> Schedule:
    """`value` at every step (optax.constant_schedule)."""
    return _Constant(checks.real(value, "the value of mi.schedules.constant"))


def linear(init: float, end: float, transition_steps: int, transition_begin: int = 0) -> Schedule:
    """From `init` to `end` linearly over `transition_steps` updates, starting after
    `transition_begin` (optax.linear_schedule); `transition_steps=0`: `init` throughout."""
    what = "mi.schedules.linear"
    return _Linear(checks.real(init, f"init of {what}"), checks.real(end, f"end of {what}"),
                   _steps(transition_steps, f"transition_steps of {what}"),
                   _steps(transition_begin, f"transition_begin of {what}"))


def linear_warmup(peak: float, warmup_steps: int, init: float = 0.0) -> Schedule:
    """From `init` up to `peak` over `warmup_steps`, then `peak`."""
    what = "mi.schedules.linear_warmup"
    return _Linear(checks.real(init, f"init of {what}"), checks.real(peak, f"peak of {what}"),
                   _steps(warmup_steps, f"warmup_steps of {what}"))


def cosine_decay(init: float, decay_steps: int, alpha: float = 0.0, exponent: float = 1.0) -> Schedule:
    """`init * ((1 - alpha) * c**exponent + alpha)`, c = (1 + cos(pi * min(count, decay_steps)
    / decay_steps)) / 2 (optax.cosine_decay_schedule): from `init` down to `alpha * init`."""
    what = "mi.schedules.cosine_decay"
    decay_steps = checks.integer(decay_steps, f"decay_steps of {what}", minimum=1)
    return _CosineDecay(checks.real(init, f"init of {what}"), decay_steps, checks.real(alpha, f"alpha of {what}"),
                        checks.real(exponent, f"exponent of {what}"))


def piecewise_constant(init: float, boundaries_and_scales: dict[int, float]) -> Schedule:
    """`init`, multiplied by `scale` from each `boundary` count on
    (optax.piecewise_constant_schedule): `{1000: 0.1, 2000: 0.1}` divides by 10 twice."""
    what = "mi.schedules.piecewise_constant"
    if not isinstance(boundaries_and_scales, dict):
        raise located_error(f"boundaries_and_scales of {what} must be a dict {{step: scale}}, got "
                            f"{checks.describe(boundaries_and_scales)}", MeshIRTypeError)
    pairs = tuple(sorted((_steps(b, f"a boundary of {what}"), checks.real(s, f"the scale at step {b} of {what}",
                                                                          minimum=0.0))
                         for b, s in boundaries_and_scales.items()))
    return _PiecewiseConstant(checks.real(init, f"init of {what}"), pairs)


def join(schedules, boundaries) -> Schedule:
    """`schedules[0]` until `boundaries[0]`, then `schedules[1]` counted from that boundary,
    and so on (optax.join_schedules); boundaries increasing, one fewer than schedules."""
    what = "mi.schedules.join"
    schedules = tuple(checks.sequence(schedules, f"schedules of {what}"))
    boundaries = tuple(_steps(b, f"boundaries[{i}] of {what}")
                       for i, b in enumerate(checks.sequence(boundaries, f"boundaries of {what}")))
    if not schedules or len(boundaries) != len(schedules) - 1:
        raise located_error(f"{what} needs one boundary fewer than schedules, got {len(schedules)} schedules and "
                            f"boundaries {list(boundaries)}", MeshIRValueError)
    for i, s in enumerate(schedules):
        if not callable(s):
            raise located_error(f"schedules[{i}] of {what} must be a schedule, got {checks.describe(s)}",
                                MeshIRTypeError)
    if any(b >= c for b, c in zip(boundaries, boundaries[1:])):
        raise located_error(f"boundaries of {what} must increase, got {list(boundaries)}", MeshIRValueError)
    return _Join(schedules, boundaries)


def warmup_cosine_decay(peak: float, warmup_steps: int, decay_steps: int, init: float = 0.0, end: float = 0.0,
                        exponent: float = 1.0) -> Schedule:
    """Linear warm-up from `init` to `peak` over `warmup_steps`, then a cosine decay to `end`;
    `decay_steps` is the whole length, warm-up included (optax.warmup_cosine_decay_schedule)."""
    what = "mi.schedules.warmup_cosine_decay"
    peak = checks.real(peak, f"peak of {what}")
    warmup_steps = _steps(warmup_steps, f"warmup_steps of {what}")
    decay_steps = _steps(decay_steps, f"decay_steps of {what}")
    if decay_steps <= warmup_steps:
        raise located_error(f"{what}: decay_steps {decay_steps} is the whole length, warm-up included, so it must "
                            f"exceed warmup_steps {warmup_steps}", MeshIRValueError)
    end = checks.real(end, f"end of {what}")
    alpha = 0.0 if peak == 0.0 else end / peak
    return _Join((linear(init, peak, warmup_steps), cosine_decay(peak, decay_steps - warmup_steps, alpha, exponent)),
                 (warmup_steps,))


def value_at(rate, t):
    """A hyperparameter that may be a schedule, at step `t` (a scalar f32 Tensor, 1-based): a
    schedule's Tensor at the count t - 1, or the number itself."""
    return _call(rate, t - 1.0) if callable(rate) else rate


def check_rate(value, what: str, optional: bool = False):
    """A learning rate or weight decay: a finite non-negative number, or a schedule (any
    callable; a located error otherwise)."""
    if value is None and optional:
        return None
    if callable(value) and not isinstance(value, Tensor):
        return value
    if isinstance(value, Tensor):
        raise located_error(f"{what} must be a number or a schedule (mi.schedules, or a function of the step "
                            f"count), got a Tensor; write a schedule to compute it in the step", MeshIRTypeError)
    return checks.real(value, what, minimum=0.0)
