"""The language model as a MeshIR program: a decoder-only Transformer over named dimensions.

    tokens [batch, length] --gather(embed)--> + pos_embed --> N x (pre-norm causal attention
    + pre-norm FFN) --> layer norm --> logits [batch, length, vocab] (tied: einsum with embed)
    --> softmax cross-entropy against targets [batch, length] (the next characters)

Attention is Mesh-TensorFlow's: keys and values are the layer input with `length` renamed to
`memory_length`, logits live on [batch, heads, length, memory_length], and the causal mask
comes from two iotas (a query at position i sees memory positions j <= i; the others get a
-1e9 bias). Layouts are not written here: they are layout rules given at compile time
(`LAYOUTS`), so one program runs data-parallel, model-parallel, 2-D or on one device.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

import meshir as mi

MASK_VALUE = -1e9

#: --precision: the name -> the mixed-precision policy of the program (None: f32 throughout).
PRECISIONS = {"f32": None, "bf16": mi.Precision(master="float32", compute="bfloat16", reduce="float32")}


@dataclass(frozen=True)
class Config:
    """Everything that fixes the model, its data and its optimizer: a checkpoint stores it,
    and resuming checks it."""

    layers: int = 2
    d_model: int = 64
    heads: int = 8
    d_ff: int = 256
    length: int = 64
    batch: int = 16
    vocab: int = 104
    optimizer: str = "adam"
    lr: float = 3e-3
    warmup: int = 0       # steps of linear learning-rate warm-up from 0 (0: none)
    decay_steps: int = 0  # the step at which the rate has decayed linearly to DECAY_TO of it (0: constant)
    seed: int = 0
    dropout: float = 0.0    # residual dropout after attention and the feed-forward (a new mask every step)
    clip_norm: float = 0.0  # clip the gradients' global norm to this (0: no clipping)
    #: The size of each head's queries, keys and values when it is not d_model / heads (wo
    #: maps heads x d_k back to d_model); None: d_model / heads.
    key_size: int | None = None

    @property
    def d_k(self) -> int:
        return self.key_size if self.key_size is not None else self.d_model // self.heads

    def check(self) -> None:
        for field in ("layers", "d_model", "heads", "d_ff", "length", "batch", "vocab"):
            if getattr(self, field) < 1:
                raise ValueError(f"--{field.replace('_', '-')} must be at least 1, got {getattr(self, field)}")
        if self.key_size is not None and self.key_size < 1:
            raise ValueError(f"key_size must be at least 1, got {self.key_size}")
        if self.key_size is None and self.d_model % self.heads:
            raise ValueError(f"--d-model {self.d_model} is not divisible by --heads {self.heads} "
                             f"(d_k = d_model / heads)")
        for field in ("warmup", "decay_steps"):
            if getattr(self, field) < 0:
                raise ValueError(f"--{field.replace('_', '-')} must not be negative, got {getattr(self, field)}")
        if self.decay_steps and self.decay_steps <= self.warmup:
            raise ValueError(f"--decay-steps {self.decay_steps} must be after the --warmup {self.warmup} steps")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"--dropout must be in [0, 1), got {self.dropout}")
        if self.clip_norm < 0:
            raise ValueError(f"--clip-norm must not be negative (0: none), got {self.clip_norm}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer '{self.optimizer}' (expected one of {', '.join(OPTIMIZERS)})")

    def to_dict(self) -> dict:
        """The fields; `key_size`, `dropout` and `clip_norm` only when set (configs without
        them read as before)."""
        out = dataclasses.asdict(self)
        for field, unset in (("key_size", None), ("dropout", 0.0), ("clip_norm", 0.0)):
            if out[field] == unset:
                del out[field]
        return out


# ------------------------------------------------------------------------------------------
# Layouts: (mesh, Mesh-TensorFlow layout rules) by name

LAYOUTS = {
    "2d": ({"x": 4, "y": 2}, {"batch": "x", "heads": "y", "d_ff": "y", "vocab": "y"}),
    "data-parallel": ({"x": 4, "y": 2}, {"batch": ("x", "y")}),
    "model-parallel": ({"x": 4, "y": 2}, {"heads": ("x", "y"), "d_ff": ("x", "y"), "vocab": ("x", "y")}),
    "single": ({"x": 1}, {}),
}

LAYOUT_HELP = {
    "2d": "batch:x; heads, d_ff, vocab:y on a 4x2 mesh (Mesh-TensorFlow's layout)",
    "data-parallel": "batch:(x,y): batch over all 8 devices",
    "model-parallel": "heads, d_ff, vocab:(x,y): over all 8 devices",
    "single": "one device (mesh {x: 1})",
}


def layout(name: str) -> tuple[mi.Mesh, dict]:
    axes, rules = LAYOUTS[name]
    return mi.Mesh(dict(axes)), dict(rules)


def format_mesh(mesh: mi.Mesh) -> str:
    """'4x2 mesh (x=4, y=2) of 8 devices', 'mesh (x=1) of 1 device'."""
    shape = mesh.shape
    axes = ", ".join(f"{a}={n}" for a, n in shape.items())
    if len(shape) == 1:
        return f"mesh ({axes}) of {mesh.size} device{'s' if mesh.size > 1 else ''}"
    return f"{'x'.join(str(n) for n in shape.values())} mesh ({axes}) of {mesh.size} devices"


def format_rules(rules: dict) -> str:
    def axes(a):
        return a if isinstance(a, str) else a[0] if len(a) == 1 else "(" + ",".join(a) + ")"

    return ", ".join(f"{d}:{axes(a)}" for d, a in rules.items()) or "none (replicated)"


# ------------------------------------------------------------------------------------------
# Optimizers

OPTIMIZERS = ("adam", "adafactor", "sgd")
DECAY_TO = 0.1  # the final fraction of the learning rate under `decay_steps`


def schedule(cfg: Config):
    """The learning rate: `lr`, or a mi.schedules schedule — a linear warm-up from 0 over
    `warmup` steps, then a linear decay to DECAY_TO of `lr` at step `decay_steps` — evaluated
    in the step at the count of updates already applied (optax's convention: the first step
    of a warm-up has rate 0)."""
    S, lr = mi.schedules, cfg.lr
    decay = cfg.decay_steps - cfg.warmup
    if cfg.warmup and cfg.decay_steps:
        return S.join([S.linear_warmup(lr, cfg.warmup), S.linear(lr, lr * DECAY_TO, decay)], [cfg.warmup])
    if cfg.warmup:
        return S.linear_warmup(lr, cfg.warmup)
    if cfg.decay_steps:
        return S.linear(lr, lr * DECAY_TO, cfg.decay_steps)
    return lr


def optimizer(cfg: Config):
    lr = schedule(cfg)
    if cfg.optimizer == "adam":
        return mi.Adam(lr)
    if cfg.optimizer == "adafactor":  # factored second moments for matrices of >= 64 rows
        return mi.Adafactor(learning_rate=lr, min_dim_size_to_factor=64)
    return mi.SGD(lr, momentum=0.9)


# ------------------------------------------------------------------------------------------
# Parameters


class Dims:
    """The named dimensions of a config."""

    def __init__(self, cfg: Config):
        D = mi.Dim
        self.batch, self.length = D("batch", cfg.batch), D("length", cfg.length)
        self.memory_length = D("memory_length", cfg.length)
        self.d_model, self.heads, self.d_k = D("d_model", cfg.d_model), D("heads", cfg.heads), D("d_k", cfg.d_k)
        self.d_ff, self.vocab = D("d_ff", cfg.d_ff), D("vocab", cfg.vocab)


def _layer_dims(d: "Dims") -> dict[str, list[mi.Dim]]:
    """One layer's parameters (without the `l<i>_` prefix)."""
    m, h, k, f = d.d_model, d.heads, d.d_k, d.d_ff
    return {"ln1_scale": [m], "ln1_bias": [m], "wq": [m, h, k], "wk": [m, h, k], "wv": [m, h, k], "wo": [h, k, m],
            "ln2_scale": [m], "ln2_bias": [m], "w1": [m, f], "b1": [f], "w2": [f, m], "b2": [m]}


#: The name of the leading dim of stacked layer parameters (`stacked=True`).
LAYERS = "layers"


def param_dims(cfg: Config, stacked: bool = False) -> dict[str, list[mi.Dim]]:
    """Every parameter's dims, in argument order. The output projection is the token
    embedding (tied), so there is no separate softmax weight. `stacked`: one parameter per
    kind, `layers_<kind>`, with a leading `layers` dim (the layers run as one mi.scan)."""
    d = Dims(cfg)
    out = {"embed": [d.vocab, d.d_model], "pos_embed": [d.length, d.d_model]}
    if stacked:
        out.update({f"{LAYERS}_{n}": [mi.Dim(LAYERS, cfg.layers)] + dims for n, dims in _layer_dims(d).items()})
    else:
        for i in range(cfg.layers):
            out.update({f"l{i}_{n}": dims for n, dims in _layer_dims(d).items()})
    out.update({"lnf_scale": [d.d_model], "lnf_bias": [d.d_model]})
    return out


def stack_params(cfg: Config, params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-layer parameters (`l<i>_<kind>`) as stacked ones (`layers_<kind>`)."""
    out = {n: v for n, v in params.items() if not (n.startswith("l") and n[1].isdigit())}
    for kind in _layer_dims(Dims(cfg)):
        out[f"{LAYERS}_{kind}"] = np.stack([params[f"l{i}_{kind}"] for i in range(cfg.layers)])
    return {n: out[n] for n in param_dims(cfg, stacked=True)}


def init_params(cfg: Config) -> dict[str, np.ndarray]:
    """Initial parameters: a pure function of the config (seeded NumPy). Weights are normal
    with std 1/sqrt(fan_in) (embeddings 0.02, output projections scaled down by
    sqrt(2 * layers) as in GPT-2), layer-norm scales 1, biases 0."""
    rng = np.random.default_rng([cfg.seed, 1])
    params = {}
    for name, dims in param_dims(cfg).items():
        shape = tuple(x.size for x in dims)
        base = name.split("_", 1)[1] if name.startswith("l") and name[1].isdigit() else name
        if base.endswith("scale"):
            value = np.ones(shape)
        elif base.endswith("bias") or base in ("b1", "b2"):
            value = np.zeros(shape)
        elif base in ("embed", "pos_embed"):
            value = rng.standard_normal(shape) * 0.02
        else:
            fan_in = {"w2": cfg.d_ff, "wo": cfg.heads * cfg.d_k}.get(base, cfg.d_model)
            value = rng.standard_normal(shape) / math.sqrt(fan_in)
            if base in ("wo", "w2"):
                value /= math.sqrt(2 * cfg.layers)
        params[name] = value.astype(np.float32)
    return params


# ------------------------------------------------------------------------------------------
# The program


def _pinned(seq_parallel: str | None):
    """Under sequence parallelism over an axis (see logits_of), the constraint inside a layer:
    `pin(h, seq_dim)` keeps h's sequence dim whole, and `pin(h, seq_dim, model_dim)` also
    keeps its model dim (heads, d_ff) split over that axis. The layout rules would say as much,
    but a constraint outranks rules: without these, the `length` split of the carry reaches
    the matmuls and propagation gathers the weights instead of the activations. Without
    sequence parallelism, pin is the identity."""

    def pin(h, seq: str, model: str | None = None):
        if seq_parallel is None:
            return h
        return mi.shard(h, {seq: (), **({model: seq_parallel} if model else {})})

    return pin


def _scattered(out, seq_parallel: str | None):
    """A layer's output projection under sequence parallelism: its sum over the model axis
    reduce-scattered onto `length` (a reshard: the whole sequence of the matmul does not
    flow into the residual stream, nor the split back into the matmul)."""
    return out if seq_parallel is None else mi.reshard(out, {"length": seq_parallel})


def attention(x, p, i, d: Dims, seq_parallel: str | None = None):
    """Causal multi-head self-attention, x: [batch, length, d_model]."""
    b, l, mem, m, h, k = d.batch, d.length, d.memory_length, d.d_model, d.heads, d.d_k
    pin = _pinned(seq_parallel)
    q = pin(mi.einsum(x, p[f"l{i}_wq"], output=[b, l, h, k]), "length", "heads")
    xm = mi.rename(x, "length", "memory_length")
    key = pin(mi.einsum(xm, p[f"l{i}_wk"], output=[b, mem, h, k]), "memory_length", "heads")
    value = pin(mi.einsum(xm, p[f"l{i}_wv"], output=[b, mem, h, k]), "memory_length", "heads")
    logits = mi.einsum(q, key, output=[b, h, l, mem]) * (1.0 / math.sqrt(k.size))
    query_pos = mi.iota([l, mem], "length")
    memory_pos = mi.iota([l, mem], "memory_length")
    bias = mi.select(mi.less_equal(memory_pos, query_pos), mi.constant(0.0, [l, mem]), MASK_VALUE)
    weights = mi.softmax(logits + bias, mem)
    o = pin(mi.einsum(weights, value, output=[b, l, h, k]), "length", "heads")
    return _scattered(mi.einsum(o, p[f"l{i}_wo"], output=[b, l, m]), seq_parallel)


def ffn(x, p, i, d: Dims, seq_parallel: str | None = None):
    pin = _pinned(seq_parallel)
    hidden = pin(mi.einsum(x, p[f"l{i}_w1"], output=[d.batch, d.length, d.d_ff]), "length", "d_ff")
    hidden = mi.gelu(hidden + p[f"l{i}_b1"])
    return _scattered(mi.einsum(hidden, p[f"l{i}_w2"], output=[d.batch, d.length, d.d_model]), seq_parallel) \
        + p[f"l{i}_b2"]


def layer(x, p, i, d: Dims, seq_parallel: str | None = None, drop=None):
    """One pre-norm Transformer layer; `p` holds (at least) layer i's parameters.
    `seq_parallel`: see logits_of (x arrives with `length` split over that axis; each layer
    norm's output is gathered whole before the matmuls). `drop`: (rate, seed) of residual
    dropout on the attention and feed-forward outputs, `seed` this layer's (a 0-d i32 Tensor)."""

    def norm(h, n):  # on the split sequence; its output gathered whole (a reshard: the carry stays split)
        out = mi.layer_norm(h, "d_model", p[f"l{i}_{n}_scale"], p[f"l{i}_{n}_bias"])
        return out if seq_parallel is None else mi.reshard(out, {"length": ()})

    def dropped(h, k):
        return h if drop is None else mi.dropout(h, drop[0], mi.fold_in(drop[1], k))

    x = x + dropped(attention(norm(x, "ln1"), p, i, d, seq_parallel), 0)
    return x + dropped(ffn(norm(x, "ln2"), p, i, d, seq_parallel), 1)


def logits_of(tokens, p, cfg: Config, d: Dims, remat: bool = False, stacked: bool = False,
              seq_parallel: str | None = None, seed=None):
    """[batch, length, vocab] logits of the next character at every position. `remat`: each
    layer under mi.remat (recomputed in the backward pass instead of saved). `stacked`: the
    layers as one mi.scan over the stacked parameters' `layers` dim (the program, and its
    compile time, do not grow with depth).

    `seq_parallel`: the mesh axis of the model dims (heads, d_ff) that also splits `length`
    of the activations between layers (the scan's carry, each unrolled layer's input and
    output): Megatron's sequence parallelism. Layer norms and residual adds run on the split
    sequence; each layer norm's output is all-gathered before the matmuls and each sum after
    wo and w2 is reduce-scattered back into the split, instead of all-reduced; the
    activations saved between layers are split over that axis too. Expressed with
    constraints (mi.shard): `length` on the carry, and inside a layer the sequence dim whole
    with heads or d_ff on the axis (see _pinned); each layer norm's output is gathered and
    each output projection reduce-scattered with mi.reshard, whose layout does not flow
    back (the carry, and the activations a scan saves for its backward pass, stay split).

    `seed`: a 0-d i32 Tensor turns on residual dropout at rate `cfg.dropout`, layer i's masks
    drawn from fold_in(seed, i) (in a scan, i from an iota over `layers`)."""
    x = mi.gather(p["embed"], tokens, "vocab") + p["pos_embed"]

    def drop(i):
        return None if seed is None else (cfg.dropout, mi.fold_in(seed, i))

    block = mi.remat(layer) if remat else layer

    def between_layers(h):
        return h if seq_parallel is None else mi.shard(h, {"length": seq_parallel})

    x = between_layers(x)
    if stacked:
        kinds = list(_layer_dims(d))
        stacked_params = tuple(p[f"{LAYERS}_{kind}"] for kind in kinds)
        if seed is not None:  # each layer's index, for its own dropout masks
            stacked_params += (mi.iota([mi.Dim(LAYERS, cfg.layers)], LAYERS),)

        def one_layer(h, slices):
            params = {f"l0_{kind}": v for kind, v in zip(kinds, slices)}
            return between_layers(block(h, params, 0, d, seq_parallel, drop(slices[-1]))), None

        x = mi.scan(one_layer, x, stacked_params, dim=LAYERS)[0]
    for i in range(0 if stacked else cfg.layers):
        x = between_layers(block(x, {k: v for k, v in p.items() if k.startswith(f"l{i}_")}, i, d, seq_parallel,
                                 drop(i)))
    x = mi.layer_norm(x, "d_model", p["lnf_scale"], p["lnf_bias"])
    return mi.einsum(x, p["embed"], output=[d.batch, d.length, d.vocab])


def build(cfg: Config, mesh: mi.Mesh, with_logits: bool = False, remat: bool = False,
          stacked: bool = False, seq_parallel: str | None = None, precision: str = "f32") -> mi.Program:
    """The loss program: arguments `tokens`, `targets` (i32 [batch, length]) then every
    parameter; result `loss` (mean cross-entropy in nats per character), and `logits` when
    `with_logits` (the evaluation and generation program). `remat`, `stacked`,
    `seq_parallel`: see logits_of. `precision`: a PRECISIONS name; "bf16" builds the program
    with mi.Precision() as its policy (f32 parameters, bf16 compute, f32 gradient sums), which
    its training step and every compilation of it follow. With `cfg.dropout` the training
    program (not the one `with_logits`, which evaluates) takes a last argument `seed` (0-d
    i32): mi.train_step makes it the run's base seed and draws new masks every step."""
    d = Dims(cfg)
    with mi.Program("transformer_lm", mesh, precision=PRECISIONS[precision]) as prog:
        tokens = prog.argument("tokens", [d.batch, d.length], "i32")
        targets = prog.argument("targets", [d.batch, d.length], "i32")
        p = {name: prog.argument(name, dims) for name, dims in param_dims(cfg, stacked).items()}
        seed = prog.argument("seed", [], "i32") if cfg.dropout and not with_logits else None
        logits = logits_of(tokens, p, cfg, d, remat, stacked, seq_parallel, seed)
        prog.result(mi.mean(mi.cross_entropy(logits, targets, "vocab")), name="loss")
        if with_logits:
            prog.result(logits, name="logits")
    return prog


def train_step(cfg: Config, mesh: mi.Mesh, remat: bool = False, stacked: bool = False,
               seq_parallel: str | None = None, precision: str = "f32", **options) -> mi.TrainStep:
    """Forward, backward and optimizer update as one program (mi.train_step; `options` go
    to it, e.g. microbatches, metrics). `precision`: a PRECISIONS name (see build). With
    `cfg.clip_norm` the gradients are clipped to that global norm."""
    if cfg.clip_norm:
        options = {"clip_norm": cfg.clip_norm, **options}
    return mi.train_step(build(cfg, mesh, remat=remat, stacked=stacked, seq_parallel=seq_parallel, precision=precision),
                         optimizer(cfg), params=list(param_dims(cfg, stacked)), **options)
