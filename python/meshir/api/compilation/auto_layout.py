"""`mi.auto_layout`: the layout rules an expert would write, found by search (docs/auto-layout.md).

    choice = mi.auto_layout(step, mesh=mi.Mesh({"x": 4, "y": 2}), memory_budget="2GiB")
    print(choice)                                  # the ranked candidates, cost broken down
    exe = mi.compile(step, layout=choice.rules)    # or mi.compile(step, layout="auto", ...)
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import jax

from meshir.dialect import MeshIRError, get_context
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.mesh import function_mesh, module_meshes
from meshir.dialect.signature import entry_function
from meshir.distributed import agreement
from meshir.transforms.analysis.cost_model import CostModel
from meshir.transforms.analysis.device_kinds import kind_of
from meshir.transforms.analysis.memory_estimate import format_bytes

from meshir.api import _checks as checks
from meshir.api.compilation.source import prepared_source


@dataclass
class AutoLayout:
    """The chosen `.rules` (usable as `layout=`) and `.candidates`, the ranked table.
    `.shard_update`: for a step built with `mi.train_step(shard_update=...)`, whether the
    choice keeps weight-update sharding (False: compile the step built without it, or use
    `mi.compile(layout="auto")`, which does that); None for other programs. `own_choice`: in a
    program over processes every process takes process 0's choice; where this process's own
    search chose otherwise (a time limit stopped it elsewhere), what it chose, else None."""
    rules: dict
    candidates: list
    objective: str
    exact: bool
    gap: float
    visited: int
    seconds: float
    mesh: object
    shard_update: bool | None = None
    own_choice: str | None = None

    #: How many candidates `repr` shows; `str` (print) shows the whole table.
    REPR_CANDIDATES = 3

    def __repr__(self) -> str:
        """One line: the choice and the first few candidates (a dataclass repr would print
        every candidate's whole estimate, kilobytes for a small program)."""
        top = ", ".join(f"{format_rules(c.rules)}{_update_text(c.shard_update)}: {_cost_text(c, self.objective)}"
                        for c in self.candidates[:self.REPR_CANDIDATES])
        more = len(self.candidates) - self.REPR_CANDIDATES
        rest = f" (+{more} more in .candidates)" if more > 0 else ""
        return (f"AutoLayout(rules={format_rules(self.rules)!r}{_update_text(self.shard_update)}, mesh=<"
                f"{self.mesh.format_axes()}>, objective={self.objective!r}, exact={self.exact}, "
                f"top=[{top}]{rest})")

    def __str__(self) -> str:
        how = ("exact (branch and bound over the whole space)" if self.exact else
               f"best found within the time limit, at most {100 * self.gap:.0f}% above the bound of the space")
        lines = [f"auto layout on mesh <{self.mesh.format_axes()}>, objective {self.objective}: {how}; "
                 f"{self.visited} nodes in {self.seconds:.2f} s",
                 f"chosen: {format_rules(self.rules)}{_update_text(self.shard_update)}"]
        if self.own_choice is not None:
            lines.append(f"  (process 0's choice; this process's own search chose {self.own_choice})")
        lines.append("")
        rows = [("#", "rules", "time (ms)", "FLOPs/device", "bytes/device by kind", "memory/device", "")]
        for i, c in enumerate(self.candidates, 1):
            e = c.cost
            kinds = ", ".join(f"{k} {v:,}" for k, v in e.bytes_by_kind) or "none"
            rows.append((str(i), format_rules(c.rules) + _update_text(c.shard_update), f"{1e3 * e.seconds:.3f}",
                         f"{e.flops:,.0f}", kinds, format_bytes(e.memory), "measured" if c.measured else "predicted"))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
        return "\n".join(lines)


def default_cost_model():
    """Time on the device kind of jax's first device (transforms/analysis/device_kinds.py: cpu-virtual
    on the CPU, h100, a100, tpu-v3, tpu-v4), or the model's default constants for others."""
    device = jax.devices()[0]
    return CostModel("time", device=kind_of(device.platform, getattr(device, "device_kind", "")))


def _update_text(shard_update: bool | None) -> str:
    return {None: "", True: " + update sharded", False: " (update whole)"}[shard_update]


def _cost_text(candidate, objective: str) -> str:
    """A candidate's figure for the objective, and whether it was measured or predicted."""
    e = candidate.cost
    figure = {"time": f"{1e3 * e.seconds:.3f} ms", "memory": format_bytes(e.memory)}.get(
        objective, f"{sum(v for _, v in e.bytes_by_kind):,} bytes")
    return f"{figure} {'measured' if candidate.measured else 'predicted'}"


def format_rules(rules: dict) -> str:
    parts = [f"{k}:{v[0] if len(v) == 1 else '(' + ','.join(v) + ')'}" for k, v in sorted(rules.items()) if v]
    return "; ".join(parts) or "(no split: every device holds everything)"


@reports_at_call_site
def auto_layout(program_or_module, mesh=None, memory_budget=None, objective: str = "time",
                time_limit: float = 10.0, cost_model=None, layout=None, function: str | None = None,
                keep: int = 10, measure: int = 3, strict: bool = False) -> AutoLayout:
    """Search the layout rules of `program_or_module` on `mesh` (or its own mesh).

    `objective`: "time" (FLOPs at the device's throughput + α–β communication, the cost
    model's; by default the device kind of jax's devices, `default_cost_model`), "bytes" (sent per device) or "memory" (per device). `memory_budget`: bytes per
    device (int or text, "16GiB") no candidate may exceed. `layout`: rules the search keeps
    (with the program's own `mtf.layout_rules` and `mtf.shard` pins). `time_limit`: seconds
    of search before it returns the best found. `measure`: how many of the best candidates
    are partitioned for real, their measured collectives and memory ranking them. `strict`: a
    rule of `layout` naming a mesh axis the mesh lacks is an error, not ignored with a warning
    (as `mi.compile`'s).
    """
    objective = checks.choice(objective, ("time", "bytes", "memory"), "objective")
    budget = checks.memory_budget(memory_budget)
    model = checks.cost_model(cost_model) if cost_model is not None else default_cost_model()
    rules = checks.layout_rules(layout, "layout rules")
    time_limit = checks.real(time_limit, "time_limit", finite=False)
    if not time_limit > 0:
        raise MeshIRError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    keep = checks.integer(keep, "auto_layout keep", minimum=1)
    measure = checks.integer(measure, "auto_layout measure", minimum=0)
    source, function = prepared_source(program_or_module, checks.mesh(mesh, "auto_layout mesh"), function)
    fn = entry_function(source, function)
    run_mesh = function_mesh(fn, module_meshes(source.operation))
    if run_mesh is None:
        raise MeshIRError("the program has no mesh: give one with Program(..., mesh) or auto_layout(..., mesh=...)")
    rules = checks.rules_on_mesh(rules, run_mesh, strict)
    # Imported when first searched: building and compiling programs needs no layout search, so
    # `import meshir` does not load it (docs/architecture.md, "Import time").
    from meshir.transforms.layout_search.choose import choose_layout

    with get_context():
        choice = choose_layout(source, fn, run_mesh, model, objective, budget, float(time_limit), dict(rules),
                               keep, measure)
    rules = {k: tuple(v) for k, v in sorted(choice.chosen.rules.items()) if v}
    update = choice.chosen.shard_update
    agreed_rules, agreed_update = _process_zero_choice(rules, update)
    own = None if (agreed_rules, agreed_update) == (rules, update) else format_rules(rules) + _update_text(update)
    return AutoLayout(agreed_rules, choice.candidates, objective, choice.exact, choice.gap, choice.visited,
                      choice.seconds, run_mesh, agreed_update, own)


def _process_zero_choice(rules: dict, shard_update: bool | None) -> tuple[dict, bool | None]:
    """Process 0's (rules, shard_update) in a program over processes, else these: processes
    must compile the same program, and a search stopped by its time limit may end elsewhere."""
    text = json.dumps({"rules": {k: list(v) for k, v in rules.items()}, "shard_update": shard_update})
    agreed = json.loads(agreement.process_zero_value("mi.auto_layout", text))
    return {k: tuple(v) for k, v in agreed["rules"].items()}, agreed["shard_update"]
