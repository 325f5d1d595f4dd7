"""Entry functions and their signatures: argument and result names and types.

MLIR function arguments have no names, so MeshIR stores them as the argument / result
attribute `mtf.name`; unnamed ones are called `arg0`, `arg1`, ... and `result0`, ...
"""
from __future__ import annotations

import collections
import functools
from dataclasses import dataclass

from meshir._jax_private import ir
from . import attribute_names

from .diagnostics import MeshIRError
from .tensor_type import TensorType

NAME_ATTR = attribute_names.NAME


@dataclass(frozen=True)
class FunctionSignature:
    """Names and types of a function's arguments and results."""

    function: str
    arg_names: tuple[str, ...]
    arg_types: tuple[TensorType, ...]
    result_names: tuple[str, ...]
    result_types: tuple[TensorType, ...]

    def results(self, values):
        """Several results as a named tuple (`out.loss`, `out[0]`, `out._asdict()`), one as
        itself: what a call of the function returns."""
        return values[0] if len(values) == 1 else self.by_result_name(values)

    def by_argument_name(self, values) -> tuple:
        """One value per argument as a named tuple (`exe.in_shardings.w`)."""
        return named_tuple(f"{self.function}_arguments", self.arg_names)(*values)

    def by_result_name(self, values) -> tuple:
        """One value per result as a named tuple (`exe.out_shardings.loss`)."""
        return named_tuple(f"{self.function}_results", self.result_names)(*values)


@functools.cache
def named_tuple(type_name: str, fields: tuple[str, ...]):
    """A namedtuple class for these field names, one per (name, fields): jax's pytrees treat
    its instances as tuples, and the C++ call path rebuilds them. Names that are not Python
    identifiers (or start with `_`) become `_<position>`, as namedtuple's `rename` makes them."""
    clean = type_name if type_name.isidentifier() else "results"
    return collections.namedtuple(clean, fields, rename=True)


class NamedBySignature:
    """`argument_names` and `result_names` read from `self.signature` (a FunctionSignature):
    stated once for everything that has one (executables, gradient programs)."""

    @property
    def argument_names(self) -> tuple[str, ...]:
        return self.signature.arg_names

    @property
    def result_names(self) -> tuple[str, ...]:
        """The names of what a call returns (the fields of its named tuple)."""
        return self.signature.result_names


class WrapsProgram:
    """`module`, `argument_names` and `result_names` of the program it wraps (`self.program`):
    a training step or a traced function's signature passes for its program."""

    @property
    def module(self):
        return self.program.module

    @property
    def argument_names(self) -> tuple[str, ...]:
        return self.program.argument_names

    @property
    def result_names(self) -> tuple[str, ...]:
        """What a call returns, by name."""
        return self.program.result_names


def functions(module) -> list:
    """The `func.func` ops at the top of a module."""
    return [op for op in module.operation.regions[0].blocks[0].operations if op.operation.name == "func.func"]


def defined_functions(module) -> list:
    """The functions of a module that have a body (declarations have none)."""
    return [fn for fn in functions(module) if len(fn.regions[0].blocks)]


def is_mtf_function(fn) -> bool:
    """Whether `fn` has an `!mtf.tensor` in its signature or an mtf op in its body: the
    functions MeshIR's passes rewrite (plain StableHLO functions are left alone)."""
    fn_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    if any(_is_mtf_type(t) for t in list(fn_type.inputs) + list(fn_type.results)):
        return True
    return any(op.operation.name.startswith("mtf.") for block in fn.regions[0].blocks for op in block.operations)


def _is_mtf_type(t: ir.Type) -> bool:
    return t.typeid == ir.OpaqueType.static_typeid and ir.OpaqueType(t).dialect_namespace == "mtf"


def entry_function(module, name: str | None = None):
    """The function called `name`, else the only public function (or the only function)."""
    fns = functions(module)
    if name is not None:
        for fn in fns:
            if ir.StringAttr(fn.attributes["sym_name"]).value == name:
                return fn
        known = ", ".join("@" + function_name(f) for f in fns) or "none"
        raise MeshIRError(f"no function @{name} in the module (functions: {known})")
    public = [f for f in fns if "sym_visibility" not in f.attributes]
    candidates = public if len(public) == 1 else fns
    if len(candidates) != 1:
        known = ", ".join("@" + function_name(f) for f in fns) or "none"
        raise MeshIRError(f"the module has {len(fns)} functions ({known}); say which one to use")
    return candidates[0]


def function_name(fn) -> str:
    return ir.StringAttr(fn.attributes["sym_name"]).value


def _names(fn, attr: str, count: int, prefix: str) -> tuple[str, ...]:
    names = []
    arrays = ir.ArrayAttr(fn.attributes[attr]) if attr in fn.attributes else None
    for i in range(count):
        name = f"{prefix}{i}"
        if arrays is not None and i < len(arrays):
            d = ir.DictAttr(arrays[i])
            if NAME_ATTR in d:
                if not isinstance(d[NAME_ATTR], ir.StringAttr):  # the verifier refuses it; unverified IR may not
                    raise MeshIRError(f"@{function_name(fn)} {prefix} #{i}: {NAME_ATTR} must be a string, got {d[NAME_ATTR]}")
                name = ir.StringAttr(d[NAME_ATTR]).value
        names.append(name)
    return tuple(names)


def refresh_function_type(fn) -> None:
    """Set a function's type from its block's argument types and its return's operand types,
    after a pass retyped values in place."""
    block = fn.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    fn.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], [v.type for v in ret.operation.operands])
    )


def signature(fn) -> FunctionSignature:
    """The FunctionSignature of a func.func whose arguments and results are `!mtf.tensor`s."""
    fn_type = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    try:
        arg_types = tuple(TensorType.from_mlir(t) for t in fn_type.inputs)
        result_types = tuple(TensorType.from_mlir(t) for t in fn_type.results)
    except ValueError as e:
        raise MeshIRError(f"function @{function_name(fn)}: {e}") from None
    return FunctionSignature(
        function_name(fn),
        _names(fn, "arg_attrs", len(arg_types), "arg"),
        arg_types,
        _names(fn, "res_attrs", len(result_types), "result"),
        result_types,
    )
