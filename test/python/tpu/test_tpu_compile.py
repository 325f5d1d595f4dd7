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


@needs_libtpu
def test_a_memory_budget_the_tpu_compile_exceeds_is_refused():
    prog = ffn(mi.tpu_mesh(TOPOLOGY, AXES))
    line = _line() + 2
    with pytest.raises(mi.MeshIRError) as e:
        mi.compile(prog, layout="batch:x", memory_budget="100KiB")
    assert str(e.value).startswith(f"{__file__}:{line}:"), str(e.value)
    assert "XLA:TPU" in str(e.value) and "100 KiB" in str(e.value) and "'v5e:2x4'" in str(e.value)


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
