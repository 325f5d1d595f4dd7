"""`mi.Array`: a global jax.Array on a mesh with its named dims and layout, whose ops run now.

It has the builder `Tensor`'s `dims`, `names`, `shape`, `dtype` and `type`, and its operators,
so one user function runs on either: on `Tensor`s it builds a program, on `Array`s each op
runs at once (dispatch.py). `.jax_array` and `.layout` give the array and its layout;
`.numpy()`, `float(x)`, `int(x)`, `bool(x)` convert (a concrete value, unlike a Tensor's).
"""
from __future__ import annotations

import jax
import numpy as np
from jax.sharding import NamedSharding

from meshir.dialect import Mesh, MeshIRTypeError, MeshIRValueError, TensorType
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.tensor_type import TypeContentError
from meshir.lowering.runtime.devices import named_sharding

from meshir.api import _checks as checks
from meshir.api.programs._locations import located_error
from meshir.api.programs.dims import as_dims
from meshir.api.programs.named_value import NamedValue
from meshir.api.eager.context import ambient


class Array(NamedValue):
    """A jax.Array with named dims on a mesh: `mi.Array(jax_array, dims, mesh=None)` wraps one
    (its NamedSharding's mesh and spec give the mesh and layout); `mi.array(...)` makes one
    from NumPy or jax data."""

    __slots__ = ("jax_array", "type", "mesh")
    __array_priority__ = 1000  # NumPy scalars on the left defer to our reflected operators

    @reports_at_call_site
    def __init__(self, jax_array, dims, mesh=None):
        if not isinstance(jax_array, jax.Array) or isinstance(jax_array, jax.core.Tracer):
            raise MeshIRTypeError(f"mi.Array wraps a concrete jax.Array, got {type(jax_array).__name__}; "
                                  "use mi.array(...) for NumPy data")
        sharding = jax_array.sharding
        given = checks.mesh(mesh, "mi.Array mesh")
        if isinstance(sharding, NamedSharding) and isinstance(sharding.mesh, jax.sharding.Mesh):
            mesh = given if given is not None else Mesh(sharding.mesh)
            spec = tuple(sharding.spec) + (None,) * (jax_array.ndim - len(sharding.spec))
            axes = [() if s is None else (s,) if isinstance(s, str) else tuple(s) for s in spec]
        else:
            mesh = given if given is not None else ambient().mesh
            if mesh is None:
                raise MeshIRValueError("mi.Array: the jax.Array has no NamedSharding to take a mesh from; give "
                                       "mesh= or enter mi.default_layout(mesh=...)")
            axes = [()] * jax_array.ndim
        t = _type_of(jax_array.shape, jax_array.dtype, dims, dict(zip(range(len(axes)), axes)), mesh=mesh)
        self._set(_placed(jax_array, mesh, t), t, mesh)

    @classmethod
    def _of(cls, jax_array, t: TensorType, mesh: Mesh) -> "Array":
        """An Array of `t` on `mesh` around `jax_array`, laid out so already (no checks)."""
        self = object.__new__(cls)
        self._set(jax_array, t, mesh)
        return self

    def _set(self, jax_array, t: TensorType, mesh: Mesh) -> None:
        object.__setattr__(self, "jax_array", jax_array)
        object.__setattr__(self, "type", t)
        object.__setattr__(self, "mesh", mesh)

    def __setattr__(self, name, value):
        raise AttributeError(f"mi.Array is immutable (setting {name!r}); ops return new arrays")

    @property
    def layout(self) -> dict[str, tuple[str, ...]]:
        """`{dim: mesh axes}`; () for a dim every device holds whole."""
        return {d.name: tuple(d.axes or ()) for d in self.type.dims}

    # -- values --------------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        return np.asarray(self.jax_array)

    def block_until_ready(self) -> "Array":
        """Wait for the value (ops dispatch asynchronously); `jax.block_until_ready` calls this."""
        self.jax_array.block_until_ready()
        return self

    def __array__(self, dtype=None, copy=None):
        array = np.asarray(self.jax_array)
        return array if dtype is None else array.astype(dtype)

    def __float__(self):
        return float(self._scalar("float"))

    def __int__(self):
        return int(self._scalar("int"))

    def __bool__(self):
        return bool(self._scalar("bool"))

    def _scalar(self, what: str):
        if self.type.num_elements != 1:
            raise located_error(f"{what}() of {self._short()}: only an array of one element converts "
                                "(use .numpy() for the values)", MeshIRTypeError)
        return self.numpy().reshape(())

    def __len__(self):
        raise located_error(f"{self._short()} has no len(); use .shape or .dim(name).size", MeshIRTypeError)

    def __iter__(self):
        raise located_error(f"{self._short()} is not iterable by position: its dims have names; use .numpy() "
                            "or mi.slice(x, dim, start, length)", MeshIRTypeError)

    def _short(self) -> str:
        return f"mi.Array({self.type})"

    def __repr__(self) -> str:
        values = np.array2string(self.numpy(), threshold=64, edgeitems=3, separator=", ", prefix="  ")
        return f"mi.Array({self.type} on {self.mesh},\n  {values})"

    __hash__ = object.__hash__

    def __matmul__(self, other):
        raise located_error(f"{self._short()} @ ...: dims have names, so say which to keep: mi.einsum(x, w) "
                            "(the dims in exactly one operand) or mi.einsum(x, w, output=[...])", MeshIRTypeError)



@reports_at_call_site
def array(value, dims, mesh=None, layout=None, dtype=None) -> Array:
    """An `mi.Array` of `value` (NumPy or jax data, Python numbers or lists) with `dims`
    (names, `mi.Dim`s or (name, size) pairs; sizes from the value), on `mesh` laid out by
    `layout` (`{dim: axes}`), each defaulting to the enclosing `mi.default_layout`'s (its
    rules, for the dims they name; others replicated). `dtype`: the element type (default:
    the value's, 64-bit narrowed to 32 as jax does)."""
    context = ambient()
    mesh = checks.mesh(mesh, "mi.array mesh") or context.mesh
    if mesh is None:
        raise located_error("mi.array needs a mesh: give mesh= or enter mi.default_layout(mesh=...)", MeshIRValueError)
    if isinstance(value, Array):
        raise located_error(f"mi.array of {value._short()}: it is an mi.Array already (mi.reshard changes a layout)",
                            MeshIRTypeError)
    if isinstance(value, jax.Array) and not isinstance(value, jax.core.Tracer):
        data = value
    else:
        try:
            data = np.asarray(value)
        except Exception as e:
            raise located_error(f"mi.array: cannot convert {type(value).__name__} to an array ({e})",
                                MeshIRTypeError) from None
        if data.dtype == object:
            raise located_error(f"mi.array: {type(value).__name__} {value!r:.60} holds no numbers", MeshIRTypeError)
    if dtype is not None:
        data = data.astype(TensorType.make([], checks.element_type(dtype, "the dtype of mi.array")).dtype)
    elif data.dtype in (np.float64, np.int64, np.uint64):
        narrow = jax.dtypes.canonicalize_dtype(data.dtype)
        if data.dtype.kind in "iu" and narrow != data.dtype and data.size:
            info = np.iinfo(narrow)
            if data.min() < info.min or data.max() > info.max:
                raise located_error(f"mi.array: values in [{data.min()}, {data.max()}] do not fit {narrow} (64-bit "
                                    f"integers narrow to {narrow} as in jax; give dtype= explicitly)", MeshIRValueError)
        data = data.astype(narrow)
    given = checks.layout(layout, "layout of mi.array", allow_free=True)
    names = _dim_names(dims)
    unknown = [d for d in given if d not in names]
    if unknown:
        raise located_error(f"the layout of mi.array names '{unknown[0]}', which is not one of its dims {names}",
                            MeshIRValueError)
    rules = dict(context.rules) if layout is None else {}
    t = _type_of(data.shape, data.dtype, dims, given, rules, mesh)
    return Array._of(_placed(data, mesh, t), t, mesh)


def _dim_names(dims) -> list:
    """The names of `dims` as given (names, Dims or (name, size) pairs; one alone as a list)."""
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    return [getattr(d, "name", d[0] if isinstance(d, tuple) else d) for d in dims]


def _type_of(shape, dtype, dims, layout: dict, rules: dict | None = None, mesh: Mesh | None = None) -> TensorType:
    """The type of an array of `shape` and `dtype` named `dims`: each dim laid out by
    `layout` (keyed by name, or by position for a wrapped jax.Array), else by `rules` where
    their axes are the mesh's and free, else replicated."""
    if dims is None:
        raise located_error(f"an array of shape {tuple(shape)} needs dims (one name per axis) to become an mi.Array",
                            MeshIRTypeError)
    names = _dim_names(dims)
    if len(names) != len(shape):
        raise located_error(f"dims {names} name {len(names)} axes, but the array has shape {tuple(shape)}",
                            MeshIRValueError)
    named = as_dims([(n, s) for n, s in zip(names, shape)], what="mi.Array dims")
    for given, d in zip(dims if isinstance(dims, (list, tuple)) else [dims], named):
        size = getattr(given, "size", given[1] if isinstance(given, tuple) else None)
        if size is not None and size != d.size:
            raise located_error(f"dim '{d.name}' is given size {size}, but the array's axis has {d.size}",
                                MeshIRValueError)
    element = checks.element_type(np.dtype(dtype), "the element type of mi.Array")
    axes = []
    for i, d in enumerate(named):
        chosen = layout.get(d.name, layout.get(i))
        if chosen is None and rules and d.name in rules and all(a in mesh.shape for a in rules[d.name]):
            chosen = rules[d.name]
        axes.append(tuple(chosen or ()))
    try:
        t = TensorType.make([(d.name, d.size, a) for d, a in zip(named, axes)], element)
        if mesh is not None:
            t.local_shape(mesh.shape)
    except (TypeContentError, ValueError) as e:
        raise located_error(f"mi.array: {e}" + (f" on mesh {mesh}" if mesh is not None else ""), MeshIRValueError) from None
    return t


def _placed(data, mesh: Mesh, t: TensorType):
    """`data` on `mesh`'s devices laid out as `t` says (a no-op when it already is)."""
    sharding = named_sharding(mesh, t)
    if isinstance(data, jax.Array) and data.sharding == sharding:
        return data
    with jax.enable_x64(t.element_type in ("f64", "i64")):
        return jax.device_put(data, sharding)
