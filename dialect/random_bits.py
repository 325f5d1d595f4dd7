"""Counter-based random numbers: a value depends only on (seed, global linear index).

So every layout, and every device's shard, yields the same numbers. The algorithm uses only
uint32 xor, shift, multiply and add, so the StableHLO lowering computes it bit-for-bit:

    key   = mix(uint32(seed) ^ 0x5BD1E995)          (key2 = mix(key ^ 0x68E31DA4) for normal)
    bits  = mix(mix(index ^ key) + key)
    mix(x): x ^= x >> 16; x *= 0x7FEB352D; x ^= x >> 15; x *= 0x846CA68B; x ^= x >> 16
    u in [0, 1)  = (bits >> (32 - p)) * 2**-p        p = mantissa bits of the element type + 1
                                                      (f32, f64: 24; f16: 11; bf16: 8)
    uniform      = min(minval + (maxval - minval) * u, the largest value below maxval),
                   computed in f32 (f64 for f64) then rounded to the element type
    normal       = mean + stddev * sqrt(-2 log(1 - u1)) * cos(2 pi u2), with 24-bit u1 (key)
                   and u2 (key2), computed in f32 (f64 for f64)

Taking only p bits makes every u exactly representable, and the clamp keeps results below
maxval even where rounding to a narrow type would reach it. `index` is the row-major linear
index in the global shape, modulo 2**32.
"""
from __future__ import annotations

import numpy as np
from .tensor_type import ELEMENT_TYPES

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


#: Bits of randomness per element type: its significand precision (at most 24 from 32 bits).
PRECISION_BITS = {"f32": 24, "f64": 24, "f16": 11, "bf16": 8}


def working_dtype(element_type: str) -> np.dtype:
    """The precision the formulas are evaluated in: f64 for f64, f32 otherwise."""
    return np.dtype(np.float64 if element_type == "f64" else np.float32)


def uniform01(bits: np.ndarray, precision: int = 24, dtype=np.float32) -> np.ndarray:
    """[0, 1) values from uint32 bits, with `precision` random bits (exact in `dtype`)."""
    return (bits >> np.uint32(32 - precision)).astype(dtype) * dtype(2.0**-precision)


def linear_index(shape) -> np.ndarray:
    """Row-major linear index (mod 2**32) of every element of a global shape."""
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.uint64).astype(np.uint32).reshape(shape)


def uniform(seed: int, shape, minval: float, maxval: float, element_type: str) -> np.ndarray:
    """Uniform samples in [minval, maxval) of `element_type`, over a global shape."""
    work, out = working_dtype(element_type), ELEMENT_TYPES[element_type]
    u = uniform01(random_bits(seed, linear_index(shape)), PRECISION_BITS[element_type], work.type)
    values = (work.type(minval) + (work.type(maxval) - work.type(minval)) * u).astype(out)
    below_max = np.nextafter(np.array(maxval, dtype=out), np.array(minval, dtype=out))
    return np.minimum(values, below_max)


def normal(seed: int, shape, mean: float, stddev: float, element_type: str) -> np.ndarray:
    """Normal samples of `element_type` over a global shape, by Box-Muller."""
    work = working_dtype(element_type).type
    index = linear_index(shape)
    u1 = uniform01(random_bits(seed, index, 0), 24, work)
    u2 = uniform01(random_bits(seed, index, 1), 24, work)
    radius = np.sqrt(work(-2.0) * np.log1p(-u1))
    values = work(mean) + work(stddev) * radius * np.cos(work(2.0 * np.pi) * u2)
    return values.astype(ELEMENT_TYPES[element_type])
