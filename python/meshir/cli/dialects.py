"""`--show-dialects`: `Available Dialects: a,b,c` as mlir-opt prints it (sorted, comma-separated).

MLIR's Python bindings cannot list a context's dialects, so the names that jaxlib may register
(MLIR's upstream dialects, StableHLO's, Shardy's and jax's own) are each looked up in
MeshIR's context, and those it knows are printed, with `mtf`: MeshIR's dialect, whose ops MLIR
parses as unregistered ones and MeshIR's verifier checks.
"""
from __future__ import annotations

from meshir.dialect.context import get_context

_CANDIDATES = (
    # MLIR's upstream dialects (mlir-opt --show-dialects, LLVM 20-23)
    "acc", "affine", "amdgpu", "amx", "arith", "arm_neon", "arm_sme", "arm_sve", "async",
    "bufferization", "builtin", "cf", "complex", "dlti", "emitc", "func", "gpu", "index", "irdl",
    "linalg", "llvm", "math", "memref", "mesh", "ml_program", "mpi", "nvgpu", "nvvm", "omp", "pdl",
    "pdl_interp", "ptr", "quant", "rocdl", "scf", "shape", "shard", "smt", "sparse_tensor", "spirv",
    "tensor", "tosa", "transform", "ub", "vcix", "vector", "wasmssa", "x86vector", "xegpu", "xevm",
    # StableHLO, Shardy, XLA and jax
    "chlo", "mhlo", "sdy", "stablehlo", "vhlo", "mosaic_gpu", "tpu", "triton", "tt", "ttg", "ttng",
)

#: MeshIR's own dialect, defined in Python (dialect/).
MESHIR_DIALECT = "mtf"


def available_dialects() -> list[str]:
    """The dialects meshir-opt reads, sorted."""
    ctx = get_context()
    found = {MESHIR_DIALECT}
    for name in _CANDIDATES:
        try:
            ctx.get_dialect_descriptor(name)
        except ValueError:
            continue
        found.add(name)
    return sorted(found)


def show_dialects() -> str:
    return "Available Dialects: " + ",".join(available_dialects()) + "\n"
