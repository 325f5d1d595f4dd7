"""Loops whose bodies are Python functions, traced once into an `mtf` region
(dialect/ops/loops.py): `mi.scan`, `mi.fori_loop`, `mi.while_loop`, shaped like JAX's.

A carry is one Tensor or a tuple/list of them (the body returns the same structure); an
outer Tensor a body uses becomes an invariant of the loop (bodies.py).
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect import MeshIRError, MeshIRTypeError, MeshIRValueError, TensorType, VerifyError
from meshir.dialect.diagnostics import format_location
from meshir.dialect.ops.loops import CONDITION_TYPE, INDEX_TYPE, ScanOp, WhileOp, YieldOp

from meshir.api import _checks as checks
from meshir.api.programs._bodies import OpenBody, local_value, tracing
from meshir.api.ops._builder import builds, dispatching
from meshir.api.programs.program import program_of
from meshir.api.programs._locations import call_site_location, located_error
from meshir.api.programs.tensor import Tensor

__all__ = ["fori_loop", "scan", "while_loop"]


@builds(ScanOp)
def scan(body, carry, xs=None, dim: str | None = None, length: int | None = None):
    """`body(carry, x) -> (carry, y)` for each index of dim `dim` of `xs`, in order; returns
    `(carry, ys)`, each y stacked along a new leading dim `dim` (None when the body's y is).

    `carry`, `xs` and `y` are each a Tensor, a tuple/list of Tensors, or None; every x is the
    slice of its xs at the index (without `dim`). Without xs, `length` says how many times."""
    carries, carry_kind = _flat(carry, "carry of mi.scan")
    xs_list, xs_kind = _flat(xs, "xs of mi.scan")
    if xs_list:
        dim = checks.identifier(dim, "dim of mi.scan") if dim is not None else None
        if dim is None:
            raise located_error("mi.scan over xs needs dim=..., the named dim to scan over", MeshIRTypeError)
        for j, x in enumerate(xs_list):
            if not x.type.has(dim):
                raise located_error(f"mi.scan over '{dim}': xs #{j} {x.type} has no dim '{dim}'", MeshIRValueError)
        sizes = {x.type.size(dim) for x in xs_list}
        if len(sizes) > 1 or (length is not None and length not in sizes):
            got = ", ".join(f"{x.type.size(dim)}" for x in xs_list)
            raise located_error(f"mi.scan over '{dim}': the xs have sizes {got}"
                                + (f" and length={length}" if length is not None else ""), MeshIRValueError)
        length = sizes.pop()
    elif length is None or not isinstance(length, int) or length < 1:
        raise located_error(f"mi.scan without xs needs length=n (a positive int), got {length!r}", MeshIRValueError)

    def run(args: list[Tensor]):
        c, x = args[1:1 + len(carries)], args[1 + len(carries):]
        out = body(_pack(c, carry_kind), _pack(x, xs_kind))
        if not (isinstance(out, tuple) and len(out) == 2):
            raise located_error(f"the body of mi.scan must return (carry, y), got {_describe(out)}", MeshIRTypeError)
        new_carry, _ = _flat(out[0], "carry the body of mi.scan returns", like=carry_kind)
        ys, y_kind = _flat(out[1], "y the body of mi.scan returns")
        return new_carry, ys, y_kind

    slices = [x.type.without_layout().with_dims(d for d in x.type.without_layout().dims if d.name != dim)
              for x in xs_list]
    results, y_kind = _build_scan(carries, xs_list, slices, length, dim, run)
    return _pack(results[:len(carries)], carry_kind), _pack(results[len(carries):], y_kind)


@dispatching
def fori_loop(n: int, body, carry):
    """`carry = body(i, carry)` for i in 0 .. n-1 (a scan with no xs and no ys; `i` is an
    `!mtf.tensor<i32>`); returns the last carry."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise located_error(f"mi.fori_loop needs a positive int trip count, got {n!r}", MeshIRValueError)
    carries, kind = _flat(carry, "carry of mi.fori_loop")

    def run(args: list[Tensor]):
        out = body(args[0], _pack(args[1:1 + len(carries)], kind))
        new_carry, _ = _flat(out, "carry the body of mi.fori_loop returns", like=kind)
        return new_carry, [], "none"

    results, _ = _build_scan(carries, [], [], n, None, run)
    return _pack(results, kind)


@builds(WhileOp)
def while_loop(cond, body, carry):
    """`carry = body(carry)` while `cond(carry)` (a scalar i1 Tensor) is true; returns the
    carry."""
    carries, kind = _flat(carry, "carry of mi.while_loop")
    if not carries:
        raise located_error("mi.while_loop needs a carry (a Tensor or a tuple of Tensors)", MeshIRValueError)
    prog = program_of(carries)
    prog._check_open()
    types = [c.type.without_layout() for c in carries]
    with prog.context:
        loc = call_site_location()
    with prog.context, loc:
        cond_body, loop_body = OpenBody(types), None
        try:
            with tracing(prog, cond_body):
                go = cond(_pack(cond_body.arguments(prog)[:len(carries)], kind))
                if not isinstance(go, Tensor) or go.type.without_layout() != CONDITION_TYPE:
                    raise located_error(f"the cond of mi.while_loop must return a scalar i1 Tensor ({CONDITION_TYPE}), "
                                        f"got {_describe(go)}", MeshIRTypeError)
                _yield(prog, cond_body, [go])
            loop_body = OpenBody(types)
            for v in cond_body.invariants:  # both regions take the invariants in one order
                loop_body.capture(v)
            with tracing(prog, loop_body):
                out = body(_pack(loop_body.arguments(prog)[:len(carries)], kind))
                new_carry, _ = _flat(out, "carry the body of mi.while_loop returns", like=kind)
                _check_carry(carries, new_carry, "mi.while_loop")
                _yield(prog, loop_body, new_carry)
            for v in loop_body.invariants[len(cond_body.invariants):]:
                cond_body.capture(v)
            operands = [local_value(prog, c.value) for c in carries] + [local_value(prog, v) for v in loop_body.invariants]
            attrs = {"invariants": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), len(loop_body.invariants))}
            op = WhileOp(types, operands, attrs, loc=loc, ip=ir.InsertionPoint(prog.block))
        except BaseException:
            cond_body.discard()
            if loop_body is not None:
                loop_body.discard()
            raise
        cond_body.move_into(op, 0)
        loop_body.move_into(op, 1)
        _verify(prog, op, loc)
    return _pack([Tensor(prog, r) for r in op.operation.results], kind)


# -- building ------------------------------------------------------------------------------
def _build_scan(carries, xs, slices, length, dim, run):
    prog = program_of(carries + xs)
    prog._check_open()
    with prog.context:
        loc = call_site_location()
    with prog.context, loc:
        body = OpenBody([INDEX_TYPE] + [c.type.without_layout() for c in carries] + slices)
        try:
            with tracing(prog, body):
                new_carry, ys, y_kind = run(body.arguments(prog))
                _check_carry(carries, new_carry, "mi.scan" if dim else "mi.fori_loop")
                if dim is None and ys:
                    raise located_error("mi.scan without xs stacks ys only with dim=...", MeshIRTypeError)
                for j, y in enumerate(ys):
                    if y.type.has(dim):
                        raise located_error(f"mi.scan stacks y #{j} {y.type} along '{dim}', which it has already",
                                            MeshIRValueError)
                _yield(prog, body, new_carry + ys)
            stacked = [TensorType.make([(dim, length)] + [(d.name, d.size) for d in y.type.dims], y.type.element_type)
                       for y in ys]
            operands = [local_value(prog, t.value) for t in carries + xs] + [local_value(prog, v) for v in body.invariants]
            i64 = ir.IntegerType.get_signless(64)
            attrs = {"length": ir.IntegerAttr.get(i64, length), "carries": ir.IntegerAttr.get(i64, len(carries)),
                     "invariants": ir.IntegerAttr.get(i64, len(body.invariants))}
            if dim is not None:
                attrs["dim"] = ir.StringAttr.get(dim)
            op = ScanOp([c.type.without_layout() for c in carries] + stacked, operands, attrs, loc=loc,
                        ip=ir.InsertionPoint(prog.block))
        except BaseException:
            body.discard()
            raise
        body.move_into(op, 0)
        _verify(prog, op, loc)
    return [Tensor(prog, r) for r in op.operation.results], y_kind


def _yield(prog, body: OpenBody, values: list[Tensor]) -> None:
    YieldOp([], [local_value(prog, t.value) for t in values], ip=ir.InsertionPoint(body.block))


def _verify(prog, op, loc) -> None:
    try:
        op.verify(prog.mesh)
    except VerifyError as e:
        op.operation.erase()
        raise MeshIRError(f"{format_location(loc)}: error: '{op.OPERATION_NAME}' op {e}") from None


def _check_carry(before: list[Tensor], after: list[Tensor], what: str) -> None:
    """A carried value keeps its dims and element type through the body."""
    if len(before) != len(after):
        raise located_error(f"the body of {what} returns {len(after)} carried values for {len(before)}",
                            MeshIRTypeError)
    for k, (a, b) in enumerate(zip(before, after)):
        if a.type.without_layout() != b.type.without_layout():
            raise located_error(f"the body of {what} changes carried value #{k} from {a.type.without_layout()} to "
                                f"{b.type.without_layout()}: a carry keeps its dims and element type", MeshIRTypeError)


# -- structures: a Tensor, a tuple or list of Tensors, or None -----------------------------------
def _flat(value, what: str, like: str | None = None) -> tuple[list[Tensor], str]:
    """The Tensors of `value` and its kind ("tensor", "tuple", "list", "none"); `like`: the
    kind it must have (a body returns the carry it was given)."""
    if value is None:
        kind, items = "none", []
    elif isinstance(value, Tensor):
        kind, items = "tensor", [value]
    elif isinstance(value, (tuple, list)):
        kind, items = type(value).__name__, list(value)
    else:
        raise located_error(f"the {what} must be a Tensor, a tuple or list of Tensors, or None; got {_describe(value)}",
                            MeshIRTypeError)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise located_error(f"the {what}: item #{i} must be a Tensor, got {_describe(t)}", MeshIRTypeError)
    if like is not None and (kind != like and not {kind, like} <= {"tuple", "list"}):
        raise located_error(f"the {what} must have the carry's structure ({like}), got {_describe(value)}",
                            MeshIRTypeError)
    return items, kind


def _pack(items: list[Tensor], kind: str):
    if kind == "none":
        return None
    if kind == "tensor":
        return items[0]
    return tuple(items) if kind == "tuple" else list(items)


def _describe(value) -> str:
    if isinstance(value, Tensor):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}: ({', '.join(_describe(v) for v in value)})"
    return f"{type(value).__name__} {value!r:.60}"
