"""The user-facing builder API: Dim, Program, Tensor and one function per `mtf` op.

Each op family's module lists its functions in its `__all__`; they are re-exported from
there, so adding an op touches its family's module only."""
from . import collectives, composites, contraction, creation, elementwise, indexing, loops, shape_ops
from .calibrate import Calibration, calibrate
from .checkpoint import Checkpoints
from .collectives import *  # noqa: F403
from .auto_layout import AutoLayout, auto_layout
from .compile import compile
from meshir.lowering.runtime.process_local import process_local
from .composites import *  # noqa: F403
from .contraction import *  # noqa: F403
from .creation import *  # noqa: F403
from .dims import Dim
from .elementwise import *  # noqa: F403
from .explain import explain
from .grad import GradientProgram, grad, value_and_grad  # noqa: F401
from .indexing import *  # noqa: F403
from .loops import *  # noqa: F403
from .optim import SGD, Adafactor, Adam, AdamW
from .precision import Precision
from .program import Program, current_program
from .propagation import layout_table, propagate
from .custom_gradient import custom_gradient
from .remat import remat
from .shape_ops import *  # noqa: F403
from .tensor import Tensor
from .train import TrainStep, init_optimizer_state, train_step
from .visualize import visualize
from meshir.transforms.cost_model import AxisLink, CostModel
from meshir.transforms.device_kinds import DEVICE_KINDS, DeviceKind

_OP_FAMILIES = (collectives, composites, contraction, creation, elementwise, indexing, loops, shape_ops)

__all__ = [
    "Adafactor", "Adam", "AdamW", "AutoLayout", "AxisLink", "Calibration", "Checkpoints", "CostModel", "DEVICE_KINDS",
    "DeviceKind", "Dim", "Precision", "Program", "SGD", "Tensor", "TrainStep", "auto_layout", "calibrate", "compile", "current_program",
    "custom_gradient", "explain",
    "grad", "process_local", "init_optimizer_state", "layout_table", "propagate", "remat", "train_step", "value_and_grad", "visualize",
    *(name for family in _OP_FAMILIES for name in family.__all__),
]
