"""A private function of a Program's module, built by running a Python function on Tensors,
and the marked `func.call` of it: the body of `mi.remat` and `mi.custom_gradient`.

Such calls stay calls when the program finishes (plain `Program.call`s are inlined), so that
`mtf-autodiff` sees them; mi.compile inlines them first (docs/decisions.md, "Calls").
"""
from __future__ import annotations

import re

from meshir._jax_private import func, ir
from meshir.dialect import MeshIRTypeError, MeshIRValueError
from meshir.dialect.signature import function_name, functions
from meshir.dialect.attribute_names import MESH, REMAT
from meshir.dialect.walk import clone_ops

from meshir.api.programs._locations import call_site_location, located_error
from meshir.api.programs.program import _current, program_of
from meshir.api.programs._bodies import local_value
from meshir.api.programs.tensor import Tensor


def function_symbol(fn) -> str:
    """A symbol name for a Python function: its `__name__` made an identifier."""
    name = re.sub(r"\W", "_", getattr(fn, "__name__", "") or "").strip("_") or "block"
    return name if name[0].isalpha() else f"f_{name}"


def flatten(tree, leaves: list):
    """`tree` (dicts, lists, tuples of anything) with each Tensor replaced by its index in
    `leaves`, where it is appended; other values stay (static)."""
    if isinstance(tree, Tensor):
        leaves.append(tree)
        return _Leaf(len(leaves) - 1)
    if isinstance(tree, dict):
        return {k: flatten(v, leaves) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(flatten(v, leaves) for v in tree)
    return tree


def unflatten(tree, leaves):
    if isinstance(tree, _Leaf):
        return leaves[tree.index]
    if isinstance(tree, dict):
        return {k: unflatten(v, leaves) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(unflatten(v, leaves) for v in tree)
    return tree


class _Leaf:
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


class Subfunction:
    """Builds one private function next to the caller's: ops go into its block while it is
    the current program (the builder API reads `block`, `context`, `mesh`)."""

    def __init__(self, caller, what: str, name: str, arg_types):
        self.caller, self.what = caller, what
        self.context, self.mesh, self.name = caller.context, caller.mesh, name
        self.calls_inlined = False
        self._bodies: list = []  # loop bodies being traced in it (bodies.py)
        with self.context, call_site_location():
            module = caller.function.operation.parent
            taken = {function_name(f) for f in functions(module)}
            symbol, k = name, 0
            while symbol in taken:
                k += 1
                symbol = f"{name}_{k}"
            self.function = func.FuncOp(symbol, ([t.to_mlir() for t in arg_types], []),
                                        ip=ir.InsertionPoint(caller.function))
            self.function.attributes["sym_visibility"] = ir.StringAttr.get("private")
            if MESH in caller.function.attributes:
                self.function.attributes[MESH] = caller.function.attributes[MESH]
            self.block = self.function.add_entry_block()
        self.symbol = symbol

    def _check_open(self):
        self.caller._check_open()

    @property
    def arguments(self) -> list[Tensor]:
        return [Tensor(self, v) for v in self.block.arguments]

    def run(self, fn, *args, **kwargs):
        """Call `fn` with these arguments (Tensors of this function) as the current program."""
        _current.__dict__.setdefault("stack", []).append(self)
        try:
            return fn(*args, **kwargs)
        finally:
            _current.stack.pop()

    def finish(self, outputs: list[Tensor]) -> None:
        for i, t in enumerate(outputs):
            if not isinstance(t, Tensor) or t.program is not self:
                raise located_error(f"{self.what}: result #{i} must be a Tensor computed inside '{self.name}', got "
                                    f"{t!r}", MeshIRTypeError)
        with self.context, ir.Location.unknown():
            func.ReturnOp([t.value for t in outputs], ip=ir.InsertionPoint(self.block))
            self.function.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get([a.type for a in self.block.arguments], [t.value.type for t in outputs]))

    def discard(self) -> None:
        self.function.operation.erase()


def trace(fn, args, kwargs, what: str, name: str):
    """Run `fn` on `args`/`kwargs` as a Subfunction of the caller's program: returns
    (subfunction, caller, Tensor arguments, output tree, output Tensors)."""
    leaves: list[Tensor] = []
    tree = flatten((args, kwargs), leaves)
    caller = program_of(leaves)
    caller._check_open()
    for t in leaves:
        if t.program is not caller:
            raise located_error(f"{what}: argument {t!r} belongs to another program", MeshIRValueError)
    sub = Subfunction(caller, what, name, [t.type for t in leaves])
    try:
        inner_args, inner_kwargs = unflatten(tree, sub.arguments)
        out = sub.run(fn, *inner_args, **inner_kwargs)
        outputs: list[Tensor] = []
        out_tree = flatten(out, outputs)
        if not outputs:
            raise located_error(f"{what}: '{name}' returned no Tensor (got {out!r})", MeshIRTypeError)
        sub.finish(outputs)
    except BaseException:
        sub.discard()
        raise
    return sub, caller, leaves, out_tree, outputs


def call(sub: Subfunction, caller, leaves, out_tree, attributes: dict):
    """The marked call of `sub` from `caller` at the user's line; its results in `out_tree`'s
    shape. In a loop body (MLIR would take the unregistered loop op for a symbol table and not
    find the callee), a remat block is inlined instead: the scan's backward recomputes each
    iteration from its carry anyway; a custom gradient there is refused."""
    if getattr(caller, "_bodies", None):
        return _inline_in_body(sub, caller, leaves, out_tree, attributes)
    with caller.context, call_site_location():
        types = ir.FunctionType(ir.TypeAttr(sub.function.attributes["function_type"]).value).results
        op = func.CallOp(list(types), ir.FlatSymbolRefAttr.get(sub.symbol),
                         [local_value(caller, t.value) for t in leaves], ip=ir.InsertionPoint(caller.block))
        for k, v in attributes.items():
            op.attributes[k] = v
    return unflatten(out_tree, [Tensor(caller, r) for r in op.results])


def _inline_in_body(sub: Subfunction, caller, leaves, out_tree, attributes: dict):
    if REMAT not in attributes:
        sub.discard()
        raise located_error(f"{sub.what}: not supported inside a loop body yet (call it outside the loop)",
                            MeshIRValueError)
    block = sub.block
    ops = list(block.operations)
    with caller.context, call_site_location():
        mapping = dict(zip(block.arguments, [local_value(caller, t.value) for t in leaves]))
        clone_ops(ops[:-1], mapping, ir.InsertionPoint(caller.block))
        results = [mapping.get(v, v) for v in ops[-1].operation.operands]
    sub.discard()
    return unflatten(out_tree, [Tensor(caller, r) for r in results])
