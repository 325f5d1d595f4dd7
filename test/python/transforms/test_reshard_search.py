"""The reshard planner is a cheapest-path search: its plans move no more bytes than any
sequence of at most four collectives (a separately written brute-force enumerator,
reshard_oracles.py) and no more than Shardy's `sdy-reshard-to-collectives` on the same pair,
on 1-, 2- and 3-D meshes. Plans also run: test_insert_collectives.py and the every-layout
suites check the partitioned programs against the interpreter."""
from __future__ import annotations

import pytest

import meshir as mi
from meshir.dialect.tensor_type import Dimension, TensorType
from meshir.transforms.collectives.reshard_plan import plan_cost, plan_reshard
from meshir.transforms.analysis.cost_model import AxisLink, CostModel

from reshard_oracles import brute_force_bytes, random_pairs as _pairs, shardy_bytes

NAMES = ("a", "b", "c")


def tensor(sizes, layout, partial=()) -> TensorType:
    return TensorType(tuple(Dimension(n, s, tuple(ax)) for n, s, ax in zip(NAMES, sizes, layout)), "f32",
                      tuple(partial))


def _check_against_brute_force(mesh, sizes, source, target, pending, keep):
    steps = plan_reshard(tensor(sizes, source, pending), tensor(sizes, target, keep), mesh)
    current = tensor(sizes, source, pending)
    for step in steps:  # a chain of legal types from the source to the target
        assert step.source == current
        current = step.result
        current.local_shape(mesh)
    assert current == tensor(sizes, target, keep)
    planned = sum(s.bytes_per_device for s in steps)
    assert planned == plan_cost(steps, mesh).bytes_per_device
    brute = brute_force_bytes(sizes, source, target, mesh, pending, keep)
    if brute is not None:
        assert planned <= brute, (source, target, pending, keep, [(s.kind, s.attributes) for s in steps])
    if len(steps) <= 4:
        assert planned == brute, (source, target, [(s.kind, s.attributes) for s in steps], brute)


@pytest.mark.parametrize("case", range(40))
def test_plan_bytes_equal_the_brute_force_minimum(case):
    _check_against_brute_force(*_pairs(40, 11, with_partial=True)[case])


@pytest.mark.slow
@pytest.mark.parametrize("case", range(400))
def test_plan_bytes_equal_the_brute_force_minimum_full(case):
    _check_against_brute_force(*_pairs(400, 12, with_partial=True)[case])


def _check_against_shardy(mesh, sizes, source, target, _pending, _keep):
    shardy = shardy_bytes(sizes, source, target, mesh)
    if shardy is None:
        pytest.skip("Shardy's plan uses sub-axes, which !mtf.tensor cannot express")
    steps = plan_reshard(tensor(sizes, source), tensor(sizes, target), mesh)
    planned = sum(s.bytes_per_device for s in steps)
    assert planned <= shardy[0], (source, target, [(s.kind, s.attributes) for s in steps], shardy)


@pytest.mark.parametrize("case", range(40))
def test_plan_never_moves_more_bytes_than_shardy(case):
    _check_against_shardy(*_pairs(40, 21, with_partial=False)[case])


@pytest.mark.slow
@pytest.mark.parametrize("case", range(400))
def test_plan_never_moves_more_bytes_than_shardy_full(case):
    _check_against_shardy(*_pairs(400, 22, with_partial=False)[case])


def kinds(steps):
    return [(s.kind, s.attributes) for s in steps]


def test_one_all_to_all_over_two_axes():
    mesh = {"x": 4, "y": 2}
    steps = plan_reshard(tensor((32, 32), (("x", "y"), ())), tensor((32, 32), ((), ("x", "y"))), mesh)
    assert kinds(steps) == [("all_to_all", {"src_dim": "a", "dst_dim": "b", "axes": ("x", "y")})]


def test_a_collective_permute_when_the_same_axes_move_between_dims():
    mesh = {"x": 2, "y": 2}
    steps = plan_reshard(tensor((16, 16), (("x",), ("y",))), tensor((16, 16), (("y",), ("x",))), mesh)
    assert [s.kind for s in steps] == ["collective_permute"]
    assert steps[0].bytes_per_device == 16 * 16 // 4 * 4


def test_slice_on_the_source_dim_before_an_all_to_all_into_a_partly_split_dim():
    # a@x -> b@(y,x): y is free; slicing a by y first makes the all_to_all's shard half as big
    mesh = {"x": 4, "y": 2}
    steps = plan_reshard(tensor((32, 32), (("x",), ())), tensor((32, 32), ((), ("y", "x"))), mesh)
    assert kinds(steps) == [("all_slice", {"dim": "b", "axes": ("y",)}),
                            ("all_to_all", {"src_dim": "a", "dst_dim": "b", "axes": ("x",)})]
    assert sum(s.bytes_per_device for s in steps) == 32 * 32 // 8 * 4 * 3 // 4


def test_time_objective_trades_bytes_on_a_fast_axis_for_fewer_steps_on_a_slow_one():
    # gather a@(x,y) on a mesh where x is slow (inter-host) and y fast
    mesh = {"x": 4, "y": 2}
    source, target = tensor((64,), (("x", "y"),)), tensor((64,), ((),))
    by_bytes = plan_reshard(source, target, mesh)
    slow_x = CostModel("time", {"x": AxisLink(1e-3, 1e9), "y": AxisLink(1e-6, 1e11)})
    by_time = plan_reshard(source, target, mesh, slow_x)
    assert plan_cost(by_time, mesh, slow_x).seconds <= plan_cost(by_bytes, mesh, slow_x).seconds
    assert plan_cost(by_time, mesh).bytes_per_device >= plan_cost(by_bytes, mesh).bytes_per_device


def test_cost_model_options_and_errors():
    model = CostModel.from_options("time", ("x:1e-05:1000000000.0",))
    assert model.link("x") == AxisLink(1e-5, 1e9)
    with pytest.raises(mi.MeshIRError, match="axis:latency_s:bytes_per_s"):
        CostModel.from_options("time", ("x:fast",))
    with pytest.raises(mi.MeshIRError, match="cost objective must be one of bytes, time"):
        CostModel("flops")
    with pytest.raises(mi.MeshIRError, match="latency >= 0 and bandwidth > 0"):
        AxisLink(1e-5, 0.0)


def test_a_mesh_of_six_axes_gets_the_narrow_search_and_still_matches_shardy():
    mesh = {a: 2 for a in "xyzwuv"}
    source = TensorType(tuple(Dimension(n, 8, ax) for n, ax in zip("abcd", [("x",), ("y", "z"), (), ()])), "f32")
    target = TensorType(tuple(Dimension(n, 8, ax) for n, ax in zip("abcd", [(), (), ("w", "u"), ("v",)])), "f32")
    steps = plan_reshard(source, target, mesh)
    assert steps[-1].result == target
    shardy = shardy_bytes((8, 8, 8, 8), (("x",), ("y", "z"), (), ()), ((), (), ("w", "u"), ("v",)), mesh)
    assert sum(s.bytes_per_device for s in steps) <= shardy[0]


@pytest.mark.parametrize("case", range(12))
def test_searches_cut_short_fall_back_to_valid_plans(case, monkeypatch):
    from meshir.transforms.collectives import reshard_plan

    monkeypatch.setattr(reshard_plan, "MAX_MOVES", 3)  # every search gives up: the last resort plans
    reshard_plan._plan.cache_clear()
    mesh, sizes, source, target, pending, keep = _pairs(12, 31, with_partial=True)[case]
    try:
        steps = plan_reshard(tensor(sizes, source, pending), tensor(sizes, target, keep), mesh)
    finally:
        reshard_plan._plan.cache_clear()
    current = tensor(sizes, source, pending)
    for step in steps:
        assert step.source == current
        current = step.result
    assert current == tensor(sizes, target, keep)
