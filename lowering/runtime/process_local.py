"""Inputs that arrive per process: each process holds only its own part of an argument.

In a program over several processes (`jax.distributed`), a data loader in each process reads
only the rows its devices hold. `mi.process_local(data)` marks such an argument: the call
builds the global jax.Array from every process's part with
`jax.make_array_from_process_local_data`, by the argument's sharding and global shape, so no
process needs the whole batch. In one process the local part is the whole array.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from meshir.dialect.call_site import without_location
from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError
from meshir.dialect.interpreter.inputs import check_kind, check_values_fit, shape_text
from meshir.dialect.tensor_type import TensorType


@dataclass(frozen=True)
class ProcessLocal:
    """This process's part of an argument (a NumPy array or anything `np.asarray` takes):
    the rows or blocks of the global array that this process's devices hold, in order."""

    data: object


def process_local(data) -> ProcessLocal:
    """Mark `data` as this process's part of an argument (see the module docstring)."""
    return ProcessLocal(data)


def place_process_local(value: ProcessLocal, t: TensorType, sharding, what: str) -> jax.Array:
    """The global jax.Array of `t` whose addressable shards come from `value.data`."""
    try:
        local = np.asarray(value.data)
    except Exception as e:  # noqa: BLE001 - any failure to make an array is the user's input
        raise MeshIRTypeError(f"{what}: cannot convert the process-local {type(value.data).__name__} to an array: "
                              f"{without_location(str(e))}") from None
    check_kind(local.dtype, t, what)
    want = local_shape(sharding, t.shape)
    if local.shape != want:
        raise MeshIRValueError(f"{what}: this process's part of global shape {shape_text(t)} is {want}, "
                               f"got {local.shape}")
    check_values_fit(local, t, what)
    try:
        return jax.make_array_from_process_local_data(sharding, local.astype(t.dtype, copy=False), t.shape)
    except ValueError as e:
        raise MeshIRValueError(f"{what}: process-local part {local.shape}: {e}") from None


def local_shape(sharding, global_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of the part of a `global_shape` array that this process's devices hold."""
    index = sharding.addressable_devices_indices_map(global_shape)
    shape = []
    for dim, size in enumerate(global_shape):
        starts = {(s[dim].start or 0, s[dim].stop if s[dim].stop is not None else size) for s in index.values()}
        shape.append(sum(stop - start for start, stop in starts))
    return tuple(shape)

