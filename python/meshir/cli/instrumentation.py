"""What meshir-opt reports about one run of the pipeline on one input (one chunk of a split
input): the `--mlir-print-ir-*` dumps, `--mlir-pass-statistics` and `--mlir-timing`.

The pipeline calls `before` and `after` around each of its elements; `finish` writes, after the
run's diagnostics, what mlir-opt writes after its pass manager stops: the dump after the pass
that failed, the statistics report, then the timing report.
"""
from __future__ import annotations

import sys

from .ir_printing import IRPrinter
from .pass_statistics import PassStatistics
from .timing import Timing


class Instrumentation:
    def __init__(self, opts, elements, stream=None):
        self.stream = stream
        self.printer = IRPrinter(opts, stream)
        self.statistics = PassStatistics(elements) if opts.mlir_pass_statistics else None
        self.timing = Timing() if opts.mlir_timing else None
        self.pipeline_ran = False  # the input parsed and verified: the pipeline was set up
        self._running: str | None = None  # the element between its `before` and its `after`
        self._failed = None  # (element, module op) where the pipeline stopped

    @staticmethod
    def hooks_wanted(opts) -> bool:
        """Whether the pipeline must call `before` and `after` for what `opts` ask."""
        return IRPrinter(opts).wanted or opts.mlir_pass_statistics

    def before(self, label: str, op) -> None:
        self._running = label
        self.printer.before(label, op)
        if self.statistics is not None:
            self.statistics.before(label, op)

    def after(self, label: str, op) -> None:
        self._running = None
        if self.statistics is not None:
            self.statistics.after(label, op)
        self.printer.after(label, op)

    def pipeline_failed(self, op) -> None:
        """The pipeline stopped with an error in the element that was running, if any."""
        if self._running is not None:
            self._failed = (self._running, op)

    def finish(self) -> None:
        if self._failed is not None:
            self.printer.failed(*self._failed)
        if self.statistics is not None and self.pipeline_ran:
            self._write(self.statistics.report())
        if self.timing is not None:
            self._write(self.timing.report())

    def _write(self, text: str) -> None:
        stream = self.stream or sys.stderr
        stream.write(text)
        stream.flush()
