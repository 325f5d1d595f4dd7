"""Python op classes of the `mtf` dialect, registered with MLIR on import."""
from . import attention, collectives, contraction, creation, cumulative, dynamic, elementwise, indexing, loops, selection, shape  # noqa: F401
from .attention import DotProductAttentionGradOp, DotProductAttentionOp  # noqa: F401
from .base import OP_CLASSES, MtfDialect, MtfOp, tensor_type_of  # noqa: F401
from .collectives import (  # noqa: F401
    AllGatherOp,
    AllReduceOp,
    AllSliceOp,
    COLLECTIVE_OP_NAMES,
    AllToAllOp,
    AsPartialOp,
    CollectivePermuteOp,
    ReduceScatterOp,
    ShardOp,
    is_collective,
)
from .contraction import EinsumOp, ReduceMaxOp, ReduceMinOp, ReduceSumOp  # noqa: F401
from .creation import ConstantOp, IotaOp, RandomNormalOp, RandomUniformOp  # noqa: F401
from .cumulative import CumprodOp, CumsumOp  # noqa: F401
from .dynamic import DynamicSliceOp, DynamicUpdateSliceOp  # noqa: F401
from .elementwise import BINARY_CLASSES, COMPARE_CLASSES, UNARY_CLASSES, CastOp, SelectOp  # noqa: F401
from .indexing import GatherOp, OneHotOp  # noqa: F401
from .loops import LoopOp, ScanOp, WhileOp, YieldOp  # noqa: F401
from .selection import ArgMaxOp, ArgMinOp, TopKOp  # noqa: F401
from .shape import (  # noqa: F401
    BroadcastOp,
    ConcatOp,
    PadOp,
    RenameOp,
    ReshapeOp,
    ShiftOp,
    SliceOp,
    SplitOp,
    TransposeOp,
)

import sys as _sys

from meshir._jax_private import register_dialect_python_module as _register_module

_register_module("mtf", _sys.modules[__name__])
