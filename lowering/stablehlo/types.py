"""Local (per-device) StableHLO types of `!mtf.tensor` values, and Shardy sharding text.

The per-device program sees each value as its shard: `tensor<local shape x elem>`, dims in
the type's order (docs/partitioning.md). The entry function's signature keeps the global
types and says how they are laid out with `#sdy.sharding`.
"""
from __future__ import annotations

from dataclasses import dataclass

from meshir.dialect.mesh import Mesh
from meshir.dialect.tensor_type import TensorType

#: Narrow floats are computed in f32 and rounded back, as the reference interpreter does.
NARROW_FLOATS = frozenset({"bf16", "f16"})
FLOATS = frozenset({"f32", "bf16", "f16", "f64"})


def tensor_text(shape, elem: str) -> str:
    """`tensor<2x4xf32>`; `tensor<f32>` for a scalar."""
    return "tensor<" + "".join(f"{s}x" for s in shape) + elem + ">"


@dataclass(frozen=True)
class Local:
    """A value of the per-device program: its SSA name, local shape and element type."""

    name: str
    shape: tuple[int, ...]
    elem: str

    @property
    def type(self) -> str:
        return tensor_text(self.shape, self.elem)

    @property
    def rank(self) -> int:
        return len(self.shape)


def compute_element(elem: str) -> str:
    """The element type arithmetic runs in: f32 for bf16/f16, the type itself otherwise."""
    return "f32" if elem in NARROW_FLOATS else elem


def is_float(elem: str) -> bool:
    return elem in FLOATS


def local_shape(t: TensorType, mesh: Mesh | None) -> tuple[int, ...]:
    """The shard shape of `t` on `mesh` (the global shape without a mesh)."""
    return t.local_shape(mesh.shape) if mesh is not None else t.shape


def dim_shardings_text(t: TensorType) -> str:
    """`[{"x"}, {}, {"y", "z"}]`: per dim the mesh axes it is split over, major to minor."""
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in (d.axes or ())) + "}" for d in t.dims) + "]"


def sharding_text(t: TensorType, mesh: Mesh) -> str:
    """The body of a sharding, `<@mesh, [{"x"}, {}]>` (as manual_computation prints it)."""
    return f"<@{mesh.name}, {dim_shardings_text(t)}>"


def sharding_attr_text(t: TensorType, mesh: Mesh) -> str:
    """A `#sdy.sharding<@mesh, [...]>` attribute for a function argument or result."""
    return "#sdy.sharding" + sharding_text(t, mesh)
