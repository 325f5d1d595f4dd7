"""meshir.dialect: the `mtf` dialect — types, op classes, verifier and reference interpreter."""
from .context import get_context, parse_module  # noqa: F401
from .diagnostics import (  # noqa: F401
    CheckpointError, Diagnostic, MeshIRError, MeshIRKeyError, MeshIRTypeError, MeshIRValueError, MeshIRWarning,
    VerifyError,
)
from .layout_rules import LayoutRules  # noqa: F401
from .mesh import Mesh  # noqa: F401
from .tensor_type import Dimension, TensorType, TypeContentError, TypeSyntaxError  # noqa: F401
from .verifier import check_module, verify_module  # noqa: F401
