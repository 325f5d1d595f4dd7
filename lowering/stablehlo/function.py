"""The text of a lowered function: global signature with `sdy.sharding`s, and one
`sdy.manual_computation` over all mesh axes whose body is the per-device program.

    func.func public @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>,
                                                 mtf.name = "x"}) -> (tensor<...> {...}) {
      %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>]
             out_shardings=[...] manual_axes={"x", "y"} (%v0: tensor<2x8xf32>) {
        ... per-device program ...
        sdy.return %v9 : tensor<...>
      } : (tensor<8x8xf32>) -> tensor<...>
      return %0 : tensor<...>
    }

A function without a mesh runs on one device, and a gspmd-mode function is a global program
with its shardings on the signature: in both the body is the program itself.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir._jax_private import ir
from meshir.dialect.mesh import Mesh
from meshir.dialect.signature import NAME_ATTR, signature
from meshir.dialect.tensor_type import TensorType

from .types import Local, sharding_attr_text, sharding_text, tensor_text


@dataclass(frozen=True)
class LoweredSignature:
    """What the function text needs besides the body: name, types and argument names. Names
    are text as MLIR prints it (quoted and escaped where needed), ready to be parsed back."""

    symbol: str  # `@name`, or `@"..."` for a name that is not a bare identifier
    arg_types: tuple[TensorType, ...]
    result_types: tuple[TensorType, ...]
    arg_names: tuple[str | None, ...]  # the `mtf.name` string literal of each argument (None when absent)
    result_names: tuple[str | None, ...]


def _names(fn, attr: str, count: int) -> tuple[str | None, ...]:
    if attr not in fn.attributes:
        return (None,) * count
    dicts = [ir.DictAttr(a) for a in ir.ArrayAttr(fn.attributes[attr])]
    return tuple(str(d[NAME_ATTR]) if NAME_ATTR in d else None for d in dicts)


def function_signature(fn) -> LoweredSignature:
    """Types from the dialect's signature; names only where `mtf.name` gives one."""
    sig = signature(fn)
    return LoweredSignature(
        str(ir.FlatSymbolRefAttr.get(sig.function, context=fn.context)), sig.arg_types, sig.result_types,
        _names(fn, "arg_attrs", len(sig.arg_types)),
        _names(fn, "res_attrs", len(sig.result_types)),
    )


def _global(t: TensorType) -> str:
    return tensor_text(t.shape, t.element_type)


def _attrs(t: TensorType, name: str | None, mesh: Mesh | None) -> str:
    parts = []
    if mesh is not None:
        parts.append(f"sdy.sharding = {sharding_attr_text(t, mesh)}")
    if name is not None:
        parts.append(f"{NAME_ATTR} = {name}")
    return " {" + ", ".join(parts) + "}" if parts else ""


def _types(types) -> str:
    return ", ".join(_global(t) for t in types)


def block_arguments(sig: LoweredSignature, mesh: Mesh | None, fresh) -> list[Local]:
    """The per-device program's values of the arguments: new block arguments of the manual
    computation (named by `fresh()`), or the function's own `%arg<i>` without a mesh."""
    return [
        Local(fresh() if mesh is not None else f"%arg{i}", t.local_shape(mesh.shape) if mesh else t.shape, t.element_type)
        for i, t in enumerate(sig.arg_types)
    ]


def function_text(sig: LoweredSignature, mesh: Mesh | None, block_args: list[Local], body: list[str], results: list[Local],
                  manual: bool = True) -> str:
    """The whole `func.func`; `block_args` from `block_arguments`, `body` the program's lines.
    `manual=False` (gspmd mode): the body is a global program, not in a manual computation."""
    params = ", ".join(f"%arg{i}: {_global(t)}{_attrs(t, n, mesh)}" for i, (t, n) in enumerate(zip(sig.arg_types, sig.arg_names)))
    outs = ", ".join(f"{_global(t)}{_attrs(t, n, mesh)}" for t, n in zip(sig.result_types, sig.result_names))
    head = f"func.func public {sig.symbol}({params}) -> ({outs}) {{"
    result_types = _types(sig.result_types)
    if mesh is None or not manual:  # the program reads %arg<i> directly
        ret = ", ".join(v.name for v in results)
        return "\n".join([head, *body, f"  return {ret}{' : ' + result_types if results else ''}", "}"])
    count = len(results)
    lhs = "" if count == 0 else ("%r = " if count == 1 else f"%r:{count} = ")
    operands = ", ".join(f"%arg{i}" for i in range(len(sig.arg_types)))
    in_shardings = ", ".join(sharding_text(t, mesh) for t in sig.arg_types)
    out_shardings = ", ".join(sharding_text(t, mesh) for t in sig.result_types)
    manual_axes = ", ".join(f'"{a}"' for a in mesh.axis_names)
    block = ", ".join(f"{v.name}: {v.type}" for v in block_args)
    returned = ", ".join(v.name for v in results)
    local_types = ", ".join(v.type for v in results)
    values = ["%r"] if count == 1 else [f"%r#{i}" for i in range(count)]
    return "\n".join([
        head,
        f"  {lhs}sdy.manual_computation({operands}) in_shardings=[{in_shardings}] out_shardings=[{out_shardings}] "
        f"manual_axes={{{manual_axes}}} ({block}) {{",
        *body,
        f"    sdy.return {returned}{' : ' + local_types if results else ''}",
        f"  }} : ({_types(sig.arg_types)}) -> ({result_types})",
        f"  return {', '.join(values)}{' : ' + result_types if results else ''}",
        "}",
    ])
