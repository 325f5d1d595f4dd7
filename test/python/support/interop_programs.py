"""The programs the interop tests export, call from jax and differentiate: a two-layer MLP
with a mean-squared loss (float weights, a batch of inputs, integer class ids)."""
import numpy as np

import meshir as mi

B, M, F, C = mi.Dim("batch", 8), mi.Dim("d_model", 4), mi.Dim("d_ff", 6), mi.Dim("classes", 4)
LAYOUTS = {"2d": ({"x": 4, "y": 2}, {"batch": "x", "d_ff": "y"}), "data": ({"x": 8}, {"batch": "x"})}


def mlp(mesh_axes) -> mi.Program:
    """y = tanh(x @ w1) @ w2, the forward pass alone (one non-scalar result)."""
    with mi.Program("mlp", mi.Mesh(mesh_axes)) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, F]), prog.argument("w2", [F, M])
        prog.result(mi.einsum(mi.tanh(mi.einsum(x, w1, output=[B, F])), w2, output=[B, M]), name="y")
    return prog


def mlp_numpy(x, w1, w2):
    with np.errstate(invalid="ignore"):  # NaN and inf inputs
        return np.tanh(x @ w1) @ w2


def loss(mesh_axes, with_logits: bool = True) -> mi.Program:
    """The MLP's logits against integer labels: (mean squared error to one_hot(labels), the
    logits unless not `with_logits`)."""
    with mi.Program("loss", mi.Mesh(mesh_axes)) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, F]), prog.argument("w2", [F, C])
        labels = prog.argument("labels", [B], dtype="i32")
        logits = mi.einsum(mi.tanh(mi.einsum(x, w1, output=[B, F])), w2, output=[B, C])
        err = logits - mi.one_hot(labels, C)
        prog.result(mi.mean(err * err), name="loss")
        if with_logits:
            prog.result(logits, name="logits")
    return prog


def loss_jax(x, w1, w2, labels):
    import jax
    import jax.numpy as jnp

    logits = jnp.tanh(x @ w1) @ w2
    err = logits - jax.nn.one_hot(labels, 4)
    return jnp.mean(err * err), logits


def inputs(seed: int = 0, c: int = 4):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((8, 4)).astype(np.float32),
            "w1": (rng.standard_normal((4, 6)) * 0.5).astype(np.float32),
            "w2": (rng.standard_normal((6, c)) * 0.5).astype(np.float32)}
