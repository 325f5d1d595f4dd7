"""`mtf-apply-precision`: compute a program in a narrow float type, as a mixed-precision policy says.

The program keeps its signature (parameters arrive and results leave in the types written,
the *master* types); inside, each op computes in the type its class's `PRECISION` trait names
(dialect/ops/base.py), much as `torch.autocast` sorts ops into lists:

- every float argument of the entry function is cast to `compute` where a block first reads
  it (so a parameter stored split is cast before the all-gather its use needs, and the gather
  moves `compute` bytes); a range op reads it as it is;
- "compute" ops (einsum) cast their float operands to `compute`;
- "range" ops (exp, log, sqrt, rsqrt, pow, reduce_sum) cast narrower float operands to f32:
  softmax and layer-norm statistics and the loss keep f32's range and precision;
- "follow" ops compute in the widest float type among their operands (bf16 + f32 is f32, as
  in JAX) and their float result takes it;
- "weak" values (constants, iota, random values) take the type of what they meet, like JAX's
  weak types, so `x * 0.5` stays in x's type;
- "declared" ops (casts, loops' carried values, yields, calls, returns) get the types the
  program wrote.

A value is cast once per block, and a value an op only moved (rename, transpose, reshape,
broadcast) is moved again after its source's cast: two contractions reading one value read
one cast, so their gradients meet in the narrow type, as one sum across devices.

A policy's casts are ordinary `mtf.cast` ops: autodiff differentiates them (the gradient of a
parameter is cast back to its master type), propagation lays them out like any elementwise op.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.diagnostics import MeshIRError, MeshIRValueError
from meshir.dialect.ops import OP_CLASSES
from meshir.dialect.ops.elementwise import CastOp
from meshir.dialect.ops.loops import ScanOp
from meshir.dialect.ops.shape import _SameElementOp
from meshir.dialect.signature import entry_function, functions
from meshir.dialect.tensor_type import FLOAT_TYPES, TensorType, wider_floats

from ..infra.registry import ModulePass, option, register_pass

#: The type range ops compute in when their operands are narrower.
RANGE_TYPE = "f32"


def promote(a: str, b: str) -> str:
    """The float type both `a` and `b` convert to exactly: the wider; bf16 with f16 is f32."""
    if a == b or a in wider_floats(b):
        return a
    return b if b in wider_floats(a) else RANGE_TYPE


@register_pass
@dataclass
class ApplyPrecisionPass(ModulePass):
    NAME = "mtf-apply-precision"
    SUMMARY = "Compute in a narrow float type (casts at parameter uses; f32 for range ops), keeping the signature"

    compute: str = option("bf16", "the element type contractions and the ops that follow them compute in")
    function: str = option("", "the entry function whose float arguments are cast where read (default: the only public one)")

    def apply(self, module_op) -> None:
        if self.compute not in FLOAT_TYPES:
            raise MeshIRValueError(f"mtf-apply-precision: compute must be a float type "
                                   f"({', '.join(sorted(FLOAT_TYPES))}), got '{self.compute}'")
        with module_op.context:
            try:
                entry = entry_function(module_op, self.function or None)
            except MeshIRError:
                if self.function:
                    raise
                entry = None  # no one public function: no arguments to cast, bodies retyped
            for fn in functions(module_op):
                if len(fn.regions[0].blocks):  # a declaration has no body
                    _Retyping(self.compute).function(fn.regions[0].blocks[0], cast_arguments=entry is not None and fn == entry)


class _Retyping:
    """One walk over a function: each op in order, its operands cast as its trait says."""

    def __init__(self, compute: str):
        self.compute = compute
        #: Value -> its type before the walk (what a "declared" use needs); casts the walk
        #: inserts map to the type of the value they convert.
        self.declared: dict = {}
        #: Values of weak type.
        self.weak: set = set()
        #: Ops that only move elements and were repeated after a cast of their operand.
        self.moved: list = []
        #: The entry function's float arguments (parameters and float inputs).
        self.arguments: set = set()
        #: (value, element type, block) -> the one cast of that value within the block: a
        #: value read by several contractions is cast once, so their gradients are summed
        #: before the cast back (one reduction across devices, in the narrow type).
        self.casts: dict = {}

    def function(self, block, cast_arguments: bool) -> None:
        self._record(block)
        if cast_arguments:
            self.arguments = {arg for arg in block.arguments if _elem(arg) in FLOAT_TYPES}
        self.block(block)
        for mover in self.moved:  # moved again after a cast, and read nowhere else
            if not any(list(r.uses) for r in mover.results):
                mover.erase()

    def _read_arguments(self, op, indices) -> None:
        """Entry arguments among operands `indices` read through their cast to `compute`."""
        for i in indices:
            if op.operands[i] in self.arguments:
                op.operands[i] = self._cast(op.operands[i], self.compute, op)

    def _record(self, block) -> None:
        for arg in block.arguments:
            self.declared[arg] = arg.type
        for op in block.operations:
            for result in op.results:
                self.declared[result] = result.type
            for region in op.regions:
                for inner in region.blocks:
                    self._record(inner)

    def block(self, block) -> None:
        for op in list(block.operations):
            self.op(op.operation)

    def op(self, op) -> None:
        cls = OP_CLASSES.get(op.name)
        kind = cls.PRECISION if cls is not None else "declared"
        floats = [i for i, v in enumerate(op.operands) if _elem(v) in FLOAT_TYPES]
        if kind == "weak":
            self.weak.update(op.results)
        elif kind == "declared":
            self._declared(op, floats)
        elif floats:
            if kind != "range":  # a range op reads an argument as it is, in master
                self._read_arguments(op, floats)
            self._computing(op, kind, floats)

    def _declared(self, op, floats) -> None:
        """Operands in their written types; a scan's slices and invariants may come narrow
        (its body's arguments follow them); bodies retyped in turn."""
        follows = set()
        if op.name == ScanOp.OPERATION_NAME:
            carries = ir.IntegerAttr(op.attributes["carries"]).value
            body = op.regions[0].blocks[0]
            self._read_arguments(op, range(carries, len(op.operands)))
            for i in range(carries, len(op.operands)):
                follows.add(i)
                arg = body.arguments[1 + i]
                if _elem(op.operands[i]) != _elem(arg):
                    arg.set_type(_with_elem(arg.type, _elem(op.operands[i])))
        for i in floats:
            want = _elem(self.declared.get(op.operands[i], op.operands[i].type))
            if i not in follows and _elem(op.operands[i]) != want and op.name != CastOp.OPERATION_NAME:
                op.operands[i] = self._cast(op.operands[i], want, op)
        for region in op.regions:
            for block in region.blocks:
                self.block(block)

    def _computing(self, op, kind: str, floats) -> None:
        values = [op.operands[i] for i in floats]
        written = {_elem(self.declared.get(v, v.type)) for v in values}
        if kind == "compute":
            target = self.compute
        else:
            strong = [_elem(v) for v in values if v not in self.weak]
            if kind == "range":
                strong = [promote(e, RANGE_TYPE) for e in strong]
            if not strong:  # only weak operands: a weak result, types as written
                self.weak.update(op.results)
                return
            target = strong[0]
            for e in strong[1:]:
                target = promote(target, e)
        for i in floats:
            if _elem(op.operands[i]) != target:
                op.operands[i] = self._cast(op.operands[i], target, op)
        for result in op.results:
            if len(written) == 1 and _elem(self.declared[result]) in written and _elem(result) != target:
                result.set_type(_with_elem(result.type, target))

    def _cast(self, value, elem: str, before):
        """`value` in `elem`, cast once per block. A value an op only moved (rename,
        transpose, reshape, broadcast) is moved again after casting its source, so casts sit
        next to the values they convert and a value read in two arrangements is cast once."""
        before = before.operation
        key = (value, elem, before.block)
        if key not in self.casts:
            mover = value.owner.operation if isinstance(value, ir.OpResult) else None
            if mover is not None and _moves_only(mover) and mover.block == before.block:
                source = self._cast(mover.operands[0], elem, mover)
                moved = mover.clone(ir.InsertionPoint(before))
                moved.operands[0] = source
                moved.results[0].set_type(_with_elem(moved.results[0].type, elem))
                self.declared[moved.results[0]] = self.declared.get(value, value.type)
                self.casts[key] = moved.results[0]
                self.moved.append(mover)
            else:
                self.casts[key] = self._new_cast(value, elem, before)
        return self.casts[key]

    def _new_cast(self, value, elem: str, before):
        cast = CastOp(_with_elem(value.type, elem), [value], loc=before.location, ip=ir.InsertionPoint(before)).result
        self.declared[cast] = self.declared.get(value, value.type)
        if value in self.weak:
            self.weak.add(cast)
        return cast


def _moves_only(op) -> bool:
    """An op that only rearranges its one float operand's elements into one result (no
    layout marker: a parameter's marker stays where mtf-shard-update expects it; not a split,
    whose pieces are retyped where computed)."""
    cls = OP_CLASSES.get(op.name)
    return cls is not None and issubclass(cls, _SameElementOp) and len(op.operands) == 1 \
        and len(op.results) == 1 and _elem(op.operands[0]) in FLOAT_TYPES


def _elem(value_or_type) -> str | None:
    t = value_or_type if isinstance(value_or_type, ir.Type) else value_or_type.type
    try:
        return TensorType.from_mlir(t).element_type
    except ValueError:
        return None


def _with_elem(t: ir.Type, elem: str) -> ir.Type:
    return TensorType.from_mlir(t).with_element_type(elem).to_mlir()
