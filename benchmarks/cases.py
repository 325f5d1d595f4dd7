"""Benchmark programs, each written twice: as a MeshIR program (here) and as plain JAX
(jax_baselines.py).

A *model* is one small set of functions (MeshIR builder, JAX function from jax_baselines.py,
inputs, analytic minimum bytes); a *case* is a model under one layout on the 8-device mesh. Adding a model
means writing one more `Model(...)` entry in MODELS. Forward+backward twins come from
`_fwdbwd(model, backward_allreduces)`: MeshIR `mi.value_and_grad` of the forward program with
the scalar loss mean(y²), JAX `jax.value_and_grad` of the same loss, results the loss then
every weight's gradient, and an analytic minimum that adds the backward pass's activation-
gradient all-reduces (over the model axes) and the weight-gradient all-reduces (over the
batch axes) to the forward pass's.

Layouts are Mesh-TensorFlow layout rules. The JAX version gets the same layouts as
`NamedSharding`s of its arguments and results and `with_sharding_constraint`s on its
intermediates, derived from the same rules by dim name (`jax_baselines.Shardings`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from jax_baselines import jax_attention, jax_ffn, jax_layer, jax_loss_and_grads

#: The mesh every case runs on (8 devices, row-major over (x, y) like MeshIR's device order).
MESH_AXES = {"x": 4, "y": 2}

#: Layout rules by layout name: data parallel, model parallel, 2-D.
LAYOUTS = {
    "dp": {"batch": ("x", "y")},
    "mp": {"heads": ("x", "y"), "d_ff": ("x", "y")},
    "2d": {"batch": "x", "heads": "y", "d_ff": "y"},
}

#: Sizes: `quick` for a smoke run in seconds, `full` for numbers worth reading.
SIZES = {
    "quick": dict(batch=16, seq=8, d_model=32, heads=8, d_k=8, d_ff=64, mlp_batch=64),
    "full": dict(batch=16, seq=128, d_model=256, heads=8, d_k=32, d_ff=1024, mlp_batch=2048),
}

F32 = 4  # bytes per element (every case runs in f32)


# ---------------------------------------------------------------------------------------
# MeshIR programs


def _dims(mi, s):
    D = mi.Dim
    return dict(batch=D("batch", s["batch"]), seq=D("seq", s["seq"]), mem=D("mem", s["seq"]),
                d_model=D("d_model", s["d_model"]), heads=D("heads", s["heads"]), d_k=D("d_k", s["d_k"]),
                d_ff=D("d_ff", s["d_ff"]))


def mtf_ffn(mi, x, w1, b1, w2, b2, d):
    """relu(x w1 + b1) w2 + b2 over the names of x (with d_model), through d_ff."""
    keep = [n for n in x.names if n != "d_model"]
    h = mi.relu(mi.einsum(x, w1, output=keep + ["d_ff"]) + b1)
    return mi.einsum(h, w2, output=keep + ["d_model"]) + b2


def mtf_attention(mi, x, wq, wk, wv, wo, d):
    """Multi-head self-attention (no mask): x [batch, seq, d_model] -> [batch, seq, d_model]."""
    b, s, mem, m, h, k = d["batch"], d["seq"], d["mem"], d["d_model"], d["heads"], d["d_k"]
    q = mi.einsum(x, wq, output=[b, s, h, k])
    xm = mi.rename(x, "seq", "mem")
    key = mi.einsum(xm, wk, output=[b, mem, h, k])
    value = mi.einsum(xm, wv, output=[b, mem, h, k])
    logits = mi.einsum(q, key, output=[b, h, s, mem]) * (1.0 / math.sqrt(k.size))
    probs = mi.softmax(logits, "mem")
    o = mi.einsum(probs, value, output=[b, s, h, k])
    return mi.einsum(o, wo, output=[b, s, m])


def mtf_layer(mi, prog, x, d, prefix=""):
    """A pre-layer-norm Transformer layer: attention and FFN blocks with residuals."""
    m, h, k, f = d["d_model"], d["heads"], d["d_k"], d["d_ff"]
    a = {n: prog.argument(prefix + n, dims) for n, dims in (
        ("ln1_scale", [m]), ("ln1_bias", [m]), ("wq", [m, h, k]), ("wk", [m, h, k]), ("wv", [m, h, k]),
        ("wo", [h, k, m]), ("ln2_scale", [m]), ("ln2_bias", [m]), ("w1", [m, f]), ("b1", [f]), ("w2", [f, m]),
        ("b2", [m]))}
    y = x + mtf_attention(mi, mi.layer_norm(x, "d_model", a["ln1_scale"], a["ln1_bias"]),
                          a["wq"], a["wk"], a["wv"], a["wo"], d)
    return y + mtf_ffn(mi, mi.layer_norm(y, "d_model", a["ln2_scale"], a["ln2_bias"]),
                       a["w1"], a["b1"], a["w2"], a["b2"], d)


def _result(mi, prog, y, loss: bool):
    """The program's result: `y`, or (for a loss program) mean(y²) named `loss`."""
    if loss:
        prog.result(mi.mean(y * y), name="loss")
    else:
        prog.result(y, name="y")


def build_mlp(mi, mesh, s, loss: bool = False):
    d = _dims(mi, s)
    b, m, f = mi.Dim("batch", s["mlp_batch"]), d["d_model"], d["d_ff"]
    with mi.Program("mlp", mesh) as prog:
        x = prog.argument("x", [b, m])
        w1, b1 = prog.argument("w1", [m, f]), prog.argument("b1", [f])
        w2, b2 = prog.argument("w2", [f, m]), prog.argument("b2", [m])
        _result(mi, prog, mtf_ffn(mi, x, w1, b1, w2, b2, d), loss)
    return prog


def build_attention(mi, mesh, s):
    d = _dims(mi, s)
    b, sq, m, h, k = d["batch"], d["seq"], d["d_model"], d["heads"], d["d_k"]
    with mi.Program("attention", mesh) as prog:
        x = prog.argument("x", [b, sq, m])
        ws = [prog.argument(n, [m, h, k]) for n in ("wq", "wk", "wv")]
        wo = prog.argument("wo", [h, k, m])
        prog.result(mtf_attention(mi, x, *ws, wo, d), name="y")
    return prog


def build_transformer(mi, mesh, s, layers: int = 1, loss: bool = False):
    """`layers` Transformer layers stacked in one program (each with its own weights);
    `loss=True` makes mean(y²) its one (scalar) result."""
    d = _dims(mi, s)
    with mi.Program("transformer", mesh) as prog:
        x = prog.argument("x", [d["batch"], d["seq"], d["d_model"]])
        for i in range(layers):
            x = mtf_layer(mi, prog, x, d, prefix=f"l{i}_" if layers > 1 else "")
        _result(mi, prog, x, loss)
    return prog


# ---------------------------------------------------------------------------------------
# Models: builder, JAX function, argument dims, inputs, analytic minimum


@dataclass(frozen=True)
class Model:
    name: str
    build: Callable                  # (mi, mesh, sizes) -> Program
    jax_fn: Callable                 # (jnp, constrain, **inputs) -> array
    arg_dims: Callable               # sizes -> {arg name: dim names}
    result_dims: tuple                # dim names of the result, or a tuple of them per result
    min_bytes: Callable              # (layout rules, sizes, mesh axes) -> (bytes, why)
    dim_names: tuple[str, ...]       # the dims the model uses (rules for other names are dropped)
    batch_size: str = "batch"        # the SIZES key of the batch dim's size


def _mlp_args(s):
    return {"x": ("batch", "d_model"), "w1": ("d_model", "d_ff"), "b1": ("d_ff",), "w2": ("d_ff", "d_model"),
            "b2": ("d_model",)}


def _attention_args(s):
    return {"x": ("batch", "seq", "d_model"), "wq": ("d_model", "heads", "d_k"), "wk": ("d_model", "heads", "d_k"),
            "wv": ("d_model", "heads", "d_k"), "wo": ("heads", "d_k", "d_model")}


def _layer_args(s):
    m = ("d_model",)
    return {"x": ("batch", "seq", "d_model"), "ln1_scale": m, "ln1_bias": m,
            "wq": ("d_model", "heads", "d_k"), "wk": ("d_model", "heads", "d_k"), "wv": ("d_model", "heads", "d_k"),
            "wo": ("heads", "d_k", "d_model"), "ln2_scale": m, "ln2_bias": m, "w1": ("d_model", "d_ff"),
            "b1": ("d_ff",), "w2": ("d_ff", "d_model"), "b2": m}


def _axes_size(rules, name, mesh):
    axes = rules.get(name) or ()
    axes = (axes,) if isinstance(axes, str) else axes
    return math.prod(mesh[a] for a in axes), tuple(axes)


def _activation_allreduces(count, tokens, model_dim, rules, s, mesh, what):
    """`count` all-reduces of the [tokens..., d_model] activation over the axes that split
    `model_dim` (the contracted d_ff or heads): 2 (n-1)/n of the activation's shard each.
    `tokens` are (dim name, size key) pairs; batch may be split (data parallel rows)."""
    n, axes = _axes_size(rules, model_dim, mesh)
    if n == 1:
        return 0, "nothing: no contracted dim is split, each device computes its own rows"
    rows, _ = _axes_size(rules, "batch", mesh)
    shard = math.prod(s[key] for _, key in tokens) * s["d_model"] // rows * F32
    total = count * 2 * (n - 1) * shard // n
    shape = ", ".join(f"{name}/{rows}" if name == "batch" and rows > 1 else name for name, _ in tokens)
    return total, (f"{count} × all-reduce of the [{shape}, d_model] activation shard ({shard:,} B) over "
                   f"({','.join(axes)}), n={n}: {count} × 2(n-1)/n × {shard:,} B ({what})")


def _mlp_min(rules, s, mesh):
    return _activation_allreduces(1, [("batch", "mlp_batch")], "d_ff", rules, s, mesh, "after the second matmul")


def _attention_min(rules, s, mesh):
    return _activation_allreduces(1, [("batch", "batch"), ("seq", "seq")], "heads", rules, s, mesh,
                                  "after the output projection")


def _layer_min(rules, s, mesh):
    n_h, _ = _axes_size(rules, "heads", mesh)
    n_f, _ = _axes_size(rules, "d_ff", mesh)
    if n_h != n_f:  # not one of ours; keep it simple and explicit
        raise ValueError("the Transformer's analytic minimum assumes heads and d_ff split alike")
    return _activation_allreduces(2, [("batch", "batch"), ("seq", "seq")], "heads", rules, s, mesh,
                                  "one after attention, one after the FFN")


def _weight_grad_allreduces(arg_dims, rules, s, mesh):
    """The all-reduce over the batch axes of every weight gradient (one shard of the weight
    each: gradients are laid out like their weights) and of the scalar loss."""
    n, axes = _axes_size(rules, "batch", mesh)
    if n == 1:
        return 0, "no gradient all-reduce: the batch is not split"
    shard = F32  # the loss
    for name, dims in arg_dims(s).items():
        if name != "x":
            shard += math.prod(s[d] for d in dims) * F32 // math.prod(_axes_size(rules, d, mesh)[0] for d in dims)
    return (2 * (n - 1) * shard // n,
            f"all-reduce of the weight-gradient shards and the loss ({shard:,} B) over ({','.join(axes)}), n={n}: "
            f"2(n-1)/n × {shard:,} B")


def _fwdbwd(model: Model, backward_allreduces: Callable) -> Model:
    """`model`'s forward+backward twin: loss mean(y²) of its result and the gradient of
    every argument but `x` (MeshIR: `mi.value_and_grad`; JAX: `jax.value_and_grad`).
    `backward_allreduces(rules, sizes, mesh)` gives the backward pass's activation-gradient
    all-reduces (bytes, why); the minimum adds them and the weight-gradient all-reduces to
    the forward pass's."""
    wrt = [n for n in model.arg_dims(None) if n != "x"]

    def build(mi, mesh, s):
        return mi.value_and_grad(model.build(mi, mesh, s, loss=True), wrt=wrt)

    def min_bytes(rules, s, mesh):
        parts = [model.min_bytes(rules, s, mesh), backward_allreduces(rules, s, mesh),
                 _weight_grad_allreduces(model.arg_dims, rules, s, mesh)]
        why = "; ".join(f"{label}: {text}" for label, (_, text) in zip(("forward", "backward", "gradients"), parts))
        return sum(b for b, _ in parts), why

    arg_dims = model.arg_dims(None)
    return Model(f"{model.name}_fwdbwd", build, jax_loss_and_grads(model.jax_fn, wrt), model.arg_dims,
                 ((),) + tuple(arg_dims[n] for n in wrt), min_bytes, model.dim_names, model.batch_size)


def _layer_backward(rules, s, mesh):
    return _activation_allreduces(2, [("batch", "batch"), ("seq", "seq")], "heads", rules, s, mesh,
                                  "the gradients of the two layer norms' outputs, from the FFN and attention inputs")


def _no_backward(rules, s, mesh):
    return 0, "nothing: the input's gradient is not asked for, every other gradient is local"


_MLP = Model("mlp", build_mlp,
             lambda jnp, c, x, w1, b1, w2, b2: jax_ffn(jnp, c, x, w1, b1, w2, b2, ("batch", "d_model")),
             _mlp_args, ("batch", "d_model"), _mlp_min, ("batch", "d_model", "d_ff"), "mlp_batch")
_LAYER = Model("transformer", build_transformer, lambda jnp, c, x, **p: jax_layer(jnp, c, x, p),
               _layer_args, ("batch", "seq", "d_model"), _layer_min,
               ("batch", "seq", "mem", "d_model", "heads", "d_k", "d_ff"))

MODELS = {
    "mlp": _MLP,
    "attention": Model("attention", build_attention,
                       lambda jnp, c, x, wq, wk, wv, wo: jax_attention(jnp, c, x, wq, wk, wv, wo),
                       _attention_args, ("batch", "seq", "d_model"), _attention_min,
                       ("batch", "seq", "mem", "d_model", "heads", "d_k")),
    "transformer": _LAYER,
    "mlp_fwdbwd": _fwdbwd(_MLP, _no_backward),
    "transformer_fwdbwd": _fwdbwd(_LAYER, _layer_backward),
}


@dataclass(frozen=True)
class Case:
    model: Model
    layout: str

    @property
    def name(self) -> str:
        return f"{self.model.name}/{self.layout}"

    @property
    def rules(self) -> dict:
        return {k: v for k, v in LAYOUTS[self.layout].items() if k in self.model.dim_names}

    def inputs(self, sizes: dict, seed: int = 0) -> dict:
        """f32 inputs, weights scaled by 1/sqrt(fan-in), layer-norm scales around 1."""
        rng = np.random.default_rng(seed)
        s = dict(sizes, batch=sizes[self.model.batch_size])
        out = {}
        for name, dims in self.model.arg_dims(s).items():
            shape = tuple(s[d] if d != "mem" else s["seq"] for d in dims)
            v = rng.standard_normal(shape, dtype=np.float32)
            if name.endswith("_scale"):
                v = 1.0 + 0.1 * v
            elif name.startswith("w"):
                fan_in = shape[0] * (shape[1] if name == "wo" else 1)
                v = v / np.float32(math.sqrt(fan_in))
            elif name != "x":
                v = 0.1 * v
            out[name] = v.astype(np.float32)
        return out

    def min_bytes(self, sizes: dict) -> tuple[int, str]:
        return self.model.min_bytes(self.rules, sizes, MESH_AXES)


def all_cases() -> list[Case]:
    return [Case(m, lay) for m in MODELS.values() for lay in LAYOUTS]


def select_cases(spec: str | None) -> list[Case]:
    """Cases by comma-separated patterns: 'mlp', 'mlp/dp', '*/2d', 'all' (default)."""
    import fnmatch

    cases = all_cases()
    if not spec or spec == "all":
        return cases
    chosen = []
    for pattern in spec.split(","):
        pattern = pattern.strip()
        if "/" not in pattern:
            pattern += "/*"
        hits = [c for c in cases if fnmatch.fnmatch(c.name, pattern) and c not in chosen]
        if not hits and not any(fnmatch.fnmatch(c.name, pattern) for c in cases):
            known = ", ".join(c.name for c in cases)
            raise SystemExit(f"--cases: '{pattern}' matches no case (cases: {known})")
        chosen += hits
    return chosen
