"""meshir.layers.moe against an explicit per-group, per-token NumPy loop of GShard's gating
(layers_reference.moe): top-1, top-2 and top-3 routing, with room for every assignment (the
output is then each token through its chosen experts) and with small capacities that drop
(the same tokens dropped, the same dropped fraction and auxiliary loss); regrouped tokens,
gated experts, another input dim order, random second routing; through mi.interpret and
compiled on a 4x2 mesh under the expert-parallel layouts of the module's docstring (one
all-to-all each way) and replicated. A NaN token poisons its own group only."""
from __future__ import annotations

import numpy as np
import pytest

import layers_reference as R
import meshir as mi
from layers_support import close, evaluations, mesh, values
from meshir import layers as L

D = mi.Dim
B, S, M, E, F = 8, 16, 8, 4, 8
b, l, m, e, f = D("batch", B), D("length", S), D("d_model", M), D("experts", E), D("d_ff", F)

# The layouts of the module's docstring: experts over the data axis (with d_ff over the model
# axis), the batch over both axes with what experts leave of it named batch_unsplit; and none.
EXPERTS_D_FF = {"batch": "x", "experts": "x", "d_ff": "y"}
BATCH_2D = {"batch": ("y", "x"), "experts": "x", "batch_unsplit": "y"}
LAYOUTS = {"experts-d_ff": EXPERTS_D_FF, "batch-2d": BATCH_2D, "replicated": {}}

NO_DROP_FACTOR = float(E)  # capacity = the group size: every assignment fits
SMALL_FACTOR = 0.5


def _inputs(seed: int, gated: bool = False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((B, S, M)).astype(np.float32)
    p = values(rng, L.moe_params(m, e, f, gated=gated))
    p["router"] = (rng.standard_normal((M, E)) * 1.5).astype(np.float32)  # decisive, uneven routing
    return x, p


def _weights(p: dict) -> dict:
    return {n: p[n] for n in ("router", "w1", "w2", "w_gate") if n in p}


def _program(name: str, calls: dict, dims=None, x_dims=(b, l, m)):
    """A program of x and the MoE parameters whose results are, for each `calls` name, the
    output, auxiliary loss and dropped fraction of moe(x, p, **kwargs)."""
    with mi.Program(name, mesh()) as prog:
        x = prog.argument("x", list(x_dims))
        p = {n: prog.argument(n, ds) for n, ds in (dims or L.moe_params(m, e, f)).items()}
        for call, kwargs in calls.items():
            out = L.moe(x, p, **kwargs)
            assert isinstance(out, L.MoEOutput)
            assert out.output.names == x.names and out.aux_loss.names == out.dropped.names == ()
            prog.result(out.output, name=f"{call}_y")
            prog.result(out.aux_loss, name=f"{call}_aux")
            prog.result(out.dropped, name=f"{call}_dropped")
    return prog


def _check(got, want, label: str) -> None:
    """got: (output, aux, dropped) of the program; want: the same from the reference."""
    close(got[0], want[0], f"{label} output")
    close(got[1], want[1], f"{label} aux loss", rtol=1e-5)
    close(got[2], want[2], f"{label} dropped", rtol=0, atol=1e-6)


# k: the layouts it is compiled under (the random and gated tests below run on all three).
K_LAYOUTS = {1: ["experts-d_ff"], 2: ["experts-d_ff", "batch-2d"], 3: ["batch-2d"]}


@pytest.mark.parametrize("k", sorted(K_LAYOUTS))
def test_top_k_with_and_without_drops(k):
    assert {n: [d.name for d in ds] for n, ds in L.moe_params(m, e, f).items()} == {
        "router": ["d_model", "experts_unsplit"], "w1": ["experts", "d_model", "d_ff"],
        "w2": ["experts", "d_ff", "d_model"]}
    assert list(L.moe_params(m, e, f, gated=True)) == ["router", "w1", "w_gate", "w2"]
    x, p = _inputs(k)
    w = _weights(p)
    prog = _program(f"moe_top{k}", {"roomy": dict(k=k, capacity_factor=NO_DROP_FACTOR, aux_loss_weight=1.0),
                                    "small": dict(k=k, capacity_factor=SMALL_FACTOR, aux_loss_weight=0.5)})
    for cf in (NO_DROP_FACTOR, SMALL_FACTOR, 1.25, 1.1, 0.01, 100.0):
        assert L.expert_capacity(S, E, k, cf) == R.capacity(S, E, k, cf), cf
    roomy = R.moe(x, **w, k=k, capacity_factor=NO_DROP_FACTOR)
    assert roomy[2] == 0.0
    close(roomy[0], R.moe_dense(x, **w, k=k))  # no drop: each token through its k experts
    small = R.moe(x, **w, k=k, capacity_factor=SMALL_FACTOR)
    # The small capacity drops, and (for k > 1) the order of placement decides which: placing
    # each token's choices together would give another output.
    assert 0.1 < small[2] < 0.9
    if k > 1:
        assert not np.allclose(small[0], R.moe(x, **w, k=k, capacity_factor=SMALL_FACTOR, token_major=True)[0],
                               atol=1e-3)
    want = [(roomy[0], roomy[1], 0.0), (small[0], 0.5 * small[1], small[2])]
    layouts = {name: LAYOUTS[name] for name in K_LAYOUTS[k]}
    for label, got in evaluations(prog, layouts, x, *p.values()):
        _check(got[:3], want[0], f"{label} roomy")
        _check(got[3:], want[1], f"{label} small")


def test_gated_experts_two_all_to_alls_and_a_nan_stays_in_its_group():
    x, p = _inputs(10, gated=True)
    w = _weights(p)
    prog = _program("moe_gated", {"y": dict(k=2)}, dims=L.moe_params(m, e, f, gated=True))
    want = R.moe(x, **w, k=2, capacity_factor=1.25)
    assert want[2] > 0  # GShard's training capacity drops some here
    assert not np.allclose(want[0], R.moe(x, **w, k=2, capacity_factor=1.25, activation="relu")[0], atol=1e-3)
    poisoned = x.copy()
    poisoned[5, 3, 2] = np.nan
    others = np.arange(B) != 5
    runs = [("interpret", lambda *a: mi.interpret(prog, *a))]
    for label, rules in LAYOUTS.items():
        exe = mi.compile(prog, layout=rules)
        all_to_all = [c for c in exe.compile_report.collectives if c.kind == "all_to_all"]
        assert len(all_to_all) == (2 if rules else 0), (label, exe.compile_report.collectives)
        runs.append((label, exe))
    for label, run in runs:
        y, aux, dropped = (np.asarray(v) for v in run(x, *p.values()))
        _check((y, aux, dropped), (want[0], 0.01 * want[1], want[2]), label)
        # A NaN in one token reaches every token of its group (the dispatch and combine
        # einsums multiply it by the zeros of the other tokens' slots), and no other group.
        y, aux, dropped = (np.asarray(v) for v in run(poisoned, *p.values()))
        assert np.isnan(y[5]).all(), label
        close(y[others], want[0][others], f"{label} other groups")
        assert np.isnan(aux), label  # the router's mean probability of the group is NaN
        assert 0.0 <= float(dropped) < 1.0, label


def test_regrouped_tokens_and_another_dim_order():
    x, p = _inputs(20)
    w = _weights(p)
    calls = {"reordered": dict(k=2, capacity_factor=SMALL_FACTOR)}
    reordered = _program("moe_reordered", calls, x_dims=(l, b, m))
    regrouped = _program("moe_regrouped", {"regrouped": dict(k=2, capacity_factor=SMALL_FACTOR, group_size=32)})
    out, aux, dropped, _ = R.moe(x, **w, k=2, capacity_factor=SMALL_FACTOR)
    want_reordered = (out.transpose(1, 0, 2), 0.01 * aux, dropped)
    # 8 x 16 tokens in row-major order as 4 groups of 32 (capacity 8 of 32, not 4 of 16).
    out, aux, dropped, _ = R.moe(x.reshape(4, 32, M), **w, k=2, capacity_factor=SMALL_FACTOR)
    want_regrouped = (out.reshape(B, S, M), 0.01 * aux, dropped)
    assert not np.allclose(want_regrouped[0], want_reordered[0].transpose(1, 0, 2), atol=1e-3)
    layouts = {"experts-d_ff": EXPERTS_D_FF}
    for label, got in evaluations(reordered, layouts, x.transpose(1, 0, 2).copy(), *p.values()):
        _check(got, want_reordered, f"{label} [length, batch, d_model]")
    for label, got in evaluations(regrouped, layouts, x, *p.values()):
        _check(got, want_regrouped, f"{label} group_size=32")


def test_regrouped_tokens_of_an_input_in_another_dim_order():
    x, p = _inputs(21)
    prog = _program("moe_reordered_regrouped", {"y": dict(k=2, capacity_factor=SMALL_FACTOR, group_size=32)},
                    x_dims=(l, b, m))
    out, aux, dropped, _ = R.moe(x.reshape(4, 32, M), **_weights(p), k=2, capacity_factor=SMALL_FACTOR)
    got = [np.asarray(v) for v in mi.interpret(prog, x.transpose(1, 0, 2).copy(), *p.values())]
    _check(got, (out.reshape(B, S, M).transpose(1, 0, 2), 0.01 * aux, dropped), "interpret")


def test_random_second_routing():
    x, p = _inputs(30)
    w = _weights(p)
    cf = 1.0
    random = dict(k=2, capacity_factor=cf, second_policy="random", seed=1234)
    prog = _program("moe_random", {"random": random, "tiny": {**random, "second_threshold": 1e-9},
                                   "huge": {**random, "second_threshold": 1e9}})
    every = R.moe(x, **w, k=2, capacity_factor=cf)  # policy "all"
    first_only = R.moe(x, **w, k=2, capacity_factor=cf, keep=lambda i, g, s: i == 0)
    assert every[2] > 0 and not np.allclose(every[0], first_only[0], atol=1e-3)
    seen = None
    for label, got in evaluations(prog, LAYOUTS, x, *p.values()):
        rand, tiny, huge = got[0:3], got[3:6], got[6:9]
        # A threshold of 1e-9 keeps every second choice (probability min(1, gate / 1e-9)): policy "all".
        _check(tiny, (every[0], 0.01 * every[1], every[2]), f"{label} tiny threshold")
        # A threshold of 1e9 keeps none: only first choices are made (and counted).
        _check(huge, (first_only[0], 0.01 * first_only[1], first_only[2]), f"{label} huge threshold")
        # The default threshold keeps some second choices and not others.
        assert not np.allclose(rand[0], tiny[0], atol=1e-3) and not np.allclose(rand[0], huge[0], atol=1e-3), label
        close(rand[1], tiny[1], f"{label} aux (first choices only)", rtol=1e-6)
        if seen is None:
            seen = rand
        else:  # the same draws on every layout
            for g, s, name in zip(rand, seen, ("output", "aux", "dropped")):
                close(g, s, f"{label} random {name}", rtol=1e-5, atol=1e-6)


def test_random_second_routing_with_a_tensor_seed():
    """A 0-d i32 seed: one value gives one draw, another value another."""
    x, p = _inputs(31)
    with mi.Program("moe_tensor_seed", mesh()) as prog:
        xt, seed = prog.argument("x", [b, l, m]), prog.argument("seed", [], dtype="i32")
        pt = {n: prog.argument(n, ds) for n, ds in L.moe_params(m, e, f).items()}
        prog.result(L.moe(xt, pt, k=2, second_policy="random", seed=seed).output, name="random")
        prog.result(L.moe(xt, pt, k=2, second_policy="random", seed=seed, second_threshold=1e-9).output,
                    name="tiny")
    want = R.moe(x, **_weights(p), k=2, capacity_factor=1.25)[0]
    rand, tiny = (np.asarray(v) for v in mi.interpret(prog, x, np.int32(7), *p.values()))
    close(tiny, want, "tiny threshold")
    assert not np.allclose(rand, want, atol=1e-3)
    again, _ = (np.asarray(v) for v in mi.interpret(prog, x, np.int32(7), *p.values()))
    np.testing.assert_array_equal(again, rand)
    other, _ = (np.asarray(v) for v in mi.interpret(prog, x, np.int32(8), *p.values()))
    assert not np.allclose(other, rand, atol=1e-3)
