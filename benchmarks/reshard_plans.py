"""Bytes per device of MeshIR's reshard plans against the minimum and against Shardy's plans.

    python benchmarks/reshard_plans.py            # the named cases + 300 random pairs
    python benchmarks/reshard_plans.py --quick    # the named cases + 30 random pairs

Named cases: the (mesh, shape, source layout, target layout) of the reshard tests of Shardy's
`sdy-reshard-to-collectives` (openxla/shardy, `reshard_to_collectives.mlir`), without those
whose source or target needs a sub-axis or an uneven split (`!mtf.tensor` expresses neither;
listed in the results). For each: MeshIR's plan (transforms/collectives/reshard_plan.py),
the fewest bytes any sequence of at most four collectives moves (the brute-force enumerator
of test/python/support/reshard_oracles.py: the minimum), and Shardy's own plan for the same pair
(run through jaxlib), all priced with the same ring formulas. A Shardy plan that uses
sub-axes is reported but not compared. Then the same on random pairs over 1- to 3-D meshes.
Writes results/reshard_plans.{md,json}.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "test" / "python" / "support"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

M2 = {"x": 2, "y": 2}
M4x2 = {"x": 4, "y": 2}
M3 = {"x": 2, "y": 2, "z": 2}
M424 = {"x": 4, "y": 2, "z": 4}
M4 = {"x": 2, "y": 2, "z": 2, "w": 2}
M4w4 = {"x": 2, "y": 2, "z": 2, "w": 4}
M6 = {"x": 2, "y": 2, "z": 2, "w": 2, "u": 2, "v": 2}


def L(*dims: str):
    return tuple(tuple(a for a in d.split(",") if a) for d in dims)


#: name (Shardy's test), mesh, shape, source, target
CASES = [
    ("all_gather_single_axis", M2, (16, 8), L("y", "x"), L("y", "")),
    ("all_gather_multiple_axes", M3, (16, 8), L("x,y,z", ""), L("x", "")),
    ("all_gather_multiple_dims", M3, (16, 8), L("y,z", "x"), L("y", "x")),
    ("all_slice_multiple_axes", M3, (16, 8), L("", ""), L("x", "y,z")),
    ("all_slice_minor_axis", M3, (16, 8), L("x", "y"), L("x", "y,z")),
    ("all_to_all_single_axis", M3, (16, 8, 8), L("x", "y", ""), L("", "y", "x")),
    ("all_to_all_multiple_axes", M3, (16, 8, 8), L("x", "", "y,z"), L("x", "y,z", "")),
    ("two_all_to_alls_different_tgt_dims", M424, (16, 8, 8), L("", "y,x", ""), L("x", "", "y")),
    ("two_all_to_alls_tgt_dim_not_empty", M424, (16, 8, 8), L("x", "y,z", ""), L("x,z", "", "y")),
    ("two_all_to_alls_same_tgt_dim_reverse_order", M3, (16, 8, 8), L("y", "x", ""), L("", "", "x,y")),
    ("two_all_to_alls_same_tgt_dim_non_contiguous", M3, (16, 8, 8), L("y", "x,z", ""), L("", "", "x,y,z")),
    ("slice_then_all_to_alls", M424, (16, 8, 8), L("", "y,z", ""), L("x,z", "", "y")),
    ("slice_on_src_dim_then_all_to_all_multiple_axes", M3, (16, 8, 8), L("", "x", ""), L("", "", "x,y,z")),
    ("slice_on_src_dim_then_two_all_to_alls", M3, (16, 8, 8), L("z", "x", ""), L("", "", "x,y,z")),
    ("slice_on_src_dim_then_two_all_to_alls_2", M3, (16, 8, 8), L("y", "x", ""), L("", "", "x,y,z")),
    ("slice_on_src_dim_then_two_all_to_alls_diff_tgts", M3, (16, 8, 8), L("", "x,y", ""), L("x", "", "y,z")),
    ("slice_on_src_dim_and_replace_axis_in_another_dim", M4, (16, 8, 8), L("z", "x", ""), L("w", "", "x,y")),
    ("cannot_slice_on_src_dim_output_sharded", M3, (16, 8), L("", "x"), L("x,y", "z")),
    ("cannot_slice_on_src_dim_tgt_dim_sharded", M3, (16, 8, 8), L("", "x", "z"), L("", "", "x,y,z")),
    ("cannot_slice_on_src_dim_size_too_small", M3, (16, 4), L("", "x"), L("x,y,z", "")),
    ("cannot_slice_on_src_dim_size_too_small_2", M3, (16, 4, 8), L("", "x,y", ""), L("x", "", "y,z")),
    ("cannot_slice_on_src_dim_size_non_divisible", M2, (4, 10), L("", "x"), L("x,y", "")),
    ("replace_same_size_axes_same_dim", M3, (16, 8), L("z", "y"), L("z", "x")),
    ("replace_smaller_axis_with_bigger_same_dim", M424, (16, 8), L("z", "y"), L("z", "x")),
    ("replace_bigger_axis_with_smaller_same_dim", M424, (16, 8), L("z", "x"), L("z", "y")),
    ("replace_major_most_axis_in_dim", M4, (16, 8), L("x,y,z", ""), L("w,y,z", "")),
    ("replace_same_size_axes_diff_dims", M2, (16, 8), L("x", ""), L("", "y")),
    ("replace_bigger_axis_with_smaller_diff_dims", M4x2, (16, 8), L("x", ""), L("", "y")),
    ("replace_multiple_axes_diff_dims", M6, (8, 8, 8, 8), L("x", "y,z", "", ""), L("", "", "w,u", "v")),
    ("replace_smaller_axis_with_bigger_diff_dims", M4x2, (16, 8), L("y", ""), L("", "x")),
    ("slice_tgt_dim_then_all_to_all_then_all_gather", M4w4, (16, 8), L("y,z,w", ""), L("y", "x,w")),
    ("swap_same_size_axes_between_dims", M2, (16, 8), L("x", "y"), L("y", "x")),
    ("swap_diff_size_axes_between_dims", M4x2, (16, 8), L("x", "y"), L("y", "x")),
    ("slice_and_swap_axes_between_dims", M3, (16, 8), L("x", "y"), L("x,y", "z")),
    ("swap_axes_between_dims_then_all_to_all", M2, (8, 8, 8), L("x", "y", ""), L("", "x", "y")),
    ("reorder_axes_single_dim", M424, (16, 8), L("x,y", "z"), L("y,x", "z")),
]
#: Shardy's cases left out: a source or target that needs sub-axes or an uneven split.
EXCLUDED = [
    "all_gather_with_subaxis", "all_slice_with_subaxis", "all_to_all_subaxis_then_all_gather",
    "all_to_all_subaxis_and_full_axis_then_all_gather", "slice_on_src_dim_then_all_to_all",
    "slice_on_src_dim_then_all_to_all_and_all_gather", "cannot_slice_on_src_dim_axes_out_of_order (10 % 4)",
    "cannot_slice_on_src_dim_axes_non_contiguous (10 % 8)", "slice_on_multiple_src_dims (8 % 16)",
    "slice_on_one_src_dim_but_not_other (8 % 16)",
]


def tensor(shape, layout):
    from meshir.dialect.tensor_type import Dimension, TensorType

    return TensorType(tuple(Dimension(f"d{i}", s, ax) for i, (s, ax) in enumerate(zip(shape, layout))), "f32")


def measure(name, mesh, shape, source, target, brute_force: bool = True) -> dict:
    from reshard_oracles import brute_force_bytes, shardy_bytes

    from meshir.transforms.collectives.reshard_plan import plan_reshard

    began = time.perf_counter()
    steps = plan_reshard(tensor(shape, source), tensor(shape, target), mesh)
    plan_ms = (time.perf_counter() - began) * 1e3
    planned = sum(s.bytes_per_device for s in steps)
    shardy = shardy_bytes(shape, source, target, mesh)
    minimum = brute_force_bytes(shape, source, target, mesh) if brute_force and len(mesh) <= 4 else None
    return {
        "case": name, "mesh": mesh, "shape": list(shape), "source": source, "target": target,
        "meshir_bytes": planned, "meshir_collectives": len(steps),
        "meshir_plan": [f"{s.kind} {s.attributes}" for s in steps], "plan_ms": plan_ms,
        "minimum_bytes": minimum,
        "shardy_bytes": shardy[0] if shardy else None, "shardy_collectives": shardy[1] if shardy else None,
    }


def random_cases(count: int, seed: int = 7):
    """The property tests' random pairs (test/python/support/reshard_oracles.py), without pending axes."""
    from reshard_oracles import random_pairs

    return [(f"random{i}", mesh, shape, source, target)
            for i, (mesh, shape, source, target, _, _) in enumerate(random_pairs(count, seed, with_partial=False))]


def compare(records) -> dict:
    both = [r for r in records if r["shardy_bytes"] is not None]
    return {
        "cases": len(records),
        "compared_with_shardy": len(both),
        "fewer_than_shardy": sum(r["meshir_bytes"] < r["shardy_bytes"] for r in both),
        "equal_to_shardy": sum(r["meshir_bytes"] == r["shardy_bytes"] for r in both),
        "more_than_shardy": sum(r["meshir_bytes"] > r["shardy_bytes"] for r in both),
        "at_minimum": sum(r["minimum_bytes"] is not None and r["meshir_bytes"] <= r["minimum_bytes"] for r in records),
        "with_minimum": sum(r["minimum_bytes"] is not None for r in records),
        "max_plan_ms": max(r["plan_ms"] for r in records),
    }


def _fmt(layout) -> str:
    return "[" + ", ".join("{" + ",".join(d) + "}" for d in layout) + "]"


def markdown(meta, named, random_records) -> str:
    cn, cr = compare(named), compare(random_records)
    lines = [
        "# Reshard plans: MeshIR vs the minimum and vs Shardy",
        "",
        f"Generated by `python benchmarks/reshard_plans.py` on {meta['date']} (jax {meta['jax']}). Bytes per device "
        "(f32, ring formulas of transforms/analysis/cost_model.py). *Minimum*: the fewest bytes over every sequence of at "
        "most four collectives (test/python/support/reshard_oracles.py; not run on the 6-axis mesh). *Shardy*: "
        "`sdy-reshard-to-collectives` on the same pair, through jaxlib; `sub-axes` where its plan splits an axis "
        "(not comparable).",
        "",
        f"**Shardy's reshard tests ({cn['cases']} cases):** MeshIR moves fewer bytes than Shardy in "
        f"{cn['fewer_than_shardy']}, the same in {cn['equal_to_shardy']}, more in **{cn['more_than_shardy']}** "
        f"(of {cn['compared_with_shardy']} comparable); at the minimum in {cn['at_minimum']} of {cn['with_minimum']}. "
        f"Slowest plan: {cn['max_plan_ms']:.1f} ms.",
        "",
        f"**{cr['cases']} random pairs** (meshes 8, 4×2, 2×2, 2×2×2; 1–3 dims): fewer than Shardy in "
        f"{cr['fewer_than_shardy']}, the same in {cr['equal_to_shardy']}, more in **{cr['more_than_shardy']}** "
        f"(of {cr['compared_with_shardy']} comparable); at the minimum in {cr['at_minimum']} of {cr['with_minimum']}. "
        f"Slowest plan: {cr['max_plan_ms']:.1f} ms.",
        "",
        "| case | mesh | shape | source → target | MeshIR bytes (collectives) | minimum | Shardy bytes (collectives) | MeshIR plan |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in named:
        mesh = "×".join(str(n) for n in r["mesh"].values())
        shardy = f"{r['shardy_bytes']} ({r['shardy_collectives']})" if r["shardy_bytes"] is not None else "sub-axes"
        minimum = r["minimum_bytes"] if r["minimum_bytes"] is not None else "–"
        lines.append(f"| {r['case']} | {mesh} | {'×'.join(map(str, r['shape']))} | {_fmt(r['source'])} → "
                     f"{_fmt(r['target'])} | {r['meshir_bytes']} ({r['meshir_collectives']}) | {minimum} | {shardy} | "
                     f"{'; '.join(r['meshir_plan'])} |")
    lines += ["", "Left out (sub-axes or uneven splits in the source or target): " + ", ".join(EXCLUDED) + "."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="30 random pairs (results/quick/)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    out = args.out or (HERE / "results" / ("quick" if args.quick else ""))
    out.mkdir(parents=True, exist_ok=True)
    import jax

    named = [measure(*case) for case in CASES]
    rand = [measure(*case) for case in random_cases(30 if args.quick else 300)]
    meta = {"date": datetime.date.today().isoformat(), "jax": jax.__version__}
    (out / "reshard_plans.json").write_text(json.dumps({"meta": meta, "named": named, "random": rand,
                                                        "summary": {"named": compare(named),
                                                                    "random": compare(rand)}}, indent=1) + "\n")
    (out / "reshard_plans.md").write_text(markdown(meta, named, rand))
    print(json.dumps({"named": compare(named), "random": compare(rand)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
