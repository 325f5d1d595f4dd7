"""`--mlir-pass-statistics`: mlir-opt's pass statistics report, in its pipeline display.

mlir-opt lists the pipeline's passes (a nested pipeline as `'func.func' Pipeline` with its
passes indented) and under each pass its statistics, `(S) <value> <name> - <description>`,
sorted by name, after each run of the pipeline (`mlir/lib/Pass/PassStatistics.cpp`). MLIR's
statistics exist only in LLVM builds with statistics enabled, which jaxlib's is not (mlir-opt
built that way prints the banner alone). So meshir-opt measures the same statistics for every
step of the pipeline itself: the operations the step added and removed, counted by op name
(net: an op replaced by one of the same name counts as neither). A nested pipeline is one step:
its statistics are on its `'<op>' Pipeline` line.
"""
from __future__ import annotations

from collections import Counter

from meshir._jax_private import ir

_BANNER = "... Pass statistics report ..."
_STATISTICS = (
    ("num-ops-added", "Operations added (net, by op name)"),
    ("num-ops-removed", "Operations removed (net, by op name)"),
)


class PassStatistics:
    """The statistics of one run of `elements` (the parsed pipeline); `before` and `after` are
    the pipeline's hooks, called for each element in turn."""

    def __init__(self, elements):
        self.elements = tuple(elements)
        self.values = [dict.fromkeys((name for name, _ in _STATISTICS), 0) for _ in self.elements]
        self._next = 0  # the element whose `before` comes next
        self._counts: Counter | None = None  # the ops before the element that runs

    def before(self, label: str, op) -> None:
        self._counts = _op_counts(op)
        self._next += 1

    def after(self, label: str, op) -> None:
        change = _op_counts(op)
        change.subtract(self._counts or Counter())
        values = self.values[self._next - 1]
        values["num-ops-added"] += sum(n for n in change.values() if n > 0)
        values["num-ops-removed"] += sum(-n for n in change.values() if n < 0)

    def report(self) -> str:
        lines = ["===" + "-" * 73 + "===", " " * ((80 - len(_BANNER)) // 2) + _BANNER, "===" + "-" * 73 + "==="]
        for element, values in zip(self.elements, self.values):
            stats = _statistic_lines([(name, values[name], desc) for name, desc in _STATISTICS], 2)
            if element.children is None:
                lines += [element.name, *stats]
            else:
                lines += [f"'{element.name}' Pipeline", *stats, *_nested_names(element.children, 2)]
        return "\n".join(lines) + "\n\n"


def _statistic_lines(stats, indent: int) -> list[str]:
    stats = sorted(stats)
    name_width = max(len(name) for name, _, _ in stats)
    value_width = max(len(str(value)) for _, value, _ in stats)
    return [f"{' ' * indent}(S) {value:>{value_width}} {name:<{name_width}} - {desc}" for name, value, desc in stats]


def _nested_names(elements, indent: int) -> list[str]:
    lines = []
    for element in elements:
        if element.children is None:
            lines.append(" " * indent + element.name)
        else:
            lines.append(" " * indent + f"'{element.name}' Pipeline")
            lines += _nested_names(element.children, indent + 2)
    return lines


def _op_counts(op) -> Counter:
    counts: Counter = Counter()

    def count(o):
        counts[o.name] += 1
        return ir.WalkResult.ADVANCE

    op.walk(count)
    return counts
