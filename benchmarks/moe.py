"""The mixture-of-experts layer (meshir.layers.moe) against the same layer written in JAX,
forward and backward, in one process: the collectives of each compiled HLO, the all-to-alls
against their analytic size, and the step time.

    python benchmarks/moe.py            # writes results/moe.md and .json
    python benchmarks/moe.py --quick    # the tiny size, 2 rounds, into results/quick/

The step is the gradient of `loss = mean(y * y) + aux_loss` (y and aux_loss of the layer: top-2
GShard gating, capacity factor 1.25, relu experts) with respect to the input x and every weight
(router [d_model, experts_unsplit], w1 [experts, d_model, d_ff], w2 [experts, d_ff, d_model]),
on the 4x2 mesh of 8 CPU devices, in two layouts:

- `2d`: {batch: x, experts: x, d_ff: y}: tokens split over x, the experts over x, each
  expert's hidden layer over y;
- `data_parallel`: {batch: (y, x), experts: x, batch_unsplit: y}: tokens split over all 8
  devices; the experts over x, and their inputs' groups over what is left of the data split
  (y), as the layer's docstring says: one rule set cannot split `batch` over (y, x) and also
  over y alone, so the experts' side names the groups `batch_unsplit`.

Three contenders:

- `meshir`: `mi.value_and_grad` of the program calling `meshir.layers.moe`, compiled with
  `mi.compile(..., layout=rules)`;
- `jax`: the same math in jax.numpy (softmax router, argmax choices, cumsum slots with every
  first choice placed before any second choice, one-hot dispatch and combine tensors, einsums,
  relu FFN), `jax.jit(jax.value_and_grad(...))` with the same NamedShardings on a jax Mesh of
  the same devices, written the way a JAX user writes GShard: the experts' inputs and outputs
  `[experts, groups, capacity, d_model]` constrained (`with_sharding_constraint`) to experts
  over x (groups over y in the data-parallel layout), and the outputs then back to groups over
  the tokens' axes before the combine;
- `jax_back_only`: the same without the constraint on the experts' outputs (only the inputs
  and the move back are constrained). XLA then lays out the experts' backward from the
  tokens' side; in the data-parallel layout it replicates what it cannot reshard.

All compute the same loss and gradients (checked to rtol 1e-4 before timing). Collectives
are read from each compiled HLO (lowering/runtime/hlo_collectives.py, ring formulas, bytes per device). The analytic
size of the dispatch all-to-all is (n-1)/n x the per-device block of [experts, groups,
capacity, d_model] before the exchange x 4 bytes, n the size of the experts' axis. Times are
medians of per-round medians in interleaved rounds on this 2-core machine, where 8 virtual
devices share two cores: ratios, not claims about a real interconnect.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import harness  # noqa: E402
from meshir.lowering.runtime import hlo_collectives as hlo_stats  # noqa: E402

CONTENDERS = ("meshir", "jax", "jax_back_only")
MESH = {"x": 4, "y": 2}
K, CAPACITY_FACTOR, AUX_LOSS_WEIGHT = 2, 1.25, 1e-2
RTOL = 1e-4
WRT = ("x", "router", "w1", "w2")

SIZES = {
    "tiny": {"batch": 8, "length": 16, "d_model": 16, "experts": 4, "d_ff": 32},
    "default": {"batch": 32, "length": 64, "d_model": 128, "experts": 8, "d_ff": 256},
}

#: MeshIR's layout rules, and the jax PartitionSpecs that say the same: x [batch, length,
#: d_model], the weights, the experts' side [experts, groups, capacity, d_model] and the
#: tokens' side of the same shape (the combine's operand).
LAYOUTS = {
    "2d": {
        "rules": {"batch": "x", "experts": "x", "d_ff": "y"},
        "jax": {"x": ("x", None, None), "router": (None, None), "w1": ("x", None, "y"), "w2": ("x", "y", None),
                "experts_side": ("x", None, None, None), "tokens_side": (None, "x", None, None)},
    },
    "data_parallel": {
        "rules": {"batch": ("y", "x"), "experts": "x", "batch_unsplit": "y"},
        "jax": {"x": (("y", "x"), None, None), "router": (None, None), "w1": ("x", None, None),
                "w2": ("x", None, None), "experts_side": ("x", "y", None, None),
                "tokens_side": (None, ("y", "x"), None, None)},
    },
}


def capacity(cfg: dict) -> int:
    from meshir import layers

    return layers.expert_capacity(cfg["length"], cfg["experts"], K, CAPACITY_FACTOR)


# ------------------------------------------------------------------------------------------
# The two contenders


def meshir_program(cfg: dict):
    """The gradient program of the layer's loss with respect to x and every weight."""
    import meshir as mi
    from meshir import layers

    b, s, m = mi.Dim("batch", cfg["batch"]), mi.Dim("length", cfg["length"]), mi.Dim("d_model", cfg["d_model"])
    e, f = mi.Dim("experts", cfg["experts"]), mi.Dim("d_ff", cfg["d_ff"])
    with mi.Program("moe", mi.Mesh(MESH)) as prog:
        x = prog.argument("x", [b, s, m])
        params = {name: prog.argument(name, dims) for name, dims in layers.moe_params(m, e, f).items()}
        out = layers.moe(x, params, k=K, capacity_factor=CAPACITY_FACTOR, aux_loss_weight=AUX_LOSS_WEIGHT)
        prog.result(mi.mean(out.output * out.output) + out.aux_loss, name="loss")
    return mi.value_and_grad(prog, wrt=list(WRT))


def jax_moe(x, router, w1, w2, constrain=lambda v, side: v):
    """(y, aux_loss, dropped fraction) of the layer in jax.numpy, each sequence one group;
    `constrain(value, side)` lays out the experts' inputs ("experts_in"), their outputs
    ("experts_out") and those outputs moved back for the combine ("tokens_side")."""
    import jax
    import jax.numpy as jnp

    _, s, _ = x.shape
    n_experts = router.shape[1]
    cap = math.ceil(K * CAPACITY_FACTOR * s / n_experts - 1e-9)
    cap = max(1, min(s, cap))
    gates = jax.nn.softmax(jnp.einsum("gsm,me->gse", x, router), axis=-1)
    remaining, choices = gates, []
    for i in range(K):
        mask = jax.nn.one_hot(jnp.argmax(remaining, axis=-1), n_experts, dtype=x.dtype)
        gate = jnp.sum(gates * mask, axis=-1)
        if i == 0:  # GShard's balancing loss, per group
            aux = jnp.mean(jnp.mean(mask, axis=1) * jnp.mean(gates, axis=1)) * float(n_experts ** 2)
        if i < K - 1:
            remaining = remaining * (1.0 - mask)
        choices.append((mask, gate))
    if K > 1:  # renormalized over the k choices
        denominator = sum(gate for _, gate in choices) + 1e-9
        choices = [(mask, gate / denominator) for mask, gate in choices]
    # Slots: every first choice of a group in token order, then every second choice.
    dispatch = combine = used = 0.0
    made = placed = 0.0
    for mask, gate in choices:
        position = (jnp.cumsum(mask, axis=1) - mask + used) * mask
        fits = mask * (position < cap).astype(x.dtype)
        used = used + jnp.sum(fits, axis=1, keepdims=True)
        made, placed = made + jnp.sum(mask), placed + jnp.sum(fits)
        slot = jax.nn.one_hot(jnp.sum(position, axis=-1).astype(jnp.int32), cap, dtype=x.dtype)
        assigned = jnp.einsum("gse,gsc->gsec", fits, slot)
        dispatch = dispatch + assigned
        combine = combine + assigned * gate[..., None, None]
    expert_in = constrain(jnp.einsum("gsm,gsec->egcm", x, dispatch), "experts_in")
    hidden = jax.nn.relu(jnp.einsum("egcm,emf->egcf", expert_in, w1))
    expert_out = constrain(constrain(jnp.einsum("egcf,efm->egcm", hidden, w2), "experts_out"), "tokens_side")
    y = jnp.einsum("egcm,gsec->gsm", expert_out, combine)
    return y, aux * AUX_LOSS_WEIGHT, 1.0 - placed / made


def jax_step(layout: str, jmesh, pin_outputs: bool = True):
    """jax.jit(jax.value_and_grad(loss)) with the layout's shardings; its argument shardings.
    `pin_outputs`: the experts' outputs are constrained to the experts' side before the move
    back (the `jax` contender); without, only the move back is (`jax_back_only`)."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    specs = LAYOUTS[layout]["jax"]
    sh = {n: NamedSharding(jmesh, PartitionSpec(*spec)) for n, spec in specs.items()}
    sides = {"experts_in": sh["experts_side"], "experts_out": sh["experts_side"] if pin_outputs else None,
             "tokens_side": sh["tokens_side"]}

    def constrain(value, side):
        return value if sides[side] is None else jax.lax.with_sharding_constraint(value, sides[side])

    def loss(x, router, w1, w2):
        y, aux, _ = jax_moe(x, router, w1, w2, constrain)
        return (y * y).mean() + aux

    args = tuple(sh[n] for n in WRT)
    repl = NamedSharding(jmesh, PartitionSpec())
    return jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2, 3)), in_shardings=args,
                   out_shardings=(repl, args)), args


def inputs(cfg: dict) -> dict:
    rng = np.random.default_rng(0)
    b, s, m, e, f = (cfg[n] for n in ("batch", "length", "d_model", "experts", "d_ff"))
    return {"x": rng.standard_normal((b, s, m), dtype=np.float32),
            "router": rng.standard_normal((m, e), dtype=np.float32) / np.sqrt(m),
            "w1": rng.standard_normal((e, m, f), dtype=np.float32) / np.sqrt(m),
            "w2": rng.standard_normal((e, f, m), dtype=np.float32) / np.sqrt(f)}


# ------------------------------------------------------------------------------------------
# Measuring


def analytic_dispatch_bytes(cfg: dict, layout: str) -> int:
    """(n-1)/n x one device's block of [experts, groups, capacity, d_model] f32 before the
    dispatch all-to-all (experts whole, groups split like the tokens), n = the experts' axis."""
    rules = LAYOUTS[layout]["rules"]

    def ways(rule):
        axes = rule if isinstance(rule, tuple) else (rule,)
        return math.prod(MESH[a] for a in axes)

    block = cfg["experts"] * (cfg["batch"] // ways(rules["batch"])) * capacity(cfg) * cfg["d_model"] * 4
    n = ways(rules["experts"])
    return block * (n - 1) // n


def collectives(hlo: str, analytic: int) -> dict:
    found = hlo_stats.parse_collectives(hlo)
    summary = hlo_stats.summarize(found)
    a2a = [c.bytes_per_device for c in found if c.kind == "all-to-all"]
    return {"by_kind": {k: v for k, v in sorted(summary["by_kind"].items())}, "count": summary["count"],
            "bytes_per_device": summary["bytes_per_device"],
            "all_to_all": {"count": len(a2a), "bytes_per_device": sum(a2a), "each": a2a,
                           "equal_to_analytic": sum(b == analytic for b in a2a),
                           "group_sizes": sorted({c.group_size for c in found if c.kind == "all-to-all"})}}


def relative_diff(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


def agreement(got: dict, want_loss, want_grads, what: str) -> dict:
    """Max relative differences of MeshIR's loss and gradients from a jax contender's,
    asserted within RTOL (the gradients' atol RTOL x their largest magnitude)."""
    diffs = {"loss": relative_diff(got["value"], want_loss)}
    np.testing.assert_allclose(np.asarray(got["value"]), np.asarray(want_loss), rtol=RTOL, err_msg=f"{what}: loss")
    for n, g in zip(WRT, want_grads):
        g = np.asarray(g)
        diffs[f"grad_{n}"] = relative_diff(got[f"grad_{n}"], g)
        np.testing.assert_allclose(np.asarray(got[f"grad_{n}"]), g, rtol=RTOL, atol=RTOL * np.max(np.abs(g)),
                                   err_msg=f"{what}: grad_{n}")
    return diffs


def measure(size: str, rounds: int, steps: int, warmup: int = 2, say=print) -> dict:
    import jax

    import meshir as mi
    from jax_baselines import jax_mesh

    cfg = SIZES[size]
    data = inputs(cfg)
    jmesh = jax_mesh(MESH)
    grad_prog = meshir_program(cfg)
    calls, layouts = {}, {}
    for layout, spec in LAYOUTS.items():
        exe = mi.compile(grad_prog, layout=spec["rules"])
        names = exe.signature.arg_names
        placed = {n: jax.device_put(data[n], s) for n, s in zip(names, exe.in_shardings)}
        got = dict(zip(exe.signature.result_names, exe(**placed)))
        analytic = analytic_dispatch_bytes(cfg, layout)
        hlo = {"meshir": exe.compiled_hlo_text()}
        calls[f"{layout}/meshir"] = lambda exe=exe, placed=placed: harness.timed(lambda: exe(**placed))[1]
        diffs = {}
        for c in CONTENDERS[1:]:
            jitted, jax_sh = jax_step(layout, jmesh, pin_outputs=c == "jax")
            for n, want in zip(WRT, jax_sh):
                s = exe.in_shardings[names.index(n)]
                if not s.is_equivalent_to(want, data[n].ndim):
                    raise AssertionError(f"{layout}: argument '{n}': MeshIR lays it out as {s.spec}, jax as {want.spec}")
            args = tuple(jax.device_put(data[n], s) for n, s in zip(WRT, jax_sh))
            want_loss, want_grads = jitted(*args)
            diffs[c] = agreement(got, want_loss, want_grads, f"{layout}, meshir vs {c}")
            hlo[c] = jitted.lower(*args).compile().as_text()
            calls[f"{layout}/{c}"] = lambda jitted=jitted, args=args: harness.timed(lambda: jitted(*args))[1]
        _, _, dropped = jax.jit(jax_moe)(*args)
        stats = {name: collectives(text, analytic) for name, text in hlo.items()}
        layouts[layout] = {
            "rules": {k: list(v) if isinstance(v, tuple) else v for k, v in spec["rules"].items()},
            "jax_specs": {k: [list(a) if isinstance(a, tuple) else a for a in v] for k, v in spec["jax"].items()},
            "agreement": {"ok": True, "rtol": RTOL, "loss": float(got["value"]), "max_rel_diff": diffs},
            "dropped_fraction": float(dropped),
            "analytic_dispatch_a2a_bytes_per_device": analytic,
            "collectives": stats,
            "meshir_dispatch_a2a_equals_analytic": analytic in stats["meshir"]["all_to_all"]["each"],
        }
        worst = max(v for d in diffs.values() for v in d.values())
        say(f"  {layout}: loss {float(got['value']):.6f} (max rel diff {worst:.1e}), analytic dispatch all-to-all "
            f"{analytic:,} B; all-to-alls " + ", ".join(
                f"{c} ×{stats[c]['all_to_all']['count']} {stats[c]['all_to_all']['each']}" for c in CONTENDERS))

    per_round = harness.interleaved_rounds(calls, rounds, steps, warmup=warmup)
    for layout, rec in layouts.items():
        rec["median_step_s"] = {c: statistics.median(per_round[f"{layout}/{c}"]) for c in CONTENDERS}
        rec["ratio_meshir_over"] = {c: statistics.median(harness.round_ratios(per_round, f"{layout}/meshir",
                                                                              f"{layout}/{c}"))
                                    for c in CONTENDERS[1:]}
    return {"size": size, "config": cfg, "k": K, "capacity_factor": CAPACITY_FACTOR, "capacity": capacity(cfg),
            "aux_loss_weight": AUX_LOSS_WEIGHT, "mesh": MESH, "contenders": list(CONTENDERS), "rounds": rounds,
            "steps_per_round": steps, "layouts": layouts}


# ------------------------------------------------------------------------------------------
# Report


def _kinds(stats: dict) -> str:
    return ", ".join(f"{k} ×{v['count']} ({v['bytes_per_device']:,} B)" for k, v in stats["by_kind"].items()) or "none"


def table(r: dict) -> list[str]:
    lines = ["| layout | contender | all-to-alls | all-to-all B/device | each | = analytic | all collectives B/device "
             "| step ms | meshir / this |",
             "|---|---|---:|---:|---|---:|---:|---:|---:|"]
    for layout, rec in r["layouts"].items():
        for c in CONTENDERS:
            s = rec["collectives"][c]
            a2a = s["all_to_all"]
            ratio = f"{rec['ratio_meshir_over'][c]:.2f}" if c in rec["ratio_meshir_over"] else ""
            lines.append(f"| {layout} | {c} | {a2a['count']} | {a2a['bytes_per_device']:,} | "
                         f"{', '.join(f'{b:,}' for b in a2a['each']) or '—'} | {a2a['equal_to_analytic']} of "
                         f"{a2a['count']} | {s['bytes_per_device']:,} | {harness.ms(rec['median_step_s'][c])} | {ratio} |")
    return lines


def notes(r: dict) -> list[str]:
    """What the tables show, read from the numbers (a note only where its condition holds)."""
    out = []
    for layout, rec in r["layouts"].items():
        analytic = rec["analytic_dispatch_a2a_bytes_per_device"]
        m = rec["collectives"]["meshir"]
        a2a = m["all_to_all"]
        others = [b for b in a2a["each"] if b != analytic]
        if others and set(others) == {analytic // MESH["y"]} and "reduce-scatter" in m["by_kind"]:
            out.append(
                f"- {layout}: MeshIR's {len(others)} all-to-alls of {others[0]:,} B (not the analytic {analytic:,}) move "
                "the experts' outputs forward and the gradient of their inputs backward. Both are partial sums over y "
                "(d_ff, split over y, is contracted), so MeshIR reduce-scatters them over y along `expert_capacity`, "
                "exchanges half blocks and all-gathers over y after the exchange (the reduce-scatters and all-gathers of "
                "its row), instead of an all-reduce over y and a full-block all-to-all. The dispatch all-to-all and its "
                "backward twin are the analytic size.")
        elif a2a["equal_to_analytic"] == a2a["count"]:
            out.append(f"- {layout}: all {a2a['count']} of MeshIR's all-to-alls are the analytic {analytic:,} B (dispatch "
                       "and combine forward, and their transposes backward).")
        cfg, ways_x = r["config"], MESH["x"]
        x_block = cfg["batch"] // ways_x * cfg["length"] * cfg["d_model"] * 4
        j = rec["collectives"]["jax"]
        if layout == "2d" and j["by_kind"].get("all-gather", {}).get("bytes_per_device") == (ways_x - 1) * x_block:
            out.append(
                f"- {layout}, jax: XLA partitions the dispatch einsum by all-gathering x over x ({(ways_x - 1) * x_block:,} "
                "B) and exchanging the one-hot dispatch tensor `[groups, tokens, experts, capacity]` instead of the "
                "experts' inputs, and all-reduces the experts' outputs (and backward the gradient of their inputs) over "
                "y before full-block all-to-alls.")
        for c in CONTENDERS[1:]:
            j = rec["collectives"][c]
            if j["bytes_per_device"] > 2 * m["bytes_per_device"] and "all-gather" in j["by_kind"]:
                out.append(
                    f"- {layout}, {c}: {j['bytes_per_device'] / m['bytes_per_device']:.1f}× MeshIR's bytes, "
                    f"{j['by_kind']['all-gather']['bytes_per_device']:,} B of them all-gathers. Without the constraint on "
                    "the experts' outputs, XLA lays out their backward from the tokens' side and replicates what it "
                    "cannot reshard (XLA warns \"Involuntary full rematerialization\").")
    return out


def markdown(meta: dict, r: dict) -> str:
    cfg = r["config"]
    quick = " --quick" if r["size"] == "tiny" else ""
    lines = [
        "# Mixture of experts: MeshIR's layer against the same layer in JAX",
        "",
        f"`python benchmarks/moe.py{quick}`, {meta['date']}, jax {meta['jax']}, {meta['platform']}, {meta['cpus']} CPUs.",
        "",
        f"meshir.layers.moe, forward and backward (`loss = mean(y*y) + aux_loss`, gradients w.r.t. x and every "
        f"weight): batch {cfg['batch']} × length {cfg['length']} tokens (each sequence one gating group), d_model "
        f"{cfg['d_model']}, {cfg['experts']} experts, d_ff {cfg['d_ff']}, top-{r['k']}, capacity factor "
        f"{r['capacity_factor']} ({r['capacity']} slots per expert and group), relu experts, on the "
        f"{r['mesh']['x']}×{r['mesh']['y']} mesh of 8 CPU devices.",
        "",
        "- **meshir**: `mi.value_and_grad` of the program, `mi.compile(layout=rules)`;",
        "- **jax**: the same math in jax.numpy under `jax.jit(jax.value_and_grad(...))` with the same NamedShardings; "
        "the experts' inputs and outputs `[experts, groups, capacity, d_model]` constrained "
        "(`with_sharding_constraint`) to the experts' side (experts over x), and the outputs then back to groups over "
        "the tokens' axes before the combine;",
        "- **jax_back_only**: the same, without the constraint on the experts' outputs (only the experts' inputs, and "
        "the move back); XLA then propagates the tokens' layout into the experts' computation.",
        "",
        "Layouts: **2d** `{batch: x, experts: x, d_ff: y}`; **data_parallel** `{batch: (y, x), experts: x, "
        "batch_unsplit: y}` (jax: tokens over (y, x); the experts' side experts over x and groups over y).",
        "",
        *table(r),
        "",
        f"Bytes per device from each compiled HLO (lowering/runtime/hlo_collectives.py, ring formulas); \"each\" lists the all-to-alls in HLO "
        f"order; \"= analytic\" counts those equal to the dispatch all-to-all's analytic size. Times: {r['rounds']} "
        f"interleaved rounds of {r['steps_per_round']} calls each, the median of per-round medians; \"meshir / this\" "
        "is the median of per-round ratios. 8 virtual devices share 2 cores: the times reflect local work more than "
        "communication.",
        "",
        "| layout | analytic dispatch all-to-all B/device | in MeshIR's HLO | loss | max rel. diff (loss, grads) | "
        "dropped assignments | " + " | ".join(f"{c} collectives" for c in CONTENDERS) + " |",
        "|---|---:|---|---:|---:|---:|" + "---|" * len(CONTENDERS),
    ]
    for layout, rec in r["layouts"].items():
        worst = max(v for d in rec["agreement"]["max_rel_diff"].values() for v in d.values())
        lines.append(f"| {layout} | {rec['analytic_dispatch_a2a_bytes_per_device']:,} | "
                     f"{'yes' if rec['meshir_dispatch_a2a_equals_analytic'] else 'no'} | {rec['agreement']['loss']:.6f} | "
                     f"{worst:.1e} | {rec['dropped_fraction']:.1%} | "
                     + " | ".join(_kinds(rec["collectives"][c]) for c in CONTENDERS) + " |")
    lines += ["", *notes(r)] if notes(r) else []
    lines += ["", "Analytic: (n-1)/n × one device's block of `[experts, groups, capacity, d_model]` f32 before the "
              "exchange, n the size of the experts' axis (x, 4). MeshIR's loss and gradients agree with each jax "
              f"contender's to rtol {RTOL:g} (the gradients' atol {RTOL:g} × their largest magnitude)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=None, help="results directory (default benchmarks/results)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=5, help="calls per contender per round")
    parser.add_argument("--quick", action="store_true", help="the tiny size, 2 rounds of 2 calls, into results/quick/")
    args = parser.parse_args(argv)
    harness.ensure_devices(8)
    rounds, steps, warmup = (2, 2, 1) if args.quick else (args.rounds, args.steps, 2)
    record = measure("tiny" if args.quick else "default", rounds, steps, warmup)
    print("\n".join(table(record)), flush=True)
    meta = harness.machine()
    harness.write_report(harness.results_dir(args.out, args.quick), "moe", {"meta": meta, **record},
                         markdown(meta, record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
