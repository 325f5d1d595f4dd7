"""The public namespace, assembled in one place: every name here is in `__all__` and
documented in docs/python-api.md (test/python/api/test_public_names.py checks both).
`meshir/__init__.py` re-exports it, except in `meshir-opt`, which starts without it.
"""
# ruff: noqa: F401  (re-exported by meshir/__init__.py)
from meshir import distributed
from meshir.dialect import (
    CheckpointError, Diagnostic, LayoutRules, Mesh, MeshIRError, MeshIRKeyError, MeshIRTypeError,
    MeshIRValueError, MeshIRWarning, TensorType, parse_module,
)
from meshir.lowering.runtime.process_local import process_local
from meshir.lowering.runtime.tpu import tpu_mesh
from meshir.dialect.call_site import hide_from_error_locations
from meshir.transforms.analysis.cost_model import AxisLink, CostModel
from meshir.transforms.analysis.device_kinds import DEVICE_KINDS, DeviceKind

# The program model
from meshir.api.programs.dims import Dim
from meshir.api.programs.interpret import check_module, interpret, verify_module
from meshir.api.programs.precision import Precision
from meshir.api.programs.program import Program, current_program
from meshir.api.programs.tensor import Tensor

# One function per op, by family
from meshir.api.ops.attention import (
    dot_product_attention,
)
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

from meshir._public_names import PUBLIC_NAMES

# What a lower layer calls in a higher one, handed down once here (docs/architecture.md, "Arrows")
from meshir.api.compilation.compile import install_vjp_compiler
from meshir.api.eager.dispatch import run_eagerly
from meshir.api.interop.vjp import vjp_compiler
from meshir.api.ops import elementwise as _elementwise
from meshir.api.ops._builder import install_eager
from meshir.api.programs.named_value import install_operators

install_operators(_elementwise)  # Tensor and mi.Array operators are the elementwise op functions
install_eager(run_eagerly)  # op functions run at once on mi.Arrays
install_vjp_compiler(vjp_compiler)  # jax.grad through an executable runs MeshIR's own gradient

__all__ = list(PUBLIC_NAMES)
