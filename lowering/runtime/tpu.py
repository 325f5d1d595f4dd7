"""Compile-only TPU targets: the devices of a TPU topology, for XLA:TPU without a TPU.

jax's deviceless ahead-of-time compilation (`jax.experimental.topologies`, with the `libtpu`
wheel: `pip install "meshir[tpu]"`) gives the devices of a named topology (`"v5e:2x4"`,
`"v3:16x16"`, `"v4:2x2x1"`, ...) on a compile-only client: programs compile for them with
the real TPU compiler, and nothing runs. `tpu_mesh` lays a mesh over them; `mi.compile` on
such a mesh returns a `CompileOnlyExecutable` (compile_only.py).

Devices per chip: v2 and v3 chips have two TensorCores, each a device; v4 chips also give two
devices in a topology (real v4 hosts run one "megacore" device per chip, which deviceless
topologies do not offer); v5e, v5p and v6e chips have one. So "v3:16x16" (256 chips) is 512
devices and "v5e:2x4" is 8.
"""
from __future__ import annotations

import functools
import math
import os

import jax
import numpy as np
from jax.experimental import mesh_utils

from meshir import _jax_private as jp
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.diagnostics import MeshIRError, MeshIRTypeError, MeshIRValueError

#: libtpu reads these when its plugin starts (the first topology): without a host it asks a
#: metadata server for them and prints five lines of warnings; the values change nothing a
#: compile produces. The last lifts libtpu's one-process-per-host lock, which compile-only use
#: does not need (parallel test workers each load it).
_LIBTPU_ENVIRONMENT = {"TPU_WORKER_HOSTNAMES": "localhost", "TPU_ACCELERATOR_TYPE": "v5litepod-8",
                       "ALLOW_MULTIPLE_LIBTPU_LOAD": "1"}

#: HBM per device that XLA:TPU allocates from, in GiB, by `device_kind`: the figure it names
#: when a program needs more ("exceeds available HBM (15.48G)"), read with libtpu 0.0.52 from
#: one device of v2:2x2, v3:2x2, v4:2x2x1, v5e:2x4, v5p:2x2x1 and v6e:2x4. The chips have 8, 16
#: (per core), 32 (per chip: two devices), 16, 95 and 32 GiB; XLA:TPU keeps a little back.
HBM_GIB_PER_DEVICE = {"TPU v2": 7.48, "TPU v3": 15.48, "TPU v4": 15.25, "TPU v5 lite": 15.75, "TPU v5": 95.73,
                      "TPU v6 lite": 31.24}

#: The topology each compile-only device came from, by `id(device)` (for messages).
_TOPOLOGY_OF: dict[int, str] = {}


def libtpu_version() -> str | None:
    """The installed libtpu's version, or None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("libtpu")
    except PackageNotFoundError:
        return None


@functools.cache
def topology_devices(name: str) -> tuple:
    """The devices of TPU topology `name` (one description per name per process: devices of
    two descriptions of one topology are not equal)."""
    if not isinstance(name, str):
        raise MeshIRTypeError(f"a TPU topology is a name such as 'v5e:2x4', got {type(name).__name__} {name!r}")
    if libtpu_version() is None:
        raise MeshIRError(f"TPU topology {name!r} needs the TPU compiler, libtpu, which is not installed: "
                          'pip install "meshir[tpu]" (the libtpu that your jax pairs with, as jax[tpu] pins it)')
    for key, value in _LIBTPU_ENVIRONMENT.items():
        os.environ.setdefault(key, value)
    from jax.experimental import topologies

    try:
        devices = tuple(topologies.get_topology_desc(topology_name=name, platform="tpu").devices)
    except jax.errors.JaxRuntimeError as e:
        raise MeshIRValueError(f"unknown TPU topology {name!r} (names are <version>:<chips per axis>, e.g. "
                               f"'v5e:2x4', 'v4:2x2x1', 'v3:16x16'): {_first_line(e)}") from None
    for d in devices:
        _TOPOLOGY_OF[id(d)] = name
    return devices


def _first_line(error) -> str:
    return str(error).strip().splitlines()[0]


@reports_at_call_site
def tpu_mesh(topology: str, axes: dict) -> jax.sharding.Mesh:
    """A jax `Mesh` over the devices of TPU topology `topology` with `axes` ({name: size}, in
    order; sizes multiply to the topology's device count), Auto axes: build programs on it
    and `mi.compile` them with XLA:TPU, without running. Device order follows the chips'
    torus (jax's `create_device_mesh`) where jax can order it, else the topology's order."""
    devices = topology_devices(topology)
    if not isinstance(axes, dict) or not axes:
        raise MeshIRTypeError(f"tpu_mesh({topology!r}, axes): axes is a dict of mesh axis names to sizes, "
                              f"such as {{'x': 4, 'y': 2}}, got {type(axes).__name__} {axes!r}")
    for axis, size in axes.items():
        if not isinstance(axis, str) or isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise MeshIRValueError(f"tpu_mesh({topology!r}): axis {axis!r} of size {size!r}: axes are names with "
                                   "positive integer sizes")
    shape = tuple(int(s) for s in axes.values())
    if math.prod(shape) != len(devices):
        raise MeshIRValueError(
            f"tpu_mesh({topology!r}): axes {dict(axes)} make {math.prod(shape)} devices, but topology {topology!r} "
            f"has {len(devices)} ({devices[0].device_kind}); give sizes whose product is {len(devices)}")
    try:
        grid = mesh_utils.create_device_mesh(shape, devices=list(devices))
    except (AssertionError, ValueError, NotImplementedError):  # v4's two devices per chip; a shape off the torus
        grid = np.array(devices, dtype=object).reshape(shape)
    return jax.sharding.Mesh(grid, tuple(axes), axis_types=(jax.sharding.AxisType.Auto,) * len(shape))


def is_compile_only(devices) -> bool:
    """Whether `devices` are a topology's compile-only devices (all, or none: a mix is refused)."""
    flags = {jp.is_compile_only_device(d) for d in devices}
    if len(flags) > 1:
        raise MeshIRError("a mesh mixes devices that run with compile-only TPU devices (mi.tpu_mesh); "
                          "use one or the other")
    return flags == {True}


def hbm_per_device(devices) -> int | None:
    """Bytes of HBM each of `devices` has as XLA:TPU allocates (HBM_GIB_PER_DEVICE), or None
    for a device kind not in the table."""
    gib = HBM_GIB_PER_DEVICE.get(devices[0].device_kind)
    return None if gib is None else int(gib * 2**30)


def topology_of(devices) -> str:
    """The topology name of compile-only devices (for messages)."""
    return _TOPOLOGY_OF.get(id(devices[0]), f"a {devices[0].device_kind} topology")
