"""What one call of a compiled program costs beyond PJRT running it, by argument count.

    python benchmarks/call_overhead.py            # 1, 10, 100, 1000 arguments
    python benchmarks/call_overhead.py --quick    # 1 and 10 (results/quick/)

A program of N arguments `w<i>: [rows=16, cols=8]` split over x, each result `w<i> + 1`
(tiny, so execution time stays small and the Python cost of a call shows), compiled on the
4x2 CPU mesh with the results donated into the arguments, driven like a training loop: every
result fed back as the next call's argument. Per call it times (interleaved, medians):

- `meshir`: `exe(**state)`, MeshIR's public call (the fast path of docs/runtime.md);
- `meshir + numpy`: the same with one more argument, a fresh NumPy batch each call;
- `pjrt`: the same LoadedExecutable run directly on the same arrays
  (`execute_sharded` + jax's result handlers), the floor any caller pays (and `pjrt, batch
  program`: the `+ numpy` program run so, its NumPy array put on the devices untimed);
- `jax.jit`: the same function in JAX under jax.jit with the same shardings and donation,
  called on its own results (jax's C++ dispatch);
- `jax compiled floor`: jax's PJRT execution of its own executable the same direct way;
- `meshir, tuple results`: `exe(**state)` of a second executable of the program whose
  results come back as a plain tuple, as before issue 32 made them a named tuple: the
  named tuple's cost is `meshir - meshir, tuple results`.

The overhead of a call is `meshir - pjrt` (target: 50 us + 1 us per argument) and, for
jax, `jax.jit - jax compiled floor`: the median of the per-round differences (each round
runs every contender once), with the quartiles, since on 2 cores the worker threads of the
8 CPU devices keep spinning for milliseconds after each execution and slow whatever Python
runs next (the order of the contenders is shuffled each round, so that no contender always
follows the same one); at 1000 arguments the quartiles span several milliseconds.

The eager row (issue 35): one op on an `mi.Array` `[rows=16, cols=8]` split over x, run at
once outside any program, against jax's eager `x + 1.0` on a jax.Array of the same
NamedSharding, each result fed back and blocked on (`jax.block_until_ready`). Contenders:
`mi.add(a, 1.0)`, `a + 1.0`, `jax x + 1.0`, `jax x + c` (the scalar on the devices already), and the floors: the eager op's cached executable
(`EAGER_CACHE`) and jax's executable of `x + 1.0`, each run directly by PJRT. The figure is
the median of the per-round ratios MeshIR / jax (target <= 1.5) on cache hits; the first
call of a new signature (trace, compile, run) is timed apart, as is jax's first `x + 1.0`
after `jax.clear_caches()`.

    python benchmarks/call_overhead.py --eager-only   # only the eager row; the others kept
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import harness  # noqa: E402

COUNTS = (1, 10, 100, 1000)
QUICK_COUNTS = (1, 10)
ROWS, COLS = 16, 8


def build(count: int, with_batch: bool):
    """The N-argument program (and its rules); `with_batch` adds a NumPy-fed argument `x`."""
    import meshir as mi

    mesh = mi.Mesh({"x": 4, "y": 2})
    rows, cols = mi.Dim("rows", ROWS), mi.Dim("cols", COLS)
    layout = {"rows": "x"}
    with mi.Program(f"step{count}", mesh, layout=layout) as prog:
        x = prog.argument("x", [rows, cols]) if with_batch else None
        for i in range(count):
            w = prog.argument(f"w{i}", [rows, cols])
            prog.result(w + x if x is not None else w + 1.0, name=f"w{i}")
    return prog, layout


def target_us(count: int) -> float:
    return 50.0 + count


def measure(count: int, reps: int) -> dict:
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    import meshir as mi
    from meshir import _jax_private as jp

    prog, layout = build(count, with_batch=False)
    exe = mi.compile(prog, layout=layout, donate=True)
    exe_tuple = mi.compile(prog, layout=layout, donate=True)
    assert exe_tuple.signature is not exe.signature
    object.__setattr__(exe_tuple.signature, "results", lambda values: values[0] if len(values) == 1 else tuple(values))
    prog_b, _ = build(count, with_batch=True)
    exe_b = mi.compile(prog_b, layout=layout, donate=True)
    names = [f"w{i}" for i in range(count)]
    rng = np.random.default_rng(0)
    init = {n: rng.standard_normal((ROWS, COLS)).astype(np.float32) for n in names}
    sharding = exe.in_shardings[0]
    state = {"meshir": {n: jax.device_put(v, sharding) for n, v in init.items()},
             "meshir, tuple results": {n: jax.device_put(v, sharding) for n, v in init.items()},
             "meshir + numpy": {n: jax.device_put(v, sharding) for n, v in init.items()},
             "pjrt": [jax.device_put(init[n], sharding) for n in names]}

    jsh = NamedSharding(sharding.mesh, PartitionSpec("x"))
    jitted = jax.jit(lambda ws: [w + 1.0 for w in ws], in_shardings=(jsh,), out_shardings=jsh, donate_argnums=(0,))
    state["jax.jit"] = [jax.device_put(init[n], jsh) for n in names]
    compiled = jitted.lower(state["jax.jit"]).compile()
    j_loaded, j_handlers = jp.compiled_executable_and_handlers(compiled)
    state["jax compiled floor"] = [jax.device_put(init[n], jsh) for n in names]

    state["pjrt, batch program"] = [jax.device_put(init[n], sharding) for n in names]
    b_order = exe_b.signature.arg_names  # x, w0, w1, ...

    def meshir():
        out, elapsed = harness.timed(lambda: exe(**state["meshir"]))
        state["meshir"] = dict(zip(names, out if count > 1 else (out,)))
        return elapsed

    def meshir_tuple():
        out, elapsed = harness.timed(lambda: exe_tuple(**state["meshir, tuple results"]))
        assert type(out) is tuple or count == 1
        state["meshir, tuple results"] = dict(zip(names, out if count > 1 else (out,)))
        return elapsed

    def meshir_numpy():
        x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
        out, elapsed = harness.timed(lambda: exe_b(x=x, **state["meshir + numpy"]))
        state["meshir + numpy"] = dict(zip(names, out if count > 1 else (out,)))
        return elapsed

    def pjrt():
        state["pjrt"], elapsed = harness.timed(lambda: jp.execute(exe._loaded, state["pjrt"], exe._result_handlers))
        return elapsed

    def pjrt_batch():
        x = jax.device_put(rng.standard_normal((ROWS, COLS)).astype(np.float32), exe_b.in_shardings[0])
        args = [x, *state["pjrt, batch program"]]
        assert b_order[0] == "x"
        state["pjrt, batch program"], elapsed = harness.timed(
            lambda: jp.execute(exe_b._loaded, args, exe_b._result_handlers))
        return elapsed

    def jax_jit():
        state["jax.jit"], elapsed = harness.timed(lambda: jitted(state["jax.jit"]))
        return elapsed

    def jax_floor():
        state["jax compiled floor"], elapsed = harness.timed(
            lambda: jp.execute(j_loaded, state["jax compiled floor"], j_handlers))
        return elapsed

    calls = {"meshir": meshir, "meshir, tuple results": meshir_tuple, "meshir + numpy": meshir_numpy, "pjrt": pjrt, "pjrt, batch program": pjrt_batch,
             "jax.jit": jax_jit, "jax compiled floor": jax_floor}
    order, shuffle = list(calls), random.Random(count).shuffle

    def shuffled(_names, _round):
        """No contender always runs right after the same one (see the module docstring)."""
        shuffle(order)
        return order

    # one call per round: a round's median is that call's time
    times = harness.interleaved_rounds(calls, reps, warmup=5, order=shuffled)
    med = {k: statistics.median(v) for k, v in times.items()}
    # MeshIR's own Python work before jax's C++ dispatch runs the executable (binding, the
    # deleted-array and donation checks), without execution: the steady part of the overhead.
    x = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    before_pjrt = {
        "arrays": _best_us(lambda: exe._fast.dispatchable(exe._fast.bind((), state["meshir"]), True)),
        "arrays + numpy": _best_us(
            lambda: exe_b._fast.dispatchable(exe_b._fast.bind((), {"x": x, **state["meshir + numpy"]}), True)),
    }
    overhead = _paired(times["meshir"], times["pjrt"])
    return {
        "arguments": count, "reps": reps, "median_us": {k: v * 1e6 for k, v in med.items()},
        "overhead_us": overhead["median"], "overhead_quartiles_us": overhead["quartiles"],
        "overhead_with_numpy_us": _paired(times["meshir + numpy"], times["pjrt, batch program"])["median"],
        "jax_overhead_us": _paired(times["jax.jit"], times["jax compiled floor"])["median"],
        "jax_overhead_quartiles_us": _paired(times["jax.jit"], times["jax compiled floor"])["quartiles"],
        "before_pjrt_us": before_pjrt,
        "named_tuple_us": _paired(times["meshir"], times["meshir, tuple results"])["median"],
        "target_us": target_us(count), "meets_target": overhead["median"] <= target_us(count),
        "check": float(np.asarray(state["meshir"][names[0]])[0, 0]) == float(
            np.asarray(state["jax.jit"][0])[0, 0]),
    }


EAGER_TARGET = 1.5  # MeshIR's eager op / jax's eager op, on cache hits
FIRST_CALLS = 5  # first calls timed (each after clearing the caches); their median


def measure_eager(reps: int) -> dict:
    """The eager row (see the module docstring)."""
    import jax

    import meshir as mi
    from meshir import _jax_private as jp
    from meshir.api.eager.dispatch import EAGER_CACHE

    mesh = mi.Mesh({"x": 4, "y": 2})
    init = np.random.default_rng(1).standard_normal((ROWS, COLS)).astype(np.float32)
    a0 = mi.array(init, ["rows", "cols"], mesh=mesh, layout={"rows": "x"})
    sharding = a0.jax_array.sharding
    x0 = jax.device_put(init, sharding)  # a jax.Array laid out like the mi.Array
    assert x0.sharding == sharding and a0.layout == {"rows": ("x",), "cols": ()}

    def first_mi():
        EAGER_CACHE.clear()
        return harness.timed(lambda: mi.add(a0, 1.0))[1]

    def first_jax():
        jax.clear_caches()
        return harness.timed(lambda: x0 + 1.0)[1]

    first = {"mi.add": [first_mi() for _ in range(FIRST_CALLS)], "jax x + 1.0": [first_jax() for _ in range(FIRST_CALLS)]}
    out = mi.add(a0, 1.0)  # the cached signature, for its executable (the floor)
    (staged,) = EAGER_CACHE._entries.values()
    exe = staged.executable
    assert out.jax_array.sharding == sharding and (x0 + 1.0).sharding == sharding
    j_loaded, j_handlers = jp.compiled_executable_and_handlers(jax.jit(lambda x: x + 1.0).lower(x0).compile())
    # jax passes the Python scalar of `x + 1.0` as an argument (put on the devices each call);
    # MeshIR makes it a constant of the program. `x + c`: jax with the scalar on the devices already.
    c = jax.device_put(np.float32(1.0), jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec()))

    state = {"mi.add": a0, "a + 1.0": a0, "jax x + 1.0": x0, "jax x + c": x0, "eager program, pjrt": [x0],
             "jax executable, pjrt": [x0]}

    def step(name, call):
        def run():
            state[name], elapsed = harness.timed(lambda: call(state[name]))
            return elapsed
        return run

    calls = {
        "mi.add": step("mi.add", lambda a: mi.add(a, 1.0)),
        "a + 1.0": step("a + 1.0", lambda a: a + 1.0),
        "jax x + 1.0": step("jax x + 1.0", lambda x: x + 1.0),
        "jax x + c": step("jax x + c", lambda x: x + c),
        "eager program, pjrt": step("eager program, pjrt", lambda xs: jp.execute(exe._loaded, xs, exe._result_handlers)),
        "jax executable, pjrt": step("jax executable, pjrt", lambda xs: jp.execute(j_loaded, xs, j_handlers)),
    }
    order, shuffle = list(calls), random.Random(0).shuffle

    def shuffled(_names, _round):
        shuffle(order)
        return order

    hits_before = len(EAGER_CACHE)
    times = harness.interleaved_rounds(calls, reps, warmup=5, order=shuffled)
    assert len(EAGER_CACHE) == hits_before  # every timed eager call was a cache hit
    ratios = {k: statistics.median(harness.round_ratios(times, k, "jax x + 1.0")) for k in ("mi.add", "a + 1.0")}
    ratios_c = {k: statistics.median(harness.round_ratios(times, k, "jax x + c")) for k in ("mi.add", "a + 1.0")}
    values = [np.asarray(state[k]) for k in ("mi.add", "a + 1.0", "jax x + 1.0", "jax x + c")]
    values += [np.asarray(state[k][0]) for k in ("eager program, pjrt", "jax executable, pjrt")]
    return {
        "reps": reps, "shape": [ROWS, COLS], "layout": {"rows": "x"},
        "median_us": {k: statistics.median(v) * 1e6 for k, v in times.items()},
        "ratio_to_jax": ratios, "ratio_to_jax_device_scalar": ratios_c, "target_ratio": EAGER_TARGET,
        "meets_target": all(r <= EAGER_TARGET for r in ratios.values()),
        "overhead_us": _paired(times["mi.add"], times["eager program, pjrt"]),
        "jax_overhead_us": _paired(times["jax x + 1.0"], times["jax executable, pjrt"]),
        "first_call_ms": {k: statistics.median(v) * 1e3 for k, v in first.items()},
        "check": all(np.array_equal(v, values[0]) for v in values[1:]),
    }


def eager_markdown(e: dict, date: str) -> list[str]:
    m, r, rc, f = e["median_us"], e["ratio_to_jax"], e["ratio_to_jax_device_scalar"], e["first_call_ms"]
    return [
        "",
        "## Eager ops (issue 35)",
        "",
        f"Measured {date}, {e['reps']} interleaved rounds. One op outside any program on an `mi.Array` "
        f"`[rows={e['shape'][0]}, cols={e['shape'][1]}]` split over x (4x2 mesh), against jax's eager `x + 1.0` on a "
        "jax.Array with the same NamedSharding; each result fed back and blocked on. Medians of interleaved calls (µs); "
        "the ratio is the median of per-round ratios to jax's (target ≤ 1.5, cache hits). Floors: each executable "
        "run directly by PJRT; overhead = call − its floor (median of per-round differences [quartiles]). "
        "jax passes the Python scalar of `x + 1.0` to its executable as an argument, put on the devices each call, "
        "where MeshIR makes it a constant of the one-op program; `x + c` is jax with a replicated f32 scalar `c` on "
        "the devices already. "
        f"First call: median of {FIRST_CALLS}, each after clearing the cache (MeshIR: `EAGER_CACHE`, so the one-op "
        "program is traced, compiled and run; jax: `jax.clear_caches()`).",
        "",
        "| call | median µs | / jax `x + 1.0` | / jax `x + c` | overhead over its executable (µs) |",
        "|---|---|---|---|---|",
        f"| `mi.add(a, 1.0)` | {m['mi.add']:.0f} | **{r['mi.add']:.2f}** "
        f"{'met' if r['mi.add'] <= e['target_ratio'] else 'MISSED'} | {rc['mi.add']:.2f} | "
        f"{e['overhead_us']['median']:.0f} [{e['overhead_us']['quartiles'][0]:.0f}, {e['overhead_us']['quartiles'][1]:.0f}] |",
        f"| `a + 1.0` | {m['a + 1.0']:.0f} | **{r['a + 1.0']:.2f}** "
        f"{'met' if r['a + 1.0'] <= e['target_ratio'] else 'MISSED'} | {rc['a + 1.0']:.2f} | |",
        f"| jax `x + 1.0` | {m['jax x + 1.0']:.0f} | 1 | | {e['jax_overhead_us']['median']:.0f} "
        f"[{e['jax_overhead_us']['quartiles'][0]:.0f}, {e['jax_overhead_us']['quartiles'][1]:.0f}] |",
        f"| jax `x + c` | {m['jax x + c']:.0f} | | 1 | |",
        f"| eager program, PJRT | {m['eager program, pjrt']:.0f} | | | |",
        f"| jax executable, PJRT | {m['jax executable, pjrt']:.0f} | | | |",
        "",
        f"First call of a new signature: `mi.add` {f['mi.add']:.1f} ms, jax `x + 1.0` {f['jax x + 1.0']:.1f} ms.",
    ]


def _paired(times, floor) -> dict:
    """Median and quartiles (µs) of the per-round differences `times[i] - floor[i]`."""
    diffs = [(a - b) * 1e6 for a, b in zip(times, floor)]
    q1, _, q3 = statistics.quantiles(diffs, n=4)
    return {"median": statistics.median(diffs), "quartiles": [q1, q3]}


def _best_us(call, number: int = 50, repeat: int = 7) -> float:
    import timeit

    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6


def markdown(meta: dict, records: list[dict], eager: dict | None = None) -> str:
    lines = [
        "# Per-call cost of a compiled program, by argument count",
        "",
        f"Generated by `python benchmarks/call_overhead.py` on {meta['date']} ({meta['platform']}, "
        f"{meta['cpus']} CPUs, jax {meta['jax']}; 8 CPU devices, 4x2 mesh)."
        + (f" Rerun since: {meta['rerun']}; the argument-count rows are from {meta['date']}." if "rerun" in meta else ""),
        "",
        "N arguments `[16, 8]` split over x, results `w + 1` donated and fed back; medians of interleaved "
        "calls (µs). Overhead = MeshIR's public call − PJRT running the same executable on the same arrays "
        "(target 50 µs + 1 µs per argument); jax's = jax.jit − jax's executable run the same direct way; "
        "both the median of per-round differences, [quartiles] below the table. "
        "`+ numpy`: one more argument, a fresh NumPy array each call, against PJRT running that program with the "
        "array already on the devices. Only the call is timed (until its results are ready), not the loop around it. "
        "*Before PJRT*: the best time of MeshIR's Python work in front of jax's C++ dispatch (binding, the "
        "deleted-array and donation checks; no execution), the steady part of the overhead. *Named tuple*: "
        "MeshIR's call − the same call of an executable returning a plain tuple (the results before issue 32), "
        "median of per-round differences.",
        "",
        "| args | MeshIR | MeshIR + numpy | PJRT | jax.jit | jax floor | MeshIR overhead | target | "
        "overhead + numpy | jax.jit overhead | MeshIR before PJRT (+ numpy) | named tuple |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        m = r["median_us"]
        lines.append(
            f"| {r['arguments']} | {m['meshir']:.0f} | {m['meshir + numpy']:.0f} | {m['pjrt']:.0f} | "
            f"{m['jax.jit']:.0f} | {m['jax compiled floor']:.0f} | **{r['overhead_us']:.0f}** | "
            f"{r['target_us']:.0f} {'met' if r['meets_target'] else 'MISSED'} | {r['overhead_with_numpy_us']:.0f} | "
            f"{r['jax_overhead_us']:.0f} | {r['before_pjrt_us']['arrays']:.0f} "
            f"({r['before_pjrt_us']['arrays + numpy']:.0f}) | {r['named_tuple_us']:.0f} |")
    lines += ["", "Quartiles of the per-round differences (µs):", ""]
    for r in records:
        mq, jq = r["overhead_quartiles_us"], r["jax_overhead_quartiles_us"]
        lines.append(f"- {r['arguments']} arguments: MeshIR [{mq[0]:.0f}, {mq[1]:.0f}], jax.jit [{jq[0]:.0f}, {jq[1]:.0f}]")
    if eager is not None:
        lines += eager_markdown(eager, meta.get("eager_date", meta["date"]))
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1 and 10 arguments, few reps (results/quick/)")
    parser.add_argument("--counts", type=int, nargs="*", help="argument counts to measure")
    parser.add_argument("--reps", type=int, default=None, help="timed calls per contender")
    parser.add_argument("--eager-reps", type=int, default=None, help="rounds of the eager row (default 1000)")
    parser.add_argument("--eager-only", action="store_true",
                        help="rerun only the eager row; the argument-count rows of the results file are kept")
    parser.add_argument("--out", type=Path, default=None, help="results directory")
    args = parser.parse_args(argv)
    counts = args.counts or (QUICK_COUNTS if args.quick else COUNTS)
    reps = args.reps or (20 if args.quick else 300)
    eager_reps = args.eager_reps or args.reps or (20 if args.quick else 1000)
    out = harness.results_dir(args.out, args.quick)
    import jax

    harness.ensure_devices(8)
    records, meta = [], harness.machine()
    if args.eager_only:
        kept = json.loads((Path(out) / "call_overhead.json").read_text())
        records, meta = kept["records"], {**kept["meta"], "eager_date": meta["date"],
                                          "rerun": f"only the eager row, on {meta['date']} (--eager-only)"}
    for count in () if args.eager_only else counts:
        record = measure(count, reps)
        records.append(record)
        print(f"{count} arguments: overhead {record['overhead_us']:.0f} us (target {record['target_us']:.0f}; "
              f"before PJRT {record['before_pjrt_us']['arrays']:.0f} us), "
              f"with numpy {record['overhead_with_numpy_us']:.0f} us, jax.jit {record['jax_overhead_us']:.0f} us, "
              f"named tuple {record['named_tuple_us']:.0f} us")
        jax.clear_caches()
    eager = measure_eager(eager_reps)
    print(f"eager: mi.add {eager['ratio_to_jax']['mi.add']:.2f}x jax's x + 1.0, a + 1.0 "
          f"{eager['ratio_to_jax']['a + 1.0']:.2f}x (target {EAGER_TARGET}); medians "
          f"{eager['median_us']['mi.add']:.0f} / {eager['median_us']['jax x + 1.0']:.0f} us; first call "
          f"{eager['first_call_ms']['mi.add']:.1f} ms (jax {eager['first_call_ms']['jax x + 1.0']:.1f} ms)")
    harness.write_report(out, "call_overhead", {"meta": meta, "records": records, "eager": eager},
                         markdown(meta, records, eager))
    return 0


if __name__ == "__main__":
    sys.exit(main())
