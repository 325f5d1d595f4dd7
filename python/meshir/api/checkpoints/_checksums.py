"""Checksums of arrays that no process may hold whole: computed on the devices, layout-free.

An array's checksum is two 32-bit sums over its elements' bits, taken as unsigned integers
of the element's width (a 64-bit element counts as two 32-bit words): the plain sum, and the
sum of bits[i] * (2i + 1) where i is the element's (word's) index in the global row-major
order, both mod 2^32. Addition mod 2^32 is exact in any order, so the value does not depend
on the layout, the mesh or the process count, and under jax.jit each device sums its own
shard and XLA adds the parts: no process reads the whole array. The multiplier is odd, so a
single flipped bit (a change of +-2^k, k < 32) always changes the weighted sum; the plain sum
catches words that trade places. Written as `"xxxxxxxx-xxxxxxxx"` (hex).
jax.Arrays are summed on their devices, NumPy arrays on the host (same sums).
"""
from __future__ import annotations

import functools

import numpy as np


def _words(x):
    """The bits of `x` as uint32 words (one per element, two for 64-bit elements), and the
    row-major global index of each word, both of the same shape."""
    import jax.numpy as jnp
    from jax import lax

    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        x = jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1)
    elif x.dtype == jnp.bool_:
        x = x.astype(jnp.uint8)
    elif jnp.issubdtype(x.dtype, jnp.integer) and jnp.iinfo(x.dtype).bits < 8:
        x = x.astype(jnp.int8)  # sub-byte integers (int4, ...): widened losslessly
    width = x.dtype.itemsize
    unsigned = {1: jnp.uint8, 2: jnp.uint16, 4: jnp.uint32, 8: jnp.uint32}[width]
    bits = lax.bitcast_convert_type(x, unsigned).astype(jnp.uint32)  # 64-bit: a trailing dim of 2
    index = jnp.zeros(bits.shape, jnp.uint32)
    stride = 1
    for axis in reversed(range(bits.ndim)):
        index = index + lax.broadcasted_iota(jnp.uint32, bits.shape, axis) * jnp.uint32(stride % 2**32)
        stride *= bits.shape[axis]
    return bits, index


def _sums(arrays):
    import jax.numpy as jnp

    out = []
    for x in arrays:
        bits, index = _words(x)
        out.append(jnp.stack([jnp.sum(bits, dtype=jnp.uint32),
                              jnp.sum(bits * (index * jnp.uint32(2) + jnp.uint32(1)), dtype=jnp.uint32)]))
    return out


@functools.lru_cache(maxsize=1)
def _jitted():
    import jax

    return jax.jit(_sums)


def _numpy_checksum(x: np.ndarray) -> tuple[int, int]:
    """The same two sums on the host, for NumPy arrays (whose dtype jax might narrow)."""
    if np.iscomplexobj(x):
        x = np.stack([x.real, x.imag], axis=-1)
    elif x.dtype == np.bool_:
        x = x.astype(np.uint8)
    elif x.dtype.kind in "iu" and x.dtype.itemsize == 1 and np.iinfo(x.dtype).bits < 8:
        x = x.astype(np.int8)
    x = np.ascontiguousarray(x)
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint32}[x.dtype.itemsize]
    bits = x.reshape(-1).view(unsigned).astype(np.uint64)
    weights = (np.arange(bits.size, dtype=np.uint64) * np.uint64(2) + np.uint64(1)) % np.uint64(2**32)
    return int(bits.sum(dtype=np.uint64) % 2**32), int((bits * weights).sum(dtype=np.uint64) % 2**32)


def _text(pair) -> str:
    return f"{int(pair[0]):08x}-{int(pair[1]):08x}"


def _devices_of(value) -> tuple:
    sharding = getattr(value, "sharding", None)
    return tuple(sorted(d.id for d in sharding.device_set)) if sharding is not None else ()


def checksums(arrays: dict) -> dict[str, str]:
    """Name -> checksum of every array (jax.Arrays, global across processes or not, and
    NumPy arrays). Every process must call it with the same arrays (it runs one program
    per set of devices the arrays live on)."""
    import jax

    result, groups = {}, {}
    for name, value in arrays.items():
        if isinstance(value, jax.Array):
            groups.setdefault(_devices_of(value), []).append(name)
        else:
            result[name] = _text(_numpy_checksum(np.asarray(value)))
    for names in groups.values():
        for name, pair in zip(names, jax.device_get(_jitted()([arrays[n] for n in names]))):
            result[name] = _text(pair)
    return {name: result[name] for name in arrays}
