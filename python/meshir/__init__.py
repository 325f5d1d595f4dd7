"""MeshIR: named-dimension tensor programs on a mesh, compiled through MLIR to StableHLO.

Build a program with `Program`, `Dim` and the op functions, print `prog.module`, run it with
the reference interpreter `interpret`, or parse and transform IR with `parse_module` and the
passes of `meshir.transforms` (also on the command line: `meshir-opt`).

This file is the one place the public namespace is assembled: every name below is in
`__all__` and documented in docs/python-api.md (test/python/api/test_public_names.py checks
both). The modules behind them are under `meshir.api` by purpose; a name starting with `_`
there is internal.
"""
import os as _os
import re as _re
import sys as _sys

# Before anything imports jax: a jax or jaxlib outside the supported range is one clear error.
from meshir import _versions

_versions.check()

# XLA logs one INFO line per device when its backend starts; MeshIR programs start it for
# meshes of many devices. Quiet by default; a value the user set wins.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")


def _started_as_meshir_opt() -> bool:
    """Whether this process is the `meshir-opt` command: its console script (`meshir-opt`,
    on Windows `meshir-opt.exe` or `meshir-opt-script.py`) is `sys.argv[0]` while it imports
    `meshir.cli.opt`, which runs this file first."""
    script = _os.path.basename((getattr(_sys, "argv", None) or [""])[0])
    return _re.sub(r"(-script\.pyw?|\.exe)$", "", script) == "meshir-opt"


#: meshir-opt's start-up skips the public namespace below: it imports jax (1 s) and sets
#: jax's CPU device count, and the CLI (parse, verify, passes, print) needs neither; the
#: CLI's modules import what they use. Every other `import meshir` is unchanged.
_CLI = _started_as_meshir_opt()

if not _CLI:
    from meshir import distributed
    from meshir.dialect import (
        CheckpointError, Diagnostic, LayoutRules, Mesh, MeshIRError, MeshIRKeyError, MeshIRTypeError,
        MeshIRValueError, MeshIRWarning, TensorType, parse_module,
    )
    from meshir.lowering.runtime.process_local import process_local
    from meshir.dialect.call_site import hide_from_error_locations
    from meshir.transforms.cost_model import AxisLink, CostModel
    from meshir.transforms.device_kinds import DEVICE_KINDS, DeviceKind

    # The program model
    from meshir.api.programs.dims import Dim
    from meshir.api.programs.interpret import check_module, interpret, verify_module
    from meshir.api.programs.precision import Precision
    from meshir.api.programs.program import Program, current_program
    from meshir.api.programs.tensor import Tensor

    # One function per op, by family
    from meshir.api.ops.collectives import (
        all_gather, all_reduce, all_slice, all_to_all, collective_permute, reduce_scatter, reshard,
        shard,
    )
    from meshir.api.ops.composites import (
        categorical, cross_entropy, dropout, fold_in, gelu, layer_norm, log_softmax, mean, softmax,
    )
    from meshir.api.ops.cumulative import (
        cumprod, cumsum,
    )
    from meshir.api.ops.contraction import (
        einsum, reduce_max, reduce_min, reduce_sum,
    )
    from meshir.api.ops.creation import (
        constant, iota, random_normal, random_uniform,
    )
    from meshir.api.ops.elementwise import (
        abs, add, cast, cos, div, equal, erf, exp, floor, greater, greater_equal, less, less_equal, log,
        logistic, maximum, minimum, mul, neg, not_equal, pow, relu, rsqrt, select, sigmoid, sign, sin,
        sqrt, stop_gradient, sub, tanh, where,
    )
    from meshir.api.ops.dynamic import (
        dynamic_slice, dynamic_update_slice,
    )
    from meshir.api.ops.indexing import (
        gather, one_hot,
    )
    from meshir.api.ops.loops import (
        fori_loop, scan, while_loop,
    )
    from meshir.api.ops.selection import (
        argmax, argmin, top_k,
    )
    from meshir.api.ops.shape import (
        broadcast, concat, pad, rename, reshape, shift, slice, split, transpose,
    )

    # Differentiation and training
    from meshir.api.training.custom_gradient import custom_gradient
    from meshir.api.training.grad import grad, value_and_grad
    from meshir.api.training.optimizers import SGD, Adafactor, Adam, AdamW
    from meshir.api.training import schedules
    from meshir.api.training.remat import remat
    from meshir.api.training.train_step import TrainStep, init_optimizer_state, train_step

    # Compiling and inspecting
    from meshir.api.compilation.auto_layout import AutoLayout, auto_layout
    from meshir.api.compilation.compile import compile
    from meshir.api.compilation.explain import explain
    from meshir.api.compilation.propagation import layout_table, propagate
    from meshir.api.compilation.visualize import visualize

    # MeshIR and JAX: exports
    from meshir.api.interop.export import export, load

    # Eager and staged execution
    from meshir.api.eager.array import Array, array
    from meshir.api.eager.context import default_layout
    from meshir.api.eager.jit import jit

    # Calibration and checkpoints
    from meshir.api.calibration.calibrate import Calibration, calibrate
    from meshir.api.checkpoints.store import Checkpoints

__version__ = "0.1.0"

__all__ = [
    "abs", "Adafactor", "Adam", "AdamW", "add", "all_gather", "all_reduce", "all_slice", "Array", "array",
    "all_to_all", "argmax", "argmin", "auto_layout", "AutoLayout", "AxisLink", "broadcast", "calibrate", "Calibration", "categorical",
    "cast", "check_module", "CheckpointError", "Checkpoints", "collective_permute", "compile",
    "concat", "constant", "cos", "CostModel", "cross_entropy", "cumprod", "cumsum", "current_program", "custom_gradient",
    "default_layout", "DEVICE_KINDS", "DeviceKind", "Diagnostic", "Dim", "distributed", "div", "dropout", "dynamic_slice", "dynamic_update_slice", "einsum",
    "equal", "erf", "exp", "explain", "export", "floor", "fold_in", "fori_loop", "gather", "gelu", "grad",
    "greater", "greater_equal", "hide_from_error_locations", "init_optimizer_state", "interpret", "iota", "jit", "layer_norm",
    "layout_table", "LayoutRules", "less", "less_equal", "load", "log", "log_softmax", "logistic",
    "maximum", "mean", "Mesh", "MeshIRError", "MeshIRKeyError", "MeshIRTypeError",
    "MeshIRValueError", "MeshIRWarning", "minimum", "mul", "neg", "not_equal", "one_hot", "pad", "parse_module",
    "pow", "Precision", "process_local", "Program", "propagate", "random_normal", "random_uniform",
    "reduce_max", "reduce_min", "reduce_scatter", "reduce_sum", "relu", "remat", "rename",
    "reshape", "reshard", "rsqrt", "scan", "schedules", "select", "SGD", "shard", "shift",
    "sigmoid", "sign", "sin", "slice", "softmax", "split", "sqrt", "stop_gradient", "sub", "tanh",
    "Tensor", "TensorType", "top_k", "train_step", "TrainStep", "transpose", "value_and_grad",
    "verify_module", "visualize", "where", "while_loop",
]


def __getattr__(name: str):
    """`mi.Dimension`, public until issue 31: the IR type's dim (name, size, layout), which
    users never build (they write `mi.Dim`); it lives in `meshir.dialect`."""
    if name == "Dimension":
        import warnings

        from meshir.dialect import Dimension

        warnings.warn("meshir.Dimension is deprecated: write mi.Dim for a named dimension; the IR type's "
                      "dimension with its layout is meshir.dialect.Dimension", DeprecationWarning, stacklevel=2)
        return Dimension
    if _CLI and name in __all__:
        raise AttributeError(f"meshir.{name} is not loaded in meshir-opt, which skips the public namespace to "
                             f"start without jax (python/meshir/__init__.py): import it from its module")
    raise AttributeError(f"module 'meshir' has no attribute {name!r}")


# CPU meshes of up to 8 devices without setup: configure jax's CPU device count now, before
# user code can start the backend with one device (starts nothing; a user's setting wins).
if not _CLI:
    from meshir.lowering.runtime.devices import ensure_cpu_devices as _ensure_cpu_devices

    _ensure_cpu_devices(8)
