"""The benchmark scripts still run: the smallest case through `benchmarks/run.py` (3 timed
runs), the HLO collective parser on the forms XLA prints, one compile-scaling point, and the
LM training step of `benchmarks/lm_step.py` at its tiny size, the per-call cost of
`benchmarks/call_overhead.py` for one and ten arguments and its eager row, and the bytes table of
`benchmarks/propagation_conflicts.py`, the remat measurement of `benchmarks/remat_lm.py` at its tiny size, and the 1 x 8 vs 2 x 4
process run of `benchmarks/multi_host.py` at its tiny size (its losses agree), the quick mode of
`benchmarks/auto_layout.py` (its structure; no timed assertions), `lm_step.py --layout single`,
the quick mode of `benchmarks/compile_time.py` and of `benchmarks/jax_interop.py`, and `benchmarks/gpu.py`: `--quick` on the CPU, and
without it a clear refusal on a machine with no GPU."""
import json

import pytest

from script_modules import load_benchmark as load


@pytest.fixture(scope="module")
def run():
    return load("run")


def test_smallest_case_runs_in_all_modes_and_writes_results(run, tmp_path, capsys):
    assert run.main(["--quick", "--cases", "mlp/mp", "--reps", "3", "--warmup", "1", "--skip-scaling",
                     "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "benchmarks.json").read_text())
    (case,) = data["cases"]
    assert case["case"] == "mlp/mp" and set(case["modes"]) == {"explicit", "gspmd", "jax"}
    for mode in ("explicit", "jax"):
        rec = case["modes"][mode]
        assert rec["status"] == "ok" and rec["step_time"]["runs"] == 3
        assert rec["collectives"]["by_kind"] == {"all-reduce": {"count": 1, "bytes_per_device": 14336}}
        assert rec["memory_per_device"]["total"] > 0 and rec["flops_per_device"] > 0
    assert case["analytic_min_bytes_per_device"] == 14336
    assert case["modes"]["gspmd"]["status"] in ("ok", "n/a")
    text = (tmp_path / "benchmarks.md").read_text()
    assert "| mlp/mp | explicit | all-reduce ×1 | 14,336 | 14,336 |" in text
    assert "Explicit moves no more bytes per device than jax.jit, on every case: met" in text


def test_hlo_collectives_in_every_printed_form():
    from meshir.lowering.runtime import hlo_collectives as hlo_stats
    text = """HloModule m, num_partitions=8
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (p0: f32[4,32], p1: f32[16]) -> f32[4,32] {
  %p0 = f32[4,32]{1,0} parameter(0), sharding={replicated}
  %p1 = f32[16]{0} parameter(1)
  %ar = f32[4,32]{1,0} all-reduce(%p0), channel_id=1, replica_groups={{0,1},{2,3},{4,5},{6,7}}, to_apply=%add
  %ar2 = f32[4,32]{1,0} all-reduce(%ar), channel_id=2, replica_groups=mesh['x'=4,'y'=2] {'x'}, to_apply=%add
  %ag = f32[64]{0} all-gather(%p1), channel_id=3, replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}
  %rs = f32[2,32]{1,0} reduce-scatter(%ar2), channel_id=4, replica_groups={}, dimensions={0}, to_apply=%add
  %a2a = f32[4,32]{1,0} all-to-all(%ar2), channel_id=5, replica_groups=[4,2]<=[8], dimensions={1}
  %cp = f32[16]{0} collective-permute(%p1), channel_id=6, source_target_pairs={{0,1},{1,0}}
  ROOT %cp2 = f32[16]{0} collective-permute(%p1), channel_id=7, source_target_pairs={{0,0},{1,1}}
}
"""
    found = hlo_stats.parse_collectives(text)
    b = 4 * 32 * 4
    assert [(c.kind, c.group_size, c.bytes_per_device) for c in found] == [
        ("all-reduce", 2, b),                     # 2 (n-1)/n B
        ("all-reduce", 4, 2 * 3 * b // 4),
        ("all-gather", 4, 3 * 64),                # (n-1) B
        ("reduce-scatter", 8, 7 * b // 8),        # (n-1)/n B
        ("all-to-all", 2, b // 2),
        ("collective-permute", 2, 64),            # B
        ("collective-permute", 2, 0),             # every device keeps its own
    ]
    assert hlo_stats.summarize(found)["count"] == 7


def test_one_compile_scaling_point_and_its_report(tmp_path):
    scaling = load("compile_scaling")
    point = scaling.time_passes({"x": 4, "y": 2}, layers=1, repeats=1)
    assert point["devices"] == 8 and point["passes"] > 0
    data = {"sizes": scaling.SIZES, "layout": {}, "repeats": 1, "device_sweep_layers": 1,
            "by_devices": [point], "by_layers": {"8": [point]}}
    assert "| 8 | 4x2 |" in scaling.markdown(data)


def test_lm_step_tiny_size_agrees_with_jax_and_reports_the_split(tmp_path):
    lm_step = load("lm_step")
    assert lm_step.main(["--quick", "--sizes", "tiny", "--rounds", "1", "--steps", "2", "--split-reps", "2",
                         "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "lm_step.json").read_text())
    (rec,) = data["sizes"]
    assert rec["size"] == "tiny" and rec["layout"] == "2d" and rec["mesh"] == {"x": 4, "y": 2}
    assert rec["first_step_loss"]["rel_diff"] <= 1e-4  # the same computation on both sides
    assert set(rec["split"]) == {"meshir_public", "meshir_pjrt_only", "jax_compiled", "jax_public"}
    assert rec["step_time"]["ratio_median"] > 0 and len(rec["step_time"]["ratios"]) == 1
    assert rec["collectives"]["meshir"]["bytes_per_device"] > 0 and rec["memory_per_device"]["jax"]["total"] > 0
    text = (tmp_path / "lm_step.md").read_text()
    assert text.count("| tiny (1 layer, d_model 32, 8×16) |") == 3  # step time, split, compile time
    assert "(agree)" in text
    assert lm_step.main(["--summarize", str(tmp_path), str(tmp_path), "--out", str(tmp_path)]) == 0
    runs = (tmp_path / "lm_step_runs.md").read_text()
    assert "2 separate runs" in runs and runs.count("| tiny (1 layer, d_model 32, 8×16) |") == 1


def test_call_overhead_quick_run_writes_its_report(tmp_path):
    overhead = load("call_overhead")
    assert overhead.main(["--counts", "1", "10", "--reps", "3", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "call_overhead.json").read_text())
    assert [r["arguments"] for r in data["records"]] == [1, 10]
    for r in data["records"]:
        assert r["check"]  # MeshIR and jax.jit computed the same values
        assert set(r["median_us"]) == {"meshir", "meshir, tuple results", "meshir + numpy", "pjrt",
                                       "pjrt, batch program", "jax.jit", "jax compiled floor"}
        assert "named_tuple_us" in r
        assert r["before_pjrt_us"]["arrays"] > 0 and r["target_us"] == 50 + r["arguments"]
    eager = data["eager"]  # the eager row: mi.add and a + 1.0 against jax's eager x + 1.0 (no timed assertion)
    assert eager["check"] and eager["reps"] == 3  # all six contenders computed the same values
    assert set(eager["median_us"]) == {"mi.add", "a + 1.0", "jax x + 1.0", "jax x + c", "eager program, pjrt",
                                       "jax executable, pjrt"}
    assert set(eager["ratio_to_jax"]) == {"mi.add", "a + 1.0"} and eager["target_ratio"] == 1.5
    assert eager["first_call_ms"]["mi.add"] > 0 and eager["first_call_ms"]["jax x + 1.0"] > 0
    text = (tmp_path / "call_overhead.md").read_text()
    assert "| 10 |" in text and "## Eager ops" in text and "| `a + 1.0` |" in text


def test_halo_benchmark_measures_a_one_row_shift():
    halo = load("halo")
    record = halo.measure({"x": 8}, {"d": "x"}, 4, 64, 1, False)
    assert record["halo"]["hlo_collectives"] == {"collective-permute": 1}
    assert [record[k]["hlo_bytes_per_device"] for k in ("halo", "gather", "gspmd")] == [16, 896, 16]
    assert record["halo"]["report_bytes_per_device"] == 16


def test_propagation_conflicts_writes_its_table_and_summary(tmp_path):
    conflicts = load("propagation_conflicts")
    assert conflicts.main(["--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "propagation_conflicts.json").read_text())
    s = data["summary"]
    assert s["<"] + s["="] + s[">"] == s["compared"] == len(data["cases"])
    summary_line = f"**MeshIR < Shardy in {s['<']}, = in {s['=']}, > in {s['>']}**"
    assert summary_line in (tmp_path / "propagation_conflicts.md").read_text()


def test_remat_benchmark_keeps_the_recomputation_and_equal_gradients(tmp_path):
    remat_lm = load("remat_lm")
    assert remat_lm.main(["--quick", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "remat_lm.json").read_text())
    assert data["gradients_agree"]
    for program in ("train_step", "gradient"):
        saved, remat = data["saved"][program], data["remat"][program]
        assert saved["optimization_barriers"] == 0 < remat["optimization_barriers"]
        assert remat["optimized_dots"] > saved["optimized_dots"]  # XLA did not merge the recomputation


def test_multi_host_quick_run_reproduces_the_one_process_losses(tmp_path):
    multi_host = load("multi_host")
    assert multi_host.main(["--quick", "--out", str(tmp_path)]) == 0  # asserts the losses agree (rtol 1e-5)
    (rec,) = json.loads((tmp_path / "multi_host.json").read_text())["sizes"]
    assert rec["size"] == "tiny" and len(rec["losses"]) == 4 and rec["max_loss_rel_diff_2x4"] <= 1e-5
    one, two = rec["collectives"]["1x8"], rec["collectives"]["2x4"]
    assert rec["hlo_differences"]["outside_backend_config"] == 0 and {k: r["bytes_per_device"] for k, r in one.items()} == {
        k: r["bytes_per_device"] for k, r in two.items()}
    assert two["all-reduce over x"]["crosses"] and not two["all-reduce over y"]["crosses"]
    assert not any(r["crosses"] for r in one.values())
    assert "x = 4: across 2 processes" in rec["describe"] and "y = 2: inside each process" in rec["describe"]
    assert "(equal)" in (tmp_path / "multi_host.md").read_text()


def test_auto_layout_quick_run_writes_its_tables(tmp_path):
    auto_layout = load("auto_layout")
    assert auto_layout.main(["--quick", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "auto_layout.json").read_text())
    assert [c["kind"] for c in data["timed"]] == ["mlp", "lm"]
    for case in data["timed"]:
        labels = [r["label"] for r in case["candidates"]]
        assert labels[0] == "chosen" and case["chosen"] == case["candidates"][0]["text"]
        assert len(set(r["text"] for r in case["candidates"])) == len(labels) >= 4
        for r in case["candidates"]:
            assert r["predicted"]["seconds"] > 0 and r["measured"]["median_s"] > 0
            assert r["predicted"]["bytes"] == r["hlo_bytes_per_device"] or abs(
                r["predicted"]["bytes"] - r["hlo_bytes_per_device"]) <= 8  # scalar loss all-reduce rounding
        assert -1.0 <= case["spearman"]["predicted"] <= 1.0 and case["chosen_over_best"] >= 1.0
    paper = data["paper"]
    assert paper["model_4_9b"]["chosen"]["xla_memory"]["total"] > 0
    assert paper["model_4_9b"]["hand_2d"]["hlo_bytes_per_device"] > 0
    assert [row["layers"] for row in paper["depth"]] == [1, 2]
    assert all(row["measure0"]["visited"] > 0 for row in paper["depth"])
    text = (tmp_path / "auto_layout.md").read_text()
    assert "Spearman" in text and "### Search time by depth" in text


def test_lm_step_single_layout_writes_its_own_report(tmp_path):
    lm_step = load("lm_step")
    assert lm_step.main(["--quick", "--sizes", "tiny", "--layout", "single", "--rounds", "1", "--steps", "2",
                         "--split-reps", "2", "--out", str(tmp_path)]) == 0
    (rec,) = json.loads((tmp_path / "lm_step_single.json").read_text())["sizes"]
    assert rec["layout"] == "single" and rec["mesh"] == {"x": 1}
    assert rec["collectives"]["meshir"]["bytes_per_device"] == 0 and rec["flops_per_device"]["jax"] > 0
    assert "`python benchmarks/lm_step.py --quick --layout single`" in (tmp_path / "lm_step_single.md").read_text()


def test_compile_time_quick_run_compares_both_sides(tmp_path):
    compile_time = load("compile_time")
    assert compile_time.main(["--quick", "--sizes", "tiny", "--out", str(tmp_path)]) == 0
    (rec,) = json.loads((tmp_path / "compile_time.json").read_text())["sizes"]
    assert rec["size"] == "tiny" and len(rec["times_s"]["meshir"]) == len(rec["times_s"]["jax"]) == 1
    assert rec["ratio"] > 0 and rec["stablehlo_ops"]["meshir"] > 0 and rec["stablehlo_ops"]["jax"] > 0
    assert rec["bytes_per_device"]["meshir"] > 0
    assert "| tiny (1 layer, d_model 32, 8×16) |" in (tmp_path / "compile_time.md").read_text()


def test_gpu_benchmark_quick_runs_on_the_cpu_and_writes_its_files(tmp_path, capsys):
    gpu = load("gpu")
    assert gpu.main(["--quick", "--sizes", "tiny", "--out", str(tmp_path)]) == 0
    assert "--quick: tiny sizes on the cpu backend" in capsys.readouterr().out
    data = json.loads((tmp_path / "gpu_cpu.json").read_text())
    assert data["meta"]["device_kind"] == "cpu" and data["meta"]["jax"]
    assert set(data["meta"]["peak_flops"]) == {"f32", "bf16"} and min(data["meta"]["peak_flops"].values()) > 0
    f32, bf16 = data["sizes"]
    assert (f32["precision"], bf16["precision"]) == ("f32", "bf16")
    for row in (f32, bf16):
        assert row["size"] == "tiny" and row["parameters"] > 0 and row["flops_per_step"] > 0
        assert row["step_ms"]["meshir"] > 0 and row["step_ms"]["jax"] > 0 and row["ratio"] > 0
        assert 0 < row["mfu"]["jax"] and 0 < row["mfu"]["meshir"]
        assert set(row["split_ms"]) == {"meshir_public", "meshir_pjrt_only", "jax_compiled", "jax_public"}
        assert row["compile_s"]["meshir_xla"] > 0 and row["compile_s"]["jax_lower_compile"] > 0
    assert f32["first_step_loss"]["rel_diff"] <= 1e-4 and bf16["first_step_loss"]["rel_diff"] <= 2e-3
    text = (tmp_path / "gpu_cpu.md").read_text()
    assert "| tiny (1 layer, d_model 32, 8×16) | f32 |" in text and "| tiny (1 layer, d_model 32, 8×16) | bf16 |" in text


def test_gpu_benchmark_without_a_gpu_says_so_and_fails():
    import os
    import subprocess
    import sys

    from script_modules import BENCHMARKS

    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, str(BENCHMARKS / "gpu.py")], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode != 0
    assert "no GPU: jax sees only cpu devices; run on a GPU machine or pass --quick" in done.stderr


def test_jax_interop_quick_run_agrees_four_ways_and_writes_its_table(tmp_path):
    jax_interop = load("jax_interop")
    assert jax_interop.main(["--quick", "--out", str(tmp_path)]) == 0
    rec = json.loads((tmp_path / "jax_interop.json").read_text())
    assert rec["size"] == "tiny" and set(rec["median_step_s"]) == set(jax_interop.CONTENDERS)
    assert max(rec["first_step_loss"].values()) - min(rec["first_step_loss"].values()) < 1e-3
    assert "| meshir_in_jit |" in (tmp_path / "jax_interop.md").read_text()


def test_moe_quick_run_agrees_with_jax_and_counts_the_all_to_alls(tmp_path):
    moe = load("moe")
    assert moe.main(["--quick", "--out", str(tmp_path)]) == 0
    rec = json.loads((tmp_path / "moe.json").read_text())
    assert rec["size"] == "tiny" and rec["contenders"] == ["meshir", "jax", "jax_back_only"]
    assert set(rec["layouts"]) == {"2d", "data_parallel"}
    for layout, r in rec["layouts"].items():
        assert r["agreement"]["ok"] and set(r["collectives"]) == set(rec["contenders"])
        a2a = r["collectives"]["meshir"]["all_to_all"]
        assert a2a["count"] == 4, layout  # dispatch and combine, forward and backward
        assert r["meshir_dispatch_a2a_equals_analytic"], layout
        assert all(t > 0 for t in r["median_step_s"].values())
    # 2-D: the combine's all-to-alls carry blocks reduce-scattered over y (half the analytic size)
    two_d = rec["layouts"]["2d"]
    assert two_d["collectives"]["meshir"]["all_to_all"]["equal_to_analytic"] == 2
    assert rec["layouts"]["data_parallel"]["collectives"]["meshir"]["all_to_all"]["equal_to_analytic"] == 4
    assert "| data_parallel | meshir | 4 |" in (tmp_path / "moe.md").read_text()


def test_pipeline_quick_run_costs_the_bubble_and_reproduces_the_loss(tmp_path):
    pipeline = load("pipeline")
    assert pipeline.main(["--quick", "--out", str(tmp_path)]) == 0  # asserts the FLOPs ratios and the losses
    rec = json.loads((tmp_path / "pipeline.json").read_text())
    P = rec["stages"]
    assert rec["size"] == "quick" and [row["M"] for row in rec["flops"]] == rec["microbatches"] == [1, 2]
    for row in rec["flops"]:  # the layers alone: exactly (M+P-1)/M the stacked data-parallel model's FLOPs
        M = row["M"]
        assert row["pipe_loops"] * M == rec["variants"]["dp-stage stacked"]["loop_dot_flops"] * (M + P - 1)
        assert row["loops_ratio_dp-stage stacked"] == pytest.approx((M + P - 1) / M, rel=1e-12)
        stage = rec["variants"][f"pipe M={M}"]["stage"]
        assert stage["permutes"]["count"] == 2 * (M + P - 2) and stage["permutes"]["bytes_per_device"] > 0
    assert max(r["rel_diff"] for r in rec["losses"].values()) <= 1e-5 and len(rec["losses"]) == 4
    text = (tmp_path / "pipeline.md").read_text()
    assert "collective permutes" in text and "**Permutes**: 2(M+P-2) at every M" in text
