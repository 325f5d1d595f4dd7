"""Max and min across devices that propagate NaN, whatever the backend's collectives do.

XLA's CPU all-reduce (and the all-reduce its partitioner inserts for a global reduce over a
split dim) computes max/min with comparisons that drop NaN: one NaN on one device gives the
max of the others. jnp.max and the interpreter propagate NaN, so MeshIR must too.

The fix changes what crosses the devices, not the collective: each float becomes the signed
integer of its bits in IEEE-754 total order (`bits` for positive floats, `bits ^ 0x7f..f` for
negative ones: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN), with every NaN made the
extreme the reduction keeps (+NaN for max, -NaN for min). An integer max/min of these keys is
exact on every backend, and the same map turns the winner back into its float. The
collective moves the same bytes (the key has the float's width); the price is a few
elementwise ops on each side.
"""
from __future__ import annotations

import numpy as np

from . import builder as hlo
from .types import Local, is_float

#: The signed integer of each float's width.
KEY_TYPES = {"f64": "i64", "f32": "i32", "bf16": "i16", "f16": "i16"}
_KEY_BITS = {"i64": 64, "i32": 32, "i16": 16}


def needs_keys(kind: str, elem: str) -> bool:
    """True for max/min of floats, where a NaN must win."""
    return kind in ("max", "min") and is_float(elem)


def to_keys(b: hlo.Builder, v: Local, kind: str) -> Local:
    """The total-order keys of `v`, every NaN made the extreme that `kind` keeps."""
    nan = hlo.splat_like(b, np.nan if kind == "max" else -np.nan, v)
    v = hlo.select(b, hlo.compare(b, "ne", v, v), nan, v)
    return bit_keys(b, v)


def bit_keys(b: hlo.Builder, v: Local) -> Local:
    """The total-order keys of `v` as they are (a NaN keeps its sign: -NaN lowest, +NaN
    highest), the order of jax.lax.top_k."""
    return _flip_negatives(b, b.op("bitcast_convert", [v], v.shape, KEY_TYPES[v.elem]))


def from_keys(b: hlo.Builder, keys: Local, elem: str) -> Local:
    """The floats of total-order `keys` (the map is its own inverse); NaN comes out positive,
    as jnp.max and jnp.min return it."""
    v = b.op("bitcast_convert", [_flip_negatives(b, keys)], keys.shape, elem)
    return hlo.select(b, hlo.compare(b, "ne", v, v), hlo.splat_like(b, np.nan, v), v)


def _flip_negatives(b: hlo.Builder, keys: Local) -> Local:
    """`k ^ 0x7f..f` where `k < 0`: reverses the order of the negative floats' magnitudes."""
    magnitude = hlo.splat_like(b, (1 << (_KEY_BITS[keys.elem] - 1)) - 1, keys)
    negative = hlo.compare(b, "lt", keys, hlo.splat_like(b, 0, keys))
    return hlo.select(b, negative, hlo.binary(b, "xor", keys, magnitude), keys)


def through_keys(b: hlo.Builder, v: Local, kind: str, reduce) -> Local:
    """`reduce(v, kind)` (a collective or a reduce), on total-order keys for float max/min."""
    if not needs_keys(kind, v.elem):
        return reduce(v)
    return from_keys(b, reduce(to_keys(b, v, kind)), v.elem)
