"""Staging a Python function on named arrays: trace it into a Program, compile, run, cache.

Eager ops (dispatch.py) and `mi.jit` (jit.py) are the same thing at two sizes: a function
whose arguments hold `mi.Array`s is traced once per *signature* into an `mtf` program (each
array an argument of its dims, element type and layout; everything else a static value,
part of the signature), compiled with `mi.compile` under the layout rules in force, and
called on the arrays; the results come back as `mi.Array`s in the structure the function
returned. The signature is (mesh and its devices, each array's type with its layout, the
static values, the rules), and compiled programs are kept in a bounded LRU cache, as jax's
eager dispatch keeps its executables.
"""
from __future__ import annotations

import collections
import re
import threading
from dataclasses import dataclass

import jax
import numpy as np

from meshir.dialect import Mesh, MeshIRTypeError, MeshIRValueError
from meshir.lowering.runtime.devices import mesh_devices

from meshir.api.programs._locations import located_error
from meshir.api.programs.tensor import Tensor
from meshir.api.eager.array import Array
from meshir.api.compilation.compile import compile
from meshir.api.programs.program import Program

#: Compiled programs kept per cache (jax keeps a few thousand executables; each of ours holds
#: a PJRT executable, so fewer).
CACHE_LIMIT = 512


class StaticValue:
    """A static argument kept whole (not flattened): hashed and compared as the value."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        return hash(static_key(self.value))

    def __eq__(self, other):
        return isinstance(other, StaticValue) and static_key(other.value) == static_key(self.value)


class StaticArray(StaticValue):
    """A NumPy array given to an eager op as a value (`mi.constant`'s): static, hashed and
    compared by its dtype, shape and bytes."""

    __slots__ = ()

    def _content(self):
        return self.value.dtype, self.value.shape, self.value.tobytes()

    def __hash__(self):
        return hash(self._content())

    def __eq__(self, other):
        return isinstance(other, StaticArray) and other._content() == self._content()


def _is_leaf(x) -> bool:
    return isinstance(x, (Array, Tensor, StaticValue))


@dataclass(frozen=True)
class Staged:
    """One compiled signature: the executable, and how to rebuild the function's output."""

    executable: object
    program: object
    out_tree: object
    mesh: Mesh

    def run(self, arrays: list[Array]):
        return jax.tree_util.tree_unflatten(self.out_tree, run_on_arrays(self.executable, arrays, self.mesh))


def run_on_arrays(executable, arrays, mesh: Mesh) -> list[Array]:
    """`executable` called on the arrays' jax.Arrays: its results, each an mi.Array of its
    result type on `mesh`."""
    results = executable(*[a.jax_array for a in arrays])
    results = [results] if len(executable.result_names) == 1 else list(results)
    return [Array._of(r, t, mesh) for r, t in zip(results, executable.signature.result_types)]


class CacheInfo(collections.namedtuple("CacheInfo", "hits misses maxsize currsize")):
    """`functools.lru_cache`'s `cache_info()` fields for a cache of compiled programs:
    `currsize` counts compiled signatures, `misses` the traces (and compiles) they cost."""

    __slots__ = ()


class LRU:
    """A bounded mapping: the least recently used entry goes first. Locked, so threads
    sharing eager dispatch or one traced function cannot race between a lookup's reorder
    and an eviction (two threads missing at once both compile; the last one's entry stays).
    Counts its hits and misses, so a user can check that a loop does not retrace."""

    def __init__(self, limit: int = CACHE_LIMIT):
        self.limit = limit
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()
        self._hits = self._misses = 0

    def get(self, key):
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self._misses += 1
            else:
                self._hits += 1
                self._entries.move_to_end(key)
            return entry

    def put(self, key, value) -> None:
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.limit:  # a lowered limit takes effect at the next put
                self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Drops every entry and zeroes the counters, as `functools`' `cache_clear()`."""
        with self._lock:
            self._entries.clear()
            self._hits = self._misses = 0

    def info(self) -> CacheInfo:
        with self._lock:
            return CacheInfo(self._hits, self._misses, self.limit, len(self._entries))


@dataclass(frozen=True)
class Flat:
    """A call's arguments flattened: the arrays, their names, and everything else."""

    arrays: tuple
    names: tuple
    roots: tuple  # the outermost key of each array's path (its parameter, for mi.jit)
    statics: tuple
    treedef: object
    positions: tuple  # which leaves are arrays

    def key(self, mesh: Mesh, extra) -> tuple:
        return (self.treedef, self.positions, tuple(map(static_key, self.statics)),
                tuple(a.type for a in self.arrays), mesh.axes, mesh.name, mesh.devices, extra)

    def rebuilt(self, tensors) -> tuple:
        """The arguments with each array replaced by its Tensor."""
        leaves, arrays = [], iter(tensors)
        statics = iter(self.statics)
        for is_array in self.positions:
            leaf = next(arrays) if is_array else next(statics)
            leaves.append(leaf.value if isinstance(leaf, StaticValue) else leaf)
        return jax.tree_util.tree_unflatten(self.treedef, leaves)


def flatten(tree, names_from=None) -> Flat:
    """`tree`'s arrays and static leaves; a static leaf must be hashable (it is part of the
    signature). `names_from`: `tree` is a tuple of these parameters' values, and each
    array's path from its parameter becomes its argument name (else a0, a1, ...)."""
    leaves_with_paths, treedef = jax.tree_util.tree_flatten_with_path(tree, is_leaf=_is_leaf)
    arrays, names, roots, statics, positions = [], [], [], [], []
    for path, leaf in leaves_with_paths:
        if isinstance(leaf, Array):
            arrays.append(leaf)
            if names_from:
                root = names_from[path[0].idx]
                names.append(_identifier((root, *path[1:]), len(arrays) - 1))
                roots.append(root)
            else:
                names.append(f"a{len(arrays) - 1}")
                roots.append(None)
            positions.append(True)
            continue
        if isinstance(leaf, jax.core.Tracer):
            raise located_error("a MeshIR staged function got a jax tracer: call it outside jax transformations, "
                                "or call a compiled executable (mi.compile) inside them", MeshIRTypeError)
        where = _where(path, names_from)
        if hasattr(leaf, "shape") and hasattr(leaf, "dtype") and getattr(leaf, "ndim", 0) > 0:
            raise located_error(
                f"argument {where} is a {type(leaf).__name__} of shape {tuple(leaf.shape)} without dims: wrap it with "
                "mi.array(value, dims) (or give mi.jit(..., dims={parameter: dims}))", MeshIRTypeError)
        try:
            hash(leaf)
        except TypeError:
            raise located_error(
                f"argument {where} ({type(leaf).__name__}) is neither an mi.Array nor hashable: a static "
                "argument is part of the signature a compiled program is cached by", MeshIRTypeError) from None
        statics.append(leaf)
        positions.append(False)
    return Flat(tuple(arrays), tuple(names), tuple(roots), tuple(statics), treedef, tuple(positions))


def _where(path, names_from) -> str:
    """How an error names the argument at `path`: `'x'`, `'params'['w1']`, or `#0`."""
    if names_from and path:
        rest = jax.tree_util.keystr(tuple(path[1:]))
        return f"'{names_from[path[0].idx]}'{rest}"
    return f"#{_key_text(path[-1])}" if path else "value"


def _key_text(key) -> str:
    return str(getattr(key, "key", getattr(key, "idx", getattr(key, "name", key))))


def _identifier(path, index: int) -> str:
    """An argument name from a pytree path: `params['w1']` -> params_w1."""
    text = "_".join(re.sub(r"\W+", "_", _key_text(k)) for k in path).strip("_")
    if not text or not (text[0].isalpha() or text[0] == "_"):
        text = f"a{index}_{text}" if text else f"a{index}"
    return text


def static_key(value):
    """A static value as the caches compare it: with its type (1, 1.0 and True are three
    constants), floats by their bits (0.0 and -0.0 differ; a NaN finds its own program
    again), tuples, lists and frozensets element by element."""
    if isinstance(value, (float, np.floating)):
        return type(value), float(value).hex()
    if isinstance(value, (tuple, list)):
        return type(value), tuple(map(static_key, value))
    if isinstance(value, frozenset):
        return type(value), frozenset(map(static_key, value))
    return type(value), value


def common_mesh(arrays, fallback: Mesh | None, what: str) -> Mesh:
    """The one mesh of `arrays` (else `fallback`); a located error naming both when two differ."""
    mesh = None
    for a in arrays:
        if mesh is None:
            mesh = a.mesh
        elif a.mesh != mesh or not _same_devices(a.mesh, mesh):
            shown = (f"{mesh} and {a.mesh}" if a.mesh != mesh else
                     f"{mesh} on devices {_device_ids(mesh)} and on devices {_device_ids(a.mesh)}")
            raise located_error(f"{what} mixes arrays on different meshes: {shown} "
                                "(mi.Array(x.jax_array, ...) on another mesh, or mi.array(..., mesh=), moves one)",
                                MeshIRValueError)
    if mesh is None:
        mesh = fallback
    if mesh is None:
        raise located_error(f"{what} has no mi.Array argument to take a mesh from: give mesh= or enter "
                            "mi.default_layout(mesh=...)", MeshIRValueError)
    return mesh


def _device_ids(mesh: Mesh) -> list[int]:
    return [d.id for d in mesh_devices(mesh)]


def _same_devices(a: Mesh, b: Mesh) -> bool:
    """Whether two equal meshes run on the same devices: a mesh without devices of its own
    (`mi.Mesh("x:4;y:2")`) runs on the backend's first ones, as does an mi.Array's mesh taken
    from a jax.Array that such a mesh placed (it lists them)."""
    if a.devices == b.devices:
        return True
    return list(mesh_devices(a)) == list(mesh_devices(b))


#: Staging builds IR in the one shared MLIR context and runs the pass pipeline: one thread at
#: a time (a cache hit, and running a compiled program, need no lock).
_STAGING = threading.RLock()


def stage(call, flat: Flat, mesh: Mesh, name: str, rules, donate=()) -> Staged:
    """Trace `call` (of the arguments' tree, with Tensors standing for `flat`'s arrays) into a
    program on `mesh` and compile it under `rules`, donating the arrays named in `donate`; the
    results are the Tensors `call` returned (any pytree of them)."""
    with _STAGING:
        return _stage(call, flat, mesh, name, rules, donate)


def _stage(call, flat: Flat, mesh: Mesh, name: str, rules, donate) -> Staged:
    with Program(_program_name(name), mesh) as prog:
        tensors = [prog.argument(n, a.dims, a.dtype, layout=a.layout) for n, a in zip(flat.names, flat.arrays)]
        out = call(flat.rebuilt(tensors))
        out_leaves, out_tree = jax.tree_util.tree_flatten(out, is_leaf=_is_leaf)
        if not out_leaves:
            raise located_error(f"{name} returned no array ({type(out).__name__}): a staged function returns "
                                "mi.Arrays (any tuple, list or dict of them)", MeshIRTypeError)
        for i, leaf in enumerate(out_leaves):
            if not isinstance(leaf, Tensor):
                raise located_error(f"{name} returned {type(leaf).__name__} {leaf!r:.60} as result #{i}: a staged "
                                    "function returns mi.Arrays computed from its arguments", MeshIRTypeError)
            prog.result(leaf, name=f"r{i}")
    exe = compile(prog, layout=rules if rules else None, mesh=mesh, donate=list(donate) or None)
    return Staged(exe, prog, out_tree, mesh)


def _program_name(name: str) -> str:
    clean = re.sub(r"\W+", "_", name).strip("_") or "staged"
    return clean if clean[0].isalpha() or clean[0] == "_" else f"f_{clean}"
