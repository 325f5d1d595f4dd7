"""Building the backward ops: `mtf` ops with free layouts, written by name.

The VJP rules never spell out result types: each helper derives its result type from its
operands, for elementwise ops with the op's own `infer_result_type` (the one the Python API
uses), so a rule reads like the math. Every value an Emitter makes has a free layout
(no `@`, no `partial`): the gradient is an ordinary program for propagation to partition.
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect.attributes import to_attribute
from meshir.dialect.ops import (
    BINARY_CLASSES,
    COMPARE_CLASSES,
    UNARY_CLASSES,
    BroadcastOp,
    CastOp,
    ConstantOp,
    EinsumOp,
    OneHotOp,
    PadOp,
    MtfOp,
    ReduceSumOp,
    RenameOp,
    ReshapeOp,
    SelectOp,
    ShiftOp,
    SliceOp,
    TransposeOp,
)
from meshir.dialect.tensor_type import Dimension, TensorType


def type_of(value: ir.Value) -> TensorType:
    return TensorType.from_mlir(value.type)


def free(t: TensorType) -> TensorType:
    """`t` without layout and partial: the type of a cotangent of a value of type `t`."""
    return t.without_layout()


class Emitter:
    """Inserts free-layout `mtf` ops before a fixed op, at a location the caller sets."""

    def __init__(self, ip: ir.InsertionPoint, loc: ir.Location):
        self.ip = ip
        self.loc = loc
        # Scalars are reused: every op goes to the same insertion point, so an earlier
        # constant dominates every later use.
        self._scalars: dict[tuple, ir.Value] = {}

    # -- the one primitive -----------------------------------------------------------------
    def emit(self, op_class, result_type: TensorType, operands, attributes=None) -> ir.Value:
        attrs = {k: to_attribute(v) for k, v in (attributes or {}).items()}
        op = op_class(free(result_type).to_mlir(), list(operands), attrs, loc=self.loc, ip=self.ip)
        return op.result

    def emit_inferred(self, op_class, operands, attributes=None) -> ir.Value:
        """`emit` with the result type the op infers from its operands and attributes."""
        types = [type_of(v) for v in operands]
        return self.emit(op_class, op_class.infer_result_type(types, dict(attributes or {})), operands, attributes)

    # -- constants -------------------------------------------------------------------------
    def scalar(self, value: float, element_type: str) -> ir.Value:
        """A rank-0 constant; elementwise ops broadcast it by name."""
        t = TensorType((), element_type)
        value = int(value) if t.is_integer else (bool(value) if element_type == "i1" else float(value))
        key = (value, element_type)
        if key not in self._scalars:
            self._scalars[key] = self.emit(ConstantOp, t, [], {"value": value})
        return self._scalars[key]

    def zeros(self, t: TensorType) -> ir.Value:
        return self.emit(ConstantOp, free(t), [], {"value": 0.0})

    # -- elementwise -------------------------------------------------------------------------
    def _ew(self, op_class, operands) -> ir.Value:
        return self.emit_inferred(op_class, operands)

    def unary(self, name: str, x) -> ir.Value:
        return self._ew(UNARY_CLASSES[name], [x])

    def binary(self, name: str, a, b) -> ir.Value:
        a, b = self._number(a, b), self._number(b, a)
        return self._ew(BINARY_CLASSES[name], [a, b])

    def compare(self, name: str, a, b) -> ir.Value:
        a, b = self._number(a, b), self._number(b, a)
        return self._ew(COMPARE_CLASSES[name], [a, b])

    def _number(self, x, other):
        """Python numbers become scalars of the other operand's element type."""
        if isinstance(x, (int, float)):
            return self.scalar(x, type_of(other).element_type)
        return x

    def add(self, a, b):
        return self.binary("add", a, b)

    def sub(self, a, b):
        return self.binary("sub", a, b)

    def mul(self, a, b):
        return self.binary("mul", a, b)

    def div(self, a, b):
        return self.binary("div", a, b)

    def neg(self, x):
        return self.unary("neg", x)

    def select(self, cond, on_true, on_false) -> ir.Value:
        like = on_true if not isinstance(on_true, (int, float)) else on_false
        on_true, on_false = self._number(on_true, like), self._number(on_false, like)
        return self._ew(SelectOp, [cond, on_true, on_false])

    def cast(self, x, element_type: str) -> ir.Value:
        t = type_of(x)
        if t.element_type == element_type:
            return x
        return self.emit(CastOp, t.with_element_type(element_type), [x])

    # -- contraction and shape ---------------------------------------------------------------
    def einsum(self, operands, names, element_type: str | None = None) -> ir.Value:
        """Product of `operands`, summed over every name not in `names` (the output order)."""
        types = [type_of(v) for v in operands]
        sizes = {d.name: d.size for t in types for d in t.dims}
        elem = element_type or types[0].element_type
        return self.emit(EinsumOp, TensorType(tuple(Dimension(n, sizes[n]) for n in names), elem), operands)

    def reduce_sum(self, x, names) -> ir.Value:
        t = type_of(x)
        return self.emit(ReduceSumOp, TensorType(tuple(Dimension(n, t.size(n)) for n in names), t.element_type), [x])

    def broadcast(self, x, target: TensorType) -> ir.Value:
        """`x` (whose names are among `target`'s) replicated over `target`'s other names."""
        if type_of(x).same_shape(target):
            return x
        return self.emit(BroadcastOp, free(target).with_element_type(type_of(x).element_type), [x])

    def transpose(self, x, target: TensorType) -> ir.Value:
        if type_of(x).names == target.names:
            return x
        return self.emit(TransposeOp, free(target).with_element_type(type_of(x).element_type), [x])

    def fit(self, ct, target: TensorType) -> ir.Value:
        """A cotangent with `target`'s names and order: names `target` lacks are summed away
        (they were broadcast in the forward op), the rest reordered, the element type cast."""
        t = type_of(ct)
        common = [n for n in target.names if t.has(n)]
        if len(common) < t.rank:
            ct = self.reduce_sum(ct, common)
        if len(common) < target.rank:  # a cotangent that does not depend on some of the value's names
            ct = self.broadcast(ct, target)
        else:
            ct = self.transpose(ct, target)
        return self.cast(ct, target.element_type)

    def reshape(self, x, target: TensorType) -> ir.Value:
        return self.emit(ReshapeOp, free(target).with_element_type(type_of(x).element_type), [x])

    def rename(self, x, target: TensorType) -> ir.Value:
        return self.emit(RenameOp, free(target).with_element_type(type_of(x).element_type), [x])

    def _resized(self, x, dim: str, size: int) -> TensorType:
        t = type_of(x)
        return t.with_dims(Dimension(d.name, size if d.name == dim else d.size) for d in t.dims)

    def slice(self, x, dim: str, start: int, length: int) -> ir.Value:
        return self.emit(SliceOp, self._resized(x, dim, length), [x], {"dim": dim, "start": int(start)})

    def pad(self, x, dim: str, low: int, high: int) -> ir.Value:
        if low == 0 and high == 0:
            return x
        return self.emit_inferred(PadOp, [x], {"dim": dim, "low": int(low), "high": int(high), "value": 0.0})

    def shift(self, x, dim: str, offset: int, wrap: bool, fill: float = 0.0) -> ir.Value:
        return self.emit_inferred(ShiftOp, [x], {"dim": dim, "offset": int(offset), "wrap": bool(wrap), "fill": fill})

    def one_hot(self, ids, depth: Dimension, element_type: str) -> ir.Value:
        t = type_of(ids)
        dims = [Dimension(d.name, d.size) for d in t.dims] + [Dimension(depth.name, depth.size)]
        return self.emit(OneHotOp, TensorType(tuple(dims), element_type), [ids])


def erase_dead_ops(block) -> None:
    """Erase `mtf` ops and calls whose results nothing uses (all `mtf` ops are pure, and so
    are functions made of them)."""
    used: set = set()
    for op in reversed(list(block.operations)):
        results = list(op.operation.results)
        pure = isinstance(op, MtfOp) or op.operation.name == "func.call"
        if pure and results and not any(r in used for r in results):
            op.operation.erase()
            continue
        used.update(op.operation.operands)
