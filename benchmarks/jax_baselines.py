"""The benchmark computations in plain JAX, for `jax.jit` with the same shardings as MeshIR.

Each function mirrors its MeshIR twin in cases.py op for op. `Shardings` turns MeshIR layout
rules into PartitionSpecs by dim name: arguments and results get `NamedSharding`s, and
intermediates `with_sharding_constraint` (`constrain`, passed to each function as `c`).
The mesh is MeshIR's: devices row-major over (x, y), `AxisType.Auto` axes (jax 0.10).
"""
from __future__ import annotations

import math

import numpy as np


def jax_mesh(mesh_axes: dict):
    """The first prod(sizes) CPU devices, row-major over the axes (MeshIR's device order),
    with `AxisType.Auto` axes (jax 0.10 meshes default to Explicit)."""
    import jax
    from jax.sharding import AxisType

    n = int(np.prod(list(mesh_axes.values())))
    devices = np.array(jax.devices()[:n], dtype=object).reshape(tuple(mesh_axes.values()))
    return jax.sharding.Mesh(devices, tuple(mesh_axes), axis_types=(AxisType.Auto,) * len(mesh_axes))


class Shardings:
    """PartitionSpecs of named dims under layout rules, on a jax Mesh."""

    def __init__(self, jax_mesh, rules: dict):
        self.mesh, self.rules = jax_mesh, rules

    def spec(self, *names):
        from jax.sharding import PartitionSpec

        return PartitionSpec(*(self.rules.get(n) for n in names))

    def named(self, *names):
        from jax.sharding import NamedSharding

        return NamedSharding(self.mesh, self.spec(*names))

    def constrain(self, value, *names):
        import jax

        return jax.lax.with_sharding_constraint(value, self.named(*names))


def jax_ffn(jnp, c, x, w1, b1, w2, b2, names):
    """relu(x w1 + b1) w2 + b2; `names` are x's dim names (last: d_model)."""
    lead = names[:-1]
    letters = "bs"[: len(lead)]
    h = jnp.maximum(jnp.einsum(f"{letters}m,mf->{letters}f", x, w1) + b1, 0.0)
    h = c(h, *lead, "d_ff")
    return c(jnp.einsum(f"{letters}f,fm->{letters}m", h, w2) + b2, *names)


def jax_attention(jnp, c, x, wq, wk, wv, wo):
    q = c(jnp.einsum("bsm,mhk->bshk", x, wq), "batch", "seq", "heads", "d_k")
    key = c(jnp.einsum("btm,mhk->bthk", x, wk), "batch", "mem", "heads", "d_k")
    value = c(jnp.einsum("btm,mhk->bthk", x, wv), "batch", "mem", "heads", "d_k")
    logits = c(jnp.einsum("bshk,bthk->bhst", q, key) * (1.0 / math.sqrt(q.shape[-1])), "batch", "heads", "seq", "mem")
    probs = jnp.exp(logits - logits.max(axis=-1, keepdims=True))
    probs = probs / probs.sum(axis=-1, keepdims=True)
    o = c(jnp.einsum("bhst,bthk->bshk", probs, value), "batch", "seq", "heads", "d_k")
    return c(jnp.einsum("bshk,hkm->bsm", o, wo), "batch", "seq", "d_model")


def jax_layer_norm(jnp, x, scale, bias, epsilon=1e-6):
    """As mi.layer_norm: (x - mean) * rsqrt(var + epsilon) * scale + bias over the last dim."""
    from jax import lax

    centered = x - x.mean(axis=-1, keepdims=True)
    variance = (centered * centered).mean(axis=-1, keepdims=True)
    return centered * lax.rsqrt(variance + epsilon) * scale + bias


def jax_layer(jnp, c, x, p):
    bsm = ("batch", "seq", "d_model")
    y = x + jax_attention(jnp, c, jax_layer_norm(jnp, x, p["ln1_scale"], p["ln1_bias"]),
                          p["wq"], p["wk"], p["wv"], p["wo"])
    y = c(y, *bsm)
    return c(y + jax_ffn(jnp, c, jax_layer_norm(jnp, y, p["ln2_scale"], p["ln2_bias"]),
                         p["w1"], p["b1"], p["w2"], p["b2"], bsm), *bsm)


def jax_loss_and_grads(forward, wrt):
    """A benchmark function (jnp, c, **inputs) -> (loss, gradient of each name in `wrt`):
    `jax.value_and_grad` of mean(forward(...)²), like `mi.value_and_grad` of a loss program."""
    def fn(jnp, c, **inputs):
        import jax

        def loss(params, rest):
            y = forward(jnp, c, **params, **rest)
            return jnp.mean(y * y)

        params = {n: inputs[n] for n in wrt}
        value, grads = jax.value_and_grad(loss)(params, {n: v for n, v in inputs.items() if n not in params})
        return (value, *(grads[n] for n in wrt))
    return fn
