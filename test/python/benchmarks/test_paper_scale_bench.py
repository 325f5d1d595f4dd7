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


def test_a_collective_in_a_loop_counts_once_per_iteration():
    from meshir.lowering.runtime import hlo_collectives as hlo_stats
    text = """HloModule m, num_partitions=4
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%body (p: (s32[], f32[8])) -> (s32[], f32[8]) {
  %p = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[8]{0} get-tuple-element(%p), index=1
  %ar = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=%add
  ROOT %t = (s32[], f32[8]{0}) tuple(%i, %ar)
}
%cond (p: (s32[], f32[8])) -> pred[] {
  %p = (s32[], f32[8]{0}) parameter(0)
  ROOT %c = pred[] constant(true)
}
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %z = s32[] constant(0)
  %t = (s32[], f32[8]{0}) tuple(%z, %x)
  %w = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"5"}}
  %y = f32[8]{0} get-tuple-element(%w), index=1
  ROOT %ar2 = f32[8]{0} all-reduce(%y), channel_id=2, replica_groups={{0,1,2,3}}, to_apply=%add
}
"""
    found = hlo_stats.parse_collectives(text)
    repeats = hlo_stats.computation_repeats(text)
    assert repeats["body"] == 5 and repeats["main"] == 1
    once = hlo_stats.summarize(found)["bytes_per_device"]
    assert once == 2 * 48  # 2 (n-1)/n B = 48 bytes per all-reduce of f32[8] over 4
    assert hlo_stats.summarize(found, repeats)["bytes_per_device"] == 6 * 48
    unknown = text.replace(', backend_config={"known_trip_count":{"n":"5"}}', "")
    summary = hlo_stats.summarize(found, hlo_stats.computation_repeats(unknown))
    assert summary["bytes_per_device"] == once and summary["unknown_repeats"] == ["ar"]


def test_zero_spec_splits_a_free_dim_or_extends_a_split_one():
    paper = load("paper_scale")
    D = mi.Dim
    mesh = {"x": 4, "y": 2}
    rules = {"batch": "x", "d_ff": "y"}
    assert paper.zero_spec([D("d_model", 8), D("d_ff", 16)], rules, mesh, ("x",)) == ["x", "y"]
    assert paper.zero_spec([D("d_ff", 16)], rules, mesh, ("x",)) == [("y", "x")]
    assert paper.zero_spec([D("d_model", 6)], rules, mesh, ("x",)) == [None]
