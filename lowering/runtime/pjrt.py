"""Compiling a checked StableHLO entry with PJRT for the devices of a mesh.

Options are jax's (`get_compile_options`: optimisation levels, FDO, the CUDA data dir on
GPUs) for one replica and `mesh.size` partitions, partition `p` on device `p`. SPMD
partitioning and the Shardy partitioner are forced on whatever jax's flags say: PJRT refuses
`num_partitions > 1` without SPMD partitioning, and without Shardy XLA's GSPMD partitioner
meets the `xla.sdy.*` custom calls of `sdy.manual_computation` and fails a RET_CHECK.
"""
from __future__ import annotations

import jax
from jax.extend.backend import get_backend
from jax.extend.sharding import GSPMDSharding

from meshir import _jax_private as jp
from meshir._jax_private import ir
from meshir.dialect.context import get_context
from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.signature import FunctionSignature


def _options(devices: list):
    """One replica, a partition per device, SPMD partitioning by Shardy."""
    options = jp.compile_options(len(devices), devices)
    options.executable_build_options.use_spmd_partitioning = True
    options.executable_build_options.use_shardy_partitioner = True
    return options


def compile_for_devices(computation, devices: list):
    """The LoadedExecutable of `computation` (StableHLO text or bytecode) on `devices`."""
    options = _options(devices)
    backend = get_backend(devices[0].platform)
    try:
        return backend.compile_and_load(computation, jp.device_list(devices), options)
    except jax.errors.JaxRuntimeError as e:
        raise MeshIRError(f"PJRT ({backend.platform}, {len(devices)} partitions) refused the StableHLO module: {e}") from None


def compile_without_running(computation: bytes, devices: list, target: str):
    """The (unloaded) Executable of `computation` (bytecode) for compile-only `devices`, which
    their own client compiles (`target` names them in errors: a TPU topology)."""
    with get_context() as context:
        module = ir.Module.parse(computation, context=context)
        try:
            return jp.compile_only(module, devices, _options(devices))
        except jax.errors.JaxRuntimeError as e:
            raise MeshIRError(f"XLA ({target}, {len(devices)} partitions) refused the StableHLO module: {e}") from None


def check_compiled_shardings(loaded, devices: list, sig: FunctionSignature, in_shardings, out_shardings) -> None:
    """MeshIRError unless PJRT lays out every parameter and result as the signature says.

    PJRT reads each device's buffer as the block its compiled sharding assigns; had the
    module's `sdy.sharding`s disagreed with the signature's layouts, the arguments placed by
    the signature would be silently misread. (One partition: PJRT reports no shardings.)
    """
    for kind, compiled, names, types, wanted in (
        ("argument", loaded.get_parameter_shardings(), sig.arg_names, sig.arg_types, in_shardings),
        ("result", loaded.get_output_shardings(), sig.result_names, sig.result_types, out_shardings),
    ):
        for name, t, want, got in zip(names, types, wanted, compiled or ()):
            actual = GSPMDSharding(devices, got)
            if not want.is_equivalent_to(actual, t.rank):
                raise MeshIRError(
                    f"{kind} '{name}' of @{sig.function}: the StableHLO module lays it out as "
                    f"{actual!r}, but its type {t} means {want.spec}"
                )
