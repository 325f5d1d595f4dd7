"""Ops that run at once: every public op function goes through `dispatching`.

Each `mi` op function is registered as its op's build rule (`builds` in ops/_builder.py),
which wraps it in `dispatching` (so are the composites, `mi.reshard` and `mi.fori_loop`);
`meshir/_namespace.py` installs `run_eagerly` there, as eager execution sits above the op
builders. Called on `Tensor`s inside a Program, the function builds IR as before (one
isinstance scan of the arguments is all this costs). Called outside any Program, with `mi.Array`s among its
arguments or inside `mi.default_layout(mesh=...)` (creation and random ops take no array),
it runs at once: staged (staging.py) as a one-op program per signature, compiled once and
cached, like jax's eager dispatch. Called while a Program is being built (inside `mi.jit`'s
trace, say) with an `mi.Array` the function closed over, the array becomes a constant of
that program.
"""
from __future__ import annotations

import inspect

import jax
import numpy as np

from meshir.dialect import MeshIRValueError

from meshir.api.programs._locations import located_error
from meshir.api.ops.creation import constant
from meshir.api.programs.program import active_program
from meshir.api.eager.array import Array, array
from meshir.api.eager.context import ambient
from meshir.api.eager.staging import LRU, StaticArray, common_mesh, flatten, stage

#: The compiled one-op programs of eager calls, by (function, signature).
EAGER_CACHE = LRU()


def run_eagerly(fn, args, kwargs):
    """Every op function's call (installed in ops/_builder.py): at once on `mi.Array`s outside
    a program, else building IR as written."""
    if _holds_array(args) or _holds_array(kwargs.values()):
        return _with_arrays(fn, args, kwargs)
    if ambient().mesh is not None and active_program() is None:
        return _eager(fn, args, kwargs)  # a creation or random op inside mi.default_layout
    return fn(*args, **kwargs)


def _holds_array(values) -> bool:
    for v in values:
        if isinstance(v, Array):
            return True
        if isinstance(v, (list, tuple)) and any(isinstance(x, Array) for x in v):
            return True
    return False


def _with_arrays(fn, args, kwargs):
    program = active_program()
    if program is None:
        return _eager(fn, args, kwargs)
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs), is_leaf=lambda x: isinstance(x, Array))
    leaves = [_captured(x, program) if isinstance(x, Array) else x for x in leaves]
    args, kwargs = jax.tree_util.tree_unflatten(treedef, leaves)
    return fn(*args, **kwargs)


def _eager(fn, args, kwargs):
    context = ambient()
    name = getattr(fn, "__name__", "op")
    if getattr(fn, "runtime_arguments", ()):
        args, kwargs = _runtime_values(fn, args, kwargs, context.mesh)
    if not (_holds_array(args) or _holds_array(kwargs.values())):  # a creation op: NumPy data is mi.constant's value
        args = tuple(StaticArray(v) if isinstance(v, np.ndarray) else v for v in args)
        kwargs = {k: StaticArray(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    flat = flatten((args, kwargs))
    mesh = common_mesh(flat.arrays, context.mesh, f"mi.{name}")
    key = (fn, flat.key(mesh, context.rules.rules))
    staged = EAGER_CACHE.get(key)
    if staged is None:
        staged = stage(lambda tree: fn(*tree[0], **tree[1]), flat, mesh, f"eager_{name}", context.rules)
        EAGER_CACHE.put(key, staged)
    return staged.run(list(flat.arrays))


def _runtime_values(fn, args, kwargs, fallback_mesh):
    """`fn`'s runtime arguments given as Python ints, as 0-d int32 arrays on the call's mesh."""
    bound = inspect.signature(fn).bind_partial(*args, **kwargs)
    arrays = [v for v in list(bound.arguments.values()) if isinstance(v, Array)]
    mesh = arrays[0].mesh if arrays else fallback_mesh
    for name in fn.runtime_arguments:
        value = bound.arguments.get(name)
        if (mesh is not None and isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                and -2**31 <= value < 2**31):  # one that does not fit stays the op's to refuse
            bound.arguments[name] = array(np.int32(value), [], mesh=mesh)
    return bound.args, bound.kwargs


def _captured(array: Array, program):
    """An mi.Array a traced function closed over, as a constant of the program being built."""
    if program.mesh is not None and (array.mesh != program.mesh
                                     or (array.mesh.devices and program.mesh.devices
                                         and array.mesh.devices != program.mesh.devices)):
        raise located_error(f"program '{program.name}' on {program.mesh} uses an mi.Array of another mesh, {array.mesh} "
                            f"({array.type}): pass it as an argument on the program's mesh, or move it "
                            "with mi.Array(x.jax_array, dims, mesh=...)", MeshIRValueError)
    return constant(array.numpy(), [(d.name, d.size) for d in array.type.dims], dtype=array.dtype, program=program)
