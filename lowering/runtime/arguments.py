"""Turning what a user passes to an Executable into jax.Arrays laid out as the program wants.

Binding and checking are the reference interpreter's (dialect/interpreter/inputs.py), so
both runners accept and refuse exactly the same inputs with the same messages. A jax.Array
of the right element type stays on the devices: `jax.device_put` is a no-op when its
sharding already matches and a reshard otherwise (another layout, one device, other devices).
Everything else goes through NumPy and is split over the devices by `jax.device_put`.
"""
from __future__ import annotations

import contextlib

import jax
from jax.sharding import NamedSharding

from meshir.dialect.diagnostics import MeshIRError, MeshIRValueError
from meshir.dialect.interpreter.inputs import bind_arguments, check_kind_and_shape, convert_input
from meshir.dialect.signature import FunctionSignature
from meshir.dialect.tensor_type import TensorType

#: Element types jax narrows to 32 bits unless 64-bit mode is on.
WIDE_TYPES = frozenset({"f64", "i64"})


def x64_scope(types):
    """`jax.enable_x64(True)` when a type is 64-bit, so jax keeps those buffers wide."""
    return jax.enable_x64(True) if any(t.element_type in WIDE_TYPES for t in types) else contextlib.nullcontext()


def place_arguments(sig: FunctionSignature, shardings: list[NamedSharding], args, kwargs) -> list[jax.Array]:
    """One jax.Array per argument of `sig`, in order, each with its argument's sharding.

    Every argument is checked before any is placed: PJRT would crash on a deleted buffer
    (a jax.Array donated to an earlier call, or deleted by its owner)."""
    values = bind_arguments(sig, args, kwargs)
    check_not_deleted(sig, values)
    with x64_scope(sig.arg_types):
        return [
            place_argument(value, t, sharding, f"argument '{name}' of @{sig.function}")
            for value, name, t, sharding in zip(values, sig.arg_names, sig.arg_types, shardings)
        ]


def check_not_deleted(sig: FunctionSignature, values) -> None:
    """MeshIRValueError naming the first argument whose jax.Array has been deleted."""
    for name, value in zip(sig.arg_names, values):
        if isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer) and value.is_deleted():
            raise MeshIRValueError(
                f"argument '{name}' of @{sig.function}: the jax.Array passed for it has been deleted (it was "
                "donated to an earlier call of an executable compiled with donate=, or deleted with .delete()); "
                "pass the result that replaced it, or a new array"
            )


def place_argument(value, t: TensorType, sharding: NamedSharding, what: str) -> jax.Array:
    """`value` checked against `t` and put on the devices with `sharding`."""
    if isinstance(value, jax.core.Tracer):
        raise MeshIRError(
            f"{what}: got a traced value; a compiled MeshIR program runs on concrete arrays and cannot be "
            "called inside jax.jit, grad or vmap"
        )
    if isinstance(value, jax.Array):
        check_kind_and_shape(value.dtype, value.shape, t, what)
        if value.dtype == t.dtype:
            return jax.device_put(value, sharding)
    return jax.device_put(convert_input(value, t, what), sharding)
