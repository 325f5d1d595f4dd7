"""benchmarks/attention.py: its quick mode runs and writes results with MeshIR's and jax's
rows (step times, temporaries, gradients) in finite numbers. No timing assertions."""
import json
import math

from script_modules import load_benchmark as load


def test_quick_mode_writes_meshir_and_jax_rows_with_finite_numbers(tmp_path):
    bench = load("attention")
    assert bench.main(["--quick", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "attention.json").read_text())
    text = (tmp_path / "attention.md").read_text()
    assert data["meta"]["quick"] and data["meta"]["jax"]
    timed = memory = 0
    for series in data["series"]:
        assert series["dtype"] in ("f32", "bf16")
        for row in series["rows"]:
            for name in bench.CONTENDERS:
                c = row["contenders"][name]
                assert c["status"] == "ok", (series["dtype"], series["causal"], row["length"], name, c)
                assert math.isfinite(c["temp"]) and c["temp"] >= 0
                memory += 1
                if row["timed"]:
                    assert all(math.isfinite(t) and t > 0 for t in c["step_s"]) and c["median_s"] > 0
                    assert c["peak_rss_growth"] is None or c["peak_rss_growth"] >= 0
                    timed += 1
            if row["timed"]:
                for name in set(bench.CONTENDERS) - {bench.BASELINE}:
                    assert math.isfinite(row["contenders"][name]["ratio_to_naive"])
    assert timed >= 2 * len(bench.CONTENDERS) and memory > timed  # lengths compiled only, too
    assert {(s["dtype"], s["causal"]) for s in data["series"]} == {(d, c) for d in ("f32", "bf16") for c in (False, True)}
    grads = data["gradients"]
    for by_causal in grads["by_causal"].values():
        assert all(math.isfinite(e) for errors in by_causal["relative_error"].values() for e in errors.values())
    assert grads["met"], grads  # f32, tiny: MeshIR's gradients are naive attention's
    assert [t for t in data["targets"] if t["target"].startswith("gradients")][0]["met"]
    for section in ("## Targets", "## Step time", "## Temporaries per device", "## Peak RSS", "## Gradients"):
        assert section in text
    for name in bench.CONTENDERS:
        assert f"`{name}`" in text
    step_rows = [line for line in text.split("## Step time")[1].split("##")[0].splitlines() if line.startswith("| f32 |")]
    assert step_rows and all(line.count("|") == 4 + len(bench.CONTENDERS) for line in step_rows)
    assert "| f32 | true | 128 |" in text
