"""Paper scale: the Mesh-TensorFlow LM at 4.9B parameters on 512 devices and a dense 1T
Transformer on 2048, compiled (never run) by MeshIR and by jax.jit, side by side.

    python benchmarks/paper_scale.py            # results/paper_scale.{md,json}
    python benchmarks/paper_scale.py --quick    # reduced sizes on 64 devices (results/quick/)
    python benchmarks/paper_scale.py --models 4.9B

Each model runs in its own process with the CPU devices its mesh needs (jax_num_cpu_devices,
set before jax starts; nothing is allocated: programs are lowered and compiled only). Both
models are examples/lm (`model.train_step`, Adam, layers stacked as one mi.scan), f32:

- **4.9B**: 8 layers, d_model 1024, 128 heads × d_k 128, d_ff 262144, vocab 32768, batch
  512 × length 256, on a 16×32 mesh (x=16, y=32): the paper's 2-D layout (batch:x; heads,
  d_ff, vocab:y), pure data-parallel (batch over both axes) and pure model-parallel (heads:y
  with d_k:x, since 128 heads do not divide 512 devices; d_ff and vocab over both axes), each
  with and without weight-update sharding and remat;
- **1T**: 192 layers, d_model 16384, 128 heads × d_k 128, d_ff 131072, vocab 32768, batch
  1024 × length 2048, on a 32×64 mesh (x=32, y=64), 2-D layout with remat, with and without
  sequence parallelism (`seq_parallel="y"`: `length` split over y between layers), and with
  weight-update and parameter sharding.

Per configuration (a row): parameter count; per-device memory (MeshIR's estimate
`exe.compile_report.memory` and XLA's `memory_analysis`, total = argument + output + temp −
alias, parameters and optimizer state donated on both sides); bytes per device per collective
kind, read from XLA's compiled HLO (lowering/runtime/hlo_collectives.py, a collective in a loop counted once per
iteration); MeshIR's pass time and XLA's compile time. The jax.jit side is the same model in
plain JAX (`jax_step_fn`), lowered from `jax.ShapeDtypeStruct`s with the same NamedShardings
and compiled. Weight-update sharding on the JAX side: optimizer state (and the update) split
over the data-parallel axes too, gradients constrained to that split, parameters gathered
after the update; parameter sharding: parameters split so too (FSDP), each layer's slice
gathered before use. The MeshIR rows with those options need `mi.train_step(shard_update=...,
shard_params=...)`; where train_step has no such parameter they are recorded as pending.
"""
from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import harness  # noqa: E402
from harness import fmt_bytes, fmt_sent  # noqa: E402

GIB = 2 ** 30


# ------------------------------------------------------------------------------------------
# What runs: models, meshes, layouts and rows


@dataclass(frozen=True)
class Row:
    """One configuration: a layout of a model with its flags."""

    layout: str
    remat: bool = True
    shard_update: bool = False
    shard_params: bool = False
    seq_parallel: str | None = None
    microbatches: int = 1

    @property
    def name(self) -> str:
        flags = [f for f, on in (("shard_update", self.shard_update), ("shard_params", self.shard_params),
                                 ("remat", self.remat)) if on]
        if self.seq_parallel:
            flags.append(f"seq_parallel={self.seq_parallel}")
        if self.microbatches > 1:
            flags.append(f"microbatches={self.microbatches}")
        return self.layout + ("+" + "+".join(flags) if flags else "")

    def flags(self) -> dict:
        return {"layout": self.layout, "shard_update": self.shard_update, "shard_params": self.shard_params,
                "remat": self.remat, "seq_parallel": self.seq_parallel, "microbatches": self.microbatches}


@dataclass(frozen=True)
class Model:
    name: str
    config: dict                  # model.Config fields
    mesh: dict                    # axis -> size
    layouts: dict                 # layout name -> rules
    rows: tuple
    memory_target_gib: float      # the per-device budget the target rows must fit
    target_rows: tuple            # Row.name of the configurations the target is about
    text: str = ""
    notes: tuple = field(default_factory=tuple)

    @property
    def devices(self) -> int:
        return math.prod(self.mesh.values())


def _rows_4_9b() -> tuple:
    rows = []
    for layout in ("2d", "data-parallel", "model-parallel"):
        for shard_update in (False, True):
            for remat in (False, True):
                rows.append(Row(layout, remat=remat, shard_update=shard_update))
    rows.append(Row("2d", remat=True, seq_parallel="y"))
    return tuple(rows)


ROWS_1T = (Row("2d", remat=True), Row("2d", remat=True, seq_parallel="y"),
           Row("2d", remat=True, seq_parallel="y", shard_update=True),
           Row("2d", remat=True, seq_parallel="y", shard_update=True, shard_params=True),
           # beyond the configuration: microbatches shrink what one layer holds live
           Row("2d", remat=True, seq_parallel="y", microbatches=4),
           Row("2d", remat=True, seq_parallel="y", shard_update=True, shard_params=True, microbatches=4))

LAYOUTS_2D = {"2d": {"batch": "x", "heads": "y", "d_ff": "y", "vocab": "y"}}
LAYOUTS_4_9B = {**LAYOUTS_2D,
                "data-parallel": {"batch": ("x", "y")},
                "model-parallel": {"heads": "y", "d_k": "x", "d_ff": ("x", "y"), "vocab": ("x", "y")}}

MODELS = {
    "4.9B": Model("4.9B", dict(layers=8, d_model=1024, heads=128, key_size=128, d_ff=262144, length=256,
                               batch=512, vocab=32768), {"x": 16, "y": 32}, LAYOUTS_4_9B, _rows_4_9b(),
                  16.0, ("2d+remat",), "Mesh-TensorFlow's 4.9B LM (8 layers, d_model 1024, 128 heads × d_k 128, "
                  "d_ff 262144, vocab 32768; batch 512 × length 256) on 16×32 = 512 devices"),
    "1T": Model("1T", dict(layers=192, d_model=16384, heads=128, d_ff=131072, length=2048, batch=1024, vocab=32768),
                {"x": 32, "y": 64}, LAYOUTS_2D, ROWS_1T, 32.0, (ROWS_1T[3].name, ROWS_1T[5].name),
                "a dense 1T Transformer (192 layers, d_model 16384, 128 heads × d_k 128, d_ff 131072, vocab 32768; "
                "batch 1024 × length 2048) on 32×64 = 2048 devices"),
}

#: --quick: reduced sizes and fewer rows (every kind of row once), both models on one 8×8
#: mesh of 64 devices in one process.
QUICK_MODELS = {
    "4.9B": Model("4.9B", dict(layers=2, d_model=64, heads=8, key_size=16, d_ff=512, length=16, batch=64, vocab=512),
                  {"x": 8, "y": 8}, LAYOUTS_4_9B,
                  (Row("2d"), Row("model-parallel"), Row("2d", seq_parallel="y")), 16.0, ("2d+remat",),
                  "quick stand-in for the 4.9B model (2 layers, d_model 64, 8 heads × d_k 16, d_ff 512) on 8×8"),
    "1T": Model("1T", dict(layers=4, d_model=128, heads=8, d_ff=512, length=64, batch=32, vocab=512),
                {"x": 8, "y": 8}, LAYOUTS_2D, (ROWS_1T[1], ROWS_1T[3], ROWS_1T[5]), 32.0,
                (ROWS_1T[3].name, ROWS_1T[5].name),
                "quick stand-in for the 1T model (4 layers, d_model 128, d_ff 512) on 8×8"),
}


def data_axes(rules: dict) -> tuple[str, ...]:
    """The mesh axes the batch is split over (weight-update and parameter sharding use them)."""
    axes = rules.get("batch", ())
    return (axes,) if isinstance(axes, str) else tuple(axes)


# ------------------------------------------------------------------------------------------
# Shared figures


def param_count(cfg) -> int:
    from lm import model

    return sum(math.prod(d.size for d in dims) for dims in model.param_dims(cfg, stacked=True).values())


def collectives(hlo_text: str) -> dict:
    """Bytes per device per collective kind of compiled HLO, loops counted per iteration."""
    from meshir.lowering.runtime import hlo_collectives as hlo_stats

    found = hlo_stats.parse_collectives(hlo_text)
    return hlo_stats.summarize(found, hlo_stats.computation_repeats(hlo_text))


def _error(e: BaseException) -> dict:
    text = f"{type(e).__name__}: {e}"
    return {"status": "error", "error": text.splitlines()[0][:500], "error_full": text[:4000]}


# ------------------------------------------------------------------------------------------
# MeshIR


def train_step_options() -> set[str]:
    """The parameters mi.train_step accepts (shard_update / shard_params are new)."""
    import meshir as mi

    return set(inspect.signature(mi.train_step).parameters)


#: The memory budget the TPU rows compile under: none, so that XLA:TPU gives its own figure
#: even where MeshIR's estimate (checked against the HBM by default) would refuse the row.
NO_BUDGET = 2 ** 60


def meshir_row(m: Model, row: Row, cfg, topology: str | None = None) -> dict:
    """MeshIR's row: compiled for this machine's CPU devices, or with `topology` by XLA:TPU
    for that TPU topology's devices (mi.tpu_mesh; nothing runs)."""
    import meshir as mi
    from lm import model

    rules = m.layouts[row.layout]
    if (row.shard_update or row.shard_params) and not data_axes(rules):
        return {"status": "n/a", "note": "the layout has no data-parallel axis to shard the update over"}
    options = {}
    accepted = train_step_options()
    for flag in ("shard_update", "shard_params"):
        if getattr(row, flag):
            if flag not in accepted:
                return {"status": "pending", "note": f"train_step has no {flag} yet"}
            options[flag] = True  # shard_update=True: MeshIR finds the data-parallel axes itself
    if row.microbatches > 1:
        options["microbatches"] = {"batch": row.microbatches}
    try:
        mesh = mi.Mesh(dict(m.mesh))
        step, build_s = harness.timed(lambda: model.train_step(cfg, mesh, remat=row.remat, stacked=True,
                                                       seq_parallel=row.seq_parallel, **options))
        target = {} if topology is None else {"mesh": mi.tpu_mesh(topology, m.mesh), "memory_budget": NO_BUDGET}
        exe, compile_s = harness.timed(lambda: mi.compile(step, layout=rules, donate=True, **target))
        report = exe.compile_report
        estimate = report.memory
        out = {
            "status": "ok",
            "build_s": build_s,
            "meshir_passes_s": exe.compile_times["meshir_passes_s"],
            "xla_compile_s": exe.compile_times["xla_compile_s"],
            "compile_s": compile_s,
            "estimate": dict(estimate.categories, total=estimate.total),
            "largest": [f"{t.value}: {t.type} ({t.kind}) {t.bytes}" for t in estimate.largest[:5]],
            "xla_memory": report.xla_memory,
            "xla_cost": report.xla_cost,
            "collectives": collectives(exe.compiled_hlo_text()),
            "planner_bytes_per_device": report.total_bytes_per_device,
        }
        if report.xla_memory is None:
            out["note"] = "XLA gave no memory_analysis"
        return out
    except Exception as e:  # a MeshIR failure at this scale is a result to report
        return _error(e)


def meshir_estimate_only(cfg, mesh_axes: dict, rules: dict, remat: bool = True) -> dict:
    """MeshIR's memory estimate of the training step without XLA (the single-device footprint:
    XLA need not compile a program that cannot run)."""
    import meshir as mi
    from lm import model
    from meshir.api import _checks as checks
    from meshir.transforms.passes.partition import partition_passes
    from meshir.dialect import get_context
    from meshir.transforms import Pipeline
    from meshir.transforms.analysis.cost_model import BYTES
    from meshir.transforms.passes.inline_calls import InlineCallsPass

    step = model.train_step(cfg, mi.Mesh(dict(mesh_axes)), remat=remat, stacked=True)
    with get_context():
        module = checks.module_of(step, "the step").operation.clone()
    Pipeline([InlineCallsPass()]).apply(module)
    Pipeline(partition_passes(module, checks.layout_rules(rules, "rules"), checks.cost_model(None))).apply(module)
    estimate = BYTES.memory(module)
    return dict(estimate.categories, total=estimate.total)


# ------------------------------------------------------------------------------------------
# JAX: the same model, Adam and layouts under jax.jit


def zero_spec(dims: list, rules: dict, mesh: dict, axes: tuple[str, ...]) -> list:
    """Per-dim mesh axes of a parameter whose layout (by `rules`) is split further over the
    data-parallel `axes`: the largest dim not split yet that they divide, else the largest
    split dim they still divide (appended minor), else as it was (replicated over them)."""
    spec = [rules.get(d.name) for d in dims]
    n = math.prod(mesh[a] for a in axes)

    def split_size(entry):
        return 1 if entry is None else mesh[entry] if isinstance(entry, str) else math.prod(mesh[a] for a in entry)

    free = [i for i, e in enumerate(spec) if e is None and dims[i].size % n == 0]
    if free:
        i = max(free, key=lambda j: dims[j].size)
        spec[i] = axes[0] if len(axes) == 1 else tuple(axes)
        return spec
    split = [i for i, e in enumerate(spec) if e is not None and dims[i].size % (split_size(e) * n) == 0]
    if split:
        i = max(split, key=lambda j: dims[j].size)
        old = (spec[i],) if isinstance(spec[i], str) else tuple(spec[i])
        spec[i] = old + tuple(axes)
    return spec


def jax_step_fn(cfg, rules: dict, jmesh, remat: bool, seq_parallel: str | None, param_specs: dict | None,
                update_specs: dict | None, microbatches: int = 1):
    """(state, tokens, targets, t) -> (loss, new state): examples/lm/model.py's stacked LM,
    forward, backward and Adam (mi.Adam), in plain JAX. `rules` name the mesh axes of each
    dim; activations get with_sharding_constraint by them (`seq`: the residual stream's
    length, split over `seq_parallel` between layers). `param_specs`: the model layout of
    each parameter when the parameters arrive split further (FSDP: each layer's slice is
    gathered to it before use). `update_specs`: the split the gradients and the update take
    (weight-update sharding). `microbatches`: gradients summed over that many slices of the
    batch in a scan (one update), as mi.train_step(microbatches=...)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec

    import jax_baselines
    from lm import model

    rules = dict(rules)
    if seq_parallel:
        rules["seq"] = seq_parallel
    sh = jax_baselines.Shardings(jmesh, rules)
    c = sh.constrain
    opt = model.optimizer(cfg)
    dims = model.param_dims(cfg, stacked=True)
    names = list(dims)
    kinds = [n[len(model.LAYERS) + 1:] for n in names if n.startswith(model.LAYERS + "_")]
    ln = jax_baselines.jax_layer_norm
    scale = 1.0 / math.sqrt(cfg.d_k)

    def to(value, spec):
        return jax.lax.with_sharding_constraint(value, NamedSharding(jmesh, PartitionSpec(*spec)))

    def gathered(name, value, stacked_slice=False):
        """FSDP: the parameter as it arrives (split over the data axes too), then gathered to
        its model layout; the backward transposes both, so each layer's gradient is
        reduce-scattered in the layer loop rather than stacked whole."""
        if param_specs is None:
            return value
        split, whole = update_specs[name], param_specs[name]
        if stacked_slice:
            split, whole = split[1:], whole[1:]
        return to(to(value, split), whole)

    def gelu(x):  # mi.gelu: the tanh approximation
        return x * 0.5 * (jnp.tanh((x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)) + 1.0)

    def attention(x, p):
        q = c(jnp.einsum("blm,mhk->blhk", x, p["wq"]), "batch", "length", "heads", "d_k")
        k = c(jnp.einsum("bjm,mhk->bjhk", x, p["wk"]), "batch", "memory_length", "heads", "d_k")
        v = c(jnp.einsum("bjm,mhk->bjhk", x, p["wv"]), "batch", "memory_length", "heads", "d_k")
        logits = c(jnp.einsum("blhk,bjhk->bhlj", q, k) * scale, "batch", "heads", "length", "memory_length")
        pos = jnp.arange(cfg.length)
        logits = logits + jnp.where(pos[None, :] <= pos[:, None], 0.0, model.MASK_VALUE).astype(jnp.float32)
        e = jnp.exp(logits - jax.lax.stop_gradient(logits.max(axis=-1, keepdims=True)))
        w = e / e.sum(axis=-1, keepdims=True)
        o = c(jnp.einsum("bhlj,bjhk->blhk", w, v), "batch", "length", "heads", "d_k")
        return jnp.einsum("blhk,hkm->blm", o, p["wo"])

    def ffn(x, p):
        h = c(gelu(jnp.einsum("blm,mf->blf", x, p["w1"]) + p["b1"]), "batch", "length", "d_ff")
        return jnp.einsum("blf,fm->blm", h, p["w2"]) + p["b2"]

    def layer(x, p):
        p = {k: gathered(f"{model.LAYERS}_{k}", v, stacked_slice=True) for k, v in p.items()}
        h = c(ln(jnp, x, p["ln1_scale"], p["ln1_bias"]), "batch", "length", "d_model")  # whole sequence
        x = c(x + attention(h, p), "batch", "seq", "d_model")
        h = c(ln(jnp, x, p["ln2_scale"], p["ln2_bias"]), "batch", "length", "d_model")
        return c(x + ffn(h, p), "batch", "seq", "d_model")

    block = jax.checkpoint(layer) if remat else layer

    def loss_fn(p, tokens, targets):
        embed = gathered("embed", p["embed"])
        x = c(embed[tokens] + gathered("pos_embed", p["pos_embed"]), "batch", "seq", "d_model")
        stacked = {k: p[f"{model.LAYERS}_{k}"] for k in kinds}
        x, _ = jax.lax.scan(lambda h, lp: (block(h, lp), None), x, stacked)
        x = ln(jnp, x, gathered("lnf_scale", p["lnf_scale"]), gathered("lnf_bias", p["lnf_bias"]))
        logits = c(jnp.einsum("blm,vm->blv", x, embed), "batch", "length", "vocab")
        shifted = logits - jax.lax.stop_gradient(logits.max(axis=-1, keepdims=True))
        log_probs = shifted - jnp.log(jnp.exp(shifted).sum(axis=-1, keepdims=True))
        one_hot = jax.nn.one_hot(targets, cfg.vocab, dtype=logits.dtype)
        return jnp.mean(-(one_hot * log_probs).sum(axis=-1))

    def microbatched(p, tokens, targets):
        """Mean loss and gradients over `microbatches` slices: slice j holds rows j, j + k, ...
        (each device's rows stay on it); the gradients accumulate in the update's layout."""
        k = microbatches
        batch_axes = rules.get("batch")

        def split(a):
            return to(a.reshape(cfg.batch // k, k, cfg.length).transpose(1, 0, 2), [None, batch_axes, None])

        specs = update_specs or {n: [rules.get(d.name) for d in dims[n]] for n in names}

        def body(carry, batch):
            total, acc = carry
            loss, grads = jax.value_and_grad(loss_fn)(p, *batch)
            return (total + loss, {n: to(acc[n] + grads[n], specs[n]) for n in names}), None

        zeros = {n: to(jnp.zeros(p[n].shape, p[n].dtype), specs[n]) for n in names}
        (total, acc), _ = jax.lax.scan(body, (jnp.float32(0.0), zeros), (split(tokens), split(targets)))
        return total / k, {n: g / k for n, g in acc.items()}

    def step_fn(state, tokens, targets, t):
        p = {n: state[n] for n in names}
        if microbatches > 1:
            loss, grads = microbatched(p, tokens, targets)
        else:
            loss, grads = jax.value_and_grad(loss_fn)(p, tokens, targets)
        new = {}
        for n in names:  # mi.Adam.update
            g, w = grads[n], p[n]
            if update_specs is not None:  # reduce-scatter the gradient; update this device's part
                g, w = to(g, update_specs[n]), to(w, update_specs[n])
            m = state[f"{n}__m"] * opt.beta1 + g * (1.0 - opt.beta1)
            v = state[f"{n}__v"] * opt.beta2 + g * g * (1.0 - opt.beta2)
            m_hat = m / (1.0 - jnp.power(jnp.float32(opt.beta1), t))
            v_hat = v / (1.0 - jnp.power(jnp.float32(opt.beta2), t))
            new[n] = w - m_hat / (jnp.sqrt(v_hat) + opt.epsilon) * opt.learning_rate
            new[f"{n}__m"], new[f"{n}__v"] = m, v
        return loss, new

    return step_fn


def jax_row(m: Model, row: Row, cfg, topology: str | None = None) -> dict:
    """The jax.jit row: on this machine's CPU devices, or (`topology`) compiled by XLA:TPU."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec

    import jax_baselines
    import measure
    import meshir as mi
    from lm import model
    from meshir.api.compilation.compile import xla_cost

    rules = m.layouts[row.layout]
    axes = data_axes(rules)
    if (row.shard_update or row.shard_params) and not axes:
        return {"status": "n/a", "note": "the layout has no data-parallel axis to shard the update over"}
    try:
        jmesh = jax_baselines.jax_mesh(m.mesh) if topology is None else mi.tpu_mesh(topology, m.mesh)
        dims = model.param_dims(cfg, stacked=True)
        model_specs = {n: [rules.get(d.name) for d in ds] for n, ds in dims.items()}
        split_specs = {n: zero_spec(ds, rules, m.mesh, axes) for n, ds in dims.items()} if axes else model_specs
        param_specs = split_specs if row.shard_params else model_specs
        state_specs = split_specs if (row.shard_update or row.shard_params) else model_specs

        def named(spec):
            return NamedSharding(jmesh, PartitionSpec(*spec))

        state_sh, structs = {}, {}
        for n, ds in dims.items():
            shape = tuple(d.size for d in ds)
            for name, spec in ((n, param_specs[n]), (f"{n}__m", state_specs[n]), (f"{n}__v", state_specs[n])):
                state_sh[name] = named(spec)
                structs[name] = jax.ShapeDtypeStruct(shape, jnp.float32, sharding=state_sh[name])
        tok_sh = named([rules.get("batch"), None])
        repl = named([])
        tok = jax.ShapeDtypeStruct((cfg.batch, cfg.length), jnp.int32, sharding=tok_sh)
        t = jax.ShapeDtypeStruct((), jnp.float32, sharding=repl)
        fn = jax_step_fn(cfg, rules, jmesh, row.remat, row.seq_parallel,
                         model_specs if row.shard_params else None,
                         split_specs if (row.shard_update or row.shard_params) else None, row.microbatches)
        jitted = jax.jit(fn, in_shardings=(state_sh, tok_sh, tok_sh, repl), out_shardings=(repl, state_sh),
                         donate_argnums=(0,))
        lowered, lower_s = harness.timed(lambda: jitted.lower(structs, tok, tok, t))
        compiled, compile_s = harness.timed(lowered.compile)
        mem = measure.memory_per_device(compiled.memory_analysis())
        if mem is not None:
            mem["total"] = mem["argument"] + mem["output"] + mem["temp"] - mem["alias"]
        out = {"status": "ok", "lower_s": lower_s, "xla_compile_s": compile_s, "xla_memory": mem,
               "xla_cost": xla_cost(compiled.cost_analysis()), "collectives": collectives(compiled.as_text())}
        if mem is None:
            out["note"] = "XLA gave no memory_analysis"
        jax.clear_caches()
        return out
    except Exception as e:
        return _error(e)


# ------------------------------------------------------------------------------------------
# One model in this process


def run_model(m: Model, log=print, only: list[str] | None = None) -> dict:
    import jax

    from lm import model

    cfg = model.Config(**m.config)
    cfg.check()
    count = param_count(cfg)
    log(f"{m.name}: {count:,} parameters, {m.devices} devices ({jax.device_count()} available)")
    rows = []
    for row in m.rows:
        if only and row.name not in only:
            continue
        record = {"row": row.name, **row.flags()}
        record["meshir"] = meshir_row(m, row, cfg)
        record["jax"] = jax_row(m, row, cfg)
        rows.append(record)
        log(f"  {row.name}: " + "; ".join(f"{side} {_summary(record[side])}" for side in ("meshir", "jax")))
    single, single_s = harness.timed(lambda: meshir_estimate_only(cfg, {"x": 1}, {}))
    log(f"  single device (MeshIR's estimate, {single_s:.1f} s): {single['total'] / GIB:,.1f} GiB")
    return {"model": m.name, "text": m.text, "config": cfg.to_dict(), "d_k": cfg.d_k, "mesh": m.mesh,
            "devices": m.devices, "layouts": m.layouts, "parameters": count,
            "memory_target_gib": m.memory_target_gib, "target_rows": list(m.target_rows),
            "single_device": {"estimate": single, "adam_floor_bytes": 16 * count},
            "train_step_options": sorted(train_step_options()), "rows": rows}


def _summary(rec: dict) -> str:
    if rec["status"] != "ok":
        return rec.get("note") or rec.get("error") or rec["status"]
    mem = rec["xla_memory"]["total"] if rec.get("xla_memory") else None
    est = f"estimate {fmt_bytes(rec['estimate']['total'])}, " if "estimate" in rec else ""
    passes = f", passes {rec['meshir_passes_s']:.2f} s" if "meshir_passes_s" in rec else ""
    return (f"{est}XLA {fmt_bytes(mem)}, {fmt_sent(rec['collectives']['bytes_per_device'])} sent{passes}, "
            f"XLA compile {rec['xla_compile_s']:.1f} s")


# ------------------------------------------------------------------------------------------
# The report


KIND_ORDER = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")


def _kinds(rec: dict) -> str:
    by = rec["collectives"]["by_kind"]
    return "<br>".join(f"{k} {fmt_sent(by[k]['bytes_per_device'])}" for k in KIND_ORDER if k in by) or "none"


def _fits(total, target_gib) -> str:
    return "–" if total is None else ("yes" if total <= target_gib * GIB else "**no**")


def donated_estimate(rec: dict) -> int | None:
    """MeshIR's estimate counts results apart from arguments (it assumes no donation); with
    the parameters and optimizer state donated, the results (all but the 4-byte loss) live
    in the arguments' buffers."""
    est = rec.get("estimate")
    return None if est is None else est["total"] - est.get("results", 0) + 4


def targets(result: dict) -> list[str]:
    """The issue's targets, met or missed, from the rows."""
    lines = []
    for data in result["models"]:
        rows = {r["row"]: r for r in data["rows"]}
        gib = data["memory_target_gib"]
        for name in data["target_rows"]:
            target = rows.get(name)
            for side, label in (("meshir", "MeshIR"), ("jax", "jax.jit")):
                rec = target[side] if target else None
                if rec is None or rec["status"] != "ok":
                    why = (rec.get("note") or rec.get("error", "")) if rec else "row not run"
                    lines.append(f"- {data['model']} `{name}` fits {gib:g} GiB per device, {label}: "
                                 f"**{rec['status'] if rec else 'not measured'}** ({why})")
                    continue
                total = rec["xla_memory"]["total"] if rec.get("xla_memory") else None
                verdict = "met" if total is not None and total <= gib * GIB else "missed"
                est = donated_estimate(rec)
                lines.append(f"- {data['model']} `{name}` fits {gib:g} GiB per device, {label}: **{verdict}** "
                             f"(XLA {fmt_bytes(total)}" + (f"; MeshIR's estimate, donated, {fmt_bytes(est)}" if est else "")
                             + ")")
        single = data["single_device"]
        lines.append(f"- {data['model']} on one device: {fmt_bytes(single['estimate']['total'])} (MeshIR's estimate; "
                     f"parameters, gradients and Adam's two moments alone {fmt_bytes(single['adam_floor_bytes'])}): "
                     "does not fit")
        compared = [(r["row"], r["meshir"]["collectives"]["bytes_per_device"], r["jax"]["collectives"]["bytes_per_device"])
                    for r in data["rows"] if r["meshir"]["status"] == "ok" and r["jax"]["status"] == "ok"]
        worse = [(n, a, b) for n, a, b in compared if a > b]
        if compared:
            lines.append(f"- {data['model']}: MeshIR's bytes per device ≤ jax.jit's: **{'met' if not worse else 'missed'}** "
                         f"on {len(compared) - len(worse)} of {len(compared)} rows measured on both sides"
                         + ("" if not worse else " (more on " + ", ".join(f"`{n}`: {fmt_sent(a)} vs {fmt_sent(b)}"
                                                                        for n, a, b in worse) + ")"))
        passes = [r["meshir"]["meshir_passes_s"] for r in data["rows"] if r["meshir"]["status"] == "ok"]
        if passes and data["model"] == "4.9B":
            lines.append(f"- 4.9B: MeshIR pass time < 5 s: **{'met' if max(passes) < 5 else 'missed'}** "
                         f"({min(passes):.2f}–{max(passes):.2f} s over the rows)")
    same = [(r["meshir"]["planner_bytes_per_device"], r["meshir"]["collectives"]["bytes_per_device"])
            for d in result["models"] for r in d["rows"] if r["meshir"]["status"] == "ok"]
    if same:
        lines.append(f"- MeshIR's own count of bytes sent (`compile_report.total_bytes_per_device`) equals the count "
                     f"read from XLA's HLO on {sum(a == b for a, b in same)} of {len(same)} MeshIR rows")
    pending = sorted({r["meshir"]["note"] for d in result["models"] for r in d["rows"]
                      if r["meshir"]["status"] == "pending"})
    if pending:
        lines.append("- Pending MeshIR rows (" + "; ".join(pending) + "): rerun once mi.train_step has the options.")
    return lines


def sequence_parallel(result: dict) -> list[str]:
    """What splitting `length` between layers costs and saves: each side's row with it against the same
    row without."""
    lines = []
    for data in result["models"]:
        rows = {r["row"]: r for r in data["rows"]}
        for name, r in rows.items():
            if not r["seq_parallel"] or r["shard_update"] or r["shard_params"] or r["microbatches"] > 1:
                continue
            base = rows.get(Row(r["layout"], remat=r["remat"]).name)
            if base is None:
                continue
            for side, label in (("meshir", "MeshIR"), ("jax", "jax.jit")):
                a, b = base[side], r[side]
                if a["status"] != "ok" or b["status"] != "ok":
                    continue
                sent_a, sent_b = a["collectives"]["bytes_per_device"], b["collectives"]["bytes_per_device"]
                mem_a, mem_b = a["xla_memory"]["total"], b["xla_memory"]["total"]
                lines.append(f"- {data['model']}, {label}: `{name}` sends {fmt_sent(sent_b)} per device against "
                             f"{fmt_sent(sent_a)} without ({sent_b / sent_a:.2f}×: {_kinds(b).replace('<br>', ', ')}); "
                             f"memory per device {fmt_bytes(mem_b)} against {fmt_bytes(mem_a)} (XLA temp "
                             f"{fmt_bytes(b['xla_memory']['temp'])} against {fmt_bytes(a['xla_memory']['temp'])})")
    return lines


def _axes(a) -> str:
    return a if isinstance(a, str) else "(" + ",".join(a) + ")"


def markdown(result: dict) -> str:
    meta = result["meta"]
    lines = [
        "# Paper scale: the 4.9B Mesh-TensorFlow LM on 512 devices and a 1T Transformer on 2048, compiled, not run",
        "",
        f"`python benchmarks/paper_scale.py{' --quick' if meta['quick'] else ''}`, {meta['date']}, jax {meta['jax']}, "
        f"{meta['platform']}, {meta['cpus']} CPUs, shared (wall times are indicative). Programs are lowered and "
        "compiled for virtual CPU devices and never run. f32, Adam, the layers stacked (one scan), parameters and "
        "optimizer state donated on both sides.",
        "",
        "- **MeshIR estimate**: `exe.compile_report.memory` per device, computed before XLA; it counts results apart "
        "from arguments (no donation), so **donated** subtracts the results (all but the loss are donated).",
        "- **XLA**: `memory_analysis()` per device, total = argument + output + temp − alias.",
        "- **Collectives**: bytes one device sends per step, read from the compiled HLO (lowering/runtime/hlo_collectives.py, "
        "ring formulas), a collective in the layer loop counted once per layer (XLA's known trip count).",
        "- **Times** (s): MeshIR's passes (`compile_times['meshir_passes_s']`); XLA's compile (MeshIR: the "
        "partitioned per-device program; jax.jit: lower + compile, SPMD partitioning included).",
        "",
        "## Targets",
        "",
        *targets(result),
        "",
        "## Sequence parallelism: what it costs",
        "",
        *sequence_parallel(result),
        "",
    ]
    for data in result["models"]:
        lines += [f"## {data['model']}: {data['text']}", "",
                  f"{data['parameters']:,} parameters (d_k {data['d_k']}); mesh "
                  + " × ".join(f"{a}={n}" for a, n in data["mesh"].items()) + f" = {data['devices']} devices. "
                  "Layouts: " + "; ".join(f"**{n}** " + ", ".join(f"{d}:{_axes(a)}" for d, a in r.items())
                                          for n, r in data["layouts"].items())
                  + f". Memory target {data['memory_target_gib']:g} GiB per device.", "",
                  "| layout | shard_update | shard_params | remat | seq_parallel | microbatches | side "
                  "| MeshIR estimate (donated) "
                  "| XLA total | XLA argument / output / temp / alias | fits | collectives per device | total sent "
                  "| passes s | XLA compile s |",
                  "|---|---|---|---|---|---|---|---:|---:|---|---|---|---:|---:|---:|"]
        for r in data["rows"]:
            for side, label in (("meshir", "MeshIR"), ("jax", "jax.jit")):
                rec = r[side]
                head = (f"| {r['layout']} | {'yes' if r['shard_update'] else ''} | {'yes' if r['shard_params'] else ''} | "
                        f"{'yes' if r['remat'] else ''} | {r['seq_parallel'] or ''} | "
                        f"{r['microbatches'] if r['microbatches'] > 1 else ''} | {label} ")
                if rec["status"] != "ok":
                    lines.append(head + f"| {rec['status']}: {rec.get('note') or rec.get('error', '')} "
                                 "| | | | | | | |")
                    continue
                x = rec.get("xla_memory")
                parts = "no memory_analysis" if x is None else " / ".join(
                    fmt_bytes(x[k]) for k in ("argument", "output", "temp", "alias"))
                est = (f"{fmt_bytes(rec['estimate']['total'])} ({fmt_bytes(donated_estimate(rec))})"
                       if "estimate" in rec else "–")
                passes = f"{rec['meshir_passes_s']:.2f}" if "meshir_passes_s" in rec else "–"
                compile_s = rec["xla_compile_s"] + rec.get("lower_s", 0.0)
                lines.append(head + f"| {est} | {fmt_bytes(x['total'] if x else None)} | {parts} | "
                             f"{_fits(x['total'] if x else None, data['memory_target_gib'])} | {_kinds(rec)} | "
                             f"{fmt_sent(rec['collectives']['bytes_per_device'])} | {passes} | {compile_s:.1f} |")
        single = data["single_device"]
        lines += ["", f"One device (mesh x=1, remat): MeshIR's estimate {fmt_bytes(single['estimate']['total'])} ("
                  + ", ".join(f"{k.replace('_', ' ')} {fmt_bytes(v)}" for k, v in single["estimate"].items() if k != "total")
                  + f"); parameters, gradients and Adam's two moments alone: {fmt_bytes(single['adam_floor_bytes'])}.",
                  ""]
        for r in data["rows"]:
            for side in ("meshir", "jax"):
                if r[side]["status"] == "error":
                    lines += [f"Error, `{r['row']}` ({side}):", "", "```", r[side]["error_full"], "```", ""]
    lines += ["## Notes", "", *NOTES, "",
              "Run times (one process per device count, wall): "
              + ", ".join(f"{k} {v:.0f} s" for k, v in meta["run_s"].items()) + "."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------
# Driver: one process per device count (jax fixes its device count when it starts)


def child(names: list[str], quick: bool, out: Path, only: list[str] | None = None) -> int:
    models = [(QUICK_MODELS if quick else MODELS)[n] for n in names]
    import jax

    jax.config.update("jax_num_cpu_devices", max(8, *(m.devices for m in models)))
    import meshir  # noqa: F401  (after the device count: it asks for 8 only when nothing is set)

    results = []
    for m in models:
        result, seconds = harness.timed(lambda: run_model(m, log=lambda s: print(s, flush=True), only=only))
        result["run_s"] = seconds
        results.append(result)
    out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="reduced sizes on 64 devices; results under results/quick/")
    parser.add_argument("--models", default=None, help="comma-separated: 4.9B,1T (default both)")
    parser.add_argument("--rows", default=None, help="comma-separated row names (as printed) to run; default all")
    parser.add_argument("--out", type=Path, default=None, help="results directory")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child-out", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child.split(","), args.quick, args.child_out, args.rows.split(",") if args.rows else None)
    models = QUICK_MODELS if args.quick else MODELS
    names = harness.chosen_sizes(parser, args.models, models, what="models")
    groups: dict[int, list[str]] = {}
    for n in names:
        groups.setdefault(models[n].devices, []).append(n)
    out = harness.results_dir(args.out, args.quick)
    out.mkdir(parents=True, exist_ok=True)
    results, run_s = [], {}
    for devices, group in groups.items():
        part = out / f".paper_scale_{devices}.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", ",".join(group), "--child-out", str(part)]
        if args.quick:
            cmd.append("--quick")
        if args.rows:
            cmd += ["--rows", args.rows]
        began = time.perf_counter()
        proc = subprocess.run(cmd, env={**os.environ, "JAX_PLATFORMS": "cpu"})
        run_s[f"{'+'.join(group)} ({devices} devices)"] = time.perf_counter() - began
        if proc.returncode != 0 or not part.exists():
            print(f"{', '.join(group)}: the process for {devices} devices failed (exit {proc.returncode})", file=sys.stderr)
            return 1
        results += json.loads(part.read_text())
        part.unlink()
    meta = {**harness.machine(), "quick": args.quick, "run_s": run_s}
    result = {"meta": meta, "models": results, "notes": NOTES}
    harness.write_report(out, "paper_scale", result, markdown(result))
    print((out / "paper_scale.md").read_text())
    return 0


NOTES = [
    "- **remat and MeshIR's scan.** MeshIR differentiates a scan by saving only its carry per iteration and "
    "recomputing the body in the backward pass, whether or not the layer is under `mi.remat`: for stacked layers "
    "MeshIR's rows with and without remat are one program. jax.jit without `jax.checkpoint` saves each layer's "
    "intermediates.",
    "- **model-parallel on 512 devices**: 128 heads cannot be split 512 ways, so heads go over y (32) and d_k over "
    "x (16); d_ff and vocab over both axes.",
    "- **Sequence parallelism** (`seq_parallel=\"y\"`, examples/lm/model.py) is written with constraints: "
    "`length` split over y on the layers' carry, and inside a layer each layer norm's output with the sequence "
    "whole and q, k, v, the attention output and the FFN hidden with the sequence whole and heads or d_ff on y. A "
    "constraint outranks layout rules, so the carry's constraint alone lets `length@y` reach the matmuls: "
    "propagation then gathers the weights (w1, w2, wq... all-gathered over y every layer) instead of the "
    "activations. The jax.jit side constrains the residual stream to `length` over y and the layer norms' outputs "
    "to the whole sequence. At this commit MeshIR keeps the split of the saved activations at 1T only: in the "
    "gradient of a scan whose carry is constrained `length@y`, propagation may lay the carry out `length@()` "
    "(gathered at each iteration's end; the backward's use of the saved stack wants it whole, and in bytes the "
    "two tie), so at 4.9B, and with microbatches at 1T, the saved activations are not split.",
    "- **Weight-update sharding on the jax.jit side**: the gradients constrained to the optimizer state's split; "
    "XLA's CPU SPMD partitioner emits an all-reduce and a slice for that (no reduce-scatter appears in its HLO), "
    "then all-gathers the updated parameters. A parameter is split over the data axes on its largest dim not "
    "split yet that they divide (else its largest split dim, further); MeshIR's choice is train_step's.",
    "- **MeshIR's memory estimate** assumes no donation (transforms/analysis/memory_estimate.py): the donated figure "
    "subtracts the results, which live in the donated arguments' buffers.",
    "- **Microbatches** (`mi.train_step(microbatches={'batch': k})`; on the jax.jit side a scan of value_and_grad "
    "over k slices of the batch, the gradients accumulated in the update's layout) shrink what one layer holds "
    "live. They are beyond the issue's configuration: the 1T rows with them show what fitting 32 GiB takes. "
    "MeshIR's microbatched step loses the `length` split of the layers' carry (the scan's saved activations come "
    "out `[layers, batch@x, length@(), d_model]`, see above), hence its larger estimate.",
]


if __name__ == "__main__":
    sys.exit(main())
