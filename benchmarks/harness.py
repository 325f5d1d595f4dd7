"""What every benchmark script shares: timing (one call, interleaved rounds), progress bars,
the number formats of the reports, the machine a result was measured on, where results go
and how a report is written.

A module of its own rather than more of measure.py: measure.py runs one case of cases.py
three ways for run.py and imports cases, hlo_collectives (lowering/runtime) and jax_baselines to do it, while this
module is for every script, including the worker and child processes that must set jax's
device count before jax starts, and scripts that name a function of their own `measure`.
So it imports nothing heavy at import time (jax and meshir only inside the functions that
need them).

Two ways to time, on purpose:

- `time_calls`: calls that take the same arguments every time (a split of one call, a
  probe). The harness times each call itself, until its result is ready, interleaved in
  fixed order (mi.calibrate's own `interleaved_times`).
- `interleaved_rounds`: steps of a loop as a user runs it (a fresh batch, results fed back
  as the next arguments). Only the call inside a step is the user's cost, so each step times
  itself (with `timed`) and returns its seconds. The rounds alternate the order (or take the
  caller's, e.g. shuffled), so no contender always runs first; a round's figure is each
  step's median, and `round_ratios` compares two contenders round by round, under the same
  load.
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


# ------------------------------------------------------------------------------------------
# Timing


def timed(call):
    """(result, seconds) of `call()`, the time including until any jax arrays in the result
    are ready (jax dispatches asynchronously; other results are returned as they are)."""
    import jax

    began = time.perf_counter()
    out = jax.block_until_ready(call())
    return out, time.perf_counter() - began


def time_calls(calls: dict, reps: int, warmup: int) -> dict:
    """Median and min wall time of each `calls[k]()` (which returns what to block on).

    The calls are interleaved (one run of each per round, `warmup` rounds untimed), so a
    slow phase of a shared 2-core machine affects every contender alike.
    """
    from meshir.api.calibration._timing import interleaved_times

    times = interleaved_times(calls, reps, warmup)
    return {k: {"median_s": statistics.median(t), "min_s": min(t), "runs": reps} for k, t in times.items()}


def round_order(names, r: int) -> list:
    """`names` in round `r`'s order: as given on even rounds, reversed on odd ones, so that
    no contender always runs first or always right after the same other one (XLA:CPU's
    worker threads keep spinning after an execution and slow what runs next, see
    call_overhead.py)."""
    names = list(names)
    return names if r % 2 == 0 else names[::-1]


def warm_up(steps: dict, rounds: int) -> dict:
    """Run every step `rounds` times, one of each per round (caches, first donated calls);
    each step's seconds in the last round (what a round's burst can be sized by)."""
    last = {}
    for _ in range(rounds):
        for k, step in steps.items():
            last[k] = step()
    return last


def interleaved_rounds(steps: dict, rounds: int, per_round=1, warmup: int = 0, order=round_order,
                       desc: str = "rounds") -> dict:
    """{name: [median seconds of each round]} of self-timed `steps` (each call returns its
    own seconds, see the module docstring). `warmup` untimed rounds first; then per round
    each step runs `per_round` times (an int, or a {name: int}) in `order(names, r)`'s
    order (alternating by default), and its median is that round's figure. The rounds show
    as a `progress` bar named `desc`."""
    warm_up(steps, warmup)
    counts = per_round if isinstance(per_round, dict) else dict.fromkeys(steps, per_round)
    medians = {k: [] for k in steps}
    for r in progress(range(rounds), desc, unit="round"):
        for k in order(steps, r):
            medians[k].append(statistics.median(steps[k]() for _ in range(counts[k])))
    return medians


def round_ratios(per_round: dict, num: str, den: str) -> list[float]:
    """Per round, `num`'s figure over `den`'s: both measured in the same round, under the same
    load, so the median of these is steadier than the ratio of the medians."""
    return [a / b for a, b in zip(per_round[num], per_round[den])]


# ------------------------------------------------------------------------------------------
# Progress


def progress(iterable, desc: str, unit: str, total: int | None = None):
    """`iterable` under tqdm's bar on stderr (count, rate, ETA), drawn on a terminal only
    (`disable=None`), so a log file or CI keeps only the lines a script prints (with `write`).
    `leave=False`: a finished bar clears, leaving those lines."""
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, unit=unit, total=total, leave=False, dynamic_ncols=True, disable=None)


def write(text: str) -> None:
    """Print `text` on stdout without garbling a `progress` bar being drawn."""
    from tqdm import tqdm

    tqdm.write(text)
    sys.stdout.flush()


# ------------------------------------------------------------------------------------------
# Number formats of the reports


def ms(seconds) -> str:
    """Seconds as milliseconds, 2 decimals ("12.34"); "—" when not measured."""
    return "—" if seconds is None else f"{seconds * 1e3:.2f}"


def mb(n) -> str:
    """Bytes as decimal megabytes, 2 decimals ("1.23"); "—" when not measured."""
    return "—" if n is None else f"{n / 1e6:.2f}"


def fmt_bytes(n) -> str:
    """Memory: binary units ("1.50 GiB"); "–" when not measured."""
    if n is None:
        return "–"
    for unit, size in (("TiB", 2 ** 40), ("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {unit}"
    return f"{n:,} B"


def fmt_sent(n) -> str:
    """Bytes sent: decimal units ("1.50 GB"), as link bandwidths are counted."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {unit}"
    return f"{n:,} B"


# ------------------------------------------------------------------------------------------
# The machine, where results go, the report


def machine() -> dict:
    """Today's date and the machine a result file was measured on (starts no backend)."""
    import datetime
    import platform

    import jax

    return {"date": datetime.date.today().isoformat(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "jax": jax.__version__}


def ensure_devices(n: int) -> None:
    """Ask for `n` CPU devices before jax starts its backend (MeshIR's own helper)."""
    from meshir.lowering.runtime import ensure_cpu_devices

    ensure_cpu_devices(n)


def results_dir(out, quick: bool) -> Path:
    """`--out` if given, else benchmarks/results (results/quick/ for --quick, so a smoke run
    never overwrites the committed results)."""
    return Path(out) if out else HERE / "results" / ("quick" if quick else "")


def chosen_sizes(parser, sizes: str | None, table: dict, default=None, what: str = "sizes") -> list[str]:
    """The names a `--sizes a,b` option gives (else `default`, else all of `table`); an
    unknown one is the parser's usage error."""
    chosen = sizes.split(",") if sizes else list(default or table)
    unknown = [s for s in chosen if s not in table]
    if unknown:
        parser.error(f"unknown {what} {unknown}; choose from {list(table)}")
    return chosen


def write_report(out, name: str, data: dict, text: str) -> None:
    """`out`/`name`.json (`data`) and `out`/`name`.md (`text`), the folder made if need be;
    one JSON layout (indent 1, final newline) for the results, so their diffs stay small."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")
    (out / f"{name}.md").write_text(text)
    print(f"wrote {out / name}.md and {name}.json")
