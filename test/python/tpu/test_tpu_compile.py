"""MeshIR programs compiled by XLA:TPU for real TPU topologies, without a TPU (issue 52).

With libtpu installed (`pip install "meshir[tpu]"`; CI's newest-jax job), `mi.tpu_mesh` gives
a topology's compile-only devices and `mi.compile` returns an executable that XLA:TPU
compiled: its memory and cost analyses are the TPU compiler's, and the collectives in its
compiled HLO agree with MeshIR's report (kinds and bytes per device per kind, both in MeshIR's
ring convention: docs/tpu.md). The same program on this machine's CPU mesh runs and equals
the reference interpreter. Without libtpu only the error tests run.
"""
from __future__ import annotations

import inspect
import json
import sys
from collections import Counter

import numpy as np
import pytest

import meshir as mi
from meshir.lowering.runtime import tpu
from meshir.lowering.runtime.hlo_collectives import parse_collectives

needs_libtpu = pytest.mark.skipif(tpu.libtpu_version() is None, reason='libtpu is not installed (pip install "meshir[tpu]")')

TOPOLOGY, AXES = "v5e:2x4", {"x": 4, "y": 2}
batch, d_model, d_ff = mi.Dim("batch", 64), mi.Dim("d_model", 128), mi.Dim("d_ff", 512)


def ffn(mesh):
    with mi.Program("ffn", mesh) as prog:
        x = prog.argument("x", [batch, d_model])
        w1 = prog.argument("w1", [d_model, d_ff])
        w2 = prog.argument("w2", [d_ff, d_model])
        h = mi.relu(mi.einsum(x, w1, output=[batch, d_ff]))
        prog.result(mi.einsum(h, w2, output=[batch, d_model]), name="y")
    return prog


def loss(mesh):
    with mi.Program("loss", mesh) as prog:
        x = prog.argument("x", [batch, d_model])
        w1 = prog.argument("w1", [d_model, d_ff])
        w2 = prog.argument("w2", [d_ff, d_model])
        y = mi.einsum(mi.gelu(mi.einsum(x, w1, output=[batch, d_ff])), w2, output=[batch, d_model])
        prog.result(mi.reduce_sum(y * y, []), name="loss")
    return prog


def _line() -> int:
    return inspect.currentframe().f_back.f_lineno


# -- compiling -------------------------------------------------------------------------------------


@needs_libtpu
def test_tpu_mesh_is_a_jax_mesh_of_the_topologys_devices():
    mesh = mi.tpu_mesh(TOPOLOGY, AXES)
    assert mesh.axis_names == ("x", "y") and mesh.devices.shape == (4, 2)
    devices = list(mesh.devices.flat)
    assert {d.platform for d in devices} == {"tpu"} and {d.device_kind for d in devices} == {"TPU v5 lite"}
    assert sorted(d.id for d in devices) == list(range(8))
    assert mi.tpu_mesh(TOPOLOGY, AXES).devices.flat[0] is devices[0]  # one description per topology
    # two TensorCores per chip on v3 and v4: 4 chips are 8 devices; v5e has one per chip
    assert mi.tpu_mesh("v3:2x2", {"x": 8}).devices.size == 8
    assert mi.tpu_mesh("v4:2x2x1", {"x": 2, "y": 4}).devices.size == 8


@needs_libtpu
@pytest.mark.parametrize("layout", ["batch:x;d_ff:y", "batch:(x,y)", "d_ff:(x,y)"])
def test_a_program_compiles_for_tpu_with_memory_cost_and_hlo(layout):
    prog = ffn(mi.tpu_mesh(TOPOLOGY, AXES))
    exe = mi.compile(prog, layout=layout)
    memory, cost = exe.compile_report.xla_memory, exe.compile_report.xla_cost
    assert set(memory) == {"argument", "output", "temp", "alias", "total"}
    assert memory["argument"] == exe.compile_report.memory.arguments > 0  # MeshIR's shards: the same bytes
    assert cost["flops"] > 0 and cost["bytes_accessed"] > 0 and cost["optimal_seconds"] > 0
    text = exe.as_text()
    assert text.startswith("HloModule") and "num_partitions=8" in text
    assert "narrow-dots=false" not in exe.pipeline  # bf16 dots stay narrow on a TPU


@needs_libtpu
@pytest.mark.parametrize("layout", ["batch:x;d_ff:y", "d_model:x;d_ff:y", "d_ff:(x,y)"])
def test_the_tpu_hlos_collectives_agree_with_meshirs_report(layout):
    exe = mi.compile(ffn(mi.tpu_mesh(TOPOLOGY, AXES)), layout=layout)
    ours = _bytes_by_kind((c.kind.replace("_", "-"), c.bytes_per_device) for c in exe.compile_report.collectives)
    hlo = _bytes_by_kind((c.kind, c.bytes_per_device) for c in parse_collectives(exe.as_text()))
    assert ours and hlo == ours


@needs_libtpu
def test_a_training_step_compiles_for_tpu():
    step = mi.train_step(loss(mi.tpu_mesh(TOPOLOGY, AXES)), mi.Adam(1e-3), params=["w1", "w2"], shard_update=True)
    exe = mi.compile(step, layout="batch:x;d_ff:y")
    assert exe.compile_report.xla_memory["total"] > 0 and exe.compile_report.xla_cost["flops"] > 0
    kinds = {c.kind for c in parse_collectives(exe.as_text())}
    assert "reduce-scatter" in kinds or "all-reduce" in kinds  # the data-parallel gradient sum


@needs_libtpu
def test_a_scanned_lm_steps_collectives_count_once_per_layer_as_in_meshirs_report():
    """XLA:TPU records no trip count on its loops: compiled_collectives' totals read it from
    each loop's counter, and equal MeshIR's report, which counts every layer's collectives."""
    from script_modules import EXAMPLES

    sys.path.insert(0, str(EXAMPLES))
    from lm import model

    from meshir.lowering.runtime import hlo_collectives

    cfg = model.Config(layers=3, d_model=128, heads=8, d_ff=512, length=16, batch=64, vocab=512)
    step = model.train_step(cfg, mi.Mesh({"x": 2, "y": 4}), remat=True, stacked=True)
    exe = mi.compile(step, layout={"batch": "x", "heads": "y", "d_ff": "y", "vocab": "y"}, donate=True,
                     mesh=mi.tpu_mesh("v3:2x2", {"x": 2, "y": 4}))
    text = exe.as_text()
    repeats = hlo_collectives.computation_repeats(text)
    assert 3 in repeats.values() and None not in repeats.values()  # the layer loops, forward and backward
    summary = hlo_collectives.summarize(hlo_collectives.parse_collectives(text), repeats)
    assert summary["bytes_per_device"] == exe.compile_report.total_bytes_per_device > 0


@needs_libtpu
def test_the_same_program_on_the_cpu_mesh_runs_and_equals_the_interpreter():
    rng = np.random.default_rng(0)
    args = {"x": rng.normal(size=(64, 128)).astype(np.float32), "w1": rng.normal(size=(128, 512)).astype(np.float32),
            "w2": rng.normal(size=(512, 128)).astype(np.float32)}
    tpu_exe = mi.compile(ffn(mi.tpu_mesh(TOPOLOGY, AXES)), layout="batch:x;d_ff:y")
    cpu_prog = ffn(mi.Mesh(AXES))
    cpu_exe = mi.compile(cpu_prog, layout="batch:x;d_ff:y")
    np.testing.assert_allclose(np.asarray(cpu_exe(**args)), mi.interpret(cpu_prog, **args), rtol=2e-5, atol=1e-3)
    assert cpu_exe.compile_report.collectives == tpu_exe.compile_report.collectives  # one partitioning, two targets


# -- bad input ---------------------------------------------------------------------------------------


@needs_libtpu
def test_calling_a_compile_only_executable_is_an_error_naming_the_topology():
    exe = mi.compile(ffn(mi.tpu_mesh(TOPOLOGY, AXES)), layout="batch:x")
    line = _line() + 2
    with pytest.raises(mi.MeshIRError) as e:
        exe(x=np.zeros((64, 128), np.float32))
    assert str(e.value).startswith(f"{__file__}:{line}:") and "'v5e:2x4'" in str(e.value)


@needs_libtpu
@pytest.mark.parametrize("topology, axes, words", [
    ("v9:1x1", AXES, ["unknown TPU topology 'v9:1x1'"]),
    ("v5e:3x3", {"x": 9}, ["unknown TPU topology 'v5e:3x3'"]),
    (TOPOLOGY, {"x": 4, "y": 4}, ["make 16 devices", "has 8"]),
    (TOPOLOGY, ["x", "y"], ["axes is a dict"]),
    (TOPOLOGY, {"x": 0, "y": 8}, ["axis 'x' of size 0"]),
    (5, AXES, ["a TPU topology is a name"]),
])
def test_bad_tpu_meshes_are_located_errors_naming_the_values(topology, axes, words):
    line = _line() + 2
    with pytest.raises(mi.MeshIRError) as e:
        mi.tpu_mesh(topology, axes)
    assert str(e.value).startswith(f"{__file__}:{line}:"), str(e.value)
    assert all(w in str(e.value) for w in words), str(e.value)


def small(mesh, rows: int = 32, cols: int = 8):
    """y = 2x + 1 on an [a, b] tensor: with b = 8, XLA:TPU pads each (8, 128) tile, so its
    figure is 16 times MeshIR's estimate."""
    a, b = mi.Dim("a", rows), mi.Dim("b", cols)
    with mi.Program("small", mesh) as prog:
        x = prog.argument("x", [a, b])
        prog.result(x * 2.0 + 1.0, name="y")
    return prog


@pytest.fixture
def xla_must_not_compile(monkeypatch):
    """A refusal that must come before XLA:TPU compiles anything."""
    from meshir.lowering.runtime import compile_only

    def refuse(*args, **kwargs):
        raise AssertionError("XLA:TPU was asked to compile")
    monkeypatch.setattr(compile_only, "compile_without_running", refuse)


@needs_libtpu
def test_a_memory_budget_the_estimate_exceeds_is_refused_before_xla(xla_must_not_compile):
    prog = ffn(mi.tpu_mesh(TOPOLOGY, AXES))
    line = _line() + 2
    with pytest.raises(mi.MeshIRError) as e:
        mi.compile(prog, layout="batch:x", memory_budget="100KiB")
    text = str(e.value)
    assert text.startswith(f"{__file__}:{line}:"), text
    assert "TPU topology 'v5e:2x4'" in text and "over 2 times the memory budget of 100 KiB" in text
    assert "refused before XLA:TPU compiles" in text
    assert "w1: !mtf.tensor<d_model=128@(), d_ff=512@(), f32> (argument) 256 KiB per device" in text


@needs_libtpu
def test_a_program_far_over_the_chips_hbm_is_refused_before_xla_by_default(xla_must_not_compile):
    prog = small(mi.tpu_mesh("v3:2x2", {"x": 8}), rows=8 * 2**22, cols=1024)  # 16 GiB per device in, 16 out
    line = _line() + 2
    with pytest.raises(mi.MeshIRError) as e:
        mi.compile(prog, layout="a:x")
    assert str(e.value).startswith(f"{__file__}:{line}:"), str(e.value)
    assert "TPU topology 'v3:2x2' (15.5 GiB of HBM per device, as XLA:TPU allocates)" in str(e.value)
    assert "the program needs about 32 GiB per device" in str(e.value)
    assert "x: !mtf.tensor<a=33554432@x, b=1024@(), f32> (argument) 16 GiB per device" in str(e.value)


@needs_libtpu
def test_an_estimate_within_the_margin_is_left_to_xla_tpus_own_figure():
    prog = ffn(mi.tpu_mesh(TOPOLOGY, AXES))
    estimate = mi.compile(prog, layout="batch:x").compile_report.memory.total  # 560 KiB; XLA:TPU: 528 KiB
    exe = mi.compile(prog, layout="batch:x", memory_budget=estimate - 16 * 1024)  # over the budget by the estimate
    assert exe.compile_report.xla_memory["total"] <= estimate - 16 * 1024


@needs_libtpu
def test_donated_results_count_once_against_the_budget():
    with mi.Program("inplace", mi.tpu_mesh("v3:2x2", {"x": 8})) as prog:
        x = prog.argument("x", [mi.Dim("a", 8 * 2**21), mi.Dim("b", 1024)])
        prog.result(x * 2.0 + 1.0, name="x")
    exe = mi.compile(prog, layout="a:x", donate=True)  # 8 GiB in, 8 GiB out in its buffer: fits the HBM
    assert exe.compile_report.memory.total == 2 * 8 * 2**30 and exe.compile_report.xla_memory["total"] <= 9 * 2**30


@needs_libtpu
def test_xla_tpus_own_figure_over_the_budget_is_refused():
    prog = small(mi.tpu_mesh(TOPOLOGY, AXES))
    exe = mi.compile(prog, layout="a:x")
    estimate, compiled = exe.compile_report.memory.total, exe.compile_report.xla_memory["total"]
    assert estimate == 512 and compiled == 8192  # (8, 128) tiles
    line = _line() + 2
    with pytest.raises(mi.MeshIRError) as e:
        mi.compile(prog, layout="a:x", memory_budget="4KiB")  # the estimate fits; XLA:TPU's figure does not
    assert str(e.value).startswith(f"{__file__}:{line}:"), str(e.value)
    assert "compiled by XLA:TPU for 'v5e:2x4'" in str(e.value) and "8 KiB per device" in str(e.value)
    assert "over the memory budget of 4 KiB" in str(e.value)


@needs_libtpu
@pytest.mark.parametrize("budget", [None, "100GiB"])
def test_xla_tpus_own_out_of_hbm_is_a_located_error_naming_the_largest_tensors(budget):
    prog = small(mi.tpu_mesh("v3:2x2", {"x": 8}), rows=8 * 2**21, cols=1024)  # 16 GiB: within the margin
    line = _line() + 2
    with pytest.raises(mi.MeshIRError) as e:
        mi.compile(prog, layout="a:x", memory_budget=budget)
    text = str(e.value)
    assert text.startswith(f"{__file__}:{line}:"), text
    assert "XLA:TPU cannot fit the program in the HBM of 'v3:2x2'" in text and "CompileTimeHbmOom" in text
    assert "x: !mtf.tensor<a=16777216@x, b=1024@(), f32> (argument) 8 GiB per device" in text


def test_a_tpu_mesh_without_libtpu_says_which_extra_to_install(monkeypatch):
    monkeypatch.setattr(tpu, "libtpu_version", lambda: None)
    tpu.topology_devices.cache_clear()
    try:
        line = _line() + 2
        with pytest.raises(mi.MeshIRError) as e:
            mi.tpu_mesh("v5e:2x4", AXES)
    finally:
        tpu.topology_devices.cache_clear()
    assert str(e.value).startswith(f"{__file__}:{line}:")
    assert 'pip install "meshir[tpu]"' in str(e.value) and "'v5e:2x4'" in str(e.value)


def _bytes_by_kind(pairs) -> dict[str, int]:
    out: Counter = Counter()
    for kind, nbytes in pairs:
        out[kind] += nbytes
    return dict(out)


# -- the examples ------------------------------------------------------------------------------------


@needs_libtpu
def test_the_readme_lm_step_compiles_for_v5e(capsys):
    from script_modules import EXAMPLES, load_script

    tlm = load_script(EXAMPLES / "transformer_lm.py", "transformer_lm")
    summary = tlm.run(["--tpu", TOPOLOGY, "--no-progress"])
    assert summary["tpu"] == TOPOLOGY and summary["xla_memory"]["total"] > 0 and summary["xla_cost"]["flops"] > 0
    assert "all-reduce" in summary["collectives"]
    assert "XLA:TPU, v5e:2x4 (8 TPU v5 lite devices), per device: memory" in capsys.readouterr().out


@needs_libtpu
def test_the_mlp_example_compiles_for_v5e(capsys):
    from script_modules import EXAMPLES, load_script

    assert load_script(EXAMPLES / "mlp.py", "mlp").main(["--tpu", TOPOLOGY]) == 0
    out = capsys.readouterr().out
    assert "tpu devices" in out and "XLA: argument" in out and "XLA's optimal_seconds" in out


@needs_libtpu
def test_the_tpu_benchmark_writes_its_table(tmp_path):
    from script_modules import load_benchmark

    out = tmp_path / "tpu_compile.md"
    assert load_benchmark("tpu_compile").main(["--out", str(out)]) == 0
    rows = [line for line in out.read_text().splitlines() if line.startswith("| v")]
    assert len(rows) == 4 and all(line.split("|")[2] == line.split("|")[3] for line in rows)  # report == HLO


@needs_libtpu
def test_the_papers_benchmark_quick_run_compiles_both_sides_and_writes_its_tables(tmp_path):
    from script_modules import load_benchmark

    papers = load_benchmark("tpu_papers")
    assert papers.main(str(tmp_path), quick=True) == 0
    result = json.loads((tmp_path / "tpu_papers.json").read_text())
    for record in result["papers"] + result["scaling"]:
        for side in ("meshir", "jax"):
            rec = record[side]
            assert rec["status"] == "ok", rec
            assert rec["xla_memory"]["total"] > 0 and rec["xla_cost"]["optimal_seconds"] > 0
            assert "unknown_repeats" not in rec["collectives"]  # every loop's trip count was read
        planned, compiled = record["meshir"]["planner_bytes_per_device"], record["meshir"]["collectives"]["bytes_per_device"]
        # XLA:TPU sends less than MeshIR planned in the microbatch loop, and where the model-parallel
        # layout splits d_k (mi.dot_product_attention gathers q, k, v whole; XLA shares the forward's
        # gathers with the gradient's)
        if record.get("microbatches", 1) > 1 or record.get("layout") == "model-parallel":
            assert 0 < compiled <= planned
        else:
            assert compiled == planned
    assert result["refusal"]["meshir"]["status"] in ("refused", "compiled")
    text = (tmp_path / "tpu_papers.md").read_text()
    assert "## Targets" in text and "## Compile time from 8 to 2048 cores" in text and "| v3:4x4 | 32 |" in text
