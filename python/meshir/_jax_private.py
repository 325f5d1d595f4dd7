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
    return ctx
