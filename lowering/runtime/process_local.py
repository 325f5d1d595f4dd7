"""Inputs that arrive per process: each process holds only its own part of an argument.

In a program over several processes (`mi.distributed`), a data loader in each process reads
only the rows its devices hold. `mi.process_local(data, along="batch")` marks such an
argument: the call builds the global jax.Array from every process's part with
`jax.make_array_from_process_local_data`, by the argument's sharding and global shape, so no
process needs the whole batch. `along` names the dims the processes split (the part is whole
on every other dim); the argument's layout must split exactly those across processes, or
the call says which dim and axis disagree. Without `along`, the layout alone decides what
each process passes. In one process the local part is the whole array.
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
    along: tuple[str, ...] | None = None


def process_local(data, along=None) -> ProcessLocal:
    """Mark `data` as this process's part of an argument split over processes along the
    dims `along` (a name or names; None: whatever the layout splits). See the module docstring."""
    if along is not None:
        names = (along,) if isinstance(along, str) else along
        if not isinstance(names, (tuple, list)) or not all(isinstance(n, str) for n in names):
            raise MeshIRTypeError(f"mi.process_local(along=...): dim names (a str or a list of str), got {along!r}")
        along = tuple(names)
    return ProcessLocal(data, along)


def place_process_local(value: ProcessLocal, t: TensorType, sharding, what: str) -> jax.Array:
    """The global jax.Array of `t` whose addressable shards come from `value.data`."""
    try:
        local = np.asarray(value.data)
    except Exception as e:
        raise MeshIRTypeError(f"{what}: cannot convert the process-local {type(value.data).__name__} to an array: "
                              f"{without_location(str(e))}") from None
    check_kind(local.dtype, t, what)
    want = local_shape(sharding, t.shape)
    if value.along is not None:
        check_split_along(value.along, t, want, what)
    if local.shape != want:
        raise MeshIRValueError(f"{what}: {this_process()}'s part of global shape {shape_text(t)} is {want}, "
                               f"got {local.shape}")
    check_values_fit(local, t, what)
    try:
        return jax.make_array_from_process_local_data(sharding, local.astype(t.dtype, copy=False), t.shape)
    except ValueError as e:
        raise MeshIRValueError(f"{what}: process-local part {local.shape}: {e}") from None


def this_process() -> str:
    return f"process {jax.process_index()}" if jax.process_count() > 1 else "this process"


def check_split_along(along: tuple[str, ...], t: TensorType, local: tuple[int, ...], what: str) -> None:
    """The dims the processes split by `t`'s layout are exactly `along` (`local`: this
    process's part's shape); else a MeshIRValueError naming the dim and its axes."""
    for name in along:
        if not t.has(name):
            raise MeshIRValueError(f"{what}: mi.process_local(along={name!r}): {t} has no dim '{name}'")
    for i, d in enumerate(t.dims):
        split = local[i] != t.shape[i]
        axes = ",".join(d.axes) or "no axis"
        if d.name in along and not split and jax.process_count() > 1:
            raise MeshIRValueError(
                f"{what}: mi.process_local(along={d.name!r}), but its layout puts '{d.name}' on {axes}, which "
                f"does not split it across processes: each process would need the whole '{d.name}'. Split "
                f"'{d.name}' over a mesh axis that spans processes (the leading ones: mi.distributed.describe(mesh))")
        if d.name not in along and split:
            raise MeshIRValueError(
                f"{what}: mi.process_local(along={list(along)}), but its layout splits '{d.name}' across processes "
                f"too (over {axes}): name it in along=, or lay '{d.name}' out over axes inside a process")


def local_slices(sharding, global_shape: tuple[int, ...]) -> tuple[slice, ...]:
    """The block of a `global_shape` array that this process's devices hold, per dim (the
    block a data loader of this process reads; contiguous, as jax numbers devices by process)."""
    index = list(sharding.addressable_devices_indices_map(global_shape).values())
    return tuple(slice(min(i[d].start or 0 for i in index), max(size if i[d].stop is None else i[d].stop for i in index))
                 for d, size in enumerate(global_shape))


def local_shape(sharding, global_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of the part of a `global_shape` array that this process's devices hold."""
    index = sharding.addressable_devices_indices_map(global_shape)
    shape = []
    for dim, size in enumerate(global_shape):
        starts = {(s[dim].start or 0, s[dim].stop if s[dim].stop is not None else size) for s in index.values()}
        shape.append(sum(stop - start for start, stop in starts))
    return tuple(shape)

