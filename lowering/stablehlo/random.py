"""random_uniform and random_normal: the formulas of `dialect/random_bits.py` per device.

Each element's global row-major linear index (mod 2**32) is computed from its per-dim global
indices (block offset + local iota) in ui32 arithmetic and hashed with the same xor-shift-
multiply steps, so every device computes its block of the one global tensor. Uniform values
are bit-exact: the product `(maxval - minval) * u` is formed so that no FMA contraction can
change it (see `scaled_uniform01`). Normal values go through log1p and cos, whose last bits
are the backend's.
"""
from __future__ import annotations

import numpy as np

from meshir.dialect import random_bits as rb
from meshir.dialect.op_registry import rule
from meshir.dialect.ops import RandomNormalOp, RandomUniformOp
from meshir.dialect.tensor_type import ELEMENT_TYPES

from . import builder as hlo
from .context import FunctionLowering, op_error
from .creation import global_iota
from .types import Local

U32 = "ui32"


def _u32(b: hlo.Builder, value: int, like: Local) -> Local:
    return hlo.splat_like(b, int(value) & 0xFFFFFFFF, like, U32)


def linear_index(p: FunctionLowering, t) -> Local:
    """The global row-major linear index of every element of `t`'s shard, mod 2**32."""
    b = p.b
    shape = p.shape(t)
    strides = [int(np.prod(t.shape[k + 1 :], dtype=np.int64)) for k in range(t.rank)]
    index = None
    for k, step in enumerate(strides):
        term = global_iota(p, t, k, U32)
        if step != 1:
            term = hlo.binary(b, "multiply", term, _u32(b, step, term))
        index = term if index is None else hlo.binary(b, "add", index, term)
    return index if index is not None else hlo.constant(b, 0, U32, shape)


def mix32(b: hlo.Builder, x: Local) -> Local:
    """`random_bits.mix32`: x ^= x >> 16; x *= M1; x ^= x >> 15; x *= M2; x ^= x >> 16."""
    for shift, mul in ((16, rb.MIX_MUL_1), (15, rb.MIX_MUL_2), (16, None)):
        x = hlo.binary(b, "xor", x, hlo.binary(b, "shift_right_logical", x, _u32(b, shift, x)))
        if mul is not None:
            x = hlo.binary(b, "multiply", x, _u32(b, mul, x))
    return x


def random_bits(b: hlo.Builder, index: Local, seed: int | Local, stream: int) -> Local:
    """`random_bits.random_bits`: mix(mix(index ^ key) + key). `seed`: a number (the op's
    attribute) or a scalar i32 Local (its operand), whose key is computed on the device."""
    if isinstance(seed, Local):
        key = hlo.scalar_to(b, stream_key(b, seed, stream), index.shape)
    else:
        key = _u32(b, int(rb.stream_key(seed, stream)), index)
    mixed = mix32(b, hlo.binary(b, "xor", index, key))
    return mix32(b, hlo.binary(b, "add", mixed, key))


def stream_key(b: hlo.Builder, seed: Local, stream: int) -> Local:
    """`random_bits.stream_key` of a scalar i32 seed: mix(uint32(seed) ^ salt), then for
    stream 1 mix(key ^ salt2)."""
    key = hlo.bitcast_convert(b, seed, U32)
    key = mix32(b, hlo.binary(b, "xor", key, _u32(b, rb.SEED_SALT, key)))
    if stream:
        key = mix32(b, hlo.binary(b, "xor", key, _u32(b, rb.SECOND_STREAM_SALT, key)))
    return key


def _seed(p: FunctionLowering, op) -> int | Local:
    """The op's seed operand (a Local), or its `seed` attribute."""
    return p.operands(op)[0] if op.seed_operand() is not None else op.attr("seed")


def uniform01(b: hlo.Builder, bits: Local, precision: int, work: str) -> Local:
    """`random_bits.uniform01`: the top `precision` bits, times 2**-precision."""
    u = hlo.convert(b, _top_bits(b, bits, precision), work)
    return hlo.binary(b, "multiply", u, hlo.splat_like(b, 2.0**-precision, u))


def _top_bits(b: hlo.Builder, bits: Local, precision: int) -> Local:
    return hlo.binary(b, "shift_right_logical", bits, _u32(b, 32 - precision, bits))


def scaled_uniform01(b: hlo.Builder, bits: Local, precision: int, scale: float, work: str) -> Local:
    """`scale * uniform01(bits)` rounded once to `work`, immune to compiler rewrites.

    Written as a float multiply followed by an add, `minval + scale * u` is contracted into
    one FMA by XLA's CPU and GPU code generators, which rounds once instead of twice, so the
    last bit differs from NumPy's. Here the product is made exactly in integers instead:
    with scale = m * 2**e, scale * u = (m * k) * 2**(e - precision) for the top bits k; m * k
    is an exact i64 (m split in two parts of at most 27 bits for f64), converting it rounds
    once, and the remaining multiplies are by powers of two, exact whatever is fused.
    """
    if not np.isfinite(scale):
        raise ValueError(f"range maxval - minval overflows {work}")
    mantissa, exponent = np.frexp(np.float64(scale))
    digits = 53 if work == "f64" else 24
    tiny = np.finfo(np.float64 if work == "f64" else np.float32).tiny
    m = int(mantissa * 2.0**digits)
    parts = [(m >> 27, 27), (m & ((1 << 27) - 1), 0)] if digits == 53 else [(m, 0)]
    k = hlo.convert(b, _top_bits(b, bits, precision), "i64")
    total = None
    for value, shift in parts:
        power = int(exponent) - digits + shift - precision
        if np.ldexp(1.0, power) < tiny:
            raise ValueError(f"range {scale} of random values is too narrow to lower exactly")
        product = hlo.convert(b, hlo.binary(b, "multiply", k, hlo.splat_like(b, value, k)), work)
        term = hlo.binary(b, "multiply", product, hlo.splat_like(b, np.ldexp(1.0, power), product))
        total = term if total is None else hlo.binary(b, "add", total, term)
    return total


def _work(elem: str) -> tuple[str, type]:
    return ("f64", np.float64) if elem == "f64" else ("f32", np.float32)


@rule("lower", RandomUniformOp)
def random_uniform(p: FunctionLowering, op) -> Local:
    b, t = p.b, op.result_type
    elem = t.element_type
    work, wtype = _work(elem)
    lo, hi = op.attr("minval"), op.attr("maxval")
    bits = random_bits(b, linear_index(p, t), _seed(p, op), 0)
    try:
        scaled = scaled_uniform01(b, bits, rb.PRECISION_BITS[elem], wtype(hi) - wtype(lo), work)
    except ValueError as e:
        raise op_error(op, str(e)) from None
    values = hlo.convert(b, hlo.binary(b, "add", hlo.splat_like(b, wtype(lo), scaled), scaled), elem)
    out = ELEMENT_TYPES[elem]
    below_max = np.nextafter(np.array(hi, dtype=out), np.array(lo, dtype=out))
    return hlo.binary(b, "minimum", values, hlo.splat_like(b, below_max, values))


@rule("lower", RandomNormalOp)
def random_normal(p: FunctionLowering, op) -> Local:
    b, t = p.b, op.result_type
    work, wtype = _work(t.element_type)
    index = linear_index(p, t)
    seed = _seed(p, op)
    u1 = uniform01(b, random_bits(b, index, seed, 0), 24, work)
    u2 = uniform01(b, random_bits(b, index, seed, 1), 24, work)
    log = hlo.unary(b, "log_plus_one", hlo.unary(b, "negate", u1))
    radius = hlo.unary(b, "sqrt", hlo.binary(b, "multiply", hlo.splat_like(b, -2.0, log), log))
    angle = hlo.unary(b, "cosine", hlo.binary(b, "multiply", hlo.splat_like(b, wtype(2.0 * np.pi), u2), u2))
    scaled = hlo.binary(b, "multiply", hlo.binary(b, "multiply", hlo.splat_like(b, op.attr("stddev"), radius), radius), angle)
    values = hlo.binary(b, "add", hlo.splat_like(b, op.attr("mean"), scaled), scaled)
    return hlo.convert(b, values, t.element_type)
