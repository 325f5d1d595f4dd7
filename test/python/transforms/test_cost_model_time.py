"""Step time in the cost model: device kinds (transforms/analysis/device_kinds.py), compute + α–β
communication (`CostModel.compute_seconds`, `step_seconds`), the order in which an axis finds
its link, the pass options that spell a device, and `mi.calibrate()`'s micro-benchmarks
(structure and self-consistency only: no assertion about how fast this machine is)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import meshir as mi
from meshir.dialect.tensor_type import Dimension, TensorType
from meshir.transforms.collectives.reshard_plan import plan_cost, plan_reshard
from meshir.transforms.analysis.cost_model import DEFAULT_LINK, AxisLink, Cost, CostModel, ring_bytes, ring_steps
from meshir.transforms.analysis.device_kinds import DEVICE_KINDS, DeviceKind
from meshir.transforms.passes.insert_collectives import InsertCollectivesPass
from meshir.transforms.passes.propagate_sharding import PropagateShardingPass

MINE = DeviceKind("mine", 2e12, AxisLink(2e-6, 4e10))


def test_the_table_has_the_documented_kinds_with_sane_figures():
    assert {"cpu-virtual", "tpu-v3", "tpu-v4", "a100", "h100"} <= set(DEVICE_KINDS)
    for kind in DEVICE_KINDS.values():
        assert kind.flops_per_s > 0 and kind.link.bytes_per_s > 0 and kind.link.latency_s >= 0
        assert kind.source and kind.precision
    assert DEVICE_KINDS["h100"].flops_per_s > DEVICE_KINDS["a100"].flops_per_s
    assert DEVICE_KINDS["tpu-v4"].flops_per_s > DEVICE_KINDS["tpu-v3"].flops_per_s
    assert mi.DEVICE_KINDS is DEVICE_KINDS and mi.DeviceKind is DeviceKind


def test_compute_and_step_seconds_by_hand():
    model = CostModel("time", device=MINE)
    assert model.compute_seconds(4e12) == pytest.approx(2.0)
    assert model.compute_seconds(0) == 0.0
    # 1 GFLOP at 2 TFLOP/s = 0.5 ms, plus 0.25 ms of collectives: added, no overlap
    assert model.step_seconds(1e9, 2.5e-4) == pytest.approx(5e-4 + 2.5e-4)
    # an all_reduce of a 1 MiB shard over 4 devices: 6 steps·2 µs + (2·3/4 MiB)/40 GB/s
    shard, n = 1 << 20, 4
    cost = model.price("all_reduce", shard, ("x",), {"x": n})
    by_hand = 6 * 2e-6 + (2 * 3 * shard // 4) / 4e10
    assert cost.seconds == pytest.approx(by_hand)
    assert ring_steps("all_reduce", n) == 6 and ring_bytes("all_reduce", shard, n) == 2 * 3 * shard // 4
    # communication as Costs: their seconds are summed
    assert model.step_seconds(1e9, [cost, cost]) == pytest.approx(5e-4 + 2 * by_hand)
    assert model.step_seconds(1e9, cost + cost) == pytest.approx(5e-4 + 2 * by_hand)
    h100 = CostModel(device="h100")
    assert h100.compute_seconds(494.5e12) == pytest.approx(1.0)


def test_compute_needs_a_device_and_sane_inputs():
    with pytest.raises(mi.MeshIRValueError, match="compute_seconds needs a device"):
        CostModel("time").compute_seconds(1e9)
    with pytest.raises(mi.MeshIRValueError, match="FLOPs per device must be >= 0"):
        CostModel(device=MINE).compute_seconds(-1)
    with pytest.raises(mi.MeshIRValueError, match="seconds of collectives must be >= 0"):
        CostModel(device=MINE).step_seconds(1.0, -1.0)
    with pytest.raises(mi.MeshIRValueError, match="flops_per_s > 0"):
        DeviceKind("bad", 0.0, DEFAULT_LINK)
    with pytest.raises(mi.MeshIRValueError, match="name is a word"):
        DeviceKind("a:b", 1.0, DEFAULT_LINK)


def test_an_axis_link_is_its_own_then_the_devices_then_the_default():
    slow = AxisLink(1e-3, 1e8)
    assert CostModel("time").link("x") == DEFAULT_LINK
    assert CostModel("time", device=MINE).link("x") == MINE.link
    model = CostModel("time", {"x": slow}, device=MINE)
    assert model.link("x") == slow and model.link("y") == MINE.link
    assert CostModel("time", {"x": slow}).link("y") == DEFAULT_LINK
    # over both axes, the slowest link prices it (x's own, not the device's)
    mesh = {"x": 2, "y": 2}
    cost = model.price("all_gather", 1000, ("x", "y"), mesh)
    assert cost.seconds == pytest.approx(3 * 1e-3 + 3000 / 1e8)
    # by name: the table's link
    assert CostModel("time", device="tpu-v4").link("z") == DEVICE_KINDS["tpu-v4"].link


def test_unknown_device_lists_the_known_ones():
    with pytest.raises(mi.MeshIRValueError, match="unknown device kind 'v100'; known: cpu-virtual, tpu-v3, tpu-v4, "
                       "a100, h100"):
        CostModel(device="v100")
    with pytest.raises(mi.MeshIRValueError, match="name:flops_per_s:latency_s:bytes_per_s"):
        CostModel.from_options("time", (), "mine:fast:1:1")
    with pytest.raises(mi.MeshIRValueError, match="device-kind name"):
        CostModel(device=3)


def test_from_options_and_the_pass_options_round_trip():
    model = CostModel.from_options("time", ("x:0.001:100000000.0",), "h100")
    assert model.device is DEVICE_KINDS["h100"] and model.link("x") == AxisLink(1e-3, 1e8)
    assert CostModel.from_options("time", ()).device is None
    custom = CostModel.from_options("time", (), "mine:2e12:2e-06:4e10")
    assert custom.device == MINE
    for m in (model, custom, CostModel("time", {"y": AxisLink(1e-6, 1e11)}, MINE)):
        for cls in (InsertCollectivesPass, PropagateShardingPass):
            p = cls.with_model(m)
            assert p.cost_model() == m
            assert cls.from_options({"objective": "time", "device": p.device,
                                     "links": ",".join(p.links) or None} if p.links else
                                    {"objective": "time", "device": p.device}).cost_model() == m
    assert InsertCollectivesPass.with_model(model).option_text() == \
        "{objective=time links=x:0.001:100000000.0 device=h100}"
    # no device: the options (and so every compile's pipeline text) are unchanged
    assert InsertCollectivesPass.with_model(CostModel("time")).option_text() == "{objective=time}"
    assert InsertCollectivesPass.with_model(CostModel()).option_text() == ""


def test_cost_ordering_is_unchanged():
    assert Cost(10, 1, 5.0) < Cost(11, 0, 0.0) and Cost(10, 1, 9.0) < Cost(10, 2, 0.0)
    model = CostModel("time", device=MINE)
    assert model.key(Cost(10, 1, 2.0)) == (2.0, 10, 1)
    assert CostModel(device=MINE).key(Cost(10, 1, 2.0)) == (10, 1)


def test_a_plan_without_a_device_is_what_it_was():
    # the planner's slow-x test of test_reshard_search, with device=None spelled out, and
    # a device whose link every axis shares changes nothing on the bytes objective
    mesh = {"x": 4, "y": 2}
    source = TensorType((Dimension("a", 64, ("x", "y")),), "f32", ())
    target = TensorType((Dimension("a", 64, ()),), "f32", ())
    slow_x = CostModel("time", {"x": AxisLink(1e-3, 1e9), "y": AxisLink(1e-6, 1e11)})
    assert slow_x == CostModel("time", {"x": AxisLink(1e-3, 1e9), "y": AxisLink(1e-6, 1e11)}, None)
    by_time = plan_reshard(source, target, mesh, slow_x)
    by_bytes = plan_reshard(source, target, mesh)
    assert plan_cost(by_time, mesh, slow_x).seconds <= plan_cost(by_bytes, mesh, slow_x).seconds
    assert plan_reshard(source, target, mesh, CostModel(device="h100")) == by_bytes
    # a device's link alone (all axes alike) prices the same plans as DEFAULT_LINK does
    assert plan_reshard(source, target, mesh, CostModel("time", device="h100")) == \
        plan_reshard(source, target, mesh, CostModel("time"))


@pytest.fixture(scope="module")
def calibration():
    return mi.calibrate(mi.Mesh({"x": 4, "y": 2}), repeats=3, sizes=(64 << 10, 512 << 10), matmul=(64, 256, 256),
                        name="here")


def test_calibrate_returns_positive_finite_figures(calibration):
    c = calibration
    assert isinstance(c, mi.Calibration) and c.device.name == "here"
    assert math.isfinite(c.device.flops_per_s) and c.device.flops_per_s > 0
    assert c.flops_per_device == 2 * 64 * 256 * 256 and c.compute_seconds > 0
    assert set(c.links) == {"x", "y"}
    for link in (c.device.link, *c.links.values()):
        assert math.isfinite(link.latency_s) and link.latency_s >= 0 and link.bytes_per_s > 0
    assert [(s.axis, s.n, s.shard_bytes) for s in c.samples] == \
        [("x", 4, 64 << 10), ("x", 4, 512 << 10), ("y", 2, 64 << 10), ("y", 2, 512 << 10)]
    for s in c.samples:  # the samples are priced by the cost model's own ring formulas
        assert s.steps == ring_steps("all_gather", s.n) and s.bytes_sent == ring_bytes("all_gather", s.shard_bytes, s.n)
        assert s.seconds >= 0
    model = c.cost_model()
    assert model.device == c.device and model.link("x") == c.links["x"] and model.objective == "time"
    text = str(c)
    assert "GFLOP/s per device" in text and "link x" in text and "link y" in text
    assert set(c.to_json()) >= {"device", "links", "samples", "compute", "overhead_s"}


def test_calibrate_fit_reproduces_its_own_samples_loosely(calibration):
    # two sizes per axis, two unknowns: each axis's fit passes near its samples unless the
    # machine was so loaded that a larger message took less time (then the fit is a line
    # through a cloud, still within a loose factor of its mean)
    for axis in ("x", "y"):
        samples = [s for s in calibration.samples if s.axis == axis]
        measured = np.array([s.seconds for s in samples])
        fitted = np.array([calibration.predicted(s) for s in samples])
        # abs: on a loaded machine every sample of an axis can measure 0 s (the calibration
        # clamps a time below its overhead to 0), and the fit then leaves a few ps
        assert fitted.sum() == pytest.approx(measured.sum(), rel=0.9, abs=1e-9)
        assert np.all(fitted >= 0)


def test_calibrate_rejects_bad_settings():
    with pytest.raises(mi.MeshIRValueError, match="repeats must be an int >= 1"):
        mi.calibrate(repeats=0)
    with pytest.raises(mi.MeshIRValueError, match="2 or more different shard sizes"):
        mi.calibrate(sizes=(1 << 20,))
    with pytest.raises(mi.MeshIRValueError, match="no axis of 2 or more devices"):
        mi.calibrate(mi.Mesh({"x": 1}), repeats=1)


def test_a_link_with_a_large_message_bandwidth_by_hand():
    # 1 µs per step, 1 GB/s up to 1 MB sent, 0.25 GB/s for the bytes beyond
    link = AxisLink(1e-6, 1e9, large_bytes_per_s=2.5e8, large_from=1_000_000)
    assert link.bytes_seconds(500_000) == pytest.approx(5e-4)
    assert link.bytes_seconds(1_000_000) == pytest.approx(1e-3)  # continuous at the knee
    assert link.bytes_seconds(3_000_000) == pytest.approx(1e-3 + 2_000_000 / 2.5e8)
    assert link.seconds(6, 3_000_000) == pytest.approx(6e-6 + 1e-3 + 8e-3)
    plain = AxisLink(1e-6, 1e9)
    assert plain.bytes_seconds(3_000_000) == pytest.approx(3e-3)
    # price: an all_reduce of a 2 MB shard over 4 devices sends 3 MB
    model = CostModel("time", {"x": link, "y": plain})
    cost = model.price("all_reduce", 2_000_000, ("x",), {"x": 4, "y": 2})
    assert cost.bytes_per_device == 3_000_000 and cost.seconds == pytest.approx(link.seconds(6, 3_000_000))
    # over two axes: the largest latency and the slowest bytes term
    both = model.sent_seconds("all_reduce", 3_000_000, ("x", "y"), {"x": 4, "y": 2})
    assert both == pytest.approx(14 * 1e-6 + link.bytes_seconds(3_000_000))
    # a plain link prices as before: steps·α + bytes/β
    assert CostModel("time", {"x": plain}).price("all_gather", 1000, ("x",), {"x": 4}).seconds == \
        pytest.approx(3e-6 + 3000 / 1e9)


def test_a_large_message_link_needs_both_fields_and_spells_round_trip():
    with pytest.raises(mi.MeshIRValueError, match="needs both"):
        AxisLink(1e-6, 1e9, large_bytes_per_s=1e8)
    with pytest.raises(mi.MeshIRValueError, match="large_bytes_per_s > 0"):
        AxisLink(1e-6, 1e9, large_bytes_per_s=0.0, large_from=10)
    link = AxisLink(1e-6, 1e9, 2.5e8, 1 << 20)
    model = CostModel.from_options("time", (f"x:{link.option_text()}",), "")
    assert model.link("x") == link
    kind = DeviceKind("big", 1e12, link)
    assert CostModel.from_options("time", (), kind.option_text()).device == kind
    with pytest.raises(mi.MeshIRValueError, match="a link is"):
        CostModel.from_options("time", ("x:1e-6:1e9:2e8",), "")
    assert DEVICE_KINDS["cpu-virtual"].option_text() == "cpu-virtual"


def test_calibrate_fit_finds_a_knee_on_synthetic_samples():
    from meshir.api.calibration.calibrate import Sample, _fit

    truth = AxisLink(5e-5, 2e9, 2e8, 3 * (4 << 20))
    samples = [Sample("x", 4, shard, 3, 3 * shard, truth.seconds(3, 3 * shard))
               for shard in (16 << 10, 128 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20)]
    fit = _fit(samples)
    assert fit.latency_s == pytest.approx(5e-5, rel=1e-3) and fit.bytes_per_s == pytest.approx(2e9, rel=1e-3)
    assert fit.large_from == 3 * (4 << 20) and fit.large_bytes_per_s == pytest.approx(2e8, rel=1e-3)
    plain = [Sample("x", 4, s.shard_bytes, 3, s.bytes_sent, AxisLink(5e-5, 2e9).seconds(3, s.bytes_sent))
             for s in samples]
    assert _fit(plain).large_from is None
