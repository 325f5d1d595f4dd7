"""MeshIR: named-dimension tensor programs on a mesh, compiled through MLIR to StableHLO."""
from meshir.dialect import (  # noqa: F401
    Diagnostic,
    Dimension,
    Mesh,
    MeshIRError,
    TensorType,
    check_module,
    parse_module,
    verify_module,
)
