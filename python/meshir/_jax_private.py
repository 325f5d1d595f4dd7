"""Every use of a private jax/jaxlib path lives here, so a jax upgrade is a one-file change.

`test/python/compat/test_jax_private.py` smoke-tests each name below.

Only jaxlib's MLIR bindings are imported here at module level: the IR side (parsing,
verifying, printing, passes; `meshir-opt`) needs nothing else, and `import jax` takes about
1 s. The functions below that need jax import it when called (`_jax()`, or an import of
their own): jax is heavy, and `meshir-opt`'s start-up is the reason.
"""
import functools
import types

from jaxlib.mlir import ir, passmanager  # noqa: F401  (re-exported)
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import func, sdy, stablehlo  # noqa: F401  (re-exported)
from jaxlib.mlir.dialects._ods_common import _cext

# Decorators that register Python op classes for a dialect namespace, like upstream's
# generated `_ops_gen.py` modules do.
register_dialect = _cext.register_dialect
register_operation = _cext.register_operation


@functools.cache
def _jax():
    """jax's private modules the functions below use, imported on their first call (not at
    import: see the module docstring); cached, so a call on a hot path costs one lookup."""
    from jax._src import config, tree_util
    from jax._src.interpreters import pxla
    from jax._src.lib import _jax, xla_client

    return types.SimpleNamespace(config=config, tree_util=tree_util, pxla=pxla, _jax=_jax, xla_client=xla_client)


def __getattr__(name: str):
    """`jp.xla_client`, `jp.pxla`, `jp._jax`: module attributes before they became lazy."""
    if name in ("pxla", "_jax", "xla_client"):
        return getattr(_jax(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    return _jax().xla_client.DeviceList(tuple(devices))


def compile_and_load(module_text: str, devices):
    """Compile StableHLO text (with `mhlo.num_partitions` = len(devices)) for `devices` and
    load it; returns the LoadedExecutable (`execute_sharded([...])` runs it)."""
    import jax.extend

    backend = jax.extend.backend.get_backend(devices[0].platform)
    return backend.compile_and_load(module_text, device_list(devices), compile_options(len(devices), devices))


# -- PJRT runtime (meshir.lowering.runtime): backend state and running a loaded executable -----
def is_compile_only_device(device) -> bool:
    """A device of a deviceless topology (`jax.experimental.topologies`): its client compiles
    and cannot run."""
    return type(device.client).__name__ == "CompileOnlyPyClient"


def compile_only(module: ir.Module, devices, options):
    """Compile a StableHLO module for compile-only `devices` with their own client (XLA:TPU
    for a TPU topology; it takes an `ir.Module`, not text or bytes): an Executable that is
    not loaded on any device."""
    return devices[0].client.compile(module, executable_devices=device_list(devices), compile_options=options)


def distributed_initialized() -> bool:
    """Whether `jax.distributed.initialize` ran in this process (a program over processes)."""
    return distributed_client() is not None


def distributed_client():
    """The `jax.distributed` client of this process (key-value store, barriers), or None.

    Its methods MeshIR uses (`key_value_set(key, value, allow_overwrite)`,
    `key_value_dir_get(prefix)`, `blocking_key_value_get(key, timeout_ms)`) are jaxlib's."""
    from jax._src import distributed

    return distributed.global_state.client


def backend_started() -> bool:
    """Whether jax has created its backends (after that, `jax_num_cpu_devices` is frozen)."""
    from jax._src import xla_bridge

    return xla_bridge.backends_are_initialized()


def abstract_array(shape: tuple[int, ...], dtype, sharding=None):
    """jax's abstract value (aval) of an array laid out by `sharding`: equal to the `.aval`
    of a jax.Array that jax.device_put or jax.jit made so."""
    from jax._src import core

    aval = core.ShapedArray(shape, dtype)
    return aval if sharding is None else core.update_aval_with_sharding(aval, sharding)


def result_handlers(avals, shardings) -> list:
    """jax's C++ result handler per result (aval, NamedSharding): each turns the per-device
    buffers of one result into a committed jax.Array, as jax.jit's own calls do."""
    handler = _jax().xla_client.array_result_handler
    skip = {"_skip_checks": True} if _takes_skip_checks() else {}
    return [handler(aval, sharding, committed=True, **skip) for aval, sharding in zip(avals, shardings)]


@functools.cache
def _takes_skip_checks() -> bool:
    """jaxlib 0.10's `array_result_handler` takes `_skip_checks`; 0.11 dropped it (and the
    checks it skipped). nanobind writes the signature as the docstring."""
    return "_skip_checks" in (_jax().xla_client.array_result_handler.__doc__ or "")


def execute(executable, arrays, handlers) -> list:
    """Run a LoadedExecutable on one jax.Array per parameter; the results as jax.Arrays made
    by `handlers` (see `result_handlers`)."""
    return executable.execute_sharded(arrays).consume_with_handlers(handlers)


def put_host_arrays(arrays, shardings) -> list:
    """NumPy arrays (exactly of their arguments' dtypes) on the devices, one batched transfer
    by their NamedShardings: what jax.jit does with NumPy arguments, at half the cost of
    `jax.device_put`'s public checks."""
    if not arrays:
        return []
    private = _jax()
    reuse = private.xla_client.ArrayCopySemantics.REUSE_INPUT
    return private.pxla.shard_args(shardings, [None] * len(arrays), [reuse] * len(arrays), arrays)


def compiled_executable_and_handlers(compiled):
    """jax.jit's LoadedExecutable inside a `jax.stages.Compiled` and result handlers for its
    outputs: the benchmarks run it directly, as the floor under jax's own dispatch."""
    import jax

    outs = jax.tree.leaves(compiled.out_info)
    avals = [abstract_array(o.shape, o.dtype, o.sharding) for o in outs]
    return compiled._executable.xla_executable, result_handlers(avals, [o.sharding for o in outs])


# -- jax.jit's C++ dispatch, reused for a MeshIR executable ------------------------------------
#: The fields of pxla.MeshExecutableFastpathData this module fills (the same in jax 0.10 through 0.12).
_FASTPATH_FIELDS = ("xla_executable", "out_pytree_def", "in_shardings", "out_shardings", "out_avals",
                    "out_committed", "kept_var_bitvec", "in_device_local_layouts", "const_args")


def cpp_dispatcher(name: str, cache_miss, shard_host_array):
    """jax.jit's C++ dispatch around one LoadedExecutable (what `jax.stages.Compiled` calls
    go through), or None where this jax's differs from the one this was written for.

    Called with positional jax.Arrays and NumPy arrays, it computes their signature (avals,
    shardings) in C++ and, when an earlier call of that signature returned `fastpath_data`,
    runs the executable without Python; otherwise it calls `cache_miss(*args)`, which must
    return `(results, fastpath_data or None, False)`. It calls `shard_host_array(x, sharding,
    layout)` for each argument that is not a jax.Array.
    """
    private = _jax()
    if getattr(private.pxla.MeshExecutableFastpathData, "_fields", None) != _FASTPATH_FIELDS:
        return None
    try:
        return private._jax.pjit(name, None, cache_miss, [], [], private.pxla.JitGlobalCppCacheKeys(),
                                 private.tree_util.dispatch_registry, shard_host_array)
    except TypeError:
        return None


def fastpath_data(executable, results, in_shardings):
    """What `cpp_dispatcher`'s C++ side needs to run `executable` again without Python:
    `results` (a jax.Array or a tuple of them, committed, as the call returned them) give
    the output structure, avals and shardings; every parameter is kept, default layouts."""
    private = _jax()
    flat, treedef = private.tree_util.dispatch_registry.flatten(results, None)
    count = len(in_shardings)
    return private.pxla.MeshExecutableFastpathData(
        executable, treedef, list(in_shardings), [r.sharding for r in flat], [r.aval for r in flat],
        [True] * len(flat), [True] * count, [None] * count, [])


def jit_disabled() -> bool:
    """Whether `jax.disable_jit()` is in force (jax's C++ dispatch then refuses to run)."""
    return _jax().config.disable_jit.value


# -- jax.export: StableHLO that MeshIR lowered, as jax's own exports carry it -----------------
def portable_artifact(module_text: str) -> bytes:
    """The StableHLO portable artifact (versioned VHLO bytecode, Shardy attributes kept) of a
    module, targeting the StableHLO version jax's own exports target (about 4 weeks old)."""
    from jax._src.export import _export
    from jax._src.interpreters import mlir

    with mlir.make_ir_context():
        return _export._module_to_bytecode(ir.Module.parse(module_text))


def portable_artifact_text(data: bytes) -> str:
    """The StableHLO text of a portable artifact; jaxlib's error if it cannot read it (bytes
    that are no artefact, or one of a StableHLO newer than this jaxlib's). (No diagnostic
    handler: jaxlib 0.12 crashes when one is attached to this context; MLIR prints them.)"""
    from jax._src.interpreters import mlir

    with mlir.make_ir_context():
        return str(_jax()._jax.mlir.deserialize_portable_artifact(data))


def stablehlo_version() -> str:
    """The StableHLO version this jaxlib reads and writes ("1.17.0")."""
    return stablehlo.get_current_version()


def make_exported(**fields):
    """A `jax.export.Exported` of a module jax did not lower. Its fields (private ones
    included, named without their `_`) moved between jax releases; those this jax lacks are
    dropped, and one this jax needs but was not given is a TypeError from the dataclass."""
    import dataclasses

    from jax import export

    names = {f.name for f in dataclasses.fields(export.Exported)}
    given = {}
    for name, value in fields.items():
        for candidate in (name, "_" + name):
            if candidate in names:
                given[candidate] = value
    return export.Exported(**given)



def export_platform(device) -> str:
    """The platform name jax.export records for `device` ("cpu", "cuda", "rocm", "tpu")."""
    from jax._src import xla_bridge

    return xla_bridge.canonicalize_platform(device.platform)


def hide_from_jax_locations(*paths: str) -> None:
    """jax's messages about traced code name the first frame outside jax ("jit inside jit
    ... at file:line"); frames in `paths` are skipped too, so they name the user's line."""
    from jax._src import source_info_util

    for path in paths:
        source_info_util.register_exclusion(path)
