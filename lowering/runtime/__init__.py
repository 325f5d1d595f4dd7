"""meshir.lowering.runtime: run StableHLO on a mesh of devices with PJRT.

`ensure_cpu_devices` gives CPU meshes of up to 8 devices without user setup; `jax_mesh` and
`named_sharding` turn MeshIR meshes and layouts into jax's; `Executable` compiles a module
once and runs it on NumPy inputs or jax.Arrays, returning sharded jax.Arrays.
"""
from .devices import default_platform, ensure_cpu_devices, jax_mesh, mesh_devices, named_sharding, partition_spec, shard_shape  # noqa: F401
from .executable import Executable  # noqa: F401
