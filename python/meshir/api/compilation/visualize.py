"""`visualize`: every value's layout as a table, and a picture of how tensors are split.

    table = mi.visualize(prog, "layouts.png", layout={"batch": "x", "d_ff": "y"})
    mi.visualize(exe, "layouts.png")          # an Executable: the layouts it was compiled with

The PNG has one panel per tensor (arguments and results; every value with
`every_value=True`): a grid over the tensor's two displayed dims (split dims first, then the
largest), one cell per block, coloured by block and labelled with the devices that hold it;
the title gives the tensor's layout and one device's shard shape and bytes. Needs matplotlib
(`pip install 'meshir[viz]'`), imported only when a picture is asked for.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

from meshir.dialect import Mesh, MeshIRError, MeshIRTypeError, MeshIRValueError, TensorType
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.signature import defined_functions, function_name, signature
from meshir.dialect.tensor_type import format_axes

from meshir.api import _checks as checks
from meshir.api.compilation.propagation import layout_table, propagate

#: At most this many panels in one picture (the rest are listed as left out).
MAX_PANELS = 64
_COLUMNS = 4


@reports_at_call_site
def visualize(prog_or_exe, path: str | os.PathLike | None = None, *, layout: dict | None = None,
              every_value: bool = False, show: bool = True, strict: bool = False) -> str:
    """Print and return the table of every value's layout; with `path`, also draw the tensors'
    shardings into that image file (PNG, or another format matplotlib knows by its suffix).

    `prog_or_exe`: a Program or module (its layouts are propagated first when it has a mesh,
    with `layout` rules added) or an Executable from `mi.compile` (the layouts it runs with).
    `every_value`: draw every value, not only arguments and results. `show=False`: do not print.
    `strict`: as `mi.propagate`'s, for `layout`.
    """
    layout = checks.layout(layout, "layout rules")
    every_value = checks.flag(every_value, "every_value")
    show = checks.flag(show, "show")
    module = _laid_out_module(prog_or_exe, layout, checks.flag(strict, "strict"))
    table = layout_table(module)
    if path is not None:
        target = _checked_path(path)
        _draw(module, target, every_value)
    if show:
        print(table)
    return table


def _laid_out_module(obj, layout, strict: bool = False):
    partitioned = getattr(obj, "partitioned_module", None)
    if partitioned is not None:  # an Executable: the layouts it was compiled with
        if layout:
            raise MeshIRValueError(f"visualize: an Executable's layouts are fixed; pass layout={layout} to mi.compile "
                                   "instead")
        return partitioned
    module = getattr(obj, "module", obj)
    if not hasattr(module, "operation"):
        raise MeshIRTypeError(f"visualize: expected a Program, a module or an Executable, got {checks.describe(obj)}")
    meshes = module_meshes(module.operation)
    if layout or any(function_mesh(fn, meshes) is not None for fn in defined_functions(module)):
        return propagate(module, layout=layout, strict=strict)
    return module


# -- the output path ---------------------------------------------------------------------------
def _checked_path(path) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise MeshIRTypeError(f"visualize: path must be a file name (str or PathLike), got {checks.describe(path)}")
    if not str(path):
        raise MeshIRValueError("visualize: path '' is empty; give a file name like layouts.png")
    target = Path(path)
    if target.is_dir():
        raise MeshIRError(f"visualize: cannot write '{target}': it is a directory; give a file name like layouts.png")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise MeshIRError(f"visualize: cannot write '{target}': directory '{parent}' does not exist")
    suffix = target.suffix.lower().lstrip(".")
    formats = _image_formats()
    if suffix not in formats:
        raise MeshIRError(f"visualize: cannot write '{target}': unknown image format '{target.suffix or '(none)'}' "
                          f"(use .png, or one of: {', '.join('.' + f for f in sorted(formats))})")
    return target


def _image_formats() -> set[str]:
    _, canvas = _matplotlib()
    return set(canvas.get_supported_filetypes())


def _matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MeshIRError("visualize: drawing needs matplotlib: pip install 'meshir[viz]' "
                          "(or pip install matplotlib)") from None
    return Figure, FigureCanvasAgg


# -- what to draw ------------------------------------------------------------------------------
def _panels(module, every_value: bool) -> list[tuple[str, TensorType, Mesh | None]]:
    """(label, type, mesh) of every tensor to draw, function by function."""
    meshes = module_meshes(module.operation)
    fns = defined_functions(module)
    panels = []
    for fn in fns:
        mesh = function_mesh(fn, meshes)
        prefix = f"@{function_name(fn)} " if len(fns) > 1 else ""
        sig = signature(fn)
        block = fn.regions[0].blocks[0]
        for name, arg in zip(sig.arg_names, block.arguments):
            panels.append((f"{prefix}{name} (argument)", TensorType.from_mlir(arg.type), mesh))
        for op in block.operations if every_value else ():
            if op.operation.name != "func.return":
                for r in op.operation.results:
                    try:
                        panels.append((f"{prefix}{r.get_name()} ({op.operation.name})", TensorType.from_mlir(r.type), mesh))
                    except ValueError:
                        pass
        for name, t in zip(sig.result_names, sig.result_types):
            panels.append((f"{prefix}{name} (result)", t, mesh))
    return panels


def _coordinates(mesh: Mesh, device: int) -> dict[str, int]:
    coords, rest = {}, device
    for axis, size in reversed(mesh.axes):
        coords[axis] = rest % size
        rest //= size
    return coords


def _block(mesh: Mesh, coords: dict[str, int], axes) -> int:
    index = 0
    for a in axes or ():
        index = index * mesh.shape[a] + coords[a]
    return index


def _shown_dims(t: TensorType) -> list[int]:
    """Indices of the (at most) two dims drawn: split dims first, then the largest; in type order."""
    ranked = sorted(range(t.rank), key=lambda i: (not t.dims[i].axes, -t.dims[i].size, i))
    return sorted(ranked[:2])


def _device_text(devices: list[int], total: int, partial: bool) -> str:
    """Who holds a block: "d0,d2" (copies) or "d0+d1" (summands of a pending value)."""
    if len(devices) == total and total > 1 and not partial:
        return f"all {total}"
    if len(devices) > 4:
        return f"{len(devices)} devices" + (" (summands)" if partial else "")
    return ("+" if partial else ",").join(f"d{d}" for d in devices)


def _dim_label(d, mesh: Mesh | None) -> str:
    if mesh is None:
        return f"{d.name}={d.size}"
    layout = "?" if d.axes is None else ("replicated" if not d.axes else "@" + format_axes(d.axes))
    return f"{d.name}={d.size} {layout}"


def _draw_panel(ax, label: str, t: TensorType, mesh: Mesh | None, cmap) -> None:
    devices = mesh.size if mesh else 1
    shown = _shown_dims(t)
    dims = [t.dims[i] for i in shown]
    splits = [math.prod(mesh.shape[a] for a in (d.axes or ())) if mesh else 1 for d in dims]
    rows, cols = (splits + [1, 1])[:2] if len(dims) == 2 else (1, splits[0] if dims else 1)
    holders: dict[tuple[int, int], list[int]] = {}
    for p in range(devices):
        coords = _coordinates(mesh, p) if mesh else {}
        blocks = [_block(mesh, coords, d.axes) if mesh else 0 for d in dims]
        key = (blocks[0], blocks[1]) if len(dims) == 2 else (0, blocks[0] if dims else 0)
        holders.setdefault(key, []).append(p)
    nblocks = rows * cols
    annotate = rows <= 8 and cols <= 8
    if nblocks > 64:  # too many cells for patches: one image, colours cycling over the blocks
        import numpy as np

        index = (np.arange(nblocks).reshape(rows, cols) + np.arange(rows)[:, None]) % cmap.N
        ax.imshow(cmap(index), extent=(0, cols, 0, rows), interpolation="nearest", aspect="auto")
    for (r, c), members in holders.items() if nblocks <= 64 else ():
        color = (0.85, 0.85, 0.85, 1.0) if nblocks == 1 else cmap((r * cols + c) % cmap.N)
        ax.add_patch(_rectangle((c, rows - 1 - r), color))
        if annotate:
            ax.text(c + 0.5, rows - 1 - r + 0.5, _device_text(members, devices, bool(t.partial)), ha="center",
                    va="center", fontsize=8 if nblocks <= 16 else 6)
    if not annotate:
        per_block = devices // nblocks
        ax.text(cols / 2, rows / 2, f"{rows} × {cols} blocks\n{per_block} device{'s' if per_block > 1 else ''} each",
                ha="center", va="center", fontsize=8, bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "none"})
    ax.set_xlim(0, cols)
    ax.set_ylim(0, rows)
    ax.set_aspect("auto")
    ax.set_xticks([])
    ax.set_yticks([])
    if len(dims) == 2 and 1 < rows <= 8:
        ax.set_yticks([rows - 1 - r + 0.5 for r in range(rows)], _ranges(dims[0].size, rows), fontsize=7)
    if dims and 1 < cols <= 8:
        ax.set_xticks([c + 0.5 for c in range(cols)], _ranges(dims[-1].size, cols), fontsize=7)
    if len(dims) == 2:
        ax.set_ylabel(_dim_label(dims[0], mesh), fontsize=8)
        ax.set_xlabel(_dim_label(dims[1], mesh), fontsize=8)
    elif dims:
        ax.set_xlabel(_dim_label(dims[0], mesh), fontsize=8)
    try:
        shard = t.local_shape(mesh.shape) if mesh else t.shape
    except ValueError:
        shard = None
    nbytes = math.prod(shard) * t.dtype.itemsize if shard is not None else None
    shape_text = "scalar" if not t.dims else f"[{', '.join(str(s) for s in shard)}]" if shard is not None else "?"
    title = f"{label}\nshard {shape_text} {t.element_type}" + (f", {nbytes:,} B/device" if nbytes is not None else "")
    notes = []
    hidden = [d for i, d in enumerate(t.dims) if i not in shown]
    if hidden:
        notes.append("also " + ", ".join(_dim_label(d, mesh) for d in hidden))
    if t.partial:
        notes.append(f"pending {t.partial_reduction} over {format_axes(t.partial)}")
    if notes:
        title += "\n" + "; ".join(notes)
    ax.set_title(title, fontsize=8)


def _ranges(size: int, blocks: int) -> list[str]:
    """Index ranges of the blocks of a dim: "0:4", "4:8", ..."""
    step = size // blocks
    return [f"{i * step}:{(i + 1) * step}" for i in range(blocks)]


def _rectangle(xy, color):
    from matplotlib.patches import Rectangle

    return Rectangle(xy, 1, 1, facecolor=color, edgecolor="white", linewidth=1.5)


def _draw(module, target: Path, every_value: bool) -> None:
    Figure, FigureCanvasAgg = _matplotlib()
    import matplotlib

    panels = _panels(module, every_value)
    left_out = max(0, len(panels) - MAX_PANELS)
    panels = panels[:MAX_PANELS]
    count = max(len(panels), 1)
    columns = min(_COLUMNS, count)
    rows = math.ceil(count / columns)
    fig = Figure(figsize=(3.4 * columns, 2.9 * rows + 0.7))
    FigureCanvasAgg(fig)
    meshes = {str(m) for _, _, m in panels if m is not None}
    heading = ("mesh " + ", ".join(sorted(meshes))) if meshes else "no mesh: one device"
    fig.suptitle(f"{heading} — a cell is one block of the tensor, labelled with the devices that hold it"
                 + (f" ({left_out} more tensors not drawn)" if left_out else ""), fontsize=9)
    cmap = matplotlib.colormaps["tab20"]
    for i, (label, t, mesh) in enumerate(panels):
        ax = fig.add_subplot(rows, columns, i + 1)
        _draw_panel(ax, label, t, mesh, cmap)
    if not panels:
        fig.text(0.5, 0.5, "no tensors", ha="center", va="center")
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / (2.9 * rows + 0.7)))
    try:
        fig.savefig(target, dpi=100)
    except OSError as e:
        raise MeshIRError(f"visualize: cannot write '{target}': {e.strerror or e}") from None
