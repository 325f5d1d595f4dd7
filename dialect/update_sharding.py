"""What `mtf-shard-update` records on a step function: the dim and mesh axes each parameter's
update is split over (`mtf.update_sharding`), read by the memory estimate and the tests."""
from __future__ import annotations

from meshir._jax_private import ir

from .attribute_names import UPDATE_SHARDING


def update_split(fn) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Parameter -> (dim, axes of its update layout), as mtf-shard-update recorded on `fn`."""
    if UPDATE_SHARDING not in fn.attributes:
        return {}
    out = {}
    for entry in ir.DictAttr(fn.attributes[UPDATE_SHARDING]):
        d = ir.DictAttr(entry.attr)
        out[entry.name] = (ir.StringAttr(d["dim"]).value, tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(d["axes"])))
    return out
