"""The LM training step as users write it when MeshIR sits inside their JAX program, against
the same step in MeshIR alone and in plain JAX, in one process.

    python benchmarks/jax_interop.py          # writes results/jax_interop.md and .json

The README's LM (examples/lm, 2-D layout, 8 CPU devices), Adam, fresh NumPy batches, donated
state, four contenders in interleaved rounds:

- `meshir`: the MeshIR training step (`mi.train_step`, `donate=True`) called directly;
- `meshir_in_jit`: the same executable called inside the user's `jax.jit` (donate_argnums):
  embedded in jax's program through its `jax.export.Exported`;
- `jax_grad_of_meshir`: a `jax.jit` step whose `jax.value_and_grad` runs through the MeshIR
  *loss* executable (its custom VJP: MeshIR's forward program, then MeshIR's gradient
  program, which recomputes the forward) and whose Adam update is JAX's (lm_step.jax_step_fn);
- `jax`: that step with the model written in JAX (lm_step.jax_step_fn), the same shardings.

All four start from the same parameters and batch, and their first-step losses agree. Times
are medians of per-round medians on this 2-core machine (8 virtual devices share 2 cores):
ratios, not claims about accelerators.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import harness  # noqa: E402
import lm_step  # noqa: E402
from measure import flops_per_device as measure_flops  # noqa: E402

CONTENDERS = ("meshir", "meshir_in_jit", "jax_grad_of_meshir", "jax")


def measure(size: str, rounds: int, steps: int, say=print) -> dict:
    import jax

    import meshir as mi
    from lm import model

    cfg = model.Config(**{**lm_step.SIZES, **lm_step.QUICK_SIZES}[size])
    mesh, rules = model.layout(lm_step.DEFAULT_LAYOUT)
    batch = lm_step.batches(cfg).__next__
    step_prog = model.train_step(cfg, mesh)
    exe = mi.compile(step_prog, layout=rules, donate=True)
    loss_exe = mi.compile(model.build(cfg, mesh), layout=rules)
    names = step_prog.program.result_names
    state_names = [n for n in names if n != "loss"]
    params = list(model.param_dims(cfg))
    init = {**model.init_params(cfg), **mi.init_optimizer_state(step_prog)}

    def meshir_loss(p, tokens, targets):
        return loss_exe(tokens=tokens, targets=targets, **p)

    def in_jit(state, tokens, targets, t):
        out = dict(zip(names, exe(tokens=tokens, targets=targets, **state, step=t)))
        return out["loss"], {n: out[n] for n in state_names}

    jax_fn, state_sh, tok_sh, repl = lm_step.jax_side(cfg, dict(mesh.shape), rules, state_names)
    grad_fn, _, _, _ = lm_step.jax_side(cfg, dict(mesh.shape), rules, state_names, loss=meshir_loss)
    shardings = dict(in_shardings=(state_sh, tok_sh, tok_sh, repl), out_shardings=(repl, state_sh))
    jitted = {"meshir_in_jit": jax.jit(in_jit, donate_argnums=(0,), **shardings),
              "jax_grad_of_meshir": jax.jit(grad_fn, donate_argnums=(0,), **shardings),
              "jax": jax.jit(jax_fn, donate_argnums=(0,), **shardings)}

    def fresh_state():
        return {n: jax.device_put(init[n], state_sh[n]) for n in state_names}

    tok0, tgt0 = batch()
    first = {"meshir": dict(zip(names, exe(tokens=tok0, targets=tgt0, **fresh_state(), step=np.float32(1))))}
    loop = {"meshir": {"state": {n: first["meshir"][n] for n in state_names}, "t": 1}}
    losses = {"meshir": float(first["meshir"]["loss"])}
    for name, fn in jitted.items():
        loss, state = fn(fresh_state(), tok0, tgt0, np.float32(1))
        losses[name] = float(loss)
        loop[name] = {"state": state, "t": 1}
    for name, value in losses.items():
        np.testing.assert_allclose(value, losses["jax"], rtol=1e-4, err_msg=f"first-step loss of {name}")
    say("  first-step losses: " + ", ".join(f"{k} {v:.6f}" for k, v in losses.items()))
    for n in params:  # after one Adam step, the parameters agree too
        want = np.asarray(loop["jax"]["state"][n])
        for name in CONTENDERS[:-1]:
            np.testing.assert_allclose(np.asarray(loop[name]["state"][n]), want, rtol=2e-3, atol=2e-5,
                                       err_msg=f"{name}: {n} after one step")

    def timed_step(name):
        def step():
            s = loop[name]
            s["t"] += 1
            tokens, targets = batch()
            if name == "meshir":
                out, elapsed = harness.timed(
                    lambda: exe(tokens=tokens, targets=targets, **s["state"], step=np.float32(s["t"])))
                results = dict(zip(names, out))
                s["state"], s["loss"] = {n: results[n] for n in state_names}, float(results["loss"])
            else:
                (loss, new), elapsed = harness.timed(lambda: jitted[name](s["state"], tokens, targets, np.float32(s["t"])))
                s["state"], s["loss"] = new, float(loss)
            return elapsed
        return step

    flops = {"meshir": measure_flops(exe.cost_analysis())}
    for name, fn in jitted.items():
        flops[name] = measure_flops(fn.lower(fresh_state(), tok0, tgt0, np.float32(1)).compile().cost_analysis())

    per_round = harness.interleaved_rounds({n: timed_step(n) for n in CONTENDERS}, rounds, steps, warmup=2)
    medians = {n: statistics.median(v) for n, v in per_round.items()}
    ratios = {f"{n}/jax": statistics.median(harness.round_ratios(per_round, n, "jax")) for n in CONTENDERS[:-1]}
    ratios["meshir_in_jit/meshir"] = statistics.median(harness.round_ratios(per_round, "meshir_in_jit", "meshir"))
    ratios["jax_grad_of_meshir/meshir"] = statistics.median(
        harness.round_ratios(per_round, "jax_grad_of_meshir", "meshir"))
    last = {n: loop[n]["loss"] for n in CONTENDERS}
    return {"size": size, "config": cfg.to_dict(), "rules": dict(rules), "mesh": dict(mesh.shape),
            "first_step_loss": losses, "last_loss": last, "rounds": rounds, "steps_per_round": steps,
            "median_step_s": medians, "ratios": ratios, "flops_per_device": flops}


def markdown(meta: dict, r: dict) -> str:
    lines = [
        "# MeshIR inside JAX: the LM training step",
        "",
        f"`python benchmarks/jax_interop.py`, {meta['date']}, jax {meta['jax']}, {meta['platform']}, {meta['cpus']} CPUs.",
        "",
        f"The LM ({r['size']}: {r['config']['layers']} layers, d_model {r['config']['d_model']}, batch "
        f"{r['config']['batch']} × length {r['config']['length']}), 2-D layout on mesh {r['mesh']}, Adam, donated state, "
        f"fresh NumPy batches; {r['rounds']} interleaved rounds of {r['steps_per_round']} steps, the median of per-round "
        "medians. First-step losses agree to 1e-4 and the parameters after one step to 2e-3.",
        "",
        "| contender | what runs | step ms | vs jax | vs meshir | XLA FLOPs per device |",
        "|---|---|---:|---:|---:|---:|",
    ]
    what = {
        "meshir": "`mi.train_step`'s executable, called directly",
        "meshir_in_jit": "the same executable inside the user's `jax.jit` (embedded, donate_argnums)",
        "jax_grad_of_meshir": "`jax.value_and_grad` through the MeshIR loss (MeshIR's VJP program), Adam in JAX, in `jax.jit`",
        "jax": "the model in JAX, `jax.jit`, the same shardings",
    }
    rat = r["ratios"]
    for n in CONTENDERS:
        vs_jax = "1.00" if n == "jax" else f"{rat[f'{n}/jax']:.2f}"
        vs_meshir = "1.00" if n == "meshir" else f"{rat[f'{n}/meshir']:.2f}" if f"{n}/meshir" in rat else "—"
        lines.append(f"| {n} | {what[n]} | {harness.ms(r['median_step_s'][n])} | {vs_jax} | {vs_meshir} | "
                     f"{r['flops_per_device'][n]:,.0f} |")
    lines += ["", "Ratios are medians of per-round ratios (both measured in the same round). FLOPs are XLA's cost "
              "analysis of each compiled step. The gradient through the MeshIR loss calls two MeshIR programs, the "
              "forward and the VJP program (which recomputes the forward); both are merged into the one module jax "
              "compiles, and the FLOPs column shows whether XLA removed the repeated forward pass."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="results directory (default benchmarks/results)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=5, help="steps per contender per round")
    parser.add_argument("--quick", action="store_true", help="the tiny LM, 2 rounds of 2 steps, into results/quick/")
    args = parser.parse_args(argv)
    harness.ensure_devices(8)
    rounds, steps = (2, 2) if args.quick else (args.rounds, args.steps)
    record = measure("tiny" if args.quick else "readme", rounds, steps)
    print(", ".join(f"{n} {harness.ms(record['median_step_s'][n])} ms" for n in CONTENDERS), flush=True)
    meta = harness.machine()
    harness.write_report(harness.results_dir(args.out, args.quick), "jax_interop", {"meta": meta, **record},
                         markdown(meta, record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
