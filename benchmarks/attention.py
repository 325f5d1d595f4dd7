"""`mi.dot_product_attention` against naive jnp attention and `jax.nn.dot_product_attention`,
side by side in one process: step time, XLA's temporaries per device and peak RSS.

    python benchmarks/attention.py                   # f32 and bf16, ~16 min on 2 cores (results/attention.*)
    python benchmarks/attention.py --dtypes f32      # f32 only (~9 min)
    python benchmarks/attention.py --quick           # [4, 8, L, 16], L = 64, 128 timed, 256 compiled (results/quick/)

q, k, v and w are [batch 4, heads 8, L, d_k 64] with batch and heads split over the 4×2 mesh
(batch:x, heads:y; 8 CPU devices on this machine's cores), the key length equal to the query
length. The step is the forward and the backward pass: the value and the gradients wrt q, k, v
of sum(attention(q, k, v) * w), causal and not. Four contenders:

- `meshir`: `mi.dot_product_attention` (its default implementation, "blockwise": a scan over
  key blocks of the default block size, keeping a running max and sum), under
  `mi.compile(mi.value_and_grad(prog, wrt=["q", "k", "v"]))`;
- `meshir_xla`: the same op with `implementation="xla"` (einsum, softmax, einsum): MeshIR's naive;
- `jax_naive`: einsum, scale, the causal mask by `jnp.where(..., -1e9)`, `jax.nn.softmax`,
  einsum, under `jax.jit` with q, k, v, w sharded `P("x", "y", None, None)`
  (`NamedSharding`s over jax_baselines.jax_mesh's (4, 2) mesh) and `jax.value_and_grad`;
- `jax_nn`: `jax.nn.dot_product_attention` (`is_causal=causal`; its layout is [batch, length,
  heads, d], so q, k, v are transposed to it and the result back), the same shardings.

Time: every contender of one (dtype, causal, L) is compiled once, then runs its step in
interleaved rounds (harness.interleaved_rounds: alternating order, one warm-up step each);
reported are medians of the per-round figures and the medians of the per-round ratios to
`jax_naive`. Temporaries: XLA's memory analysis of each compiled step (`temp` per device:
`exe.compile_report.xla_memory` on MeshIR, `compiled.memory_analysis()` on jax), compile only
beyond the timed lengths (naive attention's [L, L] logits no longer fit in memory there).
Peak RSS: during each contender's warm-up step, the growth of the process's peak resident set
over its resident set just before the step (the C heap's free pages first given back with
glibc's malloc_trim, so that an earlier contender's freed buffers do not hide a later one's,
then the peak, VmHWM, reset through /proc/self/clear_refs; Linux). Gradients: at L = 512 in
f32 (`--grad-length`), each contender's loss and gradients against `jax_naive`'s, as
max |difference| / max |jax_naive| per output (target for `meshir`: ≤ 1e-4; the exit status
is 1 when it is missed).
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import re
import shlex
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import harness  # noqa: E402
import jax_baselines  # noqa: E402

MESH = {"x": 4, "y": 2}
LAYOUT = {"batch": "x", "heads": "y"}
CONTENDERS = ("meshir", "meshir_xla", "jax_naive", "jax_nn")
WHAT = {
    "meshir": "MeshIR `mi.dot_product_attention` (default: blockwise)",
    "meshir_xla": "MeshIR `mi.dot_product_attention(implementation=\"xla\")`",
    "jax_naive": "jax.jit, naive jnp (einsum, where, softmax, einsum)",
    "jax_nn": "jax.jit, `jax.nn.dot_product_attention`",
}
BASELINE = "jax_naive"
MASKED = -1e9
GRAD_RTOL = 1e-4  # f32: max |difference| / max |jax_naive|
TEMP_FRACTION = 1 / 16  # MeshIR's temporaries against jax.jit's causal naive attention
TIME_TARGET = 1.1  # MeshIR / naive at L = 1024; below 1 from L = 4096 on

FULL = {"batch": 4, "heads": 8, "d_k": 64, "rounds": 3, "grad_length": 512,
        "lengths": {"f32": [512, 1024, 2048, 4096], "bf16": [1024, 4096]},
        "memory_lengths": [512, 1024, 2048, 4096, 8192, 16384, 32768]}
QUICK = {"batch": 4, "heads": 8, "d_k": 16, "rounds": 2, "grad_length": 64,
         "lengths": {"f32": [64, 128], "bf16": [128]}, "memory_lengths": [64, 128, 256]}
BLOCK_SIZE = None  # the op's default (--block-size)
COMPILE_LIMIT_S = 120  # a contender whose compile took longer is not compiled at longer L


# ------------------------------------------------------------------------------------------
# The contenders


def dtype_of(name: str):
    import jax.numpy as jnp

    return {"f32": jnp.float32, "bf16": jnp.bfloat16}[name]


def jax_naive(q, k, v, causal: bool):
    """Attention on [b, h, l, d] as a user writes it in jnp: the [l, m] logits materialized."""
    import jax
    import jax.numpy as jnp

    logits = jnp.einsum("bhld,bhmd->bhlm", q, k) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        length, memory = logits.shape[-2:]
        visible = jnp.arange(memory)[None, :] <= jnp.arange(length)[:, None] + (memory - length)
        logits = jnp.where(visible, logits, jnp.asarray(MASKED, logits.dtype))
    return jnp.einsum("bhlm,bhmd->bhld", jax.nn.softmax(logits, axis=-1), v)


def jax_nn(q, k, v, causal: bool):
    """`jax.nn.dot_product_attention` on [b, h, l, d]: its layout is [b, l, h, d]."""
    import jax

    to = (0, 2, 1, 3)
    out = jax.nn.dot_product_attention(q.transpose(to), k.transpose(to), v.transpose(to), is_causal=causal)
    return out.transpose(to)


def jax_step(attention, causal: bool):
    """(q, k, v, w) -> (sum(attention(q, k, v) * w), (dq, dk, dv))."""
    import jax
    import jax.numpy as jnp

    def step(q, k, v, w):
        return jax.value_and_grad(lambda q, k, v: jnp.sum(attention(q, k, v, causal) * w), argnums=(0, 1, 2))(q, k, v)
    return step


class Contender:
    """One compiled step: `compile_s`, `temp` (XLA's temporaries per device), `xla_memory`,
    `shardings` of its four arguments, and `__call__` on placed arguments -> flat outputs
    (loss, dq, dk, dv)."""

    def __init__(self, fn, xla_memory: dict, shardings, compile_s: float):
        self.fn, self.xla_memory, self.shardings, self.compile_s = fn, xla_memory, list(shardings), compile_s
        self.temp = xla_memory["temp"] if xla_memory else None

    def __call__(self, *args):
        import jax

        return jax.tree_util.tree_leaves(self.fn(*args))

    def place(self, arrays):
        import jax

        return [jax.device_put(a, s) for a, s in zip(arrays, self.shardings)]


def compile_jax(name: str, shape, dtype: str, causal: bool) -> Contender:
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    from meshir.api.compilation.compile import xla_memory

    sharding = NamedSharding(jax_baselines.jax_mesh(MESH), PartitionSpec("x", "y", None, None))
    attention = {"jax_naive": jax_naive, "jax_nn": jax_nn}[name]
    arg = jax.ShapeDtypeStruct(shape, dtype_of(dtype), sharding=sharding)
    jitted = jax.jit(jax_step(attention, causal), in_shardings=(sharding,) * 4)
    compiled, seconds = harness.timed(lambda: jitted.lower(arg, arg, arg, arg).compile())
    return Contender(compiled, xla_memory(compiled.memory_analysis()), (sharding,) * 4, seconds)


def meshir_program(shape, dtype: str, causal: bool, implementation: str | None, block_size: int | None = None):
    """The loss program sum(mi.dot_product_attention(q, k, v) * w) on the 4×2 mesh (the op's
    default block size unless `block_size` is given)."""
    import meshir as mi

    batch, heads, length, d_k = shape
    B, H, K = mi.Dim("batch", batch), mi.Dim("heads", heads), mi.Dim("d_k", d_k)
    L, M = mi.Dim("length", length), mi.Dim("memory_length", length)
    options = {} if implementation is None else {"implementation": implementation}
    if block_size is not None and implementation is None:
        options["block_size"] = block_size
    with mi.Program(f"attention_{length}", mi.Mesh(MESH), layout=LAYOUT) as prog:
        q = prog.argument("q", [B, H, L, K], dtype)
        k = prog.argument("k", [B, H, M, K], dtype)
        v = prog.argument("v", [B, H, M, K], dtype)
        w = prog.argument("w", [B, H, L, K], dtype)
        prog.result(mi.reduce_sum(mi.dot_product_attention(q, k, v, causal=causal, **options) * w), name="loss")
    return prog


def compile_meshir(name: str, shape, dtype: str, causal: bool) -> Contender:
    import meshir as mi

    implementation = {"meshir": None, "meshir_xla": "xla"}[name]
    prog = meshir_program(shape, dtype, causal, implementation, BLOCK_SIZE)
    exe, seconds = harness.timed(lambda: mi.compile(mi.value_and_grad(prog, wrt=["q", "k", "v"])))
    return Contender(exe, exe.compile_report.xla_memory, exe.in_shardings, seconds)


def compile_contender(name: str, shape, dtype: str, causal: bool) -> Contender:
    return (compile_meshir if name.startswith("meshir") else compile_jax)(name, shape, dtype, causal)


def inputs(shape, dtype: str, seed: int = 0) -> list:
    """q, k, v, w: standard normal, as NumPy arrays of `dtype`."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape, dtype=np.float32).astype(dtype_of(dtype)) for _ in range(4)]


# ------------------------------------------------------------------------------------------
# Peak resident set


def _status_kib(field: str) -> int | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    found = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(found.group(1)) if found else None


def reset_peak() -> bool:
    """Reset the process's peak RSS (VmHWM) to its current RSS (Linux 4.0+)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def release_free_memory() -> None:
    """Give the C heap's free pages back to the system (glibc's malloc_trim), so that what an
    earlier step freed but kept resident does not hide what the next one allocates."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def rss_over(call) -> dict:
    """Run `call()` (blocking on it); its seconds and the growth of the peak RSS over the RSS
    just before it, in bytes (None where /proc does not tell)."""
    gc.collect()
    release_free_memory()
    reset = reset_peak()
    before = _status_kib("VmRSS")
    _, seconds = harness.timed(call)
    peak = _status_kib("VmHWM")
    if not reset or before is None or peak is None:
        return {"seconds": seconds, "rss_before": None, "peak_rss": None, "peak_growth": None}
    return {"seconds": seconds, "rss_before": before * 1024, "peak_rss": peak * 1024,
            "peak_growth": max(0, peak - before) * 1024}


# ------------------------------------------------------------------------------------------
# Measurements


def relative_error(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = float(np.max(np.abs(want)))
    return float(np.max(np.abs(got - want))) / (scale or 1.0)


def gradients(cfg: dict, length: int, say=harness.write) -> dict:
    """Loss and gradients of every contender against jax_naive's, f32, causal and not."""
    shape = (cfg["batch"], cfg["heads"], length, cfg["d_k"])
    arrays = inputs(shape, "f32", seed=1)
    out = {"length": length, "dtype": "f32", "rtol": GRAD_RTOL, "by_causal": {}}
    for causal in (False, True):
        results = {}
        for name in CONTENDERS:
            c = compile_contender(name, shape, "f32", causal)
            results[name] = [np.asarray(x) for x in c(*c.place(arrays))]
        errors = {name: dict(zip(("loss", "dq", "dk", "dv"), map(relative_error, results[name], results[BASELINE])))
                  for name in CONTENDERS if name != BASELINE}
        out["by_causal"][str(causal).lower()] = {
            "relative_error": errors, "max_relative_error": {n: max(e.values()) for n, e in errors.items()},
            "loss": {n: float(r[0]) for n, r in results.items()}}
        say(f"  gradients, L {length}, causal {causal}: " + ", ".join(
            f"{n} {max(e.values()):.2e}" for n, e in errors.items()))
    meshir = [v["max_relative_error"]["meshir"] for v in out["by_causal"].values()]
    out["met"] = max(meshir) <= GRAD_RTOL
    return out


def measure_length(cfg: dict, dtype: str, causal: bool, length: int, timed: bool, rounds: int,
                   skip: dict, say=harness.write) -> dict:
    """One (dtype, causal, L): every contender compiled (temporaries), and if `timed` run in
    interleaved rounds (step times, RSS). `skip`: contender -> why it is no longer compiled."""
    shape = (cfg["batch"], cfg["heads"], length, cfg["d_k"])
    rec = {"length": length, "shape": list(shape), "timed": timed, "contenders": {}}
    compiled = {}
    for name in CONTENDERS:
        if name in skip:
            rec["contenders"][name] = {"status": "skipped", "note": skip[name]}
            continue
        try:
            c = compile_contender(name, shape, dtype, causal)
        except Exception as e:  # recorded: a compile that fails is a result
            rec["contenders"][name] = {"status": "error", "note": f"{type(e).__name__}: {str(e)[:300]}"}
            say(f"  {name}: {type(e).__name__}: {str(e)[:200]}")
            continue
        rec["contenders"][name] = {"status": "ok", "compile_s": c.compile_s, "temp": c.temp,
                                   "xla_memory": c.xla_memory}
        if c.compile_s > COMPILE_LIMIT_S:
            skip[name] = f"compile took {c.compile_s:.0f} s at L = {length} (over {COMPILE_LIMIT_S} s)"
        compiled[name] = c
    if timed and compiled:
        arrays = inputs(shape, dtype)
        placed = {name: c.place(arrays) for name, c in compiled.items()}
        first = {}

        def step(name):
            def run():
                c, args = compiled[name], placed[name]
                if name not in first:  # the warm-up step: its peak RSS
                    first[name] = rss_over(lambda: c(*args))
                    return first[name]["seconds"]
                return harness.timed(lambda: c(*args))[1]
            return run

        per_round = harness.interleaved_rounds({n: step(n) for n in compiled}, rounds, warmup=1,
                                               desc=f"{dtype} causal={causal} L={length}")
        for name in compiled:
            r = rec["contenders"][name]
            r.update(step_s=per_round[name], median_s=statistics.median(per_round[name]),
                     first_step_s=first[name]["seconds"], rss_before=first[name]["rss_before"],
                     peak_rss=first[name]["peak_rss"], peak_rss_growth=first[name]["peak_growth"])
            if BASELINE in per_round and name != BASELINE:
                r["ratio_to_naive"] = statistics.median(harness.round_ratios(per_round, name, BASELINE))
        placed.clear()
    compiled.clear()  # the executables and their buffers go before the next length
    gc.collect()
    temps = ", ".join(f"{n} {harness.fmt_bytes(r.get('temp'))}" for n, r in rec["contenders"].items())
    times = ", ".join(f"{n} {harness.ms(r.get('median_s'))} ms" for n, r in rec["contenders"].items()) if timed else ""
    say(f"  {dtype} causal={causal} L={length}: temp/device {temps}" + (f"; step {times}" if times else ""))
    return rec


def measure(cfg: dict, dtypes: list[str], causals: list[bool], rounds: int, say=harness.write) -> dict:
    series = []
    for dtype in dtypes:
        timed_lengths = set(cfg["lengths"].get(dtype, []))
        lengths = sorted(timed_lengths | set(cfg["memory_lengths"]))
        for causal in causals:
            skip = {}
            rows = [measure_length(cfg, dtype, causal, n, n in timed_lengths, rounds, skip, say) for n in lengths]
            series.append({"dtype": dtype, "causal": causal, "rows": rows})
    return {"series": series}


# ------------------------------------------------------------------------------------------
# Targets and the report


def _row(series: list, dtype: str, causal: bool, length: int) -> dict | None:
    for s in series:
        if s["dtype"] == dtype and s["causal"] == causal:
            for r in s["rows"]:
                if r["length"] == length:
                    return r
    return None


def _get(row, name: str, key: str):
    return None if row is None else row["contenders"].get(name, {}).get(key)


def targets(record: dict, time_lengths: list[int], memory_lengths: list[int]) -> list[dict]:
    """The issue's targets at its lengths (the full run's; the quick one's own longest)."""
    series = record["series"]
    out = []
    long_memory = [n for n in (4096, 8192) if n in memory_lengths] or memory_lengths[-1:]
    for n in long_memory:
        row = _row(series, "f32", True, n)
        mine, naive = _get(row, "meshir", "temp"), _get(row, BASELINE, "temp")
        ok = None if mine is None or not naive else mine <= TEMP_FRACTION * naive
        out.append({"target": f"temporaries ≤ 1/16 of jax.jit's causal naive attention, f32, L = {n}",
                    "met": ok, "value": None if ok is None else mine / naive,
                    "text": f"MeshIR {harness.fmt_bytes(mine)} vs jax.jit naive {harness.fmt_bytes(naive)}"
                            + (f" ({mine / naive:.4f}×, target ≤ {TEMP_FRACTION:.4f}×)" if ok is not None else "")})
    short = [1024] if 1024 in time_lengths else time_lengths[:1]
    fast = [n for n in time_lengths if n >= 4096] or time_lengths[-1:]
    for n, limit, text in ([(n, TIME_TARGET, f"≤ {TIME_TARGET}× naive") for n in short]
                           + [(n, 1.0, "faster than naive") for n in fast]):
        for causal in (False, True):
            ratio = _get(_row(series, "f32", causal, n), "meshir", "ratio_to_naive")
            ok = None if ratio is None else (ratio <= limit if limit != 1.0 else ratio < 1.0)
            out.append({"target": f"step time {text}, f32, {'causal' if causal else 'not causal'}, L = {n}",
                        "met": ok, "value": ratio,
                        "text": "not measured" if ratio is None else f"MeshIR / jax.jit naive {ratio:.3f}×"})
    g = record.get("gradients")
    if g:
        worst = max(v["max_relative_error"]["meshir"] for v in g["by_causal"].values())
        out.append({"target": f"gradients equal naive attention's, f32, L = {g['length']} (rtol {GRAD_RTOL:g})",
                    "met": g["met"], "value": worst,
                    "text": f"max |MeshIR − jax naive| / max |jax naive| = {worst:.2e} (loss, dq, dk, dv; causal and not)"})
    return out


def _status(met) -> str:
    return "not measured" if met is None else "**met**" if met else "**missed**"


def _unmasked_note(series: list) -> str:
    """Compare like with like: what XLA reports for the unmasked naive attention against the
    causal one, at the longest length with both (the issue saw 0 temporaries unmasked at
    [4, 8, 4096, 64] while the run grew the peak RSS by 2.3 GiB)."""
    pairs = [(r["length"], _get(r, BASELINE, "temp"), _get(_row(series, s["dtype"], True, r["length"]), BASELINE, "temp"))
             for s in series if s["dtype"] == "f32" and not s["causal"] for r in s["rows"]]
    pairs = [p for p in pairs if p[1] is not None and p[2] is not None]
    head = ("- Compare like with like: XLA:CPU can report few or no temporaries for an *unmasked* naive "
            "attention (its [L, L] buffers fused or placed in other slots) while the run still grows the peak "
            "RSS by the logits' size, so the targets compare the causal rows, and the RSS table shows what "
            "the process holds.")
    if not pairs:
        return head
    length, unmasked, causal = max(pairs)
    return head + (f" Here, f32 at L = {length}: `jax_naive` reports {harness.fmt_bytes(unmasked)} unmasked and "
                   f"{harness.fmt_bytes(causal)} causal.")



def _section(title: str, text: str) -> list[str]:
    """A table section's heading, text and the header of its per-contender table."""
    return ["", f"## {title}", "", text, "", "| dtype | causal | L | " + " | ".join(f"`{n}`" for n in CONTENDERS) + " |",
            "|---|---|---:|" + "---:|" * len(CONTENDERS)]

def markdown(meta: dict, cfg: dict, record: dict) -> str:
    q = " --quick" if meta["quick"] else ""
    b, h, d = cfg["batch"], cfg["heads"], cfg["d_k"]
    lines = [
        "# Attention: `mi.dot_product_attention` vs naive jnp and `jax.nn.dot_product_attention`", "",
        f"Generated by `python benchmarks/attention.py{q}{meta['args']}` on {meta['date']} ({meta['platform']}, "
        f"{meta['cpus']} CPUs, jax {meta['jax']}). q, k, v, w [{b}, {h}, L, {d}] (key length = L), batch:x and "
        f"heads:y on the {MESH['x']}×{MESH['y']} mesh (8 CPU devices); the step is the forward and the backward "
        "pass: the value and the gradients wrt q, k, v of sum(attention(q, k, v) · w). "
        f"{meta['rounds']} interleaved rounds per length after one warm-up step each.", "",
        "Contenders: " + "; ".join(f"`{n}`: {WHAT[n]}" for n in CONTENDERS) + ".", "",
        "## Targets", "",
    ]
    if meta["quick"]:
        lines += ["Quick mode: the targets are the issue's, checked at the tiny lengths in their place "
                  "(a smoke test, not a result).", ""]
    for t in record["targets"]:
        lines.append(f"- {t['target']}: {_status(t['met'])} ({t['text']})")
    lines.append("")
    series = record["series"]
    if g := record.get("gradients"):
        lines += [f"## Gradients (f32, L = {g['length']})", "",
                  "max |contender − jax_naive| / max |jax_naive|, per output.", "",
                  "| causal | contender | loss | dq | dk | dv |", "|---|---|---:|---:|---:|---:|"]
        for causal, v in g["by_causal"].items():
            for n, e in v["relative_error"].items():
                lines.append(f"| {causal} | {n} | " + " | ".join(f"{e[k]:.2e}" for k in ("loss", "dq", "dk", "dv")) + " |")
        lines.append("")
    lines += ["## Step time (forward + backward)", "",
              "Median ms of the per-round figures; in brackets the median of the per-round ratios to `jax_naive`.", "",
              "| dtype | causal | L | " + " | ".join(f"`{n}` ms" for n in CONTENDERS) + " |",
              "|---|---|---:|" + "---:|" * len(CONTENDERS)]
    for s in series:
        for r in s["rows"]:
            if not r["timed"]:
                continue
            cells = []
            for n in CONTENDERS:
                c = r["contenders"].get(n, {})
                cell = harness.ms(c.get("median_s"))
                if c.get("ratio_to_naive") is not None:
                    cell += f" ({c['ratio_to_naive']:.2f}×)"
                cells.append(cell if c.get("status") == "ok" else c.get("status", "—"))
            lines.append(f"| {s['dtype']} | {str(s['causal']).lower()} | {r['length']} | " + " | ".join(cells) + " |")
    lines += _section("Temporaries per device (XLA's memory analysis)",
                      "`temp` of the compiled step per device; in brackets MeshIR's share of `jax_naive`'s. "
                      "Lengths beyond the timed ones are compiled only.")
    for s in series:
        for r in s["rows"]:
            naive = _get(r, BASELINE, "temp")
            cells = []
            for n in CONTENDERS:
                c = r["contenders"].get(n, {})
                if c.get("status") != "ok":
                    cells.append(c.get("status", "—"))
                    continue
                cell = harness.fmt_bytes(c["temp"])
                if n.startswith("meshir") and naive:
                    cell += f" ({c['temp'] / naive:.3f}×)"
                cells.append(cell)
            lines.append(f"| {s['dtype']} | {str(s['causal']).lower()} | {r['length']} | " + " | ".join(cells) + " |")
    lines += _section("Peak RSS over the first step",
                      "Growth of the process's peak resident set over its resident set just before the warm-up "
                      "step (free heap pages given back by malloc_trim, then the peak reset through "
                      "/proc/self/clear_refs), for the whole process (all 8 devices).")
    for s in series:
        for r in s["rows"]:
            if r["timed"]:
                lines.append(f"| {s['dtype']} | {str(s['causal']).lower()} | {r['length']} | " + " | ".join(
                    harness.fmt_bytes(_get(r, n, "peak_rss_growth")) for n in CONTENDERS) + " |")
    notes = [n for s in series for r in s["rows"] for n in
             (f"{s['dtype']} causal={s['causal']} L={r['length']} `{k}`: {c['note']}"
              for k, c in r["contenders"].items() if c.get("note"))]
    lines += ["", "## Notes", "", _unmasked_note(series),
              "- Times are on this machine's CPU cores shared by 8 virtual devices: ratios, not claims about "
              "accelerators. `jax_nn` on the CPU is XLA's own einsum-softmax-einsum (no fused kernel).",
              "- The peak RSS counts the whole process: the 8 devices' temporaries and outputs, "
              "not one device's.",
              *[f"- {n}" for n in notes], ""]
    return "\n".join(lines)


def _shown_args(argv) -> str:
    """The command line's options for the report's first line: all but --quick and --out."""
    shown, rest = [], list(sys.argv[1:] if argv is None else argv)
    while rest:
        a = rest.pop(0)
        if a == "--out":
            rest[:1] = []
        elif a != "--quick" and not a.startswith("--out="):
            shown.append(a)
    return "".join(f" {shlex.quote(a)}" for a in shown)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="[4, 8, L, 16] at tiny L, 2 rounds; writes under results/quick/")
    p.add_argument("--dtypes", default="f32,bf16", help="comma-separated of f32, bf16 (default both)")
    p.add_argument("--causal", choices=("both", "true", "false"), default="both")
    p.add_argument("--lengths", help="timed lengths, comma-separated, for every dtype (default f32: "
                   "512,1024,2048,4096; bf16: 1024,4096; empty: none)")
    p.add_argument("--memory-lengths", help="lengths compiled only, beside the timed ones (default 512 ... 32768)")
    p.add_argument("--grad-length", type=int, help="length of the f32 gradient check (default 512; --quick 64)")
    p.add_argument("--block-size", type=int, help="block_size of `meshir` (default: the op's; the targets are "
                   "for the default)")
    p.add_argument("--rounds", type=int, help="interleaved timed rounds (default 3; --quick 2)")
    p.add_argument("--no-gradients", action="store_true", help="skip the gradient check")
    p.add_argument("--out", help="output folder (default: benchmarks/results, --quick: benchmarks/results/quick)")
    args = p.parse_args(argv)
    cfg = {**(QUICK if args.quick else FULL)}
    dtypes = args.dtypes.split(",")
    if bad := [d for d in dtypes if d not in ("f32", "bf16")]:
        p.error(f"unknown dtypes {bad}; choose from f32, bf16")
    if args.lengths is not None:
        cfg["lengths"] = dict.fromkeys(dtypes, [int(n) for n in args.lengths.split(",") if n])
    if args.memory_lengths is not None:
        cfg["memory_lengths"] = [int(n) for n in args.memory_lengths.split(",") if n]
    causals = {"both": [False, True], "true": [True], "false": [False]}[args.causal]
    global BLOCK_SIZE
    BLOCK_SIZE = args.block_size
    rounds = args.rounds or cfg["rounds"]
    harness.ensure_devices(8)
    began = time.perf_counter()
    record = measure(cfg, dtypes, causals, rounds)
    if not args.no_gradients:
        record["gradients"] = gradients(cfg, args.grad_length or cfg["grad_length"])
    time_lengths = sorted(cfg["lengths"].get("f32", []))
    memory_lengths = sorted(set(cfg["memory_lengths"]) | set(time_lengths))
    record["targets"] = targets(record, time_lengths, memory_lengths)
    meta = {**harness.machine(), "quick": args.quick, "args": _shown_args(argv), "rounds": rounds,
            "wall_s": time.perf_counter() - began}
    config = {k: cfg[k] for k in ("batch", "heads", "d_k", "lengths", "memory_lengths")}
    config.update(mesh=MESH, layout=LAYOUT, dtypes=dtypes, causal=causals, block_size=BLOCK_SIZE)
    text = markdown(meta, config, record)
    harness.write_report(harness.results_dir(args.out, args.quick), "attention",
                         {"meta": meta, "config": config, **record}, text)
    for t in record["targets"]:
        print(f"{t['target']}: {_status(t['met']).strip('*')} ({t['text']})", flush=True)
    print(f"({meta['wall_s']:.0f} s)")
    return 1 if record.get("gradients", {}).get("met") is False else 0


if __name__ == "__main__":
    sys.exit(main())
