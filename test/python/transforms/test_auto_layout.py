"""mi.auto_layout: the branch-and-bound search finds what brute force over every legal rule
set finds, its predicted collective bytes rank candidates as the real partitioning does, the
chosen rules keep the user's constraints and fit the budget by the real memory estimate, the
search does not grow with depth for stacked layers, and bad input is a clear error."""
from __future__ import annotations

import dataclasses
import itertools
import pathlib
import sys

import numpy as np
import pytest

import meshir as mi
from meshir.api.compilation.auto_layout import AutoLayout as AutoLayoutRepr
from meshir.dialect.signature import entry_function
from meshir.transforms.layout_search.choose import Candidate, measure_candidate
from meshir.transforms.layout_search.estimate import Estimator
from meshir.transforms.layout_search.search import key, options, search
from meshir.transforms.layout_search.summary import summarize
from meshir.transforms.analysis.cost_model import CostModel
from meshir.transforms.analysis.memory_estimate import format_bytes

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples"))
from lm import model as lm_model

B, M, F = mi.Dim("batch", 32), mi.Dim("d_model", 16), mi.Dim("d_ff", 64)
TIME = CostModel("time", {"x": mi.AxisLink(1e-6, 1e9), "y": mi.AxisLink(1e-6, 1e10)})


def ffn_loss(mesh):
    with mi.Program("ffn", mi.Mesh(mesh)) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, F]), prog.argument("w2", [F, M])
        y = mi.einsum(mi.relu(mi.einsum(x, w1, output=[B, F])), w2, output=[B, M])
        prog.result(mi.mean((y - x) * (y - x)), name="loss")
    return prog


def train_step(mesh):
    return mi.train_step(ffn_loss(mesh), mi.Adam(1e-2), params=["w1", "w2"])


def prepared(program):
    from meshir.api.compilation.source import prepared_source

    source, _ = prepared_source(program, None, None)
    return source, entry_function(source, None)


def legal_rule_sets(summary, mesh_shape):
    """Brute force: every assignment of the dims' options with no axis twice in a tensor."""
    names = sorted(summary.dims)
    for combo in itertools.product(*(options(n, summary.dims[n], mesh_shape, summary, {}) for n in names)):
        rules = dict(zip(names, combo))
        if all(len([a for n in t for a in rules[n]]) == len({a for n in t for a in rules[n]}) for t in summary.tensors):
            yield rules


@pytest.mark.parametrize("mesh", [{"x": 4, "y": 2}, {"x": 2, "y": 2, "z": 2}], ids=["4x2", "2x2x2"])
@pytest.mark.parametrize("objective", ["time", "bytes", "memory"])
def test_branch_and_bound_finds_the_brute_force_optimum(mesh, objective):
    _, fn = prepared(train_step(mesh))
    summary = summarize(fn)
    estimator = Estimator(summary, mesh, TIME)
    found = search(estimator, objective, keep=5)
    assert found.exact
    every = sorted((key(estimator.estimate(r), objective) for r in legal_rule_sets(summary, mesh)))
    assert [key(c.estimate, objective) for c in found.candidates] == every[:5]
    assert found.evaluated <= len(every)


def test_the_bound_cuts_most_of_a_transformers_space_and_keeps_the_optimum():
    mesh = {"x": 4, "y": 2}
    _, fn = prepared(lm_model.train_step(lm_model.Config(), mi.Mesh(mesh)))
    summary = summarize(fn)
    estimator = Estimator(summary, mesh, TIME)
    found = search(estimator, "time", keep=3)
    every = sorted(key(estimator.estimate(r), "time") for r in legal_rule_sets(summary, mesh))
    assert found.exact and [key(c.estimate, "time") for c in found.candidates] == every[:3]
    assert len(every) > 300 and found.evaluated < len(every) / 5, (found.evaluated, len(every))


def test_predicted_bytes_rank_rule_sets_as_the_real_partitioning_does():
    mesh = {"x": 4, "y": 2}
    source, fn = prepared(train_step(mesh))
    summary = summarize(fn)
    estimator = Estimator(summary, mesh, TIME)
    predicted, measured = [], []
    for rules in legal_rule_sets(summary, mesh):
        c = Candidate(rules, estimator.estimate(rules))
        measure_candidate(source, fn, c, TIME, mesh)
        predicted.append(c.predicted.bytes)
        measured.append(c.measured.bytes)
    assert len(predicted) >= 12
    rank = lambda v: np.argsort(np.argsort(v, kind="stable"), kind="stable")  # noqa: E731
    rho = np.corrcoef(rank(predicted), rank(measured))[0, 1]
    assert rho >= 0.8, (rho, list(zip(predicted, measured)))


def test_chosen_rules_keep_user_constraints_and_fit_the_budget_by_the_real_estimate():
    step = train_step({"x": 4, "y": 2})
    least = mi.auto_layout(step, objective="memory", layout={"batch": "x"}, cost_model=TIME)
    assert least.exact and least.candidates[0].measured is not None and least.rules["batch"] == ("x",)
    budget = int(1.2 * least.candidates[0].measured.memory)
    choice = mi.auto_layout(step, memory_budget=budget, layout={"batch": "x"}, cost_model=TIME)
    assert choice.rules["batch"] == ("x",)
    exe = mi.compile(step, layout=choice.rules)
    assert exe.compile_report.memory.total <= budget
    assert str(choice).splitlines()[1].startswith("chosen: batch:x")
    # repr is one short line (the choice and the top candidates); the table stays in .candidates
    text = repr(choice)
    assert text.startswith("AutoLayout(rules='batch:x") and "\n" not in text and len(text) < 600, text
    shown = min(len(choice.candidates), AutoLayoutRepr.REPR_CANDIDATES)
    assert text.count(" ms ") == shown and ("more in .candidates" in text) == (len(choice.candidates) > shown), text
    assert len(str(choice)) > len(text) and len(choice.candidates) >= 1
    compiled = mi.compile(step, layout="auto", memory_budget=budget, cost_model=TIME)
    assert compiled.auto_layout.rules == mi.auto_layout(step, memory_budget=budget, cost_model=TIME).rules
    # the compiled step runs and equals the interpreter
    rng = np.random.default_rng(0)
    args = {"x": rng.standard_normal((32, 16), np.float32), "w1": rng.standard_normal((16, 64), np.float32) * 0.1,
            "w2": rng.standard_normal((64, 16), np.float32) * 0.1, **mi.init_optimizer_state(step), "step": np.float32(1)}
    np.testing.assert_allclose(np.asarray(compiled(**args)[0]), mi.interpret(step, **args)[0], rtol=1e-5)


@pytest.mark.parametrize("stacked", [False, True], ids=["layers", "scan"])
def test_the_models_memory_is_the_real_estimate_of_the_partitioned_program(stacked):
    """The search prices memory from one liveness walk of the unpartitioned program; for the
    LM's training step (layers unrolled, or one scan) it equals memory_estimate.py's on the
    partitioned program (itself checked against XLA's) within 2%, on any rule set."""
    mesh = {"x": 4, "y": 2}
    step = lm_model.train_step(lm_model.Config(), mi.Mesh(mesh), stacked=stacked)
    source, fn = prepared(step)
    estimator = Estimator(summarize(fn), mesh, TIME)
    for rules in ({}, {"batch": ("x",), "d_ff": ("y",), "heads": ("y",), "vocab": ("y",)}, {"batch": ("x", "y")},
                  {"batch": ("y",), "d_model": ("x",)}, {"heads": ("x", "y"), "vocab": ("x",)}):
        candidate = Candidate(rules, estimator.estimate(rules))
        measure_candidate(source, fn, candidate, TIME, mesh)
        assert candidate.predicted.memory == pytest.approx(candidate.measured.memory, rel=0.02), rules


@pytest.mark.parametrize("mesh", [{"x": 4, "y": 2}, {"x": 2, "y": 2, "z": 2}], ids=["4x2", "2x2x2"])
@pytest.mark.parametrize("measure", [0, 3])
def test_a_budget_only_the_least_memory_layout_fits_is_met(mesh, measure):
    """The budget is exactly the least memory any layout needs (the memory objective's best,
    measured): the choice fits it by the real estimate, with or without measuring (the search
    runs again past tables found over budget, rather than failing)."""
    step = train_step(mesh)
    least = mi.auto_layout(step, objective="memory", cost_model=TIME, measure=10)
    budget = min(c.measured.memory for c in least.candidates if c.measured)
    choice = mi.auto_layout(step, memory_budget=budget, cost_model=TIME, measure=measure)
    assert mi.compile(step, layout=choice.rules).compile_report.memory.total <= budget, choice


def test_an_arguments_own_layout_and_a_shard_pin_are_kept():
    """prog.argument(..., layout=) and mi.shard pin dims as user rules do: every candidate
    keeps them, measured or not."""
    with mi.Program("ffn", mi.Mesh({"x": 4, "y": 2})) as prog:
        x = prog.argument("x", [B, M], layout={"batch": "x"})
        w1, w2 = prog.argument("w1", [M, F]), prog.argument("w2", [F, M])
        h = mi.shard(mi.relu(mi.einsum(x, w1, output=[B, F])), {"d_ff": "y"})
        prog.result(mi.mean(mi.einsum(h, w2, output=[B, M])), name="loss")
    for measure in (0, 3):
        choice = mi.auto_layout(prog, objective="memory", cost_model=TIME, measure=measure)
        assert all(c.rules["batch"] == ("x",) and c.rules["d_ff"] == ("y",) for c in choice.candidates), choice


def _rename_and_pad_program(mesh):
    """A renamed dim (propagation carries a split across the rename) and a name with two sizes
    (pad, then slice back)."""
    L, D, T = mi.Dim("length", 32), mi.Dim("d_model", 64), mi.Dim("time", 32)
    with mi.Program("p", mi.Mesh(mesh)) as prog:
        x, w, t = prog.argument("x", [L, D]), prog.argument("w", [D, F]), prog.argument("t", [B, T])
        prog.result(mi.einsum(mi.rename(x, "length", "memory_length"), w,
                              output=[mi.Dim("memory_length", 32), F]), name="y")
        prog.result(mi.slice(mi.pad(mi.exp(t), "time", 2, 2), "time", 1, 32), name="z")
    return prog


@pytest.mark.parametrize("mesh", [{"x": 8}, {"x": 4, "y": 2}], ids=["8", "4x2"])
def test_the_floor_is_under_the_real_memory_of_every_legal_rule_set(mesh):
    """The budget cuts by the floor, so it must never exceed the real estimate: checked on
    every legal rule set of a program with a rename (a split carried across it) and a dim
    with two sizes (pad: only what divides both is offered), and the FFN step; a tight
    budget then gets a layout that fits it."""
    for program in (_rename_and_pad_program(mesh), train_step(mesh)):
        source, fn = prepared(program)
        summary = summarize(fn)
        estimator, least = Estimator(summary, mesh, TIME), None
        for rules in legal_rule_sets(summary, mesh):
            candidate = Candidate(rules, estimator.estimate(rules))
            measure_candidate(source, fn, candidate, TIME, mesh)
            assert candidate.predicted.floor <= candidate.measured.memory, rules
            least = min(least or candidate.measured.memory, candidate.measured.memory)
        choice = mi.auto_layout(program, memory_budget=least, cost_model=TIME)
        assert mi.compile(program, layout=choice.rules).compile_report.memory.total <= least


def test_pins_no_one_rule_set_keeps_stay_on_their_values():
    """mi.shard pins length:x on one value and heads:x on another (a tensor has both): no
    single rule set keeps both, so they stay constraints on their own values, as mi.compile
    treats them, and the search goes on."""
    L, H = mi.Dim("length", 8), mi.Dim("heads", 4)
    with mi.Program("p", mi.Mesh({"x": 2})) as prog:
        x = prog.argument("x", [L, H])
        a = mi.shard(mi.exp(x), {"length": "x"})
        prog.result(mi.shard(mi.exp(a), {"length": (), "heads": "x"}), name="y")
    choice = mi.auto_layout(prog, cost_model=TIME)
    value = np.arange(32, dtype=np.float32).reshape(8, 4) / 32
    np.testing.assert_allclose(np.asarray(mi.compile(prog, layout=choice.rules)(x=value)), np.exp(np.exp(value)),
                               rtol=1e-6)


def test_the_search_does_not_grow_with_stacked_depth():
    visited, groups = {}, {}
    for layers in (2, 8):
        cfg = dataclasses.replace(lm_model.Config(), layers=layers)
        step = lm_model.train_step(cfg, mi.Mesh({"x": 4, "y": 2}), stacked=True)
        choice = mi.auto_layout(step, cost_model=TIME, measure=0)
        visited[layers] = choice.visited
        source, fn = prepared(step)
        groups[layers] = len(summarize(fn).groups)
        assert "layers" not in choice.rules  # the scan's dim stays whole
    assert groups[2] == groups[8]  # the layers share names: the same op groups, counted 4x more
    assert visited[8] <= 1.5 * visited[2], visited


def test_a_time_limit_returns_the_best_found_and_its_gap():
    cfg = lm_model.Config()
    step = lm_model.train_step(cfg, mi.Mesh({"x": 4, "y": 2}))
    choice = mi.auto_layout(step, cost_model=TIME, time_limit=1e-9, measure=0)
    assert not choice.exact and choice.candidates and 0 <= choice.gap <= 1
    assert "at most" in str(choice).splitlines()[0]


def test_bad_input_is_a_clear_error():
    step = train_step({"x": 4, "y": 2})
    with pytest.raises(mi.MeshIRError, match=r"no layout fits the memory budget of 100 B per device: .* largest tensors"):
        mi.auto_layout(step, memory_budget=100)
    with pytest.raises(mi.MeshIRError, match=r"constraints batch:x and d_model:x make every candidate illegal"):
        mi.auto_layout(step, layout={"batch": "x", "d_model": "x"})
    with pytest.raises(mi.MeshIRError, match=r"constraint d_model:x,y makes every candidate illegal: 'd_model' \(size 16\)"):
        mi.auto_layout(train_step({"x": 4, "y": 8}), layout={"d_model": ("x", "y")})
    with pytest.raises(mi.MeshIRError, match=r"unknown objective .speed. \(expected one of time, bytes, memory\)"):
        mi.auto_layout(step, objective="speed")
    with pytest.raises(mi.MeshIRError, match=r"time_limit must be a positive number"):
        mi.auto_layout(step, time_limit=0)
    with pytest.raises(mi.MeshIRError, match=r"memory_budget '1e400B' is more bytes than any device has"):
        mi.auto_layout(step, memory_budget="1e400B")
    with pytest.raises(mi.MeshIRError, match=r"time_limit must be a real number, got bool True"):
        mi.auto_layout(step, time_limit=True)
    assert mi.auto_layout(step, time_limit=np.float32(5), cost_model=TIME).exact  # NumPy numbers are numbers
    with pytest.raises(mi.MeshIRError, match=r"auto_layout keep must be at least 1, got 0"):
        mi.auto_layout(step, keep=0)
    with pytest.raises(mi.MeshIRError, match=r"auto_layout measure must be at least 0, got -1"):
        mi.auto_layout(step, measure=-1)
    with pytest.raises(mi.MeshIRError, match=r"auto_layout keep must be an integer"):
        mi.auto_layout(step, keep=2.5)
    with pytest.raises(mi.MeshIRError) as info:
        mi.auto_layout(step, layout={"batch": "q"}, strict=True)  # without strict: ignored with a warning
    assert "axis 'q', not one of the mesh's (x, y)" in str(info.value) and str(info.value).startswith(__file__)


def test_no_fit_names_the_candidate_that_needs_least_by_brute_force():
    """The no-fit error's candidate is the legal rule set whose partitioned program needs the
    least memory, over every legal rule set measured for real."""
    mesh = {"x": 4, "y": 2}
    step = train_step(mesh)
    source, fn = prepared(step)
    summary = summarize(fn)
    least = None
    for rules in legal_rule_sets(summary, mesh):
        c = Candidate(rules, Estimator(summary, mesh, TIME).estimate(rules))
        measure_candidate(source, fn, c, TIME, mesh)
        least = min(least or (c.measured.memory, ""), (c.measured.memory, ", ".join(
            f"{k}:{','.join(v)}" for k, v in sorted(rules.items()) if v) or "no split"))
    with pytest.raises(mi.MeshIRError) as info:
        mi.auto_layout(step, memory_budget=100, cost_model=TIME)
    assert f"needs is about {format_bytes(least[0])} per device ({least[1]})" in str(info.value)


def test_a_weight_update_sharded_step_gets_only_rules_with_a_data_parallel_axis():
    """mi.train_step(shard_update=True) needs an axis that splits the batch and no
    parameter: the search keeps only such rule sets, and the choice compiles and runs."""
    step = mi.train_step(ffn_loss({"x": 4, "y": 2}), mi.Adam(1e-2), params=["w1", "w2"], shard_update=True)
    choice = mi.auto_layout(step, cost_model=TIME)
    sharded = [c for c in choice.candidates if c.shard_update]
    assert sharded and all(c.rules.get("batch") for c in sharded)
    exe = mi.compile(step, layout={k: v for k, v in sharded[0].rules.items() if v})
    kinds = {c.kind for c in exe.compile_report.collectives}
    assert "reduce_scatter" in kinds  # the update is sharded
    rng = np.random.default_rng(1)
    args = {"x": rng.standard_normal((32, 16), np.float32), "w1": rng.standard_normal((16, 64), np.float32) * 0.1,
            "w2": rng.standard_normal((64, 16), np.float32) * 0.1, **mi.init_optimizer_state(step), "step": np.float32(1)}
    np.testing.assert_allclose(np.asarray(exe(**args)[0]), mi.interpret(step, **args)[0], rtol=1e-5)


def test_weight_update_sharding_is_a_choice_of_the_search():
    """For a step built with shard_update=True the search weighs the sharding on and off:
    under the memory objective with the batch kept on x it keeps it (splitting the weights
    over all 8 devices instead, d_ff:(x,y), needs less still: then it drops it); where it
    is cheaper in time without it (a tiny step, no split) mi.compile(layout="auto")
    compiles the step without it."""
    step = mi.train_step(ffn_loss({"x": 4, "y": 2}), mi.Adam(1e-2), params=["w1", "w2"], shard_update=True)
    memory = mi.auto_layout(step, objective="memory", cost_model=TIME, layout={"batch": "x"})
    assert memory.shard_update is True and {c.shard_update for c in memory.candidates} == {True, False}
    assert "+ update sharded" in str(memory).splitlines()[1]
    free = mi.auto_layout(step, objective="memory", cost_model=TIME)
    assert free.rules == {"d_ff": ("x", "y")} and free.shard_update is False
    timed = mi.compile(step, layout="auto", cost_model=TIME)
    assert timed.auto_layout.shard_update is False and timed.auto_layout.rules == {}
    assert "mtf.update_sharding" not in str(timed.partitioned_module) and not timed.compile_report.collectives
    # mi.auto_layout's result as compile's layout: its rules and its choice on the update sharding
    kept = mi.compile(step, layout=memory)
    assert kept.auto_layout is memory and "reduce_scatter" in {c.kind for c in kept.compile_report.collectives}
    dropped = mi.compile(step, layout=free)  # its rules alone would keep the sharding, which has no data axis
    assert dropped.auto_layout is free and "mtf.update_sharding" not in str(dropped.partitioned_module)
    assert {c.kind for c in dropped.compile_report.collectives} == {"all_reduce"}
    with pytest.raises(mi.MeshIRError, match="shard_update=True found no data-parallel mesh axis"):
        mi.compile(step, layout=free.rules)
