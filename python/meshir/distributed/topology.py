"""How a mesh's axes map to processes (hosts): which axes cross the process boundary.

MeshIR gives partition `p` (the row-major index of mesh coordinates) the backend's device
`p`, and jax numbers the devices of a program over processes process by process. So the
leading (major) axes of a mesh span processes and the trailing (minor) ones stay inside
one: with 2 processes of 4 devices, mesh <x=4, y=2> puts x = 0, 1 on process 0 and
x = 2, 3 on process 1, and every y pair inside one process. Declare the axis with the most
traffic last, so its collectives stay on the fast links inside a host.
"""
from __future__ import annotations

import numpy as np

from meshir.dialect.diagnostics import MeshIRKeyError
from meshir.dialect.mesh import Mesh
from meshir.lowering.runtime.devices import jax_mesh
from meshir.lowering.runtime.process_local import local_slices as slices_of


def processes_along_axes(mesh: Mesh) -> dict[str, int]:
    """For each axis of `mesh`, how many processes its devices span along it (1: inside one)."""
    grid = np.vectorize(lambda d: d.process_index)(jax_mesh(mesh).devices)
    spans = {}
    for i, name in enumerate(mesh.axis_names):
        along = np.moveaxis(grid, i, -1).reshape(-1, grid.shape[i])
        spans[name] = max(len(set(row)) for row in along)
    return spans


def describe(mesh: Mesh) -> str:
    """One line per axis: its size and whether its collectives cross processes."""
    lines = []
    for name, n in processes_along_axes(mesh).items():
        size = dict(mesh.axes)[name]
        where = "inside each process" if n == 1 else f"across {n} processes"
        lines.append(f"  {name} = {size}: {where}")
    return f"mesh @{mesh.name} = <{mesh.format_axes()}>:\n" + "\n".join(lines)


def local_slices(exe, argument: str) -> tuple[slice, ...]:
    """The block of argument `argument` of `exe` that this process feeds (`mi.process_local`):
    `global_batch[mi.distributed.local_slices(exe, "tokens")]`, or what its loader reads."""
    names = exe.signature.arg_names
    if argument not in names:
        raise MeshIRKeyError(f"'{argument}' is not an argument of @{exe.signature.function} ({', '.join(names)})")
    i = names.index(argument)
    return slices_of(exe.in_shardings[i], exe.signature.arg_types[i].shape)
