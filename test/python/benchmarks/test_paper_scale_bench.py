"""benchmarks/paper_scale.py: its quick mode runs (in subprocesses with the 64 CPU devices it
needs) and writes results of the expected structure with MeshIR's figures; the HLO loop
counting it relies on multiplies a loop body's collectives by the loop's trip count. No
timing assertions."""
import inspect
import json
import os
import subprocess
import sys

import meshir as mi
from script_modules import BENCHMARKS, load_benchmark as load



def test_quick_mode_writes_both_models_with_meshir_and_jax_figures(tmp_path):
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "paper_scale.py"), "--quick", "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=600, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads((tmp_path / "paper_scale.json").read_text())
    assert [m["model"] for m in data["models"]] == ["4.9B", "1T"]
    has_update = "shard_update" in inspect.signature(mi.train_step).parameters
    for model in data["models"]:
        assert model["devices"] == 64 and model["parameters"] > 0
        assert model["single_device"]["estimate"]["total"] > model["single_device"]["adam_floor_bytes"] > 0
        for row in model["rows"]:
            assert set(row) >= {"row", "layout", "shard_update", "shard_params", "remat", "seq_parallel", "meshir", "jax"}
            meshir, jax = row["meshir"], row["jax"]
            if (row["shard_update"] or row["shard_params"]) and not has_update:
                assert meshir["status"] == "pending" and "train_step has no" in meshir["note"]
            else:
                assert meshir["status"] == "ok", meshir
                assert meshir["estimate"]["total"] > 0 and meshir["xla_memory"]["total"] > 0
                assert meshir["meshir_passes_s"] > 0 and meshir["xla_compile_s"] > 0
                assert meshir["collectives"]["bytes_per_device"] > 0
                assert meshir["planner_bytes_per_device"] > 0
            assert jax["status"] == "ok", jax
            assert jax["xla_memory"]["total"] > 0 and jax["collectives"]["bytes_per_device"] > 0
    text = (tmp_path / "paper_scale.md").read_text()
    assert "## Targets" in text and "| 2d |" in text and "MeshIR pass time < 5 s" in text


def test_zero_spec_splits_a_free_dim_or_extends_a_split_one():
    paper = load("paper_scale")
    D = mi.Dim
    mesh = {"x": 4, "y": 2}
    rules = {"batch": "x", "d_ff": "y"}
    assert paper.zero_spec([D("d_model", 8), D("d_ff", 16)], rules, mesh, ("x",)) == ["x", "y"]
    assert paper.zero_spec([D("d_ff", 16)], rules, mesh, ("x",)) == [("y", "x")]
    assert paper.zero_spec([D("d_model", 6)], rules, mesh, ("x",)) == [None]
