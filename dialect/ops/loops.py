"""Loops: ops that hold a body region, and `mtf.yield`, the terminator of their blocks.

`mtf.scan {length, carries, invariants, dim?}` runs its body `length` times. Operands: the
initial carry (`carries` values), then the *xs*, each with the dim `dim` of size `length`,
then the *invariants* (`invariants` values every iteration reads unchanged). The body's block
arguments: the iteration index (`!mtf.tensor<i32>`, from 0), the carry, each x's slice at the
index (its type without `dim`), the invariants. The body yields the next carry, then one *y*
per stacked result. Results: the last carry, then each y stacked along a new leading dim
`dim` of size `length`. A `fori_loop` is a scan without xs and ys. With `reverse = true` the
index runs from `length - 1` down to 0 (the backward pass of a scan is one).

`mtf.while {invariants}` carries its other operands while its `cond` region yields a true
`!mtf.tensor<i1>`; its `body` region yields the next carry. Both regions' block arguments are
the carry, then the invariants. The results are the carry when `cond` first yields false.

Bodies are isolated from above (the API turns an outer value a body uses into an invariant),
so every pass can treat a body like a function. A carried value keeps one type across the
loop — the same dims and element type on the operand, the block argument, the yield and the
result — and an invariant the same on the operand and the block argument; their layouts must
agree once propagation has run (it reshards where they differ).
"""
from __future__ import annotations

from ..diagnostics import VerifyError
from ..tensor_type import TensorType
from .base import MtfOp, mtf_op, tensor_type_of

INDEX_TYPE = TensorType.make([], "i32")
CONDITION_TYPE = TensorType.make([], "i1")


def _shape(t: TensorType) -> TensorType:
    """What a carried value keeps across a loop: dims and element type, not its layout."""
    return t.without_layout()


def _types(values, what: str) -> list[TensorType]:
    return [tensor_type_of(v, f"{what} #{i}") for i, v in enumerate(values)]


class LoopOp(MtfOp):
    """Base of ops with body regions: variable operand and result counts, regions checked."""

    OPERANDS = (0, None)
    RESULTS = None  # one per carried value and stacked y
    FACTORS = "carried"
    PRECISION = "declared"
    #: A loop is pure as a whole (its body's ops are).
    PURE = True

    def _verify_arity(self) -> None:
        if len(self.operation.regions) != self.REGIONS:
            raise VerifyError(f"expects {self.REGIONS} region{'s' if self.REGIONS != 1 else ''}, "
                              f"got {len(self.operation.regions)}")
        for r, region in enumerate(self.operation.regions):
            if len(region.blocks) != 1:
                raise VerifyError(f"region #{r} must have exactly one block, got {len(region.blocks)}")
            ops = list(region.blocks[0].operations)
            if not ops or not isinstance(ops[-1], YieldOp):
                raise VerifyError(f"region #{r} must end with 'mtf.yield'")

    def body_block(self, region: int = -1):
        return self.operation.regions[region].blocks[0]

    def yielded(self, region: int = -1) -> list:
        """The values the region's `mtf.yield` returns."""
        return list(list(self.body_block(region).operations)[-1].operation.operands)

    @property
    def carried(self) -> int:
        """How many operands are carried."""
        return len(self.operation.operands) - self.invariant_count

    @property
    def invariant_count(self) -> int:
        return self.attr("invariants") or 0

    def _check_invariants(self, args: list[TensorType]) -> None:
        """The last block arguments are the invariants, typed as their operands."""
        n = self.invariant_count
        operands = self.operand_types
        if not 0 <= n <= len(operands):
            raise VerifyError(f"invariants {n} is not between 0 and the {len(operands)} operands")
        for k in range(n):
            operand, arg = operands[len(operands) - n + k], args[len(args) - n + k]
            if _shape(operand) != _shape(arg):
                raise VerifyError(f"invariant #{k} is {_shape(operand)} but its body argument is {_shape(arg)}")

    def layout_pairs(self) -> list[tuple[str, TensorType, TensorType]]:
        """(what, type, type) that must be equal, layouts included, once collectives are
        inserted: each carried value's operand, block arguments, yield and result; each
        invariant's operand and block arguments; a scan's xs and ys with their slices
        (the scanned dim whole)."""
        raise NotImplementedError

    def _carry_pairs(self, k: int, operand: TensorType, args: list[TensorType], yielded: TensorType,
                     result: TensorType) -> list:
        out = [(f"carried value #{k}'s body argument", operand, a) for a in args]
        return out + [(f"carried value #{k}'s yielded value", operand, yielded),
                      (f"carried value #{k}'s result", operand, result)]

    def _invariant_pairs(self, regions: list[int]) -> list:
        n, operands = self.invariant_count, self.operand_types
        out = []
        for r in regions:
            args = _types(self.body_block(r).arguments, "body argument")
            out += [(f"invariant #{m}'s body argument", operands[len(operands) - n + m], args[len(args) - n + m])
                    for m in range(n)]
        return out

    def _check_carry(self, k: int, operand: TensorType, arg: TensorType, yielded: TensorType,
                     result: TensorType) -> None:
        want = _shape(operand)
        for what, t in (("body argument", arg), ("yielded value", yielded), ("result", result)):
            if _shape(t) != want:
                raise VerifyError(f"carried value #{k} is {want} on entry but its {what} is {_shape(t)}: "
                                  "a loop carries the same dims and element type")


@mtf_op
class ScanOp(LoopOp):
    OPERATION_NAME = "mtf.scan"
    ATTRIBUTES = {"length": "int", "carries": "int", "invariants": "int", "dim": "str", "reverse": "bool"}
    OPTIONAL = frozenset({"dim", "invariants", "reverse"})
    REGIONS = 1

    @property
    def carried(self) -> int:
        return self.attr("carries")

    @property
    def xs_count(self) -> int:
        return len(self.operation.operands) - self.carried - self.invariant_count

    def layout_pairs(self) -> list:
        carries, dim = self.carried, self.attr("dim")
        operands, results = self.operand_types, self.result_types
        args = _types(self.body_block().arguments, "body argument")
        yielded = _types(self.yielded(), "yielded value")
        out = []
        for k in range(carries):
            out += self._carry_pairs(k, operands[k], [args[1 + k]], yielded[k], results[k])
        for j in range(self.xs_count):
            x = operands[carries + j]
            whole = x.with_layout({dim: ()})
            out.append((f"xs #{j}", whole, x))
            out.append((f"xs #{j}'s slice", whole.with_dims(d for d in whole.dims if d.name != dim), args[1 + carries + j]))
        for j in range(len(results) - carries):
            y, stacked = yielded[carries + j], results[carries + j]
            out.append((f"stacked value #{j}'s result", TensorType.make(
                [(dim, self.attr("length"), ())] + [(d.name, d.size, d.axes) for d in y.dims], y.element_type), stacked))
        return out + self._invariant_pairs([0])

    def verify_op(self, mesh) -> None:
        length, carries, dim = self.attr("length"), self.attr("carries"), self.attr("dim")
        if length < 1:
            raise VerifyError(f"length must be at least 1, got {length}")
        operands = self.operand_types
        invariants = self.invariant_count
        if not 0 <= carries <= len(operands) - invariants:
            raise VerifyError(f"carries {carries} and invariants {invariants} do not fit the {len(operands)} operands")
        xs, results = operands[carries:len(operands) - invariants], self.result_types
        block = self.body_block()
        args = _types(block.arguments, "body argument")
        yielded = _types(self.yielded(), "yielded value")
        ys = len(results) - carries
        if ys < 0:
            raise VerifyError(f"has {len(results)} results for {carries} carried values")
        if (xs or ys) and dim is None:
            raise VerifyError("scans over xs or stacks ys, so it needs attribute 'dim' (a string)")
        if len(args) != 1 + carries + len(xs) + invariants:
            raise VerifyError(f"body has {len(args)} arguments; expected the index, {carries} carried, "
                              f"{len(xs)} slices of xs and {invariants} invariants")
        self._check_invariants(args)
        if _shape(args[0]) != INDEX_TYPE:
            raise VerifyError(f"body argument #0 (the index) must be {INDEX_TYPE}, got {args[0]}")
        if len(yielded) != carries + ys:
            raise VerifyError(f"body yields {len(yielded)} values; expected {carries} carried and {ys} stacked")
        for k in range(carries):
            self._check_carry(k, operands[k], args[1 + k], yielded[k], results[k])
        for j, x in enumerate(xs):
            if not x.has(dim) or x.size(dim) != length:
                raise VerifyError(f"xs #{j} {x} must have dim '{dim}' of size {length} (the scan's length)")
            want = _shape(x).with_dims(d for d in _shape(x).dims if d.name != dim)
            if _shape(args[1 + carries + j]) != want:
                raise VerifyError(f"body argument for xs #{j} must be {want} (xs without '{dim}'), got "
                                  f"{_shape(args[1 + carries + j])}")
        for j in range(ys):
            y, stacked = yielded[carries + j], results[carries + j]
            if y.has(dim):
                raise VerifyError(f"stacked value #{j} {y} already has dim '{dim}'")
            want = TensorType.make([(dim, length)] + [(d.name, d.size) for d in y.dims], y.element_type)
            if _shape(stacked) != want:
                raise VerifyError(f"result for stacked value #{j} must be {want}, got {_shape(stacked)}")


@mtf_op
class WhileOp(LoopOp):
    OPERATION_NAME = "mtf.while"
    ATTRIBUTES = {"invariants": "int"}
    OPTIONAL = frozenset({"invariants"})
    REGIONS = 2

    def layout_pairs(self) -> list:
        operands, results = self.operand_types, self.result_types
        cond_args = _types(self.body_block(0).arguments, "cond argument")
        args = _types(self.body_block(1).arguments, "body argument")
        yielded = _types(self.yielded(1), "yielded value")
        out = []
        for k in range(self.carried):
            out += self._carry_pairs(k, operands[k], [cond_args[k], args[k]], yielded[k], results[k])
        return out + self._invariant_pairs([0, 1])

    def verify_op(self, mesh) -> None:
        operands, results = self.operand_types, self.result_types
        carried = self.carried
        if len(results) != carried:
            raise VerifyError(f"has {len(results)} results for {carried} carried values")
        cond_args = _types(self.body_block(0).arguments, "cond argument")
        args = _types(self.body_block(1).arguments, "body argument")
        yielded = _types(self.yielded(1), "yielded value")
        for what, got in (("cond", cond_args), ("body", args)):
            if len(got) != len(operands):
                raise VerifyError(f"{what} region has {len(got)} arguments for {carried} carried values and "
                                  f"{self.invariant_count} invariants")
            self._check_invariants(got)
        if len(yielded) != carried:
            raise VerifyError(f"body yields {len(yielded)} values for {carried} carried values")
        for k, operand in enumerate(operands[:carried]):
            self._check_carry(k, operand, cond_args[k], cond_args[k], results[k])
            self._check_carry(k, operand, args[k], yielded[k], results[k])
        condition = _types(self.yielded(0), "condition")
        if len(condition) != 1 or _shape(condition[0]) != CONDITION_TYPE:
            got = ", ".join(map(str, condition)) or "nothing"
            raise VerifyError(f"cond region must yield one {CONDITION_TYPE} (a scalar i1), got {got}")


@mtf_op
class YieldOp(MtfOp):
    """Ends a loop's region: its operands are what the region returns to the loop."""

    OPERATION_NAME = "mtf.yield"
    PRECISION = "declared"
    MEMORY = "materializes_operands"
    OPERANDS = (0, None)
    RESULTS = 0
    FACTORS = "none"
    TERMINATOR = True
    PURE = False  # never erased or merged: it is its block's end
    VERIFY_READS_ONLY_ITSELF = False  # it must end a loop's body

    def verify_op(self, mesh) -> None:
        parent = self.operation.parent
        if parent is None or parent.name not in (ScanOp.OPERATION_NAME, WhileOp.OPERATION_NAME):
            raise VerifyError("must end the body of an mtf.scan or mtf.while")
