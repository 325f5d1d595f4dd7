"""Printing IR: meshir-opt's output, and the dumps of `--mlir-print-ir-*` around passes.

The dumps follow mlir-opt's instrumentation (`mlir/lib/Pass/IRPrinting.cpp`):

- `--mlir-print-ir-before-all`: `// -----// IR Dump Before <pass> //----- //` before each pass;
- `--mlir-print-ir-after-all`: `// -----// IR Dump After <pass> //----- //` after each pass
  (after its verification), and `... After <pass> Failed ...` after a pass that failed;
- `--mlir-print-ir-after-change`: with `--mlir-print-ir-after-all`, only after passes that
  changed the IR (alone it prints nothing, as in mlir-opt);
- `--mlir-print-ir-after-failure`: only the dump after a failed pass.

`<pass>` is the pipeline element as written (`mtf-strip-layouts`, `func.func(cse)`): mlir-opt
writes the pass's class name and then its textual pipeline (`CSEPass: cse`), and dumps each
pass nested in `func.func(...)` on its own; here a nested pipeline is one step, dumped whole.
Dumps go to stderr; `--mlir-print-debuginfo` and `--mlir-print-op-generic` apply to them too.
"""
from __future__ import annotations

import hashlib
import sys


def print_module(op, *, debuginfo: bool = False, generic: bool = False) -> str:
    """The text of `op`, ending with a newline."""
    text = op.get_asm(enable_debug_info=debuginfo, print_generic_op_form=generic)
    return text if text.endswith("\n") else text + "\n"


class IRPrinter:
    """The `--mlir-print-ir-*` dumps of one run: `before` and `after` are the pipeline's hooks,
    `failed` is called when the pipeline stops in the pass that was running."""

    def __init__(self, opts, stream=None):
        self.before_all = opts.mlir_print_ir_before_all
        self.after_all = opts.mlir_print_ir_after_all
        self.only_changed = opts.mlir_print_ir_after_change
        self.after_failure = opts.mlir_print_ir_after_failure or self.after_all
        self.flags = {"debuginfo": opts.mlir_print_debuginfo, "generic": opts.mlir_print_op_generic}
        self.stream = stream
        self._fingerprint: str | None = None

    @property
    def wanted(self) -> bool:
        """Whether any dump was asked for."""
        return self.before_all or self.after_all or self.after_failure

    def before(self, label: str, op) -> None:
        if self.before_all:
            self._dump(f"Before {label}", op)
        if self.after_all and self.only_changed:
            self._fingerprint = _fingerprint(op)

    def after(self, label: str, op) -> None:
        if not self.after_all:
            return
        if self.only_changed and self._fingerprint == _fingerprint(op):
            return
        self._dump(f"After {label}", op)

    def failed(self, label: str, op) -> None:
        if self.after_failure:
            self._dump(f"After {label} Failed", op)

    def _dump(self, title: str, op) -> None:
        stream = self.stream or sys.stderr
        stream.write(f"// -----// IR Dump {title} //----- //\n{print_module(op, **self.flags)}\n")
        stream.flush()


def _fingerprint(op) -> str:
    """What the IR is, as `--mlir-print-ir-after-change` compares it: generic form, locations
    included (MLIR's OperationFingerPrint hashes the same things)."""
    text = op.get_asm(enable_debug_info=True, print_generic_op_form=True)
    return hashlib.sha1(text.encode()).hexdigest()
