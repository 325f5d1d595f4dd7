"""The checked path from what a user passes to an Executable to jax.Arrays laid out as the
program wants: every check, every conversion, every message.

Binding and checking are the reference interpreter's (dialect/interpreter/inputs.py), so
both runners accept and refuse exactly the same inputs with the same messages. A jax.Array
of the right element type stays on the devices: `jax.device_put` is a no-op when its
sharding already matches and a reshard otherwise (another layout, one device, other devices).
Everything else goes through NumPy. All arguments are put on the devices by one batched
`jax.device_put`. `fast_path.py` skips all of this for arguments already in the shape the
program wants; this module is what runs when they are not, and what explains why.
"""
from __future__ import annotations

import contextlib

import jax
from jax.sharding import NamedSharding

from meshir.dialect.diagnostics import MeshIRError, MeshIRValueError
from meshir.dialect.interpreter.inputs import check_kind_and_shape, convert_input
from meshir.dialect.signature import FunctionSignature
from meshir.dialect.tensor_type import TensorType

from .process_local import ProcessLocal, place_process_local

#: Element types jax narrows to 32 bits unless 64-bit mode is on.
WIDE_TYPES = frozenset({"f64", "i64"})


_NO_SCOPE = contextlib.nullcontext()


def wide_types(types) -> bool:
    """Whether an element type among `types` is 64-bit."""
    return any(t.element_type in WIDE_TYPES for t in types)


def x64_scope(wide: bool):
    """`jax.enable_x64(True)` when `wide`, so jax keeps 64-bit buffers wide."""
    return jax.enable_x64(True) if wide else _NO_SCOPE


def place_arguments(sig: FunctionSignature, shardings, values) -> list[jax.Array]:
    """One jax.Array per argument of `sig` (`values` bound in its order), each with its
    argument's sharding.

    Every argument is checked before any is placed: PJRT would crash on a deleted buffer
    (a jax.Array donated to an earlier call, or deleted by its owner)."""
    check_not_deleted(sig, values)
    with x64_scope(wide_types(sig.arg_types)):
        prepared = [
            prepare_argument(value, t, sharding, f"argument '{name}' of @{sig.function}")
            for value, name, t, sharding in zip(values, sig.arg_names, sig.arg_types, shardings)
        ]
        return jax.device_put(prepared, list(shardings))


def check_not_deleted(sig: FunctionSignature, values) -> None:
    """MeshIRValueError naming the first argument whose jax.Array has been deleted."""
    for name, value in zip(sig.arg_names, values):
        if isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer) and value.is_deleted():
            raise MeshIRValueError(
                f"argument '{name}' of @{sig.function}: the jax.Array passed for it has been deleted (it was "
                "donated to an earlier call of an executable compiled with donate=, or deleted with .delete()); "
                "pass the result that replaced it, or a new array"
            )


def prepare_argument(value, t: TensorType, sharding: NamedSharding, what: str):
    """`value` checked against `t`: a jax.Array of `t`'s dtype (put on the devices with
    `sharding` by the caller's batched device_put: a no-op when it is already there), or a
    NumPy array of `t`'s dtype and shape."""
    if isinstance(value, jax.core.Tracer):
        raise MeshIRError(
            f"{what}: got a traced value where a concrete array must be placed (Executable calls under jax "
            "tracing take lowering/runtime/in_jax.py's path)"
        )
    if isinstance(value, ProcessLocal):
        return place_process_local(value, t, sharding, what)
    if isinstance(getattr(value, "jax_array", None), jax.Array):  # an mi.Array: its array, resharded if need be
        value = value.jax_array
    if isinstance(value, jax.Array):
        check_kind_and_shape(value.dtype, value.shape, t, what)
        if value.dtype == t.dtype:
            return value
    return convert_input(value, t, what)
