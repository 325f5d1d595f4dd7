"""MeshIR's compiled per-device HLO for the LM training step beside jax.jit's, side by side.

    python benchmarks/hlo_diff.py                   # README size
    python benchmarks/hlo_diff.py --size 24L-readme --dump /tmp/hlo   # also writes both HLOs

The programs are those of benchmarks/lm_step.py (examples/lm `model.train_step` under
`mi.compile(layout=batch:x; heads, d_ff, vocab:y, donate=True)`, and `jax_step_fn` under
`jax.jit` with the same shardings and donation), compiled, not run. Printed per program:
instructions of the entry computation by opcode; fusions by kind and by what XLA named them
(`transpose_copy_fusion`, `wrapped_broadcast`, `ynn_fusion`, ... say what a fusion does);
the root opcode of the fused computations (a `copy` or `transpose` root is a layout change,
a `broadcast` root a materialised broadcast); plain `dot`s (matmuls the CPU backend did not
hand to its matmul library); collectives by kind and operand shape with bytes per device;
and PJRT's memory per device. Where the two differ is where to look.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import harness  # noqa: E402
from meshir.lowering.runtime import hlo_collectives as hlo_stats  # noqa: E402
import measure  # noqa: E402

_ENTRY = re.compile(r"^ENTRY ")
_FUSED = re.compile(r"^%?([\w.\-]+) .*\{\s*$")
_OPCODE = re.compile(r"=\s*(?:\([^=]*?\)|\S+)\s+([a-z][a-z0-9\-]*)\(")
_ROOT = re.compile(r"^\s*ROOT\s+%?[\w.\-]+\s*=\s*(?:\([^=]*?\)|\S+)\s+([a-z][a-z0-9\-]*)\(")
_NAME = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=")
_CALLS = re.compile(r"calls=%?([\w.\-]+)")
_KIND = re.compile(r"kind=(k\w+)")
_DOT = re.compile(r"=\s*(\S+)\s+dot\(.*?(lhs_batch_dims=\{[^}]*\}, )?lhs_contracting_dims=\{([^}]*)\}.*?rhs_contracting_dims=\{([^}]*)\}")


def computations(hlo_text: str) -> tuple[list[str], dict[str, list[str]]]:
    """(the entry computation's lines, {other computation name: its lines}) of the first module."""
    entry, others, name, lines = [], {}, None, None
    for line in hlo_text.splitlines():
        if line.startswith("HloModule") and (entry or others):
            break
        if lines is None:
            if _ENTRY.match(line):
                name, lines = "ENTRY", []
            elif (m := _FUSED.match(line)) and "->" in line:
                name, lines = m.group(1), []
            continue
        if line.startswith("}"):
            if name == "ENTRY":
                entry = lines
            else:
                others[name] = lines
            name, lines = None, None
            continue
        lines.append(line)
    return entry, others


def fusion_family(instruction_name: str) -> str:
    """XLA's name for a fusion without its number: `transpose_copy_fusion.12` -> `transpose_copy_fusion`."""
    return re.sub(r"\.\d+$", "", instruction_name)


def summary(hlo_text: str) -> dict:
    """The counts this script compares, for one compiled program."""
    entry, others = computations(hlo_text)
    roots = {n: next((m.group(1) for line in body if (m := _ROOT.match(line))), "?") for n, body in others.items()}
    opcodes, kinds, families, fused_roots, dots = (collections.Counter() for _ in range(5))
    for line in entry:
        m = _OPCODE.search(line)
        if not m:
            continue
        opcode = m.group(1)
        opcodes[opcode] += 1
        if opcode == "fusion":
            kinds[(_KIND.search(line) or [None, "?"])[1]] += 1
            families[fusion_family(_NAME.match(line).group(1))] += 1
            called = _CALLS.search(line)
            fused_roots[roots.get(called.group(1), "?") if called else "?"] += 1
        if opcode == "dot" and (d := _DOT.search(line)):
            dots[f"{d.group(1)} lhs_contracting={{{d.group(3)}}} rhs_contracting={{{d.group(4)}}}"] += 1
    collectives = hlo_stats.parse_collectives(hlo_text)
    by_shape = collections.Counter(f"{c.kind} {c.result_shape if len(c.result_shape) < 60 else c.result_shape[:57] + '...'} "
                                   f"groups {c.num_groups}x{c.group_size}" for c in collectives)
    return {"opcodes": opcodes, "fusion_kinds": kinds, "fusion_families": families, "fused_roots": fused_roots,
            "dots": dots, "collectives": by_shape, "collective_summary": hlo_stats.summarize(collectives)}


def side_by_side(title: str, left: collections.Counter, right: collections.Counter, only_diff: bool = False) -> list[str]:
    keys = sorted(set(left) | set(right), key=lambda k: (-(left[k] + right[k]), k))
    rows = [(k, left[k], right[k]) for k in keys if not only_diff or left[k] != right[k]]
    if not rows:
        return [f"{title}: same"]
    width = max(len(str(k)) for k, _, _ in rows)
    lines = [f"{title}:", f"  {'':{width}}  {'MeshIR':>7} {'jax':>7}  diff"]
    for k, a, b in rows:
        lines.append(f"  {str(k):{width}}  {a:7d} {b:7d}  {a - b:+d}" if a != b else f"  {str(k):{width}}  {a:7d} {b:7d}")
    return lines


def report(meshir: dict, jax_: dict, memory: dict, only_diff: bool) -> str:
    lines = []
    lines += side_by_side("entry instructions by opcode", meshir["opcodes"], jax_["opcodes"], only_diff)
    lines += side_by_side("fusions by kind", meshir["fusion_kinds"], jax_["fusion_kinds"], only_diff)
    lines += side_by_side("fusions by XLA's name", meshir["fusion_families"], jax_["fusion_families"], only_diff)
    lines += side_by_side("fused computations by root opcode", meshir["fused_roots"], jax_["fused_roots"], only_diff)
    lines += side_by_side("plain dots (not in a library fusion)", meshir["dots"], jax_["dots"], only_diff)
    lines += side_by_side("collectives", meshir["collectives"], jax_["collectives"], only_diff)
    m, j = meshir["collective_summary"], jax_["collective_summary"]
    lines.append(f"collective bytes per device: MeshIR {m['bytes_per_device']:,} in {m['count']}, "
                 f"jax {j['bytes_per_device']:,} in {j['count']}")
    lines.append("memory per device (bytes):")
    for key in ("temp", "argument", "output", "alias", "total"):
        a, b = memory["meshir"][key], memory["jax"][key]
        lines.append(f"  {key:9s} MeshIR {a:>12,}  jax {b:>12,}  diff {a - b:+,}")
    return "\n".join(lines)


def compile_both(size: str, donate: bool = True, layout: str | None = None):
    """(MeshIR Executable, jax Compiled) of the LM step at `size` (a name in lm_step's tables)
    and `layout` (examples/lm's LAYOUTS; lm_step's default), parameters and optimizer state
    donated unless `donate` is False."""
    import jax
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec

    import jax_baselines
    import lm_step
    import meshir as mi
    from lm import model

    cfg = model.Config(**{**lm_step.SIZES, **lm_step.QUICK_SIZES}[size])
    cfg.check()
    mesh, rules = model.layout(layout or lm_step.DEFAULT_LAYOUT)
    step_prog = model.train_step(cfg, mesh)
    exe = mi.compile(step_prog, layout=rules, donate=donate)
    sh = jax_baselines.Shardings(jax_baselines.jax_mesh(dict(mesh.shape)), rules)
    state_names = [n for n in step_prog.program.result_names if n != "loss"]
    dims = {n: [d.name for d in ds] for n, ds in model.param_dims(cfg).items()}
    state_sh = {n: sh.named(*dims[n.split("__")[0]]) for n in state_names}
    tok_sh, repl = sh.named("batch", "length"), NamedSharding(sh.mesh, PartitionSpec())
    jitted = jax.jit(lm_step.jax_step_fn(cfg, sh), donate_argnums=(0,) if donate else (),
                     in_shardings=(state_sh, tok_sh, tok_sh, repl), out_shardings=(repl, state_sh))
    init = {**model.init_params(cfg), **mi.init_optimizer_state(step_prog)}
    state = {n: jax.ShapeDtypeStruct(init[n].shape, init[n].dtype, sharding=state_sh[n]) for n in state_names}
    tokens = jax.ShapeDtypeStruct((cfg.batch, cfg.length), np.int32, sharding=tok_sh)
    compiled = jitted.lower(state, tokens, tokens, jax.ShapeDtypeStruct((), np.float32, sharding=repl)).compile()
    return exe, compiled


def main(argv=None) -> int:
    import lm_step

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", default="readme", help=f"one of {', '.join({**lm_step.SIZES, **lm_step.QUICK_SIZES})}")
    p.add_argument("--layout", default=lm_step.DEFAULT_LAYOUT, choices=lm_step.LAYOUT_NAMES)
    p.add_argument("--all", action="store_true", help="every row, not only those that differ")
    p.add_argument("--dump", help="folder to write both HLO texts and MeshIR's StableHLO into")
    args = p.parse_args(argv)
    harness.ensure_devices(8)
    exe, compiled = compile_both(args.size, layout=args.layout)
    m_text, j_text = exe.compiled_hlo_text(), compiled.as_text()
    memory = {"meshir": measure.memory_per_device(exe.memory_analysis()),
              "jax": measure.memory_per_device(compiled.memory_analysis())}
    print(f"LM step, size {args.size}, layout {args.layout}: MeshIR vs jax.jit, compiled per-device HLO "
          f"({'every row' if args.all else 'rows that differ'})")
    print(report(summary(m_text), summary(j_text), memory, only_diff=not args.all))
    if args.dump:
        out = Path(args.dump)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{args.size}_meshir.hlo").write_text(m_text)
        (out / f"{args.size}_jax.hlo").write_text(j_text)
        (out / f"{args.size}_meshir.stablehlo.mlir").write_text(exe.stablehlo_text())
        print(f"wrote {out}/{args.size}_{{meshir,jax}}.hlo and {args.size}_meshir.stablehlo.mlir")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
