"""Every use of a private jax/jaxlib path lives here, so a jax upgrade is a one-file change.

`test/python/test_jax_private.py` smoke-tests each name below.
"""
from jaxlib.mlir import ir, passmanager  # noqa: F401  (re-exported)
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import func, sdy, stablehlo  # noqa: F401  (re-exported)
from jaxlib.mlir.dialects._ods_common import _cext

# Decorators that register Python op classes for a dialect namespace, like upstream's
# generated `_ops_gen.py` modules do.
register_dialect = _cext.register_dialect
register_operation = _cext.register_operation


def register_dialect_python_module(namespace: str, module) -> None:
    """Tell the bindings where the Python module of a dialect is.

    Whenever an op of a dialect gets a Python view, the bindings import
    `<search prefix>.<namespace>` (prefix `jaxlib.mlir.dialects`) unless that succeeded
    before, and they do not remember failures: without this, every `mtf` op view costs a
    failed import search (80% of MeshIR's pass time).
    """
    import sys

    for prefix in _cext.globals.dialect_search_modules:
        sys.modules.setdefault(f"{prefix}.{namespace}", module)


def new_context() -> ir.Context:
    """A context that knows func, stablehlo, sdy and the upstream dialects jax uses.

    `mtf` is not a registered C++ dialect: its ops and `!mtf.tensor` types parse as
    unregistered ones, so unregistered dialects are allowed.
    """
    ctx = ir.Context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    sdy.register_dialect(ctx)
    stablehlo.register_dialect(ctx)
    ctx.allow_unregistered_dialects = True
    # Single-threaded: MLIR's parallel verifier reports errors from worker threads, and the
    # Python bindings' error capture needs the GIL that the parsing thread holds, so a module
    # with errors in two functions could deadlock the parse (fuzz finding hang-cd3f4097b0).
    ctx.enable_multithreading(False)
    return ctx


# -- PJRT: compiling and running StableHLO on a set of devices ---------------------------------
def compile_options(num_partitions: int, devices):
    """jax's compile options for one replica and `num_partitions` partitions, partition `i`
    on `devices[i]` (SPMD partitioning and Shardy as jax configures them)."""
    import numpy as np
    from jax._src import compiler

    assignment = np.array([[d.id for d in devices]], dtype=np.int64)
    return compiler.get_compile_options(num_replicas=1, num_partitions=num_partitions, device_assignment=assignment)


def device_list(devices):
    """The DeviceList PJRT's `compile_and_load` takes as `executable_devices`."""
    from jax._src.lib import xla_client

    return xla_client.DeviceList(tuple(devices))


def compile_and_load(module_text: str, devices):
    """Compile StableHLO text (with `mhlo.num_partitions` = len(devices)) for `devices` and
    load it; returns the LoadedExecutable (`execute_sharded([...])` runs it)."""
    import jax.extend

    backend = jax.extend.backend.get_backend(devices[0].platform)
    return backend.compile_and_load(module_text, device_list(devices), compile_options(len(devices), devices))


# -- PJRT runtime (meshir.lowering.runtime): backend state and running a loaded executable -----
def backend_started() -> bool:
    """Whether jax has created its backends (after that, `jax_num_cpu_devices` is frozen)."""
    from jax._src import xla_bridge

    return xla_bridge.backends_are_initialized()


def run_sharded(executable, arrays) -> list[list]:
    """Run a LoadedExecutable on one jax.Array per parameter (each laid out on the
    executable's devices); per result, its single-device shards in the executable's device
    order."""
    return executable.execute_sharded(list(arrays)).disassemble_into_single_device_arrays()
