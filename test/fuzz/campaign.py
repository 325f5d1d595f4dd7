"""A fuzz campaign: generate cases from the seeds, run them in the worker, count outcomes, and
for each new bug signature re-check it in a fresh process, minimize it and save the repro."""
from __future__ import annotations

import os
import random
import re
import subprocess
import time
from collections import Counter

from corpus import write_repro
from executor import Worker, recheck
from minimize import WRAPPED, minimize, top_level_elements
from mutate import Pool, mutate
from outcomes import BUGS, CLASSES, CRASH, HANG
from pipelines import Pipelines
from seeds import load_seeds


class Campaign:
    def __init__(self, tree: str, seed: int, *, corpus_dir: str | None = None, with_corpus: bool = True,
                 timeout: float = 20.0, minimize_runs: int = 300, log=print):
        self.tree, self.corpus_dir, self.log = tree, corpus_dir, log
        self.minimize_runs = minimize_runs
        self.worker = Worker(tree, timeout)
        registry = self.worker.ensure_started()
        texts, pipelines = load_seeds(os.path.join(tree, "test"), with_corpus)
        self.pool, self.pipelines = Pool(texts), Pipelines(registry, pipelines)
        self.pass_names = sorted(set(registry["meshir"]) | set(registry["upstream"]), key=len, reverse=True)
        self.rng = random.Random(seed)
        self.counts: Counter = Counter()
        self.findings: dict[str, dict] = {}  # signature -> what, when, repro
        self.execs, self.started = 0, time.monotonic()
        self.revision = _revision(tree)

    def case(self) -> tuple[list[str], str]:
        text = self.rng.choice(self.pool.texts)
        if self.rng.random() < 0.9:
            text = mutate(self.rng, text, self.pool)
        return self.pipelines.args(self.rng, text), text

    def run(self, *, seconds: float | None = None, execs: int | None = None, status_every: float = 30.0) -> None:
        last = time.monotonic()
        while (seconds is None or time.monotonic() - self.started < seconds) and (execs is None or self.execs < execs):
            self.step(*self.case())
            if time.monotonic() - last >= status_every:
                self.log(self.status())
                last = time.monotonic()

    def step(self, args: list[str], text: str) -> str:
        result = self.worker.run(args, text)
        self.execs += 1
        self.counts[result.outcome] += 1
        if result.outcome in BUGS:
            self._finding(args, text, result)
        return result.outcome

    def status(self) -> str:
        elapsed = time.monotonic() - self.started
        counts = " ".join(f"{c}={self.counts[c]}" for c in CLASSES)
        return f"[{elapsed:7.1f}s] execs={self.execs} exec/s={self.execs / max(elapsed, 1e-9):.1f} {counts} signatures={len(self.findings)}"

    def _signature(self, result, args, text) -> str:
        if result.outcome in (CRASH, HANG):  # no message in-process: tell crashes apart by stage and pass
            if args and self.worker.run([], text).outcome == result.outcome:
                return f"{result['signature']} [parse or verify]"
            args = self._culprit_args(args, text, result.outcome)
            joined = " ".join(args)
            passes = sorted({p for p in self.pass_names if re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", joined)})
            return f"{result['signature']} [{','.join(passes)}]"
        return result["signature"]

    def _culprit_args(self, args, text, outcome) -> list[str]:
        """The pipeline cut to the one pass that alone fails the same way, when there is one."""
        for i, arg in enumerate(args):
            if arg.startswith(WRAPPED) and arg.endswith(")"):
                elements = top_level_elements(arg[len(WRAPPED):-1])
                for element in elements[:4] if len(elements) > 1 else ():
                    alone = args[:i] + [WRAPPED + element + ")"] + args[i + 1:]
                    if self.worker.run(alone, text).outcome == outcome:
                        return alone
        return args

    def _finding(self, args, text, result) -> None:
        sig = self._signature(result, args, text)
        if sig in self.findings:
            self.findings[sig]["hits"] += 1
            return
        elapsed = time.monotonic() - self.started
        finding = {"signature": sig, "outcome": result.outcome, "exec": self.execs, "seconds": round(elapsed, 1),
                   "hits": 1, "args": args, "text": text, "confirmed": None, "repro": None}
        self.findings[sig] = finding
        confirm = recheck(self.tree, args, text)
        finding["confirmed"] = confirm["signature"]
        self.log(f"[{elapsed:7.1f}s] exec {self.execs}: {result.outcome} {sig}; fresh process: {confirm['signature']}")
        if confirm.outcome not in BUGS or self.corpus_dir is None:  # no corpus: report only
            return
        outcome = result.outcome
        runs = {HANG: 8, CRASH: self.minimize_runs // 4}.get(outcome, self.minimize_runs)  # each costs a restart

        def same_failure(a, t) -> bool:
            again = self.worker.run(a, t)
            return again.outcome == outcome and (outcome in (CRASH, HANG) or again["signature"] == result["signature"])

        small_args, small_text = minimize(args, text, same_failure, max_runs=runs)
        final = recheck(self.tree, small_args, small_text)
        if final.outcome not in BUGS:  # minimized into something only the worker sees: keep the original
            small_args, small_text, final = args, text, confirm
        finding.update(args=small_args, text=small_text)
        found = f"{final['signature']} on {self.revision} after {self.execs} executions"
        finding["repro"] = write_repro(small_args, small_text, found, self.corpus_dir)
        self.log(f"          saved {finding['repro']} ({len(small_text)} bytes, args {small_args})")

    def close(self) -> None:
        self.worker.close()


def _revision(tree: str) -> str:
    try:
        return subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"
