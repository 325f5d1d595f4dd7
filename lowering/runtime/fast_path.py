"""The fast path of an Executable call: arguments already in the form the program wants.

A training loop calls one executable thousands of times with arguments of one structure:
the parameters and optimizer state the last call returned (jax.Arrays that carry the very
sharding objects the executable hands out) and a fresh NumPy batch. `FastPath` caches, per
structure (the Python type of each argument), which arguments are on the devices and which
come from the host, and then checks a call in bulk: avals (shape and dtype) and shardings compared
as whole lists (identity first, so results fed back cost a pointer compare each), deleted
arrays found in one pass, host arrays of the exact dtype and shape passed through unconverted,
and everything from the host put on the devices in one batched transfer (jax.jit's own). Its cost per
argument is a few attribute reads in C loops; anything it does not recognise goes to the
checked path (`arguments.py`), which gives the same results and the located errors.

It also decides which calls jax.jit's C++ dispatch may take over (`dispatchable`, `repeatable`,
`shard_host_array`; see executable.py): a call that passed these checks once may run again
without Python whenever its arguments have the same avals and shardings.
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter, itemgetter, methodcaller

import jax
import numpy as np

from meshir import _jax_private as jp
from meshir.dialect.signature import FunctionSignature

from .arguments import prepare_argument

_AVAL, _SHARDING = attrgetter("aval"), attrgetter("sharding")
_IS_DELETED = methodcaller("is_deleted")


class HostArrayNotExact(Exception):
    """A host array that jax's C++ dispatch would convert (float64 to float32, int64 to int32):
    the call goes to the checked path, which converts only values that fit."""


def _plain_host_value(value) -> bool:
    """A NumPy array (not a subclass) or a NumPy scalar: what jax's C++ dispatch may take as is."""
    return type(value) is np.ndarray or isinstance(value, np.generic)


def shard_host_array(value, sharding, layout):
    """jax's C++ dispatch's hook for an argument that is not a jax.Array: a NumPy array of
    exactly the dtype of the cached call it matched (its dtype is jax's canonical one) goes
    to the devices unconverted; anything else raises HostArrayNotExact."""
    del layout  # default layouts only (see jp.fastpath_data)
    if _plain_host_value(value) and value.dtype == jax.dtypes.canonicalize_dtype(value.dtype):
        return jp.put_host_arrays([value], [sharding])[0]
    raise HostArrayNotExact(type(value).__name__)


@dataclass(frozen=True)
class CallPlan:
    """Where each argument of one call structure comes from, and what the devices need."""

    on_devices: tuple[int, ...]  # jax.Arrays: used as they are when sharding, shape and dtype match
    from_host: tuple[int, ...]  # NumPy arrays and scalars: passed as they are when dtype and shape match
    checked: tuple[int, ...]  # anything else (Python numbers, lists, process-local parts): full checks
    device_avals: list  # shape and dtype, as jax's abstract arrays
    device_shardings: list

    @property
    def all_on_devices(self) -> bool:
        return not (self.from_host or self.checked)


class FastPath:
    """Binding and placement of the arguments of `sig` for calls of a structure seen before."""

    def __init__(self, sig: FunctionSignature, in_shardings, in_avals):
        self.sig = sig
        self.shardings = list(in_shardings)
        self.avals = list(in_avals)
        self.shapes = [t.shape for t in sig.arg_types]
        self.dtypes = [t.dtype for t in sig.arg_types]
        self.count = len(sig.arg_names)
        self._by_name = itemgetter(*sig.arg_names) if sig.arg_names else None
        self._plans: dict[tuple[type, ...], CallPlan] = {}

    def bind(self, args: tuple, kwargs: dict):
        """The arguments in signature order when they are all given by position or all by
        name; None otherwise (the checked binding explains what is wrong)."""
        if not kwargs:
            return args if len(args) == self.count else None
        if args or len(kwargs) != self.count:
            return None
        try:
            values = self._by_name(kwargs)
        except KeyError:
            return None
        return (values,) if self.count == 1 else values

    def dispatchable(self, values, donating: bool, refused_by_pjrt: bool = False) -> bool:
        """Whether jax's C++ dispatch may run this call: only jax.Arrays and NumPy values, no
        jax.Array deleted (PJRT would crash on one: jax's own dispatch does not check arrays
        that were donated), and, when the program donates, no array passed twice.
        `refused_by_pjrt` (one CPU device): PJRT refuses a deleted or twice-donated buffer itself
        before running anything, and no other device can wait on it, so those two checks
        (most of MeshIR's Python in front of a call with many arguments) are left to it;
        executable.py turns the refusal into the located error."""
        plan = self._plan_of(values)
        if plan.checked:
            return False
        if refused_by_pjrt:
            return True
        arrays = values if plan.all_on_devices else [values[i] for i in plan.on_devices]
        if any(map(_IS_DELETED, arrays)):
            return False
        return not donating or len(set(map(id, values))) == len(values)

    def repeatable(self, values) -> bool:
        """Whether this call's arguments need nothing but moving to the devices: jax.Arrays
        laid out as the program wants, NumPy arrays of the exact dtype and shape. jax's C++
        dispatch may then repeat it for any arguments with the same signature."""
        plan = self._plan_of(values)
        if plan.checked or not self._laid_out([values[i] for i in plan.on_devices], plan):
            return False
        return all(_plain_host_value(values[i]) and values[i].dtype == self.dtypes[i]
                   and values[i].shape == self.shapes[i] for i in plan.from_host)

    def _plan_of(self, values) -> CallPlan:
        structure = tuple(map(type, values))
        plan = self._plans.get(structure)
        if plan is None:
            plan = self._plans[structure] = self._plan(structure)
        return plan

    def place(self, values) -> list | None:
        """The arguments on the devices, or None when a jax.Array among them is not already
        laid out as the program wants (or is deleted): the checked path handles that call."""
        plan = self._plan_of(values)
        if plan.all_on_devices:
            if not self._laid_out(values, plan):
                return None
            return list(values)
        placed = list(values)
        if plan.on_devices and not self._laid_out([placed[i] for i in plan.on_devices], plan):
            return None
        for i in plan.from_host:
            value = placed[i]
            if value.dtype != self.dtypes[i] or value.shape != self.shapes[i]:
                placed[i] = self._checked(i, value)
        for i in plan.checked:
            value = placed[i] = self._checked(i, placed[i])
            if isinstance(value, jax.Array):  # a jax.Array of another layout, or a process-local part
                placed[i] = jax.device_put(value, self.shardings[i])
        from_host = [i for i in plan.from_host + plan.checked if not isinstance(placed[i], jax.Array)]
        on_devices = jp.put_host_arrays([placed[i] for i in from_host], [self.shardings[i] for i in from_host])
        for i, array in zip(from_host, on_devices):
            placed[i] = array
        return placed

    @staticmethod
    def _laid_out(arrays, plan: CallPlan) -> bool:
        """Whether `arrays` have the shapes, dtypes and shardings the program wants and none
        is deleted. Avals and shardings compare by identity first: results fed back carry the
        executable's own objects."""
        return (list(map(_AVAL, arrays)) == plan.device_avals
                and list(map(_SHARDING, arrays)) == plan.device_shardings
                and not any(map(_IS_DELETED, arrays)))

    def _checked(self, i: int, value):
        sig = self.sig
        return prepare_argument(value, sig.arg_types[i], self.shardings[i],
                                f"argument '{sig.arg_names[i]}' of @{sig.function}")

    def _plan(self, structure: tuple[type, ...]) -> CallPlan:
        kinds: dict[str, list[int]] = {"devices": [], "host": [], "checked": []}
        for i, kind in enumerate(structure):
            if issubclass(kind, jax.Array) and not issubclass(kind, jax.core.Tracer):
                kinds["devices"].append(i)
            elif issubclass(kind, (np.ndarray, np.generic)):
                kinds["host"].append(i)
            else:
                kinds["checked"].append(i)
        devices = kinds["devices"]
        return CallPlan(
            on_devices=tuple(devices), from_host=tuple(kinds["host"]), checked=tuple(kinds["checked"]),
            device_avals=[self.avals[i] for i in devices],
            device_shardings=[self.shardings[i] for i in devices],
        )
