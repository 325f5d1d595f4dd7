"""Devices for a mesh, and the jax meshes and shardings that describe MeshIR layouts.

MeshIR numbers devices like docs/partitioning.md: partition id `p` is the row-major index of
the device's mesh coordinates, and partition `p` runs on the mesh's `p`-th device: the
backend's device `p`, unless the Mesh carries devices of its own (`mi.Mesh(..., devices=)`,
or a `jax.sharding.Mesh`'s). The jax Mesh built here puts the same devices at the same
coordinates, so a `NamedSharding` of a layout places on each device exactly the block the
per-device program expects.
"""
from __future__ import annotations

import os
import re

import jax
import numpy as np
from jax.extend.backend import get_backend
from jax.sharding import AxisType, NamedSharding, PartitionSpec

from meshir import _jax_private as jp
from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.mesh import Mesh
from meshir.dialect.tensor_type import TensorType, TypeContentError

#: CPU devices reserved when MeshIR starts the backend: every mesh of up to 8 devices works.
DEFAULT_CPU_DEVICES = 8

_FORCE_FLAG = re.compile(r"--xla_force_host_platform_device_count=(\d+)")


def _cpu_may_be_default() -> bool:
    """False when the user restricted jax to platforms without the CPU (their GPU/TPU setup)."""
    platforms = jax.config.jax_platforms
    return not platforms or "cpu" in [p.strip() for p in platforms.split(",")]


def _flag_cpu_devices() -> int | None:
    flag = _FORCE_FLAG.search(os.environ.get("XLA_FLAGS", ""))
    return int(flag.group(1)) if flag else None


def ensure_cpu_devices(n: int) -> None:
    """Make sure a mesh of `n` devices can run on the CPU, without setup by the user.

    Before jax starts its backend, and unless the user chose a CPU device count themselves
    (`users_cpu_devices`), set `jax_num_cpu_devices` to `max(n, 8)`; setups that exclude the
    CPU are left alone. A user's count stands, larger or smaller: `mesh_devices` then refuses
    a mesh that needs more, naming both counts. Once the backend runs, the count is frozen.
    After `jax.distributed.initialize` the mesh spans processes and each process's count is
    the user's to set, so nothing changes. Starts nothing itself, so it is safe to call at
    import time.
    """
    if jp.backend_started() or not _cpu_may_be_default() or jp.distributed_initialized():
        return
    if users_cpu_devices() is not None:
        return
    wanted = max(n, DEFAULT_CPU_DEVICES)
    if jax.config.jax_num_cpu_devices < wanted:
        jax.config.update("jax_num_cpu_devices", wanted)
        global _set_by_meshir
        _set_by_meshir = wanted


#: The `jax_num_cpu_devices` MeshIR set itself (None: the count, if any, is the user's).
_set_by_meshir: int | None = None


def users_cpu_devices() -> int | None:
    """The CPU device count the user configured (XLA_FLAGS, or jax config before or after
    `import meshir`), None if MeshIR's default stands. A config value equal to the one MeshIR
    set counts as MeshIR's (jax does not say who set it)."""
    flag = _flag_cpu_devices()
    if flag is not None:
        return flag
    configured = jax.config.jax_num_cpu_devices
    if configured <= 0 or configured == _set_by_meshir:
        return None
    return configured


def _users_setting_text(count: int) -> str:
    if _flag_cpu_devices() is not None:
        return f"XLA_FLAGS=--xla_force_host_platform_device_count={count}"
    return f"jax_num_cpu_devices={count}"


def default_platform() -> str:
    """The platform programs run on when none is named ("cpu", "gpu", "tpu")."""
    return get_backend(None).platform


def mesh_devices(mesh: Mesh, platform: str | None = None) -> list:
    """The devices of `mesh`, partition id order: the mesh's own (`mesh.devices`), checked
    to be devices of the backend, else the backend's first `mesh.size` devices.

    Raises MeshIRError when the backend has fewer, saying how to get more, or when the
    mesh's own devices are not the backend's.
    """
    ensure_cpu_devices(mesh.size)
    backend = get_backend(platform)
    devices = backend.devices()
    if mesh.devices is not None:
        _check_on_backend(mesh, backend, devices, platform)
    if jax.process_count(backend.platform) > 1 and len(devices) != mesh.size:
        raise MeshIRError(processes_do_not_match(mesh, devices))
    if mesh.devices is not None:
        return list(mesh.devices)
    users = users_cpu_devices() if backend.platform == "cpu" else None
    if len(devices) < mesh.size and users is not None and users == len(devices):
        raise MeshIRError(
            f"mesh @{mesh.name} = <{mesh.format_axes()}> needs {mesh.size} devices, but the cpu backend has "
            f"{len(devices)}, the count you configured ({_users_setting_text(users)}): before jax starts, "
            f'configure {mesh.size} or more (jax.config.update("jax_num_cpu_devices", {mesh.size}) or '
            f"XLA_FLAGS=--xla_force_host_platform_device_count={mesh.size}), or declare a mesh of at most "
            f"{len(devices)} devices")
    if len(devices) < mesh.size:
        raise MeshIRError(
            f"mesh @{mesh.name} = <{mesh.format_axes()}> needs {mesh.size} devices, but the "
            f"{backend.platform} backend has {len(devices)}. jax started before MeshIR could "
            f"configure it: use MeshIR before other jax calls, or before jax starts set "
            f'jax.config.update("jax_num_cpu_devices", {mesh.size}) or '
            f"XLA_FLAGS=--xla_force_host_platform_device_count={mesh.size}"
        )
    return list(devices[: mesh.size])


def _check_on_backend(mesh: Mesh, backend, devices: list, platform: str | None) -> None:
    """MeshIRError naming the first of the mesh's own devices that is not one of `devices`,
    the devices of the backend the program runs on (`platform`, None: jax's default)."""
    known = set(devices)
    for i, d in enumerate(mesh.devices):
        if d in known:
            continue
        if d.platform != backend.platform and platform is None:
            why = (f"is a {d.platform} device, but programs run on jax's default backend, {backend.platform}: "
                   f"give {backend.platform} devices, or make {d.platform} the default before jax starts "
                   f"(jax.config.update(\"jax_platforms\", \"{d.platform}\"))")
        elif d.platform != backend.platform:
            why = f"is a {d.platform} device, but the program runs on the {backend.platform} backend"
        else:
            why = (f"is not one of the {backend.platform} backend's devices ({len(devices)}: jax.devices("
                   f"{backend.platform!r})); it belongs to another client")
        raise MeshIRError(f"device {i} of mesh {mesh}, {d!r}, {why}")


def processes_do_not_match(mesh: Mesh, devices: list) -> str:
    """Why a mesh cannot run over these processes' devices: it must use every one of them."""
    per_process: dict[int, int] = {}
    for d in devices:
        per_process[d.process_index] = per_process.get(d.process_index, 0) + 1
    counts = sorted(set(per_process.values()))
    each = f"{counts[0]} each" if len(counts) == 1 else ", ".join(f"process {p}: {n}" for p, n in sorted(per_process.items()))
    hint = ""
    if mesh.size % len(per_process) == 0:
        hint = (f"; start each process with {mesh.size // len(per_process)} devices "
                f"(mi.distributed.initialize(local_devices={mesh.size // len(per_process)}))")
    return (f"mesh @{mesh.name} = <{mesh.format_axes()}> has {mesh.size} devices, but the {len(per_process)} "
            f"processes have {len(devices)} ({each}): a mesh over several processes uses every process's "
            f"devices{hint}, or declare a mesh of {len(devices)} devices")


def jax_mesh(mesh: Mesh, platform: str | None = None) -> jax.sharding.Mesh:
    """The `jax.sharding.Mesh` of `mesh`: MeshIR's device order (`mesh_devices`),
    `AxisType.Auto` axes, also for a mesh made from a jax mesh of Explicit axes.

    (jax 0.10 meshes default to Explicit axes, under which jax refuses to infer shardings
    of sharded contractions in user code that mixes our results with jax ops.)
    """
    grid = np.array(mesh_devices(mesh, platform), dtype=object).reshape(tuple(s for _, s in mesh.axes))
    return jax.sharding.Mesh(grid, mesh.axis_names, axis_types=(AxisType.Auto,) * len(mesh.axes))


def partition_spec(t: TensorType) -> PartitionSpec:
    """Dim i -> entry i: None (replicated or free), "x", or ("x", "y") major to minor."""
    if t.partial:
        raise MeshIRError(f"{t} is a partial value; only reduced values can be passed to or returned from a program")
    entries = [None if not d.axes else d.axes[0] if len(d.axes) == 1 else tuple(d.axes) for d in t.dims]
    return PartitionSpec(*entries)


def shard_shape(mesh: Mesh, t: TensorType) -> tuple[int, ...]:
    """The shape of one device's block of `t` on `mesh`; MeshIRError if a split does not divide."""
    try:
        return t.local_shape(mesh.shape)
    except TypeContentError as e:
        raise MeshIRError(f"{t} on mesh @{mesh.name}: {e}") from None


def named_sharding(mesh: Mesh | jax.sharding.Mesh, t: TensorType) -> NamedSharding:
    """The `NamedSharding` of `t`'s layout on `mesh` (a MeshIR Mesh, or its `jax_mesh`)."""
    if isinstance(mesh, Mesh):
        shard_shape(mesh, t)
        mesh = jax_mesh(mesh)
    return NamedSharding(mesh, partition_spec(t))


class SharedShardings:
    """One `NamedSharding` object per layout on a jax mesh, shared by every argument and
    result of that layout: a result fed back as an argument then carries the very object
    the argument expects, which the call's fast path compares by identity."""

    def __init__(self, mesh: jax.sharding.Mesh):
        self.mesh = mesh
        self._by_spec: dict[PartitionSpec, NamedSharding] = {}

    def of(self, t: TensorType) -> NamedSharding:
        spec = partition_spec(t)
        if spec not in self._by_spec:
            self._by_spec[spec] = NamedSharding(self.mesh, spec)
        return self._by_spec[spec]


class SharedAvals:
    """One jax abstract array (shape, dtype, sharding) per type and layout, shared like
    `SharedShardings`: results carry these objects, so a result fed back matches its
    argument by identity (and an array jax placed so, by equality)."""

    def __init__(self):
        self._by_key: dict[tuple, object] = {}

    def of(self, t: TensorType, sharding: NamedSharding):
        key = (t.shape, t.dtype, sharding)
        if key not in self._by_key:
            self._by_key[key] = jp.abstract_array(t.shape, t.dtype, sharding)
        return self._by_key[key]
