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
from meshir import layers as L

MASK_VALUE = L.MASK_VALUE

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
    #: A mixture of experts in every other layer (moe_layers) with this many experts (0: a
    #: dense model), each token routed to `top_k` of them; each expert takes at most
    #: capacity_factor * top_k * length / experts tokens of a sequence in training, and
    #: eval_capacity_factor's in evaluation (GShard's 1.25 and 2.0); the load-balancing loss
    #: weighs `aux_loss_weight` in the training loss.
    experts: int = 0
    top_k: int = 2
    capacity_factor: float = 1.25
    eval_capacity_factor: float = 2.0
    aux_loss_weight: float = 0.01
    #: GPipe's pipeline (meshir.layers.pipeline) over this many stages (0: none): each stage
    #: holds layers / stages consecutive layers, the batch is cut into
    #: `pipeline_microbatches`, and the mesh gets a `stage` axis (layout()).
    stages: int = 0
    pipeline_microbatches: int = 4

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
        if self.experts < 0:
            raise ValueError(f"--experts must not be negative (0: a dense model), got {self.experts}")
        if self.experts:
            if not 1 <= self.top_k <= self.experts:
                raise ValueError(f"--experts-per-token must be between 1 and --experts {self.experts}, got {self.top_k}")
            for field in ("capacity_factor", "eval_capacity_factor"):
                if not getattr(self, field) > 0:
                    raise ValueError(f"--{field.replace('_', '-')} must be > 0, got {getattr(self, field)}")
            if not self.aux_loss_weight >= 0:
                raise ValueError(f"--aux-loss-weight must not be negative, got {self.aux_loss_weight}")
        if self.stages < 0:
            raise ValueError(f"--stages must not be negative (0: no pipeline), got {self.stages}")
        if self.stages:
            if self.stages not in STAGES:
                raise ValueError(f"--stages must be one of {', '.join(map(str, STAGES))} (a mesh axis of the 8 "
                                 f"devices), got {self.stages}")
            if self.layers % self.stages:
                raise ValueError(f"--stages {self.stages} does not divide the {self.layers} --layers")
            if self.pipeline_microbatches < 1 or self.batch % self.pipeline_microbatches:
                raise ValueError(f"--pipeline-microbatches {self.pipeline_microbatches} does not divide the "
                                 f"--batch {self.batch}")
            if self.experts or self.dropout:
                raise ValueError("--stages runs with neither --experts nor --dropout")

    def to_dict(self) -> dict:
        """The fields; `key_size`, `dropout` and `clip_norm` only when set, and the experts'
        fields only with experts (configs without them read as before)."""
        out = dataclasses.asdict(self)
        for field, unset in (("key_size", None), ("dropout", 0.0), ("clip_norm", 0.0)):
            if out[field] == unset:
                del out[field]
        if not self.experts:
            for field in MOE_FIELDS:
                del out[field]
        if not self.stages:
            for field in PIPELINE_FIELDS:
                del out[field]
        return out


#: The config's fields of the pipeline, and the stage counts the 8 devices' meshes have.
PIPELINE_FIELDS = ("stages", "pipeline_microbatches")
STAGES = (2, 4)


#: The config's fields of the mixture of experts.
MOE_FIELDS = ("experts", "top_k", "capacity_factor", "eval_capacity_factor", "aux_loss_weight")


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


#: The rules a layout adds for a mixture of experts (meshir.layers.moe): the experts split
#: over the batch axis x, the experts' inputs split by the rest of the batch's axes. The
#: data-parallel layout then splits batch over (y, x), so that what x leaves of the batch
#: split is y's block (one all-to-all over x each way, no permute). Model parallelism
#: splits d_ff over x, which the experts' weights cannot share with `experts`.
MOE_RULES = {
    "2d": {"experts": "x"},
    "data-parallel": {"batch": ("y", "x"), "experts": "x", "batch_unsplit": "y"},
    "single": {},
}


def layout(name: str, experts: int = 0, stages: int = 0) -> tuple[mi.Mesh, dict]:
    """(mesh, rules) of a layout name; `experts`: for a mixture of experts (MOE_RULES);
    `stages`: a pipeline, whose stages take a `stage` axis of that size before the layout's
    axes (x then has 4 / stages devices: 2 stages x a 2x2 mesh, 4 stages x 1x2; `single`:
    the stage axis alone), and the rule stage:stage."""
    axes, rules = LAYOUTS[name]
    if stages:
        axes = {"stage": stages} if name == "single" else {"stage": stages, "x": 4 // stages, "y": 2}
        rules = {**rules, "stage": "stage"}
    if experts:
        if name not in MOE_RULES:
            raise ValueError(f"--experts needs --layout {', '.join(MOE_RULES)} (the {name} layout splits d_ff "
                             f"over the axes the experts would take)")
        rules = {**rules, **MOE_RULES[name]}
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


def _layer_dims(d: "Dims", experts: mi.Dim | None = None) -> dict[str, list[mi.Dim]]:
    """One layer's parameters (without the `l<i>_` prefix), in argument order: meshir.layers'
    norms, attention and feed-forward, or with `experts` its mixture of experts."""
    m = d.d_model
    out = {f"ln1_{n}": dims for n, dims in L.norm_params(m).items()}
    out.update(L.attention_params(m, d.heads, d.d_k))
    out.update({f"ln2_{n}": dims for n, dims in L.norm_params(m).items()})
    out.update(L.moe_params(m, experts, d.d_ff) if experts is not None else L.ffn_params(m, d.d_ff))
    return out


#: The name of the leading dim of stacked layer parameters (`stacked=True`), and the prefix
#: of the pipeline's parameters ([stage, layers, ...]: each stage's layers).
LAYERS, PIPELINE = "layers", "pipeline"


def param_dims(cfg: Config, stacked: bool = False) -> dict[str, list[mi.Dim]]:
    """Every parameter's dims, in argument order. The output projection is the token
    embedding (tied), so there is no separate softmax weight. `stacked`: one parameter per
    kind, `layers_<kind>`, with a leading `layers` dim (the layers run as one mi.scan)."""
    d = Dims(cfg)
    out = L.embedding_params(d.vocab, d.d_model, d.length)
    if cfg.stages:
        out.update(L.pipeline_params({f"{PIPELINE}_{n}": dims for n, dims in _layer_dims(d).items()},
                                     mi.Dim("stage", cfg.stages), mi.Dim(LAYERS, cfg.layers // cfg.stages)))
    elif stacked:
        out.update(L.stacked_params({f"{LAYERS}_{n}": dims for n, dims in _layer_dims(d).items()},
                                    mi.Dim(LAYERS, cfg.layers)))
    else:
        experts = mi.Dim("experts", cfg.experts) if cfg.experts else None
        for i in range(cfg.layers):
            out.update({f"l{i}_{n}": dims for n, dims in
                        _layer_dims(d, experts if i in moe_layers(cfg) else None).items()})
    out.update({f"lnf_{n}": dims for n, dims in L.norm_params(d.d_model).items()})
    return out


def stack_params(cfg: Config, params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-layer parameters (`l<i>_<kind>`) as stacked ones (`layers_<kind>`)."""
    out = {n: v for n, v in params.items() if not (n.startswith("l") and n[1].isdigit())}
    per_layer = [{kind: params[f"l{i}_{kind}"] for kind in _layer_dims(Dims(cfg))} for i in range(cfg.layers)]
    out.update({f"{LAYERS}_{kind}": v for kind, v in L.stack_params(per_layer).items()})
    return {n: out[n] for n in param_dims(cfg, stacked=True)}


def init_params(cfg: Config) -> dict[str, np.ndarray]:
    """Initial parameters: a pure function of the config (seeded NumPy). Weights are normal
    with std 1/sqrt(fan_in) (embeddings 0.02, output projections scaled down by
    sqrt(2 * layers) as in GPT-2), layer-norm scales 1, biases 0; the experts' weights as
    the dense feed-forward's (fan-in d_model or d_ff), the router's fan-in d_model."""
    if cfg.stages:  # the unpipelined model's values, each stage's layers stacked
        plain = init_params(dataclasses.replace(cfg, stages=0))
        per_layer = [{kind: plain[f"l{i}_{kind}"] for kind in _layer_dims(Dims(cfg))} for i in range(cfg.layers)]
        staged = {f"{PIPELINE}_{kind}": v for kind, v in L.stage_params(per_layer, cfg.stages).items()}
        return {n: plain[n] if n in plain else staged[n] for n in param_dims(cfg)}
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
# The program: the layers of meshir.layers, composed


def layer(x, p, d: Dims, seq_parallel: str | None = None, drop=None, moe=None):
    """One pre-norm Transformer layer on x [batch, length, d_model]; `p`: the layer's
    parameters without their `l<i>_` prefix. `seq_parallel`: see logits_of (x arrives with
    `length` split over that axis; each layer norm's output is gathered whole before the
    matmuls). `drop`: (rate, seed) of residual dropout on the attention and feed-forward
    outputs, `seed` this layer's (a 0-d i32 Tensor). `moe`: the options of meshir.layers.moe
    when the feed-forward is a mixture of experts. Returns (x, None), or with `moe` (x,
    (the weighted auxiliary loss, the dropped fraction)): Tensors in tuples, as mi.remat
    returns them."""

    def norm(h, n):  # on the split sequence; its output gathered whole (a reshard: the carry stays split)
        out = L.layer_norm(h, {"scale": p[f"{n}_scale"], "bias": p[f"{n}_bias"]})
        return out if seq_parallel is None else mi.reshard(out, {"length": ()})

    def dropped(h, k):
        return h if drop is None else mi.dropout(h, drop[0], mi.fold_in(drop[1], k))

    x = x + dropped(L.attention(norm(x, "ln1"), p, sequence_parallel=seq_parallel), 0)
    if moe is not None:
        experts = L.moe(norm(x, "ln2"), p, **moe)
        return x + dropped(experts.output, 1), (experts.aux_loss, experts.dropped)
    return x + dropped(L.ffn(norm(x, "ln2"), p, sequence_parallel=seq_parallel), 1), None


def logits_of(tokens, p, cfg: Config, d: Dims, remat: bool = False, stacked: bool = False,
              seq_parallel: str | None = None, seed=None, evaluating: bool = False):
    """([batch, length, vocab] logits of the next character at every position, [(weighted
    auxiliary loss, dropped fraction) of each mixture-of-experts layer]). `remat`: each layer under mi.remat
    (recomputed in the backward pass instead of saved). `stacked`: the layers as one mi.scan
    over the stacked parameters' `layers` dim (the program, and its compile time, do not grow
    with depth). `evaluating`: the experts' capacity is `cfg.eval_capacity_factor`'s.

    `seq_parallel`: the mesh axis of the model dims (heads, d_ff) that also splits `length`
    of the activations between layers (the scan's carry, each unrolled layer's input and
    output): Megatron's sequence parallelism. Layer norms and residual adds run on the split
    sequence; each layer norm's output is all-gathered before the matmuls and each sum after
    wo and w2 is reduce-scattered back into the split, instead of all-reduced; the
    activations saved between layers are split over that axis too (meshir.layers'
    `sequence_parallel`, and the constraint on the carry here).

    `seed`: a 0-d i32 Tensor turns on residual dropout at rate `cfg.dropout`, layer i's masks
    drawn from fold_in(seed, i) (in a scan, i from an iota over `layers`).

    With `cfg.stages` the layers run as GPipe's pipeline (meshir.layers.pipeline; `remat`:
    each stage recomputed in the backward pass) and the logits keep its `stage` dim, the
    model's in the last stage's slot (build reads them with meshir.layers.last_stage)."""
    x = L.embed(tokens, {"embed": p["embed"], "pos_embed": p["pos_embed"]})

    def drop(i):
        return None if seed is None else (cfg.dropout, mi.fold_in(seed, i))

    block = mi.remat(layer) if remat else layer

    def between_layers(h):
        return h if seq_parallel is None else mi.shard(h, {"length": seq_parallel})

    x = between_layers(x)
    experts = []
    if cfg.stages:  # [stage, batch, length, d_model]: the stack's output in the last stage's slot
        kinds = list(_layer_dims(d))
        x = L.pipeline(lambda h, params: layer(h, params, d)[0], x, {k: p[f"{PIPELINE}_{k}"] for k in kinds},
                       microbatches=cfg.pipeline_microbatches, axis="stage", remat=remat)
    elif stacked:
        def one_layer(h, params, i=None):
            return between_layers(block(h, params, d, seq_parallel, drop(i) if seed is not None else None)[0])

        x = L.stacked(one_layer, x, {kind: p[f"{LAYERS}_{kind}"] for kind in _layer_dims(d)}, dim=LAYERS,
                      with_index=seed is not None)
    for i in range(0 if stacked or cfg.stages else cfg.layers):
        prefix = f"l{i}_"
        h, moe_out = block(x, {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}, d, seq_parallel,
                           drop(i), moe_options(cfg, evaluating) if i in moe_layers(cfg) else None)
        x = between_layers(h)
        if moe_out is not None:
            experts.append(moe_out)
    x = L.layer_norm(x, {"scale": p["lnf_scale"], "bias": p["lnf_bias"]})
    return L.tied_logits(x, p["embed"]), experts


def moe_layers(cfg: Config) -> set[int]:
    """The layers whose feed-forward is a mixture of experts (with `experts`): every other
    layer from the second, as GShard alternated them; the only one of a 1-layer model."""
    if not cfg.experts:
        return set()
    return {0} if cfg.layers == 1 else set(range(1, cfg.layers, 2))


def moe_options(cfg: Config, evaluating: bool = False) -> dict:
    """meshir.layers.moe's options for this config (each sequence one gating group)."""
    return {"k": cfg.top_k, "aux_loss_weight": cfg.aux_loss_weight,
            "capacity_factor": cfg.eval_capacity_factor if evaluating else cfg.capacity_factor}


def build(cfg: Config, mesh: mi.Mesh, with_logits: bool = False, remat: bool = False,
          stacked: bool = False, seq_parallel: str | None = None, precision: str = "f32") -> mi.Program:
    """The loss program: arguments `tokens`, `targets` (i32 [batch, length]) then every
    parameter; result `loss` (mean cross-entropy in nats per character), and `logits` when
    `with_logits` (the evaluation and generation program). `remat`, `stacked`,
    `seq_parallel`: see logits_of. `precision`: a PRECISIONS name; "bf16" builds the program
    with mi.Precision() as its policy (f32 parameters, bf16 compute, f32 gradient sums), which
    its training step and every compilation of it follow. With `cfg.dropout` the training
    program (not the one `with_logits`, which evaluates) takes a last argument `seed` (0-d
    i32): mi.train_step makes it the run's base seed and draws new masks every step.

    With `cfg.experts`, the training program's `loss` adds each mixture-of-experts layer's
    weighted load-balancing loss (what is differentiated); the evaluation program's stays the
    cross-entropy and its results add `aux_loss` (their sum) and `dropped` (the mean over the
    layers of the fraction of token-to-expert assignments over capacity), its experts'
    capacity `cfg.eval_capacity_factor`'s."""
    if cfg.stages and (stacked or seq_parallel):
        raise ValueError("a pipeline (--stages) runs with neither stacked layers nor sequence parallelism")
    if cfg.experts and (stacked or seq_parallel):
        raise ValueError("a mixture of experts (--experts) runs with neither stacked layers (its layers differ) "
                         "nor sequence parallelism")
    d = Dims(cfg)
    with mi.Program("transformer_lm", mesh, precision=PRECISIONS[precision]) as prog:
        tokens = prog.argument("tokens", [d.batch, d.length], "i32")
        targets = prog.argument("targets", [d.batch, d.length], "i32")
        p = {name: prog.argument(name, dims) for name, dims in param_dims(cfg, stacked).items()}
        seed = prog.argument("seed", [], "i32") if cfg.dropout and not with_logits else None
        logits, experts = logits_of(tokens, p, cfg, d, remat, stacked, seq_parallel, seed, evaluating=with_logits)
        if cfg.stages:  # the head ran on every stage's slot: the loss is the last stage's
            stage = mi.Dim("stage", cfg.stages)
            loss = L.last_stage(mi.mean(mi.cross_entropy(logits, targets, "vocab"), output=[stage]))
            logits = L.last_stage(logits) if with_logits else logits
        else:
            loss = mi.mean(mi.cross_entropy(logits, targets, "vocab"))
        aux = _total([a for a, _ in experts])
        prog.result(loss if with_logits or aux is None else loss + aux, name="loss")
        if with_logits:
            prog.result(logits, name="logits")
            if experts:
                prog.result(aux, name="aux_loss")
                prog.result(_total([dropped for _, dropped in experts]) * (1.0 / len(experts)), name="dropped")
    return prog


def _total(values):
    """The sum of 0-d Tensors (None for none)."""
    out = None
    for v in values:
        out = v if out is None else out + v
    return out


def train_step(cfg: Config, mesh: mi.Mesh, remat: bool = False, stacked: bool = False,
               seq_parallel: str | None = None, precision: str = "f32", **options) -> mi.TrainStep:
    """Forward, backward and optimizer update as one program (mi.train_step; `options` go
    to it, e.g. microbatches, metrics). `precision`: a PRECISIONS name (see build). With
    `cfg.clip_norm` the gradients are clipped to that global norm."""
    if cfg.clip_norm:
        options = {"clip_norm": cfg.clip_norm, **options}
    return mi.train_step(build(cfg, mesh, remat=remat, stacked=stacked, seq_parallel=seq_parallel, precision=precision),
                         optimizer(cfg), params=list(param_dims(cfg, stacked)), **options)
