"""The user-facing builder API: Dim, Program, Tensor and one function per `mtf` op.

Each op family's module lists its functions in its `__all__`; they are re-exported from
there, so adding an op touches its family's module only."""
from . import collectives, composites, contraction, creation, elementwise, indexing, loops, shape_ops
from .calibrate import Calibration, calibrate  # noqa: F401
from .checkpoint import Checkpoints  # noqa: F401
from .collectives import *  # noqa: F401,F403
from .auto_layout import AutoLayout, auto_layout  # noqa: F401
from .compile import compile  # noqa: F401
from meshir.lowering.runtime.process_local import process_local  # noqa: F401,E402
from .composites import *  # noqa: F401,F403
from .contraction import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .dims import Dim  # noqa: F401
from .elementwise import *  # noqa: F401,F403
from .explain import explain  # noqa: F401
from .grad import GradientProgram, grad, value_and_grad  # noqa: F401
from .indexing import *  # noqa: F401,F403
from .loops import *  # noqa: F401,F403
from .optim import SGD, Adafactor, Adam, AdamW  # noqa: F401
from .precision import Precision  # noqa: F401
from .program import Program, current_program  # noqa: F401
from .propagation import layout_table, propagate  # noqa: F401
from .custom_gradient import custom_gradient  # noqa: F401
from .remat import remat  # noqa: F401
from .shape_ops import *  # noqa: F401,F403
from .tensor import Tensor  # noqa: F401
from .train import TrainStep, init_optimizer_state, train_step  # noqa: F401
from .visualize import visualize  # noqa: F401
from meshir.transforms.cost_model import AxisLink, CostModel  # noqa: F401,E402
from meshir.transforms.device_kinds import DEVICE_KINDS, DeviceKind  # noqa: F401,E402

_OP_FAMILIES = (collectives, composites, contraction, creation, elementwise, indexing, loops, shape_ops)

__all__ = [
    "Adafactor", "Adam", "AdamW", "AutoLayout", "AxisLink", "Calibration", "Checkpoints", "CostModel", "DEVICE_KINDS",
    "DeviceKind", "Dim", "Precision", "Program", "SGD", "Tensor", "TrainStep", "auto_layout", "calibrate", "compile", "current_program",
    "custom_gradient", "explain",
    "grad", "process_local", "init_optimizer_state", "layout_table", "propagate", "remat", "train_step", "value_and_grad", "visualize",
    *(name for family in _OP_FAMILIES for name in family.__all__),
]
