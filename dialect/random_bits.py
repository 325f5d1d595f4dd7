"""Counter-based random numbers: a value depends only on (seed, global linear index).

So every layout, and every device's shard, yields the same numbers. The algorithm uses only
uint32 xor, shift, multiply and add, so the StableHLO lowering computes it bit-for-bit:

    key   = mix(uint32(seed) ^ 0x5BD1E995)          (key2 = mix(key ^ 0x68E31DA4) for normal)
    bits  = mix(mix(index ^ key) + key)
    mix(x): x ^= x >> 16; x *= 0x7FEB352D; x ^= x >> 15; x *= 0x846CA68B; x ^= x >> 16
    uniform u in [0, 1) = (bits >> 8) * 2**-24
    normal = sqrt(-2 log(1 - u1)) * cos(2 pi u2)     (u1 from key, u2 from key2)

`index` is the row-major linear index in the global shape, modulo 2**32.
"""
from __future__ import annotations

import numpy as np

SEED_SALT = 0x5BD1E995
SECOND_STREAM_SALT = 0x68E31DA4
MIX_MUL_1 = 0x7FEB352D
MIX_MUL_2 = 0x846CA68B


def mix32(x: np.ndarray) -> np.ndarray:
    """A bijective 32-bit integer hash (xor-shift-multiply)."""
    x = np.asarray(x, dtype=np.uint32)
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint32(16))
        x = x * np.uint32(MIX_MUL_1)
        x = x ^ (x >> np.uint32(15))
        x = x * np.uint32(MIX_MUL_2)
        x = x ^ (x >> np.uint32(16))
    return x


def stream_key(seed: int, stream: int = 0) -> np.uint32:
    """The key of random stream 0 or 1 for a seed."""
    key = mix32(np.uint32(seed & 0xFFFFFFFF) ^ np.uint32(SEED_SALT))
    if stream:
        key = mix32(key ^ np.uint32(SECOND_STREAM_SALT))
    return np.uint32(key)


def random_bits(seed: int, index: np.ndarray, stream: int = 0) -> np.ndarray:
    """uint32 random bits for each linear index."""
    key = stream_key(seed, stream)
    with np.errstate(over="ignore"):
        return mix32(mix32(np.asarray(index, dtype=np.uint32) ^ key) + key)


def uniform01(bits: np.ndarray) -> np.ndarray:
    """[0, 1) float64 values from uint32 bits (24 bits of mantissa)."""
    return (bits >> np.uint32(8)).astype(np.float64) * 2.0**-24


def uniform(seed: int, shape, minval: float = 0.0, maxval: float = 1.0) -> np.ndarray:
    """Uniform samples in [minval, maxval) over a global shape (float64)."""
    index = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.uint64).astype(np.uint32).reshape(shape)
    return minval + (maxval - minval) * uniform01(random_bits(seed, index))


def normal(seed: int, shape, mean: float = 0.0, stddev: float = 1.0) -> np.ndarray:
    """Normal samples over a global shape by Box-Muller (float64)."""
    index = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.uint64).astype(np.uint32).reshape(shape)
    u1 = uniform01(random_bits(seed, index, 0))
    u2 = uniform01(random_bits(seed, index, 1))
    return mean + stddev * np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)
