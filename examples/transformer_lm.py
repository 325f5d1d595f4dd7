"""A character-level Transformer language model trained with MeshIR on a mesh of 8 CPU devices.

A decoder-only Transformer (token and learned position embeddings, pre-norm causal multi-head
self-attention and GELU feed-forward layers, a final layer norm, output logits tied to the
token embedding, softmax cross-entropy against the next character) written with named
dimensions, trained with one compiled MeshIR training step (forward, backward and optimizer
update) under Mesh-TensorFlow layout rules. The default layout is Mesh-TensorFlow's 2-D one:
batch:x; heads, d_ff, vocab:y on a 4x2 mesh.

The text is real and offline: {corpus} (about 460,000 characters on CPython 3.11; fixed for a
given Python version). Characters outside printable ASCII and newline map to one unknown id;
every 10th 2,048-character chunk is held out for validation. --corpus large (the default of
--size medium) adds the docstrings of every other standard-library module and pydoc's
language reference topics (about 2.3 million characters); it starts with the small corpus,
whose held-out text is held out there too.

--size small (the default) is the README's model (the defaults shown below); --size medium is a 10.7-million-parameter
model (6 layers, d_model 384) trained for 2000 steps on the large corpus with a warmed-up,
decaying learning rate (about 22 minutes on 2 CPU cores). Explicit flags override a size's
values; `--size medium --help` shows its defaults.

Training is reproducible and resumable: batches are a pure function of (seed, step), and
--checkpoint DIR saves parameters, optimizer state, step, loss history and config (sharded
Orbax checkpoints, one DIR/<step> directory per save), so a run killed mid-way and restarted
with the same flags continues with the same loss curve.

    python examples/transformer_lm.py                          # ~1-2 minutes on 2 CPU cores
    python examples/transformer_lm.py --checkpoint runs/lm     # resumable; rerun to continue
    python examples/transformer_lm.py --layout model-parallel --steps 100
    python examples/transformer_lm.py --experts 8             # GShard's mixture of experts, top-2
    python examples/transformer_lm.py --layers 4 --stages 2   # GPipe: 2 stages x a 2x2 mesh
    python examples/transformer_lm.py --size medium --checkpoint runs/medium   # ~22 minutes
"""
from __future__ import annotations

import argparse
import collections
import functools
import json
import math
import os
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:  # examples/lm/ holds the modules of this script
    sys.path.insert(0, HERE)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental import multihost_utils  # noqa: E402

import meshir as mi  # noqa: E402
from lm import checkpoint, data, decode, model, plot, progress, sizes  # noqa: E402


class UsageError(Exception):
    """An error the user can fix: printed as one line, exit status 1."""


# ------------------------------------------------------------------------------------------
# Command line


def _size_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--size", choices=list(sizes.SIZES), default="small",
                   help="the defaults of every model and training flag below: small (the README's model) "
                        "or medium (10.7M parameters, the large corpus) (default: %(default)s)")


def build_parser(size: str = "small") -> argparse.ArgumentParser:
    """The parser whose defaults are those of `size` (parse_args picks it from --size)."""
    paragraphs = __doc__.format(corpus=data.describe_source()).split("\n\n")
    doc = "\n\n".join(p if p.startswith(" ") else textwrap.fill(" ".join(p.split()), 95) for p in paragraphs)
    defaults = sizes.defaults(size)
    p = argparse.ArgumentParser(prog="transformer_lm.py", description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    _size_flag(p)
    g = p.add_argument_group("model")
    g.add_argument("--layers", type=int, default=defaults["layers"], help="Transformer layers (default: %(default)s)")
    g.add_argument("--d-model", type=int, default=defaults["d_model"], help="model width (default: %(default)s)")
    g.add_argument("--heads", type=int, default=defaults["heads"],
                   help="attention heads; d_k = d_model / heads (default: %(default)s)")
    g.add_argument("--d-ff", type=int, default=defaults["d_ff"], help="feed-forward width (default: %(default)s)")
    g.add_argument("--length", type=int, default=defaults["length"],
                   help="characters per training sequence (default: %(default)s)")
    g = p.add_argument_group("mixture of experts (docs/layers.md)")
    g.add_argument("--experts", type=int, default=defaults["experts"], metavar="E",
                   help="replace the feed-forward of every other layer (from the second) by a GShard mixture of E "
                        "experts of width --d-ff, split over the batch axis; 0: a dense model (default: %(default)s)")
    g.add_argument("--experts-per-token", dest="top_k", type=int, default=defaults["top_k"], metavar="K",
                   help="experts per token: 2 is GShard's gating, 1 Switch's (default: %(default)s)")
    g.add_argument("--capacity-factor", type=float, default=defaults["capacity_factor"], metavar="F",
                   help="in training, each expert takes at most F * K * length / E tokens of a sequence; "
                        "the others are dropped (default: %(default)s)")
    g.add_argument("--eval-capacity-factor", type=float, default=defaults["eval_capacity_factor"], metavar="F",
                   help="the capacity factor of evaluation and generation (default: %(default)s)")
    g.add_argument("--aux-loss-weight", type=float, default=defaults["aux_loss_weight"], metavar="W",
                   help="the weight of GShard's load-balancing loss in the training loss (default: %(default)s)")
    g = p.add_argument_group("pipeline (docs/layers.md)")
    g.add_argument("--stages", type=int, default=defaults["stages"], metavar="P",
                   help="run the layers as GPipe's pipeline of P stages (2 or 4) on a stage axis of the 8 devices, "
                        "the layout's axes sharing the rest; 0: no pipeline (default: %(default)s)")
    g.add_argument("--pipeline-microbatches", type=int, default=defaults["pipeline_microbatches"], metavar="M",
                   help="with --stages: the microbatches each step's batch is cut into; the pipeline idles "
                        "(P-1)/(M+P-1) of its ticks (not --microbatches-style gradient accumulation) "
                        "(default: %(default)s)")
    g = p.add_argument_group("training")
    g.add_argument("--corpus", choices=data.CORPORA, default=defaults["corpus"],
                   help="small: the docstrings above; large: those and every other standard-library module's, "
                        "and pydoc's reference topics (default: %(default)s)")
    g.add_argument("--batch", type=int, default=defaults["batch"], help="sequences per step (default: %(default)s)")
    g.add_argument("--steps", type=int, default=defaults["steps"], help="training steps in all (default: %(default)s)")
    g.add_argument("--lr", type=float, default=defaults["lr"], help="learning rate (default: %(default)s)")
    g.add_argument("--warmup", type=int, default=defaults["warmup"], metavar="N",
                   help="raise the learning rate linearly from 0 over the first N steps (default: %(default)s)")
    g.add_argument("--decay-steps", type=int, default=defaults["decay_steps"], metavar="N",
                   help=f"then lower it linearly to {model.DECAY_TO:g} of --lr at step N; 0: no decay "
                        f"(default: %(default)s)")
    g.add_argument("--dropout", type=float, default=defaults["dropout"], metavar="RATE",
                   help="residual dropout after attention and the feed-forward, a new mask every step (drawn "
                        "from --seed and the step: the same under every layout); 0: none (default: %(default)s)")
    g.add_argument("--clip-norm", type=float, default=defaults["clip_norm"], metavar="C",
                   help="clip the gradients to global norm C; 0: none (default: %(default)s)")
    g.add_argument("--optimizer", choices=model.OPTIMIZERS, default=defaults["optimizer"],
                   help="adam, adafactor (factored second moments) or sgd (momentum 0.9) (default: %(default)s)")
    g.add_argument("--seed", type=int, default=defaults["seed"],
                   help="seed of the initial parameters and of the batches (default: %(default)s)")
    g = p.add_argument_group("layout")
    g.add_argument("--layout", choices=[*model.LAYOUTS, "auto"], default="2d",
                   help="; ".join(f"{k}: {v}" for k, v in model.LAYOUT_HELP.items()) + "; auto: the rules "
                        "mi.auto_layout chooses for this model on the 4x2 mesh, printed with the candidates "
                        "it weighed (default: %(default)s)")
    g.add_argument("--precision", choices=list(model.PRECISIONS), default="f32",
                   help="f32: everything in float32; bf16: mi.Precision() - parameters and optimizer state in "
                        "float32, matmuls and activations in bfloat16, sums, softmax, layer-norm statistics, "
                        "the loss and gradient sums in float32 (slower on a CPU, which has no bf16 matrix "
                        "units; a checkpoint holds float32 either way) (default: %(default)s)")
    g.add_argument("--full-report", action="store_true",
                   help="print the whole compile report (every value's layout), not just the collectives")
    g = p.add_argument_group("output")
    g.add_argument("--checkpoint", metavar="DIR",
                   help="save sharded checkpoints to DIR (mi.Checkpoints: Orbax, one DIR/<step> directory per "
                        "save, committed atomically, a checksum per array, the last 2 kept) and resume from the "
                        "latest one if there is one, in any --layout")
    g.add_argument("--checkpoint-every", type=int, default=100, metavar="N",
                   help="save every N steps, and at the end (default: %(default)s)")
    g.add_argument("--eval-every", type=int, default=100, metavar="N",
                   help="validation loss every N steps and at the end; 0: never (default: %(default)s)")
    g.add_argument("--plot", metavar="PNG",
                   help="loss-curve PNG (default: DIR/loss.png with --checkpoint, else transformer_lm_loss.png); "
                        "'' for none; needs matplotlib (pip install -e '.[viz]')")
    g.add_argument("--sample", type=int, default=200, metavar="N",
                   help="generate N characters at the end, greedily, sampled and by beam search, on the devices "
                        "with a key/value cache (at most --length characters with the prompt: the model's "
                        "positions); 0: none (default: %(default)s)")
    g.add_argument("--temperature", type=float, default=0.8, metavar="T",
                   help="the sampled sample's temperature (default: %(default)s)")
    g.add_argument("--top-k", dest="sample_top_k", type=int, default=20, metavar="K",
                   help="the sampled sample draws from the K most likely characters (default: %(default)s)")
    g.add_argument("--beam", type=int, default=4, metavar="W",
                   help="the beam search's width (default: %(default)s)")
    g.add_argument("--prompt", default="Return the ",
                   help="the start of the generated sample (default: %(default)r)")
    g.add_argument("--no-progress", action="store_true",
                   help="no progress bar (tqdm's, on stderr; drawn only on a terminal anyway)")
    g.add_argument("--summary-json", metavar="FILE",
                   help="write the loss histories and the speed as JSON to FILE (process 0)")
    g = p.add_argument_group("TPU without a TPU (docs/tpu.md)")
    g.add_argument("--tpu", metavar="TOPOLOGY",
                   help="compile the training step for a TPU topology with XLA:TPU (the tpu extra; e.g. v5e:2x4, "
                        "whose 8 devices take the layout's mesh), print its memory and cost, and stop: nothing trains")
    g = p.add_argument_group("processes (docs/multi-host.md)")
    g.add_argument("--processes", type=int, default=1, metavar="N",
                   help="run as N processes on this machine, the mesh's devices split among them; each feeds "
                        "its own rows of every batch, process 0 prints and plots (default: %(default)s)")
    g.add_argument("--coordinator", metavar="HOST:PORT",
                   help="join a run over several hosts: process 0's address (each host runs this script "
                        "with --coordinator, --num-processes and its own --process-id)")
    g.add_argument("--num-processes", type=int, metavar="N", help="processes in the run (with --coordinator)")
    g.add_argument("--process-id", type=int, metavar="I", help="this process's index, 0..N-1 (with --coordinator)")
    return p


def parse_args(argv=None) -> argparse.Namespace:
    """The command line, with the defaults of its --size: explicit flags override them."""
    first = argparse.ArgumentParser(prog="transformer_lm.py", add_help=False)
    _size_flag(first)
    size = first.parse_known_args(argv)[0].size
    return build_parser(size).parse_args(argv)


def check_sampling(args, cfg: model.Config) -> None:
    """The sampling flags (checked before training, when there will be samples)."""
    if not args.sample:
        return
    if args.beam < 1:
        raise UsageError(f"--beam must be at least 1, got {args.beam}")
    if not 0 < args.temperature < float("inf"):
        raise UsageError(f"--temperature must be a finite number > 0, got {args.temperature}")
    if not 1 <= args.sample_top_k <= cfg.vocab:
        raise UsageError(f"--top-k must be in [1, {cfg.vocab}] (the vocabulary), got {args.sample_top_k}")
    cached = not (cfg.stages or cfg.experts or jax.process_count() > 1)  # samples() decodes these without a cache
    if cached and len(data.encode(args.prompt)) >= cfg.length:
        raise UsageError(f"--prompt of {len(data.encode(args.prompt))} characters leaves no room to generate: the "
                         f"key/value cache has --length {cfg.length} slots")


def config_of(args) -> model.Config:
    cfg = model.Config(layers=args.layers, d_model=args.d_model, heads=args.heads, d_ff=args.d_ff,
                       length=args.length, batch=args.batch, vocab=data.VOCAB_SIZE, optimizer=args.optimizer,
                       lr=args.lr, warmup=args.warmup, decay_steps=args.decay_steps, seed=args.seed,
                       dropout=args.dropout, clip_norm=args.clip_norm, experts=args.experts, top_k=args.top_k,
                       capacity_factor=args.capacity_factor, eval_capacity_factor=args.eval_capacity_factor,
                       aux_loss_weight=args.aux_loss_weight, stages=args.stages,
                       pipeline_microbatches=args.pipeline_microbatches)
    try:
        cfg.check()
    except ValueError as e:
        raise UsageError(str(e)) from None
    for flag in ("steps", "checkpoint_every"):
        if getattr(args, flag) < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be at least 1")
    if args.eval_every < 0 or args.sample < 0:
        raise UsageError("--eval-every and --sample must not be negative")
    if args.sample and not args.prompt:
        raise UsageError("--prompt must not be empty (or use --sample 0)")
    if cfg.stages and args.layout == "auto":
        raise UsageError("--stages needs a named --layout (2d, data-parallel, model-parallel, single), not auto")
    if cfg.experts and args.layout not in model.MOE_RULES:
        raise UsageError(f"--experts needs --layout {', '.join(model.MOE_RULES)}, not {args.layout} (model "
                         f"parallelism splits d_ff over the axes the experts would take)")
    return cfg


# ------------------------------------------------------------------------------------------
# Compilation (cached per process: a resumed run in the same process reuses the executables)


def _one_line(error: Exception) -> str:
    """A MeshIR error as one line: its first diagnostic, and how many there were."""
    lines = [line for line in str(error).splitlines() if line.strip()]
    first = lines[0] if lines else str(error)
    if first.startswith("loc(unknown): "):
        first = first[len("loc(unknown): "):]
    if first.startswith("error: "):
        first = first[len("error: "):]
    return first + (f" (the first of {len(lines)} diagnostics)" if len(lines) > 1 else "")


def layout_mesh(layout: str, stages: int = 0) -> mi.Mesh:
    """The mesh of --layout (auto searches the 2-D layout's 4x2 mesh); with --stages, a
    stage axis first."""
    return model.layout("2d" if layout == "auto" else layout, stages=stages)[0]


@functools.lru_cache(maxsize=None)
def auto_choice(cfg: model.Config, precision: str = "f32") -> mi.AutoLayout:
    """--layout auto: the rules mi.auto_layout chooses for the training step on the 4x2 mesh
    (time on this machine's device kind, the cost model's default), for every program."""
    return mi.auto_layout(train_program(cfg, "auto", precision), keep=5)


def layout_of(cfg: model.Config, layout: str, precision: str = "f32") -> tuple[mi.Mesh, dict]:
    """(mesh, rules) of --layout."""
    if layout == "auto":
        return layout_mesh(layout), dict(auto_choice(cfg, precision).rules)
    return model.layout(layout, cfg.experts, cfg.stages)


#: What the training step reports besides the loss (shown in the progress line).
METRICS = ("grad_norm", "learning_rate")


@functools.lru_cache(maxsize=None)
def train_program(cfg: model.Config, layout: str, precision: str = "f32") -> mi.TrainStep:
    return model.train_step(cfg, layout_mesh(layout, cfg.stages), precision=precision, metrics=METRICS)


@functools.lru_cache(maxsize=None)
def compiled_train_step(cfg: model.Config, layout: str, precision: str = "f32"):
    mesh, rules = layout_of(cfg, layout, precision)
    step = train_program(cfg, layout, precision)
    try:
        exe = mi.compile(step, layout=rules, donate=True)  # parameters and state stay on the devices
    except mi.MeshIRError as e:
        raise UsageError(f"--layout {layout} ({model.format_rules(rules)} on the {model.format_mesh(mesh)}) "
                         f"does not fit this model: {_one_line(e)}") from None
    return step, exe


@functools.lru_cache(maxsize=None)
def compiled_forward(cfg: model.Config, layout: str, precision: str = "f32"):
    """The forward program (results: loss, logits) for validation and generation, under the
    training's precision policy."""
    mesh, rules = layout_of(cfg, layout, precision)
    try:
        return mi.compile(model.build(cfg, mesh, with_logits=True, precision=precision), layout=rules)
    except mi.MeshIRError as e:
        raise UsageError(f"--layout {layout} does not fit the forward program: {_one_line(e)}") from None


def collectives_summary(exe) -> str:
    """The training step's collectives grouped by kind and axes, with bytes sent per device."""
    groups = collections.OrderedDict()
    for c in exe.compile_report.collectives:
        key = (c.kind, c.detail.replace("reduction=", ""), ",".join(c.axes), c.element_type)
        count, nbytes = groups.get(key, (0, 0))
        groups[key] = (count + 1, nbytes + c.bytes_per_device)
    if not groups:
        return "  collectives per step: none"
    rows = [("collective", "over", "type", "count", "bytes/device")]
    rows += [(f"{kind} {detail}".strip(), f"({axes})", elem, str(n), f"{b:,}")
             for (kind, detail, axes, elem), (n, b) in groups.items()]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  collectives per step:"]
    lines += ["    " + "  ".join(v.ljust(w) if i < 3 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
              for r in rows]
    total = sum(b for _, b in groups.values())
    lines.append(f"    total: {sum(n for n, _ in groups.values())} collectives, {total:,} bytes sent per device per step")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Evaluation and generation


def feed(exe, batch: dict[str, np.ndarray]) -> dict:
    """The batch as `exe` takes it: whole in one process; with several, each process passes
    only its own rows (`mi.process_local`; a real loader would read only those)."""
    if jax.process_count() == 1:
        return batch
    return {k: mi.process_local(v[mi.distributed.local_slices(exe, k)], along="batch") for k, v in batch.items()}


def validation_loss(exe_forward, params, corpus, cfg: model.Config, dropped: list | None = None) -> float:
    """The mean cross-entropy over the held-out batches; with experts, each batch's fraction
    of token-to-expert assignments over capacity is appended to `dropped` if given."""
    losses = []
    for x, y in data.validation_batches(corpus, cfg.batch, cfg.length):
        results = exe_forward(**feed(exe_forward, {"tokens": x, "targets": y}), **params)
        losses.append(float(results[0]))
        if dropped is not None and cfg.experts:
            dropped.append(float(results.dropped))
    return float(np.mean(losses))


def generate_uncached(exe_forward, params, cfg: model.Config, prompt: str, count: int) -> str:
    """decode.greedy_without_cache with the forward program, each process feeding its rows."""
    targets = np.zeros((cfg.batch, cfg.length), np.int32)

    def logits_of_text(tokens):
        logits = exe_forward(**feed(exe_forward, {"tokens": tokens, "targets": targets}), **params)[1]
        return np.asarray(logits if logits.is_fully_addressable else multihost_utils.process_allgather(logits, tiled=True))

    return decode.greedy_without_cache(logits_of_text, cfg, prompt, count)


def _rows(mesh: mi.Mesh, rules: dict) -> int:
    """The smallest batch the rules split evenly: the devices of batch's axes."""
    axes = rules.get("batch", ())
    return int(np.prod([mesh.shape[a] for a in ((axes,) if isinstance(axes, str) else axes)]))


def samples(args, cfg: model.Config, params, exe_forward, say) -> dict:
    """A greedy, a sampled and a beam-search sample of the prompt, each generated on the
    devices with a key/value cache (examples/lm/decode.py; the whole loop one program), and
    the greedy one again without the cache, timed: {kind: text} and the tokens per second."""
    if cfg.stages or cfg.experts or jax.process_count() > 1:
        # the cached decoder is the dense, unpipelined model's, fed by one process
        text = generate_uncached(exe_forward, params, cfg, args.prompt, args.sample)
        say(f"greedy sample (without a cache: the cached decoder runs the dense model in one process) after "
            f"{args.steps} steps:")
        say("[" + args.prompt + "]" + text)
        return {"greedy": text}
    mesh, rules = layout_of(cfg, args.layout, args.precision)
    rows = _rows(mesh, rules)
    prompt = len(data.encode(args.prompt))
    max_len = min(cfg.length, prompt + args.sample)
    count = max_len - prompt
    kinds = {"greedy": {}, "sampled": {"temperature": args.temperature, "top_k": args.sample_top_k},
             "beam": {"beam": args.beam, "length_penalty": 0.6}}
    out, speed = {}, {}
    for kind, options in kinds.items():
        generator = decode_generator(cfg, args.layout, args.precision, rows, max_len, tuple(sorted(options.items())))
        seed = cfg.seed if kind == "sampled" else None
        generator(params, [args.prompt], seed=seed)  # the first call compiles and warms up
        began = time.perf_counter()
        tokens = generator(params, [args.prompt], seed=seed)
        elapsed = time.perf_counter() - began
        tokens = tokens[0] if kind == "beam" else tokens
        out[kind] = data.decode(decode.continuation(tokens, [args.prompt]))
        speed[kind] = count / elapsed
    step = decode_step(cfg, args.layout, args.precision, rows, max_len)
    decode.greedy_per_token(step, cfg, params, [args.prompt], rows, max_len)  # compiles and warms up
    began = time.perf_counter()
    decode.greedy_per_token(step, cfg, params, [args.prompt], rows, max_len)
    speed["greedy, per-token calls"] = count / (time.perf_counter() - began)
    began = time.perf_counter()
    uncached = generate_uncached(exe_forward, params, cfg, args.prompt, count)
    speed["greedy, no cache"] = count / (time.perf_counter() - began)
    shown = f"{count} characters" + (f" (--sample {args.sample} capped by --length {cfg.length})"
                                      if count < args.sample else "")
    say(f"samples after {args.steps} steps, {shown} (the prompt in [brackets]):")
    say(f"  greedy sample:  [{args.prompt}]{out['greedy']}")
    say(f"  sampled (temperature {args.temperature:g}, top-{args.sample_top_k}, seed {cfg.seed}):  "
        f"[{args.prompt}]{out['sampled']}")
    say(f"  beam search (width {args.beam}, length penalty 0.6):  [{args.prompt}]{out['beam']}")
    say(f"  decoding speed, characters per second of one sample: {speed['greedy']:,.0f} greedy with the cache "
        f"(the loop on the devices), {speed['greedy, per-token calls']:,.0f} with it by one call per character, "
        f"{speed['greedy, no cache']:,.0f} without it ({speed['greedy'] / speed['greedy, no cache']:.1f}x); "
        f"sampled {speed['sampled']:,.0f}, beam {speed['beam']:,.0f}")
    if uncached != out["greedy"]:
        say("  (the greedy sample without the cache differs: " + repr(uncached) + ")")
    return {**out, "tokens_per_s": speed}


@functools.lru_cache(maxsize=None)
def decode_step(cfg: model.Config, layout: str, precision: str, rows: int, max_len: int):
    mesh, rules = layout_of(cfg, layout, precision)
    return mi.compile(decode.step_program(cfg, mesh, rows, max_len), layout=rules, donate=decode.cache_names(cfg))


@functools.lru_cache(maxsize=None)
def decode_generator(cfg: model.Config, layout: str, precision: str, rows: int, max_len: int, options: tuple):
    mesh, rules = layout_of(cfg, layout, precision)
    return decode.compile_generator(cfg, mesh, rules, rows, max_len, **dict(options))


# ------------------------------------------------------------------------------------------
# Training


def compile_for_tpu(cfg: model.Config, args, rules: dict, say) -> dict:
    """--tpu: the training step compiled by XLA:TPU for the topology, on its devices laid out
    as the layout's mesh; its memory, cost and collectives. Nothing runs."""
    mesh = layout_mesh(args.layout, cfg.stages)
    exe = mi.compile(train_program(cfg, args.layout, args.precision), layout=rules, donate=True,
                     mesh=mi.tpu_mesh(args.tpu, dict(mesh.axes)))
    memory, cost = exe.compile_report.xla_memory, exe.compile_report.xla_cost
    kinds = sorted({c.kind for c in exe.compiled_collectives()})
    say(f"XLA:TPU, {args.tpu} ({len(exe.devices)} {exe.devices[0].device_kind} devices), per device: memory "
        f"{memory['total'] / 2**20:.1f} MiB (arguments {memory['argument'] / 2**20:.1f}, temporaries "
        f"{memory['temp'] / 2**20:.1f}, aliased {memory['alias'] / 2**20:.1f}); {cost['flops'] / 1e9:.2f} GFLOP; "
        f"XLA's estimate {cost['optimal_seconds'] * 1e3:.3f} ms per step; collectives: {', '.join(kinds) or 'none'}")
    return {"tpu": args.tpu, "xla_memory": memory, "xla_cost": cost, "collectives": kinds}


def run(argv=None, out=None) -> dict:
    """Train as the command line says. Returns the loss histories and what was written.
    Raises UsageError / CheckpointError for problems the user can fix."""
    out = out or sys.stdout
    args = parse_args(argv)
    cfg = config_of(args)
    check_sampling(args, cfg)
    if jax.process_index() != 0:  # several processes: process 0 reports, the others only compute
        out, args.no_progress, args.plot, args.summary_json = open(os.devnull, "w"), True, "", None

    def say(text=""):
        print(text, file=out, flush=True)

    corpus = data.load_corpus(args.corpus)
    mesh, rules = layout_of(cfg, args.layout, args.precision)
    n_params = sum(int(np.prod([d.size for d in dims])) for dims in model.param_dims(cfg).values())
    say(f"corpus: {corpus}")
    say(f"model: {cfg.layers} layers, d_model {cfg.d_model}, {cfg.heads} heads of d_k {cfg.d_k}, d_ff {cfg.d_ff}, "
        f"vocab {cfg.vocab} (tied input/output embedding), length {cfg.length}; {n_params:,} parameters")
    if cfg.experts:
        moe = sorted(model.moe_layers(cfg))
        active = n_params - len(moe) * (cfg.experts - cfg.top_k) * 2 * cfg.d_model * cfg.d_ff
        say(f"mixture of experts in layer{'s' if len(moe) > 1 else ''} {', '.join(map(str, moe))}: {cfg.experts} "
            f"experts, top-{cfg.top_k} gating, capacity factor {cfg.capacity_factor:g} (evaluation "
            f"{cfg.eval_capacity_factor:g}), load-balancing loss weight {cfg.aux_loss_weight:g}; {active:,} "
            f"parameters active per token")
    schedule = (f", warm-up {cfg.warmup} steps" if cfg.warmup else "") + (
        f", decaying to {model.DECAY_TO:g} of it at step {cfg.decay_steps}" if cfg.decay_steps else "")
    regularized = (f", dropout {cfg.dropout:g}" if cfg.dropout else "") + (
        f", gradients clipped to norm {cfg.clip_norm:g}" if cfg.clip_norm else "")
    if cfg.stages:
        m, p = cfg.pipeline_microbatches, cfg.stages
        say(f"pipeline: {p} stages of {cfg.layers // p} layer{'s' if cfg.layers // p > 1 else ''}, {m} microbatches of "
            f"{cfg.batch // m} sequences, GPipe's schedule ({m + p - 1} ticks, idle {p - 1}/{m + p - 1} of them)")
    say(f"training: batch {cfg.batch} x {cfg.length} characters, {cfg.optimizer} lr {cfg.lr}{schedule}{regularized}, "
        f"seed {cfg.seed}, {args.steps} steps")
    say(f"layout {args.layout}: {model.format_rules(rules)} on the {model.format_mesh(mesh)}")
    if args.precision != "f32":
        say(f"precision {args.precision}: {model.PRECISIONS[args.precision]}")
    if args.layout == "auto":  # what the search chose, and why: the best candidates, cost broken down
        choice = str(auto_choice(cfg, args.precision)).splitlines()
        say(textwrap.indent("\n".join(choice[:1] + choice[2:]), "  "))
    if args.tpu:
        return compile_for_tpu(cfg, args, rules, say)

    # parameters and optimizer state: from the checkpoint (checked before compiling), or fresh
    step_prog = train_program(cfg, args.layout, args.precision)
    param_shapes = {k: tuple(d.size for d in dims) for k, dims in model.param_dims(cfg).items()}
    state_shapes = {k: shape for k, (shape, _) in step_prog.state_shapes().items()}
    resume = None
    if args.checkpoint and checkpoint.exists(args.checkpoint):
        resume = checkpoint.check(args.checkpoint, cfg.to_dict(), corpus.digest, param_shapes, state_shapes)

    start = time.perf_counter()
    step_prog, exe = compiled_train_step(cfg, args.layout, args.precision)
    say(f"training step compiled in {time.perf_counter() - start:.1f} s "
        f"(MeshIR passes {exe.compile_times['meshir_passes_s']:.1f} s, XLA {exe.compile_times['xla_compile_s']:.1f} s)")
    say(collectives_summary(exe))
    if args.full_report:
        say(exe.report())
    exe_forward = compiled_forward(cfg, args.layout, args.precision) if (args.eval_every or args.sample) else None
    if resume is not None:  # restored straight into the layout of the compiled step
        state = checkpoint.load(args.checkpoint, resume, exe)
        say(f"resuming from {checkpoint.where(args.checkpoint)} at step {state.step}")
    else:
        state = checkpoint.State(step=0, params=model.init_params(cfg), opt_state=mi.init_optimizer_state(step_prog))
    checkpoints = checkpoint.open_checkpoints(args.checkpoint) if args.checkpoint else None
    try:
        return _train(args, cfg, corpus, say, step_prog, exe, exe_forward, state, checkpoints, schedule)
    finally:
        if checkpoints is not None:
            checkpoints.close()  # waits for the last save


def _train(args, cfg, corpus, say, step_prog, exe, exe_forward, state, checkpoints, schedule) -> dict:
    saved = {state.step}

    def save(current: checkpoint.State):
        # The step's results (jax.Arrays) are saved as they are: `save` returns once they are
        # copied off the devices, before the next step donates their buffers.
        if checkpoints is not None and current.step not in saved:
            checkpoint.save(checkpoints, current, cfg.to_dict(), corpus.digest, {"layout": args.layout})
            saved.add(current.step)

    # `current` is replaced by one assignment per step, so a Ctrl-C never leaves parameters,
    # optimizer state and histories of different steps: the interrupt handler saves `current`.
    current = state
    if args.eval_every and current.step == 0:
        current = checkpoint.State(0, current.params, current.opt_state, [],
                                   [(0, validation_loss(exe_forward, current.params, corpus, cfg))])
    seed = {"seed": np.int32(cfg.seed)} if "seed" in exe.argument_names else {}  # the base seed of dropout
    bar = progress.training_bar(args.steps, start=state.step, enabled=not args.no_progress)
    tokens_per_step = cfg.batch * cfg.length
    recent = collections.deque(maxlen=20)
    step_times = []
    try:
        for t in range(state.step + 1, args.steps + 1):
            tokens, targets = data.train_batch(corpus, cfg.seed, t, cfg.batch, cfg.length)
            began = time.perf_counter()
            results = exe(**feed(exe, {"tokens": tokens, "targets": targets}), **current.params,
                          **current.opt_state, **seed, step=np.float32(t))._asdict()
            loss = float(results["loss"])  # waits for the step
            elapsed = time.perf_counter() - began
            if t > state.step + 1:  # the first step of a process warms up; it is not timed
                step_times.append(elapsed)
            recent.append(elapsed)
            if not math.isfinite(loss):
                raise UsageError(f"the loss is {loss} at step {t}: training diverged (try a smaller --lr)")
            params = {k: results[k] for k in current.params}
            val = []
            if args.eval_every and (t % args.eval_every == 0 or t == args.steps):
                val = [(t, validation_loss(exe_forward, params, corpus, cfg))]
            current = checkpoint.State(t, params, {k: results[k] for k in current.opt_state},
                                       current.train_loss + [loss], current.val_loss + val)
            if t % args.checkpoint_every == 0 or t == args.steps:
                save(current)
            progress.step(bar, loss, current.val_loss[-1][1] if current.val_loss else None,
                          tokens_per_step * len(recent) / sum(recent), learning_rate=float(results["learning_rate"]),
                          grad_norm=float(results["grad_norm"]))
    except KeyboardInterrupt:
        bar.close()
        donated = any(getattr(v, "is_deleted", lambda: False)() for v in current.params.values())
        if args.checkpoint and current.step > state.step and not donated:
            save(current)
            say(f"interrupted: saved step {current.step} to {checkpoint.where(args.checkpoint)}; rerun to resume")
        elif args.checkpoint and donated:
            # Interrupted inside a step: its inputs were donated to the devices and are gone.
            say(f"interrupted during step {current.step + 1}; the last saved checkpoint is kept; rerun to resume")
        raise
    bar.close()
    params, train_loss, val_loss = current.params, current.train_loss, current.val_loss

    result = {"train_loss": train_loss, "val_loss": val_loss, "steps_run": len(train_loss) - state.step,
              "tokens_per_s": tokens_per_step * len(step_times) / sum(step_times) if step_times else None,
              "small_corpus_val_loss": None, "png": None, "sample": None, "dropped": None,
              "checkpoint": checkpoint.where(args.checkpoint) if args.checkpoint else None}
    if state.step >= args.steps:
        say(f"the checkpoint is already at step {state.step} (--steps {args.steps}): nothing to train")
    if train_loss:
        k = max(1, min(10, len(train_loss) // 2))
        span = f"mean of the first {k} steps" if k > 1 else "step 1"
        say(f"train loss {np.mean(train_loss[:k]):.3f} ({span}) -> {np.mean(train_loss[-k:]):.3f} "
            f"({f'last {k}' if k > 1 else f'step {len(train_loss)}'}), nats per character"
            f"{' with the weighted load-balancing loss' if cfg.experts else ''}; "
            f"uniform guessing over 95 characters: {math.log(95):.3f}")
    if val_loss:
        say(f"validation loss {val_loss[0][1]:.3f} (step {val_loss[0][0]}) -> {val_loss[-1][1]:.3f} "
            f"(step {val_loss[-1][0]}) = {val_loss[-1][1] / math.log(2):.2f} bits per character")
    if val_loss and cfg.experts:
        dropped = []
        validation_loss(exe_forward, params, corpus, cfg, dropped)
        result["dropped"] = float(np.mean(dropped))
        say(f"experts: {100 * result['dropped']:.2f}% of the held-out token-to-expert assignments over capacity "
            f"(capacity factor {cfg.eval_capacity_factor:g})")
    if val_loss and args.corpus != "small":  # the README's held-out text: comparable with --size small
        result["small_corpus_val_loss"] = validation_loss(exe_forward, params, data.load_corpus("small"), cfg)
        say(f"validation loss on the small corpus's held-out text (held out from this corpus too): "
            f"{result['small_corpus_val_loss']:.3f}")
    if result["tokens_per_s"]:
        say(f"speed: {result['tokens_per_s']:,.0f} tokens/s ({1e3 * np.mean(step_times):.1f} ms per step) "
            f"over {len(step_times)} timed steps")

    png = args.plot if args.plot is not None else (
        os.path.join(args.checkpoint, "loss.png") if args.checkpoint else "transformer_lm_loss.png")
    if png and train_loss:
        title = (f"character LM: {cfg.layers} layers, d_model {cfg.d_model}, {cfg.heads} heads, d_ff {cfg.d_ff}, "
                 f"{cfg.optimizer} lr {cfg.lr}{schedule}, {args.layout} layout\n{corpus.source}")
        result["png"] = plot.save_loss_curve(png, train_loss, val_loss, title, notice=say)
        if result["png"]:
            say(f"loss curve: {result['png']}")

    if args.sample and exe_forward is not None:
        result["samples"] = samples(args, cfg, params, exe_forward, say)
        result["sample"] = result["samples"]["greedy"]
    if args.summary_json:
        with open(args.summary_json, "w") as f:
            json.dump({k: result[k] for k in ("train_loss", "val_loss", "tokens_per_s", "small_corpus_val_loss",
                                              "dropped")}, f)
    return result


def launch(argv: list[str], args) -> int:
    """--processes N: this script N times on this machine, each with its share of the mesh's
    devices and without --processes; process 0's output is ours."""
    mesh = layout_mesh(args.layout, max(args.stages, 0))
    if args.processes < 1 or mesh.size % args.processes:
        raise UsageError(f"--processes {args.processes} does not divide the {model.format_mesh(mesh)}")
    child = [a for i, a in enumerate(argv) if a != "--processes" and not a.startswith("--processes=")
             and (i == 0 or argv[i - 1] != "--processes")]
    results = mi.distributed.launch_local([sys.executable, os.path.abspath(__file__), *child], args.processes,
                                          local_devices=mesh.size // args.processes)
    return mi.distributed.report_failures(results)


def join(args) -> None:
    """Join the run over processes (--coordinator, or the environment launch_local sets)."""
    mesh = layout_mesh(args.layout, max(args.stages, 0))
    if args.coordinator or os.environ.get("MESHIR_PROCESS_ID"):
        num = args.num_processes or int(os.environ.get("MESHIR_NUM_PROCESSES", "1"))
        if mesh.size % num:
            raise UsageError(f"{num} processes do not divide the {model.format_mesh(mesh)}")
        mi.distributed.initialize(args.coordinator, args.num_processes, args.process_id, local_devices=mesh.size // num)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parse_args(argv)
        if args.processes > 1:
            return launch(argv, args)
        join(args)
        run(argv)
    except (UsageError, checkpoint.CheckpointError) as e:
        print(f"transformer_lm.py: error: {e}", file=sys.stderr)
        return 1
    except mi.MeshIRError as e:
        print(f"transformer_lm.py: error: {_one_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
