"""The lowered StableHLO of the LM step and of the benchmarks/cases.py cases, written to files.

    python benchmarks/lowered_snapshot.py --out /tmp/before          # before a refactor
    python benchmarks/lowered_snapshot.py --out /tmp/after --check /tmp/before

A refactor that must change no behaviour (issue 30's op registry) is checked by the bytes
it lowers: every program here goes through `mi.compile`'s passes (propagation, collectives,
lowering; no PJRT compile) in both modes, and `--check` names each file that differs.
Programs: the LM training step of examples/lm at the README's size on the 2-D layout in f32
and in bf16 (the latter also with the GPU's narrow dots), and every case of cases.py at the
quick sizes.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def lowered_text(prog, rules: dict, mode: str, narrow_dots: bool = False) -> str:
    """The StableHLO `mi.compile` would hand to PJRT, as text."""
    from meshir.api import _checks as checks
    from meshir.api.compilation.source import prepared_source
    from meshir.dialect.context import get_context
    from meshir.transforms import Pipeline
    from meshir.transforms.passes.lower_to_stablehlo import LowerToStableHLOPass
    from meshir.transforms.passes.partition import partition_passes

    source, _ = prepared_source(prog, None, None)
    passes = partition_passes(source, checks.layout_rules(rules, "layout rules"), checks.cost_model(None), mode)
    passes.append(LowerToStableHLOPass(mode=mode, narrow_dots=narrow_dots))
    with get_context():
        module = source.operation.clone()
    Pipeline(passes).apply(module)
    return str(module)


def programs():
    """(file name, thunk giving the text) for every program of the snapshot."""
    import meshir as mi
    from cases import MESH_AXES, SIZES, all_cases
    from lm import model

    cfg = model.Config()
    mesh, rules = model.layout("2d")
    for precision in ("f32", "bf16"):
        step = model.train_step(cfg, mesh, precision=precision)
        for mode in ("explicit", "gspmd"):
            yield f"lm_step-{precision}-{mode}", (lambda s=step, m=mode: lowered_text(s, rules, m))
        if precision == "bf16":
            yield "lm_step-bf16-explicit-narrow", (lambda s=step: lowered_text(s, rules, "explicit", True))
    for case in all_cases():
        prog = case.model.build(mi, mi.Mesh(MESH_AXES), SIZES["quick"])
        for mode in ("explicit", "gspmd"):
            yield f"{case.name.replace('/', '-')}-{mode}", (lambda p=prog, c=case, m=mode: lowered_text(p, c.rules, m))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for one .mlir file per program")
    parser.add_argument("--check", help="a folder written before: name every file that differs")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    differ = []
    count = 0
    for name, text_of in programs():
        text = text_of()
        (out / f"{name}.mlir").write_text(text)
        count += 1
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        verdict = ""
        if args.check:
            before = Path(args.check) / f"{name}.mlir"
            same = before.exists() and before.read_text() == text
            verdict = "  identical" if same else "  DIFFERS"
            if not same:
                differ.append(name)
        print(f"{name}: {len(text)} bytes, sha256 {digest}{verdict}", flush=True)
    if args.check:
        print(f"{count - len(differ)} of {count} programs byte-identical to {args.check}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
