"""Decoding the README's LM on a GPU: characters per second of one sample, three ways, on a
one-device mesh of the default backend (the lent H200; the CPU elsewhere).

    python benchmarks/decode_gpu.py --out DIR    # writes DIR/decode_gpu.md and .json

The model is examples/lm's default config with its initial parameters (the speed does not
depend on training). Ways: the whole generation loop on the device with the key/value
cache (examples/lm/decode.py `program`, greedy, sampled, beam 4); the one-step program
called once per character with the caches donated (`greedy_per_token`); and the forward
program over the whole text for every character, without a cache. The three greedy texts
must agree (asserted). Medians of `--reps` timed calls after a warm-up call.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))

PROMPT = "Return the "


def _timed(call, reps: int) -> tuple[object, float]:
    out = call()  # compiles and warms up
    times = []
    for _ in range(reps):
        began = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - began)
    return out, statistics.median(times)


def measure(reps: int) -> dict:
    import jax
    import numpy as np

    import meshir as mi
    from lm import data, decode, model

    cfg = model.Config()
    mesh = mi.Mesh({"x": 1}, devices=jax.devices()[:1])
    params = model.init_params(cfg)
    prompt = len(data.encode(PROMPT))
    count = cfg.length - prompt
    rows = 1
    speeds, texts = {}, {}
    for kind, options in {"greedy": {}, "sampled": {"temperature": 0.8, "top_k": 20},
                          "beam 4": {"beam": 4, "length_penalty": 0.6}}.items():
        gen = decode.compile_generator(cfg, mesh, {}, rows, cfg.length, **options)
        seed = 0 if kind == "sampled" else None
        out, seconds = _timed(lambda: gen(params, [PROMPT], seed=seed), reps)
        tokens = out[0] if kind.startswith("beam") else out
        texts[kind] = data.decode(decode.continuation(tokens, [PROMPT]))
        speeds[f"{kind}, on-device loop"] = count / seconds
    step = mi.compile(decode.step_program(cfg, mesh, rows, cfg.length), layout={}, donate=decode.cache_names(cfg))
    out, seconds = _timed(lambda: decode.greedy_per_token(step, cfg, params, [PROMPT], rows, cfg.length), reps)
    speeds["greedy, per-token calls"] = count / seconds
    texts["greedy, per-token calls"] = data.decode(decode.continuation(out, [PROMPT]))
    forward = mi.compile(model.build(cfg, mesh, with_logits=True), layout={})

    def uncached():
        return decode.greedy_without_cache(
            lambda tokens: np.asarray(forward(tokens=tokens, targets=tokens, **params)[1]), cfg, PROMPT, count)

    texts["greedy, no cache"], seconds = _timed(uncached, max(1, reps // 2))
    speeds["greedy, no cache"] = count / seconds
    assert texts["greedy"] == texts["greedy, per-token calls"] == texts["greedy, no cache"], texts
    return {"backend": jax.default_backend(), "device": str(jax.devices()[0].device_kind), "characters": count,
            "chars_per_s": speeds, "texts": texts}


def report(r: dict, meta: dict) -> str:
    lines = ["# Decoding the README's LM on one device", "",
             f"`python benchmarks/decode_gpu.py`, {meta['date']}, jax {meta['jax']}, {r['backend']} "
             f"({r['device']}). The default model (2 layers, d_model 64) with its initial parameters, one "
             f"sample of {r['characters']} characters after the prompt {PROMPT!r}.", "",
             "| way | characters/s | vs no cache |", "|---|---:|---:|"]
    base = r["chars_per_s"]["greedy, no cache"]
    lines += [f"| {k} | {v:,.0f} | {v / base:.1f}x |" for k, v in r["chars_per_s"].items()]
    lines += ["", "The three greedy texts agree (asserted)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(HERE / "results"))
    p.add_argument("--reps", type=int, default=5)
    args = p.parse_args(argv)
    import harness

    r = measure(args.reps)
    meta = harness.machine()
    harness.write_report(args.out, "decode_gpu", {**meta, **r}, report(r, meta))
    for k, v in r["chars_per_s"].items():
        print(f"{k:28s} {v:10,.0f} characters/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
