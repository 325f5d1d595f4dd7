"""What MeshIR's and Shardy's propagation choices cost: bytes per device of the collectives
their layouts need (a test helper, used by benchmarks/propagation_conflicts.py and its test).

Both sides are priced by the same code, MeshIR's `mtf-insert-collectives` (its reshard
planner finds the cheapest collectives for each layout change), so only the choices differ:

- MeshIR: the case's mtf program with Shardy's annotations translated (`written_layouts`),
  through `mtf-propagate-sharding` then `mtf-insert-collectives`.
- Shardy: `sdy-propagation-pipeline` (what jax runs) on the StableHLO program, then
  `sdy-insert-explicit-reshards` for where its layouts meet (shardy_realisation.py). Its
  layouts are written into the mtf program's types (arguments, the layout each op computes
  in) with an mtf.shard wherever Shardy reshards an operand or a result, so that MeshIR's
  propagation has nothing left to choose; then the same two passes. (Writing only each
  value's layout would leave MeshIR to choose, at each op whose operands and result
  disagree, which to reshard: the price would be MeshIR's choice, not Shardy's.)

The cost is the sum of `bytes_per_device` over every collective the second pass inserts.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import shardy_oracle as so
from propagation_programs import VALUE_ATTR, Case, mtf_program, stablehlo, written_layouts
from shardy_oracle import Layout
from shardy_realisation import realise


@dataclass
class Run:
    """One side priced: the layout each value has (each op: the layout it computes in) after
    MeshIR's propagation, the collectives inserted, their bytes per device."""

    layouts: dict[str, Layout]
    bytes: int
    collectives: list[str]
    program: str


@dataclass
class Comparison:
    case: Case
    meshir: Run
    shardy: Run | None  # None: Shardy's layouts have no mtf form (`skipped` says why)
    shardy_layouts: dict[str, Layout] = field(default_factory=dict)  # as Shardy propagated them
    skipped: str = ""
    #: MeshIR's bytes with equal-priority conflicts left to the tie-breaks (larger tensor,
    #: then program order) instead of resolved by cost: what the cost resolution changed.
    tie_break_bytes: int | None = None

    @property
    def verdict(self) -> str:
        """How MeshIR's bytes compare with Shardy's: "<", "=", ">" ("skipped": not compared)."""
        if self.shardy is None:
            return "skipped"
        a, b = self.meshir.bytes, self.shardy.bytes
        return "<" if a < b else "=" if a == b else ">"

    def differences(self) -> dict[str, tuple[Layout, Layout]]:
        """{value: (MeshIR's layout, Shardy's)} where the two propagations chose differently."""
        mine = self.meshir.layouts
        return {n: (mine[n], s) for n, s in self.shardy_layouts.items() if n in mine and mine[n] != s}

    def shardy_computes(self) -> dict[str, Layout]:
        """{op: the layout it computes in} where that is not Shardy's layout of its result
        (Shardy computes there and reshards the result)."""
        done = self.shardy.layouts if self.shardy is not None else {}
        return {n: done[n] for n, s in self.shardy_layouts.items() if n in done and done[n] != s}


def compare(case: Case) -> Comparison:
    from meshir.transforms.propagation import conflicts

    meshir = price(mtf_program(case, written_layouts(case)), case)
    saved, conflicts.MAX_TRIALS = conflicts.MAX_TRIALS, 0
    try:
        tie_breaks = price(mtf_program(case, written_layouts(case)), case).bytes
    finally:
        conflicts.MAX_TRIALS = saved
    text, dims = stablehlo(case)
    layouts = so.propagate(text, dims, strategy="shardy").layouts
    if any(a.startswith("#sdy") for layout in layouts.values() for axes in layout.values() for a in axes):
        return Comparison(case, meshir, None, layouts, "Shardy's layouts use a sub-axis (no mtf form)", tie_breaks)
    realised = realise(case)
    program = mtf_program(case, realised.computes, realised.uses, realised.returned)
    return Comparison(case, meshir, price(program, case), layouts, tie_break_bytes=tie_breaks)


def price(text: str, case: Case) -> Run:
    """Propagate and insert collectives; the layouts after propagation and the bytes."""
    from meshir.api.compilation.compile_report import collectives_of
    from meshir.dialect import get_context, parse_module
    from meshir.transforms import build_pass_manager

    module, diagnostics = parse_module(text, case.name)
    if module is None:
        raise ValueError(f"{case.name}: the mtf program does not parse: {diagnostics}\n{text}")
    with get_context():
        build_pass_manager("mtf-propagate-sharding").apply(module)
        layouts = read_layouts(module, case)
        build_pass_manager("mtf-insert-collectives").apply(module)
    found = collectives_of(module)
    return Run(layouts, sum(c.bytes_per_device for c in found),
               [f"{c.kind} {','.join(c.axes)} {c.bytes_per_device}".replace("  ", " ") for c in found], text)


def read_layouts(module, case: Case) -> dict[str, Layout]:
    """The layout of each named value: arguments by position, ops by `test.value_name` (the
    layout the op computes in), `result<i>`
    from the return."""
    from meshir._jax_private import ir
    from meshir.dialect import TensorType

    fn = next(op for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func")
    block = fn.regions[0].blocks[0]
    layouts = {name: TensorType.from_mlir(arg.type).layout for name, arg in zip(case.args, block.arguments)}
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            for i, v in enumerate(op.operands):
                layouts[f"result{i}"] = TensorType.from_mlir(v.type).layout
        elif VALUE_ATTR in op.attributes:
            layouts[ir.StringAttr(op.attributes[VALUE_ATTR]).value] = TensorType.from_mlir(op.results[0].type).layout
    return layouts
