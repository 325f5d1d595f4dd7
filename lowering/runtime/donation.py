"""Buffer donation: arguments whose device buffers PJRT may reuse for results.

A donated argument is paired with a result of the same type and layout (so each device's
shard of one fits the other), and the entry function says so the way jax does, with the
argument attribute `tf.aliasing_output = <result index> : i32`. XLA then aliases the
buffers, and PJRT consumes the donated input when the executable runs: a donated jax.Array
is deleted by the call, like one passed to `jax.jit(f, donate_argnums=...)`. This is what
keeps parameters and optimizer state on the devices between training steps without a
second copy.
"""
from __future__ import annotations

from meshir._jax_private import ir
from meshir.dialect.diagnostics import MeshIRError, MeshIRTypeError, MeshIRValueError
from meshir.dialect.signature import FunctionSignature

ALIASING_ATTR = "tf.aliasing_output"


def donation_aliases(sig: FunctionSignature, donate) -> dict[int, int]:
    """Argument index -> result index for `donate`: True (every argument with a result of the
    same name, type and layout, as `mi.train_step` produces), or argument names (each aliased
    to the result of its own name when that has its type, else to the first result of its
    type not taken yet). None or () donates nothing; MeshIRError when a name has no result."""
    if donate is None or donate is False:
        return {}
    if not (donate is True or isinstance(donate, (str, list, tuple, set, frozenset))) or (
            not isinstance(donate, (bool, str)) and not all(isinstance(n, str) for n in donate)):
        raise MeshIRTypeError(f"donate must be True, None, an argument name or a list of them, got "
                              f"{type(donate).__name__} {donate!r}")
    results = {n: i for i, n in enumerate(sig.result_names)}
    if donate is True:
        return {i: results[n] for i, (n, t) in enumerate(zip(sig.arg_names, sig.arg_types))
                if n in results and sig.result_types[results[n]] == t}
    names = [donate] if isinstance(donate, str) else list(donate)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise MeshIRValueError(f"donate names {', '.join(repr(n) for n in twice)} more than once: {names}")
    aliases: dict[int, int] = {}
    for name in names:
        if name not in sig.arg_names:
            raise MeshIRValueError(f"donate: '{name}' is not an argument of @{sig.function} ({', '.join(sig.arg_names)})")
        i = sig.arg_names.index(name)
        t = sig.arg_types[i]
        same_name = results.get(name)
        candidates = ([same_name] if same_name is not None and sig.result_types[same_name] == t else []) + [
            j for j, r in enumerate(sig.result_types) if r == t]
        free = [j for j in candidates if j not in aliases.values()]
        if not free:
            raise MeshIRError(f"donate: argument '{name}' of @{sig.function} ({t}) has no result of its type and "
                              "layout left to hand its buffer to")
        aliases[i] = free[0]
    return aliases


def check_donated_buffers(sig: FunctionSignature, placed, donated) -> None:
    """MeshIRValueError when a donated argument (indices `donated`) is also passed for another
    argument: PJRT would donate one buffer twice, or read one it consumed, and crash the
    process. By identity of the jax.Arrays: comparing buffer addresses would wait for the
    computations that make them (asynchronous dispatch undone: 15 ms per step of the LM
    example). Two distinct arrays rebuilt from one array's per-device arrays are not caught."""
    positions: dict[int, list[int]] = {}
    for j, array in enumerate(placed):
        positions.setdefault(id(array), []).append(j)
    for i in donated:
        same = positions[id(placed[i])]
        if len(same) > 1:
            j = same[0] if same[0] != i else same[1]
            raise MeshIRValueError(
                f"arguments '{sig.arg_names[min(i, j)]}' and '{sig.arg_names[max(i, j)]}' of @{sig.function} are the "
                f"same jax.Array, but '{sig.arg_names[i]}' is donated (its buffer becomes a result); pass a copy "
                "for one of them")


def mark_aliasing(fn, aliases: dict[int, int]) -> None:
    """Set `tf.aliasing_output` on the arguments of the func.func `fn` (keeping their other
    attributes)."""
    if not aliases:
        return
    with fn.context:
        n = len(ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value).inputs)
        old = ir.ArrayAttr(fn.attributes["arg_attrs"]) if "arg_attrs" in fn.attributes else None
        i32 = ir.IntegerType.get_signless(32)
        dicts = []
        for i in range(n):
            entries = {}
            if old is not None:
                d = ir.DictAttr(old[i])
                entries = {d[k].name: d[k].attr for k in range(len(d))}
            if i in aliases:
                entries[ALIASING_ATTR] = ir.IntegerAttr.get(i32, aliases[i])
            dicts.append(ir.DictAttr.get(entries))
        fn.attributes["arg_attrs"] = ir.ArrayAttr.get(dicts)
