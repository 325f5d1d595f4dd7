"""The README's character-LM training step as a user runs it: MeshIR vs the same model in JAX.

    python benchmarks/lm_step.py              # README size, 4 layers x d_model 256, 24 layers
    python benchmarks/lm_step.py --quick      # tiny sizes, few steps (results/quick/)
    python benchmarks/lm_step.py --layout single --sizes readme   # one device (lm_step_single.*)

One process, 8 CPU devices. The MeshIR side is examples/lm: `model.train_step` (forward,
backward, Adam) compiled with `mi.compile(layout=batch:x; heads, d_ff, vocab:y, donate=True)`
on the 4x2 mesh (`--layout`: another of examples/lm's LAYOUTS, e.g. `single`, one device,
where a small step is dispatch-bound) and driven like examples/transformer_lm.py drives it: a fresh NumPy batch each
step, the results fed back as the next step's parameters and optimizer state, every result
blocked on. The JAX side is the same model written in plain JAX (token + position embeddings,
pre-norm causal multi-head attention, tanh-GELU feed-forward, final layer norm, output tied to
the token embedding, softmax cross-entropy; Adam with the same hyperparameters) under
`jax.jit` with the same NamedShardings in and out, the parameters and state donated, and
`with_sharding_constraint` on the activations by the same layout rules. Both start from the
same parameters; their first-step losses must agree (rtol 1e-4).

Per size it reports the median over rounds of the per-round ratio MeshIR / jax.jit of median
step times (rounds interleave the two loops), bytes per device of the collectives in the
compiled HLO, PJRT's memory per device, and a split of one call with no donation and every
argument already on the devices: MeshIR's public call, MeshIR's PJRT execution alone, jax's
compiled call (`jitted.lower(...).compile()`) and jax's public call (`jitted(...)`).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import harness  # noqa: E402
import jax_baselines  # noqa: E402
import measure  # noqa: E402
from lm.model import LAYOUTS  # noqa: E402

RTOL = 1e-4
#: The same under the bf16 policy: both round to bf16 at the same points, XLA may keep excess
#: precision differently (docs/precision.md).
BF16_RTOL = 2e-3
#: examples/lm/model.py's LAYOUTS name used unless --layout says otherwise
DEFAULT_LAYOUT = "2d"
LAYOUT_NAMES = tuple(LAYOUTS)  # examples/lm's layouts, the choices of --layout

#: name -> model.Config fields (besides the defaults: heads 8, vocab 104, adam lr 3e-3)
SIZES = {
    "readme": {},
    "4L-d256": {"layers": 4, "d_model": 256, "d_ff": 1024, "batch": 32, "length": 128},
    "24L-readme": {"layers": 24},
}
QUICK_SIZES = {
    "tiny": {"layers": 1, "d_model": 32, "heads": 4, "d_ff": 64, "batch": 8, "length": 16},
    "tiny-3L": {"layers": 3, "d_model": 32, "heads": 4, "d_ff": 64, "batch": 8, "length": 16},
}
SIZE_TEXT = {
    "readme": "README default (2 layers, d_model 64, d_ff 256, 16×64)",
    "4L-d256": "4 layers, d_model 256, d_ff 1024, 32×128",
    "24L-readme": "24 layers of the README size",
    "tiny": "tiny (1 layer, d_model 32, 8×16)",
    "tiny-3L": "tiny, 3 layers",
}


# ------------------------------------------------------------------------------------------
# The model in plain JAX (examples/lm/model.py, op for op)


def jax_step_fn(cfg, sh, precision: str = "f32", loss=None):
    """(state, tokens, targets, step) -> (loss, new state): forward, backward and Adam.
    `loss`: `(params, tokens, targets) -> scalar` to differentiate instead of the JAX model's
    (benchmarks/jax_interop.py passes a MeshIR executable's call).
    `state` maps every MeshIR argument name of a parameter or an Adam slot to its array.
    `precision="bf16"`: mi.Precision()'s policy written by hand (docs/precision.md): each
    parameter cast to bf16 at its use, einsums in bf16, sums, exp, log and rsqrt in f32 (so
    layer norms, softmax and the loss), bf16 meeting f32 promoted to f32, Adam in f32."""
    import math

    import jax
    import jax.numpy as jnp

    from lm import model

    c = sh.constrain
    opt = model.optimizer(cfg)
    params = list(model.param_dims(cfg))
    scale = 1.0 / math.sqrt(cfg.d_k)
    narrow = jnp.bfloat16 if precision == "bf16" else jnp.float32

    def low(x):  # an einsum's operand
        return x.astype(narrow)

    def wide(x):  # a range op's operand
        return x.astype(jnp.float32)

    def ln(x, s, b):
        return jax_baselines.jax_layer_norm(jnp, wide(x), s, b)

    def gelu(x):  # mi.gelu: the tanh approximation
        return x * 0.5 * (jnp.tanh((x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)) + 1.0)

    def attention(x, p, i):
        x = low(x)
        q = c(jnp.einsum("blm,mhk->blhk", x, p[f"l{i}_wq"]), "batch", "length", "heads", "d_k")
        k = c(jnp.einsum("bjm,mhk->bjhk", x, p[f"l{i}_wk"]), "batch", "memory_length", "heads", "d_k")
        v = c(jnp.einsum("bjm,mhk->bjhk", x, p[f"l{i}_wv"]), "batch", "memory_length", "heads", "d_k")
        logits = c(jnp.einsum("blhk,bjhk->bhlj", q, k) * scale, "batch", "heads", "length", "memory_length")
        pos = jnp.arange(cfg.length)
        bias = jnp.where(pos[None, :] <= pos[:, None], 0.0, model.MASK_VALUE).astype(narrow)
        logits = logits + bias
        e = jnp.exp(wide(logits - jax.lax.stop_gradient(logits.max(axis=-1, keepdims=True))))
        w = e / e.sum(axis=-1, keepdims=True)
        o = c(jnp.einsum("bhlj,bjhk->blhk", low(w), v), "batch", "length", "heads", "d_k")
        return c(jnp.einsum("blhk,hkm->blm", o, p[f"l{i}_wo"]), "batch", "length", "d_model")

    def ffn(x, p, i):
        h = c(gelu(jnp.einsum("blm,mf->blf", low(x), p[f"l{i}_w1"]) + p[f"l{i}_b1"]), "batch", "length", "d_ff")
        return c(jnp.einsum("blf,fm->blm", h, p[f"l{i}_w2"]) + p[f"l{i}_b2"], "batch", "length", "d_model")

    def loss_fn(master, tokens, targets):
        p = {n: v.astype(narrow) for n, v in master.items()}  # the policy's cast at each use
        x = c(p["embed"][tokens] + p["pos_embed"], "batch", "length", "d_model")
        for i in range(cfg.layers):
            x = x + attention(ln(x, p[f"l{i}_ln1_scale"], p[f"l{i}_ln1_bias"]), p, i)
            x = x + ffn(ln(x, p[f"l{i}_ln2_scale"], p[f"l{i}_ln2_bias"]), p, i)
        x = ln(x, p["lnf_scale"], p["lnf_bias"])
        logits = c(jnp.einsum("blm,vm->blv", low(x), p["embed"]), "batch", "length", "vocab")
        shifted = logits - jax.lax.stop_gradient(logits.max(axis=-1, keepdims=True))
        log_probs = wide(shifted) - jnp.log(jnp.exp(wide(shifted)).sum(axis=-1, keepdims=True))
        one_hot = jax.nn.one_hot(targets, cfg.vocab, dtype=jnp.float32)
        return jnp.mean(-(one_hot * log_probs).sum(axis=-1))

    def step_fn(state, tokens, targets, t):
        p = {n: state[n] for n in params}
        loss_value, grads = jax.value_and_grad(loss or loss_fn)(p, tokens, targets)
        new = {}
        for n in params:  # mi.Adam.update
            g = grads[n]
            m = state[f"{n}__m"] * opt.beta1 + g * (1.0 - opt.beta1)
            v = state[f"{n}__v"] * opt.beta2 + g * g * (1.0 - opt.beta2)
            m_hat = m / (1.0 - jnp.power(jnp.float32(opt.beta1), t))
            v_hat = v / (1.0 - jnp.power(jnp.float32(opt.beta2), t))
            new[n] = p[n] - m_hat / (jnp.sqrt(v_hat) + opt.epsilon) * opt.learning_rate
            new[f"{n}__m"], new[f"{n}__v"] = m, v
        return loss_value, new

    return step_fn


# ------------------------------------------------------------------------------------------
# Measuring one size


def batches(cfg, seed: int = 0):
    """The fixed-seed sequence of fresh NumPy batches (tokens, targets), ids below
    data.CHARS (95) as in the corpus."""
    rng = np.random.default_rng(seed)
    while True:
        tokens = rng.integers(0, 95, (cfg.batch, cfg.length), dtype=np.int32)
        yield tokens, rng.integers(0, 95, (cfg.batch, cfg.length), dtype=np.int32)


def jax_side(cfg, axes: dict, rules: dict, state_names, precision: str = "f32", loss=None):
    """The JAX step for `cfg` and its shardings by the same layout rules:
    (step_fn, {state name: NamedSharding}, tokens' sharding, replicated). `loss`: see jax_step_fn."""
    from jax.sharding import NamedSharding, PartitionSpec

    from lm import model

    jmesh = jax_baselines.jax_mesh(axes)
    sh = jax_baselines.Shardings(jmesh, rules)
    dims = {n: [d.name for d in ds] for n, ds in model.param_dims(cfg).items()}
    state_sh = {n: sh.named(*dims[n.split("__")[0]]) for n in state_names}
    return jax_step_fn(cfg, sh, precision, loss), state_sh, sh.named("batch", "length"), NamedSharding(jmesh, PartitionSpec())


def run_size(name: str, fields: dict, rounds: int, steps: int, split_reps: int, say=print,
             layout: str = DEFAULT_LAYOUT, precision: str = "f32") -> dict:
    """One size, both ways. `precision`: examples/lm's PRECISIONS name; "bf16" runs MeshIR's
    step under mi.Precision() and JAX's under the same policy by hand (jax_step_fn), whose
    first-step losses then agree to BF16_RTOL."""
    import jax

    import meshir as mi
    from lm import model
    from meshir import _jax_private as jp

    cfg = model.Config(**fields)
    cfg.check()
    mesh, rules = model.layout(layout)
    axes = dict(mesh.shape)
    batch = batches(cfg).__next__

    # MeshIR: as examples/transformer_lm.py
    began = time.perf_counter()
    step_prog = model.train_step(cfg, mesh, precision=precision)
    exe = mi.compile(step_prog, layout=rules, donate=True)
    exe_plain = mi.compile(step_prog, layout=rules)  # for the split: no donation
    meshir_compile_s = time.perf_counter() - began
    names = step_prog.program.result_names
    sig = exe.signature
    init = {**model.init_params(cfg), **mi.init_optimizer_state(step_prog)}
    state_names = [n for n in names if n != "loss"]
    assert sorted(state_names) == sorted(init)

    # JAX: the same shardings (MeshIR's argument layouts, checked equal below) and donation
    fn, state_sh, tok_sh, repl = jax_side(cfg, axes, rules, state_names, precision)
    for n, s in zip(sig.arg_names, exe.in_shardings):
        want = tok_sh if n in ("tokens", "targets") else repl if n == "step" else state_sh[n]
        if not s.is_equivalent_to(want, len(sig.arg_types[sig.arg_names.index(n)].shape)):
            raise AssertionError(f"{name}: argument '{n}': MeshIR lays it out as {s.spec}, jax as {want.spec}")
    shardings = dict(in_shardings=(state_sh, tok_sh, tok_sh, repl), out_shardings=(repl, state_sh))
    jitted = jax.jit(fn, donate_argnums=(0,), **shardings)
    jitted_plain = jax.jit(fn, **shardings)

    def put_state():
        return {n: jax.device_put(init[n], state_sh[n]) for n in state_names}

    tok0, tgt0 = batch()
    compiled, jax_compile_s = harness.timed(
        lambda: jitted.lower(put_state(), tok0, tgt0, np.float32(1)).compile())

    # Same parameters, same batch: the first step's losses agree
    m_out = dict(zip(names, exe(tokens=tok0, targets=tgt0, **init, step=np.float32(1))))
    j_loss, j_state = jitted(put_state(), tok0, tgt0, np.float32(1))
    m_loss, j_loss = float(m_out["loss"]), float(j_loss)
    np.testing.assert_allclose(m_loss, j_loss, rtol=RTOL if precision == "f32" else BF16_RTOL,
                               err_msg=f"{name}: first-step loss, MeshIR vs jax.jit ({precision})")
    say(f"  {name}: first-step loss MeshIR {m_loss:.6f}, jax {j_loss:.6f}")

    # The user's loop, both ways, interleaved rounds (the order alternates per round)
    loop = {"meshir": {"state": {n: m_out[n] for n in state_names}, "t": 1},
            "jax": {"state": j_state, "t": 1}}

    def meshir_step():
        s = loop["meshir"]
        s["t"] += 1
        tokens, targets = batch()
        out, elapsed = harness.timed(
            lambda: exe(tokens=tokens, targets=targets, **s["state"], step=np.float32(s["t"])))
        results = dict(zip(names, out))
        s["state"] = {n: results[n] for n in state_names}
        s["loss"] = float(results["loss"])
        return elapsed

    def jax_step():
        s = loop["jax"]
        s["t"] += 1
        tokens, targets = batch()
        (loss, new), elapsed = harness.timed(lambda: jitted(s["state"], tokens, targets, np.float32(s["t"])))
        s["state"], s["loss"] = new, float(loss)
        return elapsed

    # 2 untimed rounds first (caches, the first donated call)
    per_round = harness.interleaved_rounds({"meshir": meshir_step, "jax": jax_step}, rounds, steps, warmup=2)
    ratios = harness.round_ratios(per_round, "meshir", "jax")
    loss_gap = abs(loop["meshir"]["loss"] - loop["jax"]["loss"]) / abs(loop["jax"]["loss"])

    # The split: one call, no donation, every argument already on the devices
    placed = {n: jax.device_put(v, s) for n, v, s in
              zip(sig.arg_names, [{"tokens": tok0, "targets": tgt0, "step": np.float32(1), **init}[n]
                                  for n in sig.arg_names], exe_plain.in_shardings)}
    args = [placed[n] for n in sig.arg_names]
    j_args = ({n: placed[n] for n in state_names}, placed["tokens"], placed["targets"], placed["step"])
    compiled_plain = jitted_plain.lower(*j_args).compile()
    split = harness.time_calls({
        "meshir_public": lambda: exe_plain(**placed),
        "meshir_pjrt_only": lambda: jp.execute(exe_plain._loaded, args, exe_plain._result_handlers),
        "jax_compiled": lambda: compiled_plain(*j_args),
        "jax_public": lambda: jitted_plain(*j_args),
    }, reps=split_reps, warmup=3)

    m_coll = measure.hlo_collectives(exe.compiled_hlo_text())
    j_coll = measure.hlo_collectives(compiled.as_text())
    for coll in (m_coll, j_coll):
        coll.pop("instructions")
    record = {
        "size": name, "text": SIZE_TEXT.get(name, name), "config": cfg.to_dict(), "layout": layout,
        "precision": precision,
        "rules": {k: v for k, v in rules.items()}, "mesh": axes,
        "arguments": len(sig.arg_names), "results": len(names),
        "first_step_loss": {"meshir": m_loss, "jax": j_loss, "rel_diff": abs(m_loss - j_loss) / abs(j_loss)},
        "last_loss_rel_diff": loss_gap,
        "compile_s": {"meshir_both": meshir_compile_s, "meshir_passes": exe.compile_times["meshir_passes_s"],
                      "meshir_xla": exe.compile_times["xla_compile_s"], "jax_lower_compile": jax_compile_s},
        "step_time": {
            "rounds": rounds, "steps_per_round": steps,
            "ratio_median": statistics.median(ratios), "ratios": ratios,
            "meshir_median_s": statistics.median(per_round["meshir"]),
            "jax_median_s": statistics.median(per_round["jax"]),
            "tokens_per_s": {k: cfg.batch * cfg.length / statistics.median(v) for k, v in per_round.items()},
        },
        "split": split,
        "split_ratios": {
            "pjrt_only_vs_jax_compiled": split["meshir_pjrt_only"]["median_s"] / split["jax_compiled"]["median_s"],
            "public_vs_jax_public": split["meshir_public"]["median_s"] / split["jax_public"]["median_s"],
            "public_vs_pjrt_only": split["meshir_public"]["median_s"] / split["meshir_pjrt_only"]["median_s"],
        },
        "collectives": {"meshir": m_coll, "jax": j_coll},
        "flops_per_device": {"meshir": measure.flops_per_device(exe.cost_analysis()),
                             "jax": measure.flops_per_device(compiled.cost_analysis())},
        "memory_per_device": {"meshir": measure.memory_per_device(exe.memory_analysis()),
                              "jax": measure.memory_per_device(compiled.memory_analysis())},
    }
    jax.clear_caches()
    return record


# ------------------------------------------------------------------------------------------
# The report


def _temp(mem: dict | None):
    return mem["temp"] if mem else None


#: Issue 12's targets: step time (median of per-round ratios) per size; memory per device <= jax's.
STEP_TARGETS = {"readme": 1.0, "4L-d256": 0.97, "24L-readme": 0.97}
#: Issue 28's target on one device (the user's loop, dispatch-bound when the step is small).
SINGLE_TARGETS = {"readme": 1.0}


def summary_markdown(runs: list[tuple[str, dict]]) -> str:
    """Several runs of this script side by side, per size: the step-time ratio, PJRT-only
    ratio, memory and temp memory ratios of each run, their median, and the targets."""
    sizes = [r["size"] for r in runs[0][1]["sizes"]]
    single = runs[0][1]["meta"].get("layout") == "single"
    targets = SINGLE_TARGETS if single else STEP_TARGETS
    said = ("Target (issue 28): step time ≤ 1.0× at the README size on one device." if single else
            "Targets (issue 12): step time ≤ 1.0× at the README size and ≤ 0.97× at the bigger sizes, "
            "memory per device ≤ 1.0×.")
    if runs[0][1]["meta"].get("precision", "f32") != "f32":
        targets, said = {}, ("Under the bf16 policy (issue 29), against the same policy written by hand in jax; "
                             "no target of its own.")
    lines = [
        "# The LM training step, MeshIR vs jax.jit: repeated runs",
        "",
        f"{len(runs)} separate runs of `python benchmarks/lm_step.py{_layout_flag(runs[0][1]['meta'])}` "
        f"({', '.join(name for name, _ in runs)}); per run "
        "the median of per-round step-time ratios, PJRT-only / jax compiled, and memory per device (total, temp) "
        "MeshIR / jax. " + said,
        "",
        "| size | step time per run | median | target | PJRT only / jax compiled per run | memory per run | "
        "temp per run |",
        "|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        recs = [next(r for r in data["sizes"] if r["size"] == size) for _, data in runs]
        steps = [r["step_time"]["ratio_median"] for r in recs]
        mid = statistics.median(steps)
        target = targets.get(size)
        verdict = "—" if target is None else f"≤ {target:.2f}: {'met' if mid <= target else 'missed'}"
        mem = [r["memory_per_device"]["meshir"]["total"] / r["memory_per_device"]["jax"]["total"] for r in recs]
        temp = [r["memory_per_device"]["meshir"]["temp"] / r["memory_per_device"]["jax"]["temp"] for r in recs]
        pjrt = [r["split_ratios"]["pjrt_only_vs_jax_compiled"] for r in recs]
        lines.append(
            f"| {recs[0]['text']} | {', '.join(f'{x:.3f}×' for x in steps)} | **{mid:.3f}×** | {verdict} | "
            f"{', '.join(f'{x:.3f}×' for x in pjrt)} | {', '.join(f'{x:.3f}×' for x in mem)} | "
            f"{', '.join(f'{x:.3f}×' for x in temp)} |")
    return "\n".join(lines) + "\n"


def _layout_flag(meta: dict) -> str:
    layout, precision = meta.get("layout", DEFAULT_LAYOUT), meta.get("precision", "f32")
    return ("" if layout == DEFAULT_LAYOUT else f" --layout {layout}") + ("" if precision == "f32" else f" --precision {precision}")


def _layout_text(layout: str) -> str:
    """How the report names a layout: its mesh and rules."""
    from lm import model

    axes, rules = model.LAYOUTS[layout]
    mesh = "x".join(str(n) for n in axes.values())
    devices = 1
    for n in axes.values():
        devices *= n
    said = "; ".join(f"{dim}:{axis if isinstance(axis, str) else '(' + ','.join(axis) + ')'}" for dim, axis in rules.items())
    return (f"layout `{layout}`: {devices} CPU device{'s' if devices > 1 else ''} of 8, {mesh} mesh"
            + (f", `{said}`" if said else ", everything replicated"))


def report_name(layout: str, precision: str = "f32") -> str:
    """lm_step for the default layout (the 4x2 targets) in f32, lm_step_<layout> for another
    layout, with _bf16 under the bf16 policy."""
    return ("lm_step" if layout == DEFAULT_LAYOUT else f"lm_step_{layout}") + ("" if precision == "f32" else f"_{precision}")


def markdown(meta: dict, records: list[dict]) -> str:
    ms, mb = harness.ms, harness.mb
    lines = [
        "# The README's LM training step: MeshIR vs jax.jit",
        "",
        f"Generated by `python benchmarks/lm_step.py{' --quick' if meta['quick'] else ''}{_layout_flag(meta)}` on {meta['date']} "
        f"({meta['platform']}, {meta['cpus']} CPUs, jax {meta['jax']}; {_layout_text(meta.get('layout', DEFAULT_LAYOUT))}, "
        "Adam, parameters and state donated).",
        "",
        "Each step as a user runs it: a fresh NumPy batch, the results fed back, every result blocked on. "
        f"{meta['rounds']} interleaved rounds of {meta['steps']} steps per contender; a round's ratio is "
        "MeshIR's median step time over jax.jit's, and the table gives the median of those ratios. "
        "Bytes per device: the collectives in the compiled HLO. Memory per device: PJRT's argument + "
        "output + temp bytes.",
        "",
    ]
    if meta.get("precision", "f32") != "f32":
        lines += ["Under the bf16 policy: MeshIR's step built with mi.Precision(), jax's written by hand with the same "
                  "casts (`jax_step_fn(..., precision=\"bf16\")`, docs/precision.md); XLA:CPU widens bf16 "
                  "collectives to f32 in the compiled HLO, so the bytes here are f32's.", ""]
    if meta.get("note"):
        lines += [meta["note"], ""]
    lines += [
        "| size | args | MeshIR / jax.jit step time | MeshIR ms | jax ms | bytes/device MeshIR vs jax | "
        "memory/device MeshIR vs jax (MB) | temp MeshIR vs jax (MB) | first-step loss (MeshIR, jax) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        st, mem, coll, fl = r["step_time"], r["memory_per_device"], r["collectives"], r["first_step_loss"]
        m_mem, j_mem = (mem[k]["total"] if mem[k] else None for k in ("meshir", "jax"))
        lines.append(
            f"| {r['text']} | {r['arguments']} | **{st['ratio_median']:.2f}×** | {ms(st['meshir_median_s'])} | "
            f"{ms(st['jax_median_s'])} | {coll['meshir']['bytes_per_device']:,} vs {coll['jax']['bytes_per_device']:,} | "
            f"{mb(m_mem)} vs {mb(j_mem)} | {mb(_temp(mem['meshir']))} vs {mb(_temp(mem['jax']))} | "
            f"{fl['meshir']:.5f}, {fl['jax']:.5f} (agree) |")
    lines += [
        "",
        "## Split of one call (no donation, every argument already on the devices)",
        "",
        "Medians (ms) over interleaved calls. MeshIR public: `exe(**arrays)`; MeshIR PJRT only: "
        "`execute_sharded` of the loaded executable and jax's result handlers (no MeshIR code); jax compiled: "
        "`jitted.lower(...).compile()` called; jax public: `jitted(...)`.",
        "",
        "| size | MeshIR public | MeshIR PJRT only | jax compiled | jax public | PJRT only / jax compiled | "
        "MeshIR public / jax public |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        s, q = r["split"], r["split_ratios"]
        lines.append(
            f"| {r['text']} | {ms(s['meshir_public']['median_s'])} | {ms(s['meshir_pjrt_only']['median_s'])} | "
            f"{ms(s['jax_compiled']['median_s'])} | {ms(s['jax_public']['median_s'])} | "
            f"{q['pjrt_only_vs_jax_compiled']:.2f}× | {q['public_vs_jax_public']:.2f}× |")
    lines += ["", "## Compile time (s)", "", "| size | MeshIR passes | MeshIR XLA (donated) | jax lower + compile |",
              "|---|---|---|---|"]
    for r in records:
        c = r["compile_s"]
        lines.append(f"| {r['text']} | {c['meshir_passes']:.2f} | {c['meshir_xla']:.2f} | {c['jax_lower_compile']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes, few steps; writes under results/quick/")
    p.add_argument("--sizes", help=f"comma-separated subset of {', '.join(SIZES)} (or of the quick sizes)")
    p.add_argument("--rounds", type=int, help="interleaved rounds (default: 9; --quick 2)")
    p.add_argument("--steps", type=int, help="steps per contender per round (default: 10; --quick 3)")
    p.add_argument("--split-reps", type=int, help="timed calls of each split contender (default: 30; --quick 3)")
    p.add_argument("--layout", default=DEFAULT_LAYOUT, choices=LAYOUT_NAMES,
                   help="examples/lm/model.py's layout (default 2d, the 4x2 targets); results go to "
                        "lm_step_<layout>.{md,json} unless it is 2d")
    p.add_argument("--precision", default="f32", choices=["f32", "bf16"],
                   help="bf16: MeshIR's step under mi.Precision() against the same policy by hand in jax "
                        "(docs/precision.md); results go to lm_step[_<layout>]_bf16.{md,json}")
    p.add_argument("--note", default="", help="a line for the report (e.g. why the rounds were reduced)")
    p.add_argument("--out", help="output folder (default: benchmarks/results, --quick: benchmarks/results/quick)")
    p.add_argument("--summarize", nargs="+", metavar="RUN_DIR",
                   help="measure nothing: write lm_step_runs.md in --out from the lm_step.json of these folders")
    args = p.parse_args(argv)
    if args.summarize:
        out = Path(args.out) if args.out else HERE / "results"
        name = report_name(args.layout, args.precision)
        runs = [(Path(d).name, json.loads((Path(d) / f"{name}.json").read_text())) for d in args.summarize]
        (out / f"{name}_runs.md").write_text(summary_markdown(runs))
        print(f"wrote {out / f'{name}_runs.md'}")
        return 0
    table = QUICK_SIZES if args.quick else SIZES
    chosen = harness.chosen_sizes(p, args.sizes, table)
    rounds = args.rounds or (2 if args.quick else 9)
    steps = args.steps or (3 if args.quick else 10)
    split_reps = args.split_reps or (3 if args.quick else 30)
    out = harness.results_dir(args.out, args.quick)

    harness.ensure_devices(8)
    records = []
    for name in chosen:
        print(f"{name}: {SIZE_TEXT.get(name, name)}", flush=True)
        began = time.perf_counter()
        rec = run_size(name, table[name], rounds, steps, split_reps, layout=args.layout, precision=args.precision)
        st, q = rec["step_time"], rec["split_ratios"]
        print(f"  MeshIR / jax.jit {st['ratio_median']:.2f}x ({harness.ms(st['meshir_median_s'])} vs "
              f"{harness.ms(st['jax_median_s'])} ms); PJRT only / jax compiled {q['pjrt_only_vs_jax_compiled']:.2f}x; "
              f"{time.perf_counter() - began:.0f} s", flush=True)
        records.append(rec)
    meta = {**harness.machine(), "quick": args.quick, "layout": args.layout, "precision": args.precision,
            "rounds": rounds, "steps": steps, "split_reps": split_reps, "note": args.note}
    harness.write_report(out, report_name(args.layout, args.precision), {"meta": meta, "sizes": records},
                         markdown(meta, records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
