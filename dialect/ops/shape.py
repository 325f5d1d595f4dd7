"""Ops that change shape by name: broadcast, reshape, rename, transpose, slice, concat, pad, shift."""
from __future__ import annotations

from meshir._jax_private import ir

from ..diagnostics import VerifyError
from ..tensor_type import Dimension
from .base import BYTES, MOVE, MtfOp, mtf_op, names_text, same_element_type, same_sizes
from .base import layout_free, producer, replicated, same_type_operand


class _SameElementOp(MtfOp):
    def _check_element(self):
        src, result = self.input_type, self.result_type
        if src.element_type != result.element_type:
            raise VerifyError(f"result element type must be {src.element_type}, got {result.element_type}")


class _KeepsNamesOp(_SameElementOp):
    """An op whose result holds each operand dim by name at its size, in any order; whether it
    may also add names (`ADDS_NAMES`) is what tells a broadcast from a transpose."""

    LINEAR = MOVE
    MEMORY = "fused"
    ADDS_NAMES = False

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        self._check_element()
        same_sizes([src, result], "operand and result")
        lost = [n for n in src.names if not result.has(n)]
        if self.ADDS_NAMES and lost:
            raise VerifyError(f"result drops operand names {names_text(lost)}; broadcast may only add names")
        if not self.ADDS_NAMES and (lost or len(result.names) != len(src.names)):
            raise VerifyError(
                f"result names {names_text(result.names)} must be a permutation of {names_text(src.names)}"
            )


@mtf_op
class BroadcastOp(_KeepsNamesOp):
    """`mtf.broadcast`: add dimensions (replicating values) and/or reorder."""

    OPERATION_NAME = "mtf.broadcast"
    ADDS_NAMES = True

    def fold(self):
        """To the operand's own type: no name added, none moved."""
        return same_type_operand(self)


@mtf_op
class ReshapeOp(_SameElementOp):
    """`mtf.reshape`: reinterpret the row-major elements under new names and sizes."""

    OPERATION_NAME = "mtf.reshape"
    FACTORS = "reshape"
    LINEAR = MOVE
    MEMORY = "fused"

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        self._check_element()
        if src.num_elements != result.num_elements:
            raise VerifyError(
                f"reshape must keep the element count: operand has {src.num_elements}, result {result.num_elements}"
            )

    def fold(self):
        """To the operand's type: the identity. Of a reshape whose result states no layout,
        or of replicated values only: one reshape (both keep the row-major element order, so
        their composition is one; no layout statement is lost, and a replicated reshape is
        partitioned)."""
        return _fold_pair(self, lambda src, mid: layout_free(mid) or all(
            replicated(t) for t in (src, mid, self.result_type)))


@mtf_op
class RenameOp(_SameElementOp):
    """`mtf.rename`: give dimensions new names, position by position (sizes unchanged)."""

    OPERATION_NAME = "mtf.rename"
    FACTORS = "positional"
    LINEAR = MOVE
    MEMORY = "fused"

    @property
    def renaming(self) -> dict[str, str]:
        """Old name -> new name for the dims whose name changes."""
        return {a: b for a, b in zip(self.input_type.names, self.result_type.names) if a != b}

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        self._check_element()
        if src.shape != result.shape:
            raise VerifyError(f"rename keeps sizes position by position: operand {src.shape}, result {result.shape}")

    def fold(self):
        """To the operand's type: the identity. Of a rename that keeps its operand's layouts
        position by position: one rename (both keep the data and its order)."""
        return _fold_pair(self, lambda src, mid: [d.axes for d in src.dims] == [d.axes for d in mid.dims]
                          and _same_pending(src, mid))


@mtf_op
class TransposeOp(_KeepsNamesOp):
    """`mtf.transpose`: the same dimensions in another order."""

    OPERATION_NAME = "mtf.transpose"

    def fold(self):
        """To the operand's type: the identity. Of a transpose that keeps every name's layout:
        one transpose (a permutation of a permutation), or none when it restores the order."""
        return _fold_pair(self, lambda src, mid: all(src.dim(d.name).axes == d.axes for d in mid.dims)
                          and _same_pending(src, mid))


class _AlongDimOp(_SameElementOp):
    """Ops acting along one named dim (`dim` attribute); other dims are unchanged."""

    WHOLE_DIM_ATTRS = ("dim",)

    @classmethod
    def infer_result_type(cls, operand_types, attrs):
        """The first operand with a free layout and `dim` resized to `resized_dim`."""
        first, dim = operand_types[0], attrs["dim"]
        size = cls.resized_dim([t.size(dim) for t in operand_types], attrs)
        return first.without_layout().with_dims(
            Dimension(d.name, size if d.name == dim else d.size) for d in first.dims)

    @classmethod
    def resized_dim(cls, sizes: list[int], attrs: dict) -> int:
        """The result's size of `dim` from the operands' sizes of it and the attributes (a
        slice's length is no attribute: it does not infer its result type)."""
        raise NotImplementedError(f"{cls.OPERATION_NAME} does not infer its result type")

    def _check_other_dims(self, src, result, dim):
        if src.names != result.names:
            raise VerifyError(f"result names {names_text(result.names)} must equal operand names {names_text(src.names)}")
        for d, r in zip(src.dims, result.dims):
            if d.name != dim and d.size != r.size:
                raise VerifyError(f"dimension '{d.name}' changes size from {d.size} to {r.size}; only '{dim}' may")


@mtf_op
class SliceOp(_AlongDimOp):
    """`mtf.slice {dim, start}`: a contiguous window of `dim`; its length is the result's size."""

    OPERATION_NAME = "mtf.slice"
    UNLINKED_DIM_ATTRS = ("dim",)
    LINEAR = MOVE
    ATTRIBUTES = {"dim": "str", "start": "int"}

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        self._check_element()
        dim = self.dim_attr("dim", src)
        self._check_other_dims(src, result, dim)
        start, length = self.attr("start"), result.size(dim)
        if start < 0 or start + length > src.size(dim):
            raise VerifyError(f"slice [{start}, {start + length}) is out of bounds of '{dim}' of size {src.size(dim)}")

    def fold(self):
        """To the operand's type: the whole dim (the verifier then forces start 0)."""
        return same_type_operand(self)


@mtf_op
class ConcatOp(_AlongDimOp):
    """`mtf.concat {dim}`: join operands along `dim`."""

    OPERATION_NAME = "mtf.concat"
    UNLINKED_DIM_ATTRS = ("dim",)
    LINEAR = MOVE
    OPERANDS = (1, None)
    ATTRIBUTES = {"dim": "str"}

    @classmethod
    def resized_dim(cls, sizes, attrs):
        return sum(sizes)

    def verify_op(self, mesh):
        types, result = self.operand_types, self.result_type
        same_element_type(types + [result], "operands and result")
        dim = self.dim_attr("dim", result, "result")
        for t in types:
            self._check_other_dims(t, result, dim)
        total = sum(t.size(dim) for t in types)
        if total != result.size(dim):
            raise VerifyError(f"result size of '{dim}' must be {total} (the sum of the operands'), got {result.size(dim)}")

    def fold(self):
        """One operand, of the result's type: nothing joined."""
        return same_type_operand(self) if len(self.operation.operands) == 1 else None


@mtf_op
class PadOp(_AlongDimOp):
    """`mtf.pad {dim, low, high, value}`: add `low` and `high` elements of `value` along `dim`."""

    OPERATION_NAME = "mtf.pad"
    UNLINKED_DIM_ATTRS = ("dim",)
    LINEAR = MOVE
    ATTRIBUTES = {"dim": "str", "low": "int", "high": "int", "value": "float"}
    OPTIONAL = frozenset({"value"})
    DEFAULTS = {"value": 0.0}

    @classmethod
    def resized_dim(cls, sizes, attrs):
        return sizes[0] + attrs["low"] + attrs["high"]

    def linear_rules(self):
        """Padding with a non-zero value adds it on every device: not linear for a sum."""
        return self.LINEAR if self.attr("value") == 0.0 else {k: v for k, v in self.LINEAR.items() if k != "sum"}

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        self._check_element()
        dim = self.dim_attr("dim", src)
        self._check_other_dims(src, result, dim)
        low, high = self.attr("low"), self.attr("high")
        if low < 0 or high < 0:
            raise VerifyError(f"padding must be non-negative, got low={low}, high={high}")
        if result.size(dim) != src.size(dim) + low + high:
            raise VerifyError(f"result size of '{dim}' must be {src.size(dim) + low + high}, got {result.size(dim)}")

    def fold(self):
        """To the operand's type: low = high = 0 (the verifier ties the sizes), nothing added."""
        return same_type_operand(self)


@mtf_op
class ShiftOp(_AlongDimOp):
    """`mtf.shift {dim, offset, wrap, fill}`: out[i] = in[i - offset] along `dim`.

    Vacated positions get `fill`, or the wrapped-around values when `wrap` is true. Along a
    split `dim` it reads |offset| rows of a neighbouring block (`halos`), and records the
    bytes of that exchange (`bytes_per_device`).
    """

    OPERATION_NAME = "mtf.shift"
    ATTRIBUTES = {"dim": "str", "offset": "int", "wrap": "bool", "fill": "float", **BYTES}
    OPTIONAL = frozenset({"wrap", "fill", "bytes_per_device"})
    DEFAULTS = {"wrap": False, "fill": 0.0}

    @classmethod
    def resized_dim(cls, sizes, attrs):
        return sizes[0]

    def nearest_offset(self) -> int:
        """The offset, or when wrapping the equivalent one of least magnitude (a shift by
        n - 1 of n rows is one by -1): the fewest rows to bring from a neighbour."""
        offset, size = self.attr("offset"), self.input_type.size(self.attr("dim"))
        if not self.attr("wrap") or not size:
            return offset
        k = offset % size
        return k - size if k > size - k else k

    def halos(self):
        """out[i] = in[i - k]: a block reads the k rows before it (k > 0) or -k after it."""
        k = self.nearest_offset()
        return {self.attr("dim"): (max(k, 0), max(-k, 0))}

    def verify_op(self, mesh):
        src, result = self.input_type, self.result_type
        self._check_element()
        dim = self.dim_attr("dim", src)
        self._check_other_dims(src, result, dim)
        if src.size(dim) != result.size(dim):
            raise VerifyError(f"shift keeps the size of '{dim}'")

    def fold(self):
        """Offset 0, or a whole number of turns when wrapping: every element stays in place
        (the type must still be the operand's: a shift may change layouts)."""
        offset, size = self.attr("offset"), self.input_type.size(self.attr("dim"))
        if offset == 0 or (self.attr("wrap") and size and offset % size == 0):
            return same_type_operand(self)
        return None


def _same_pending(a, b) -> bool:
    return a.partial == b.partial and (not a.partial or a.partial_reduction == b.partial_reduction)


def _fold_pair(op, composable):
    """The fold of a reshape, rename or transpose: its operand when that has the result's
    type; for the op applied to an op of its own class, one op from the inner op's operand
    when `composable(inner operand type, middle type)` (no layout fact is lost in between),
    or that operand itself when it has the result's type. Else None."""
    same = same_type_operand(op)
    inner = producer(op.input, type(op))
    if same is not None or inner is None or not composable(inner.input_type, inner.result_type):
        return same
    source, result = inner.input, op.operation.results[0]
    if source.type == result.type:
        return source
    return type(op)(result.type, [source], loc=op.location, ip=ir.InsertionPoint(op)).result


@mtf_op
class SplitOp(_AlongDimOp):
    """`mtf.split {dim}`: cut `dim` into consecutive pieces, one result per piece, each keeping
    the dim's name with its piece's size (Mesh-TensorFlow's split; the inverse of concat). The
    pieces' sizes are their types': no attribute repeats them."""

    OPERATION_NAME = "mtf.split"
    UNLINKED_DIM_ATTRS = ("dim",)
    PIECE_DIM_ATTRS = ("dim",)
    LINEAR = MOVE
    ATTRIBUTES = {"dim": "str"}
    RESULTS = None

    @classmethod
    def infer_result_type(cls, operand_types, attrs):
        """One free-layout type per size of `attrs["sizes"]` (the builder's, not an attribute)."""
        src, dim = operand_types[0], attrs["dim"]
        return [src.without_layout().with_dims(Dimension(d.name, size if d.name == dim else d.size) for d in src.dims)
                for size in attrs["sizes"]]

    def fold(self):
        """One piece, of the operand's type: nothing cut."""
        return same_type_operand(self) if len(self.operation.results) == 1 else None

    def piece_offsets(self) -> list[int]:
        """The first index along `dim` of each piece."""
        dim, offsets, start = self.attr("dim"), [], 0
        for t in self.result_types:
            offsets.append(start)
            start += t.size(dim)
        return offsets

    def verify_op(self, mesh):
        src, results = self.input_type, self.result_types
        same_element_type([src] + results, "operand and results")
        dim = self.dim_attr("dim", src)
        for r in results:
            self._check_other_dims(src, r, dim)
        total = sum(r.size(dim) for r in results)
        if total != src.size(dim):
            sizes = ", ".join(str(r.size(dim)) for r in results)
            raise VerifyError(f"the pieces' sizes of '{dim}' ({sizes}) sum to {total}, not to its size {src.size(dim)}")
