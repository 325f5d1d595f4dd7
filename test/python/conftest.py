"""Shared pytest helpers: build small `mtf` modules from MLIR text and run them.

The tests sit in folders that mirror the source (dialect/, transforms/, lowering/, runtime/,
api/, ...); the modules they share (op cases, oracles, random programs, worker scripts) sit in
support/, which this file puts on sys.path, so a test imports them by name (`from op_cases
import ...`) from any folder.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from meshir.dialect import parse_module
from meshir.dialect.interpreter import interpret
from meshir.lowering.runtime import ensure_cpu_devices

SUPPORT = Path(__file__).resolve().parent / "support"
if str(SUPPORT) not in sys.path:
    sys.path.insert(0, str(SUPPORT))

# Partitioned programs run on 8 CPU devices. pytest imports this file before any test can
# start jax's backend; ensure_cpu_devices is a no-op if something started it already.
ensure_cpu_devices(8)

MESH_2X2 = 'sdy.mesh @mesh = <["x"=2, "y"=2]>'


def donated_views_stay_alive() -> bool:
    """jax 0.11 does not mark a donated sharded array deleted once NumPy has viewed it
    (`np.asarray`), under jax.jit as under MeshIR; 0.10 and 0.12 do. Tests that check the
    deletion of such an array skip that check there (README, supported versions)."""
    import jax

    from meshir._versions import release

    return release(jax.__version__)[:2] == (0, 11)


def mtf_type(spec: str) -> str:
    """`"b=2@x, f32"` -> `"!mtf.tensor<b=2@x, f32>"` (full types pass through)."""
    return spec if spec.startswith("!") else f"!mtf.tensor<{spec}>"


def parse_mtf(text: str):
    """Parse MLIR text (with a 2x2 mesh `@mesh` prepended) into a module; fail on diagnostics."""
    module, diags = parse_module(MESH_2X2 + "\n" + text, source_name="test.mlir")
    assert not diags, "\n".join(str(d) for d in diags)
    return module


def single_op_text(op: str, operands, result: str, attrs: str = "") -> str:
    """A function @f(%a0, %a1, ...) (named a0, a1, ...) returning one `op` of its arguments."""
    types = [mtf_type(t) for t in operands]
    rtype = mtf_type(result)
    params = ", ".join(f'%a{i}: {t} {{mtf.name = "a{i}"}}' for i, t in enumerate(types))
    args = ", ".join(f"%a{i}" for i in range(len(types)))
    attr_text = f" {{{attrs}}}" if attrs else ""
    return (
        f"func.func @f({params}) -> {rtype} attributes {{mtf.mesh = @mesh}} {{\n"
        f'  %r = "{op}"({args}){attr_text} : ({", ".join(types)}) -> {rtype}\n'
        f"  func.return %r : {rtype}\n"
        "}\n"
    )


@pytest.fixture(scope="session")
def mtf_module():
    """`mtf_module(text)`: parse text (a 2x2 mesh @mesh is prepended) into a module."""
    return parse_mtf


@pytest.fixture(scope="session")
def run_mtf_op():
    """`run_mtf_op(op, operand_types, result_type, *arrays, attrs="")`: run one op.

    Types are `"b=2, d=3, f32"` (the `!mtf.tensor<...>` wrapper is optional); `attrs` is the
    text inside the op's attribute dictionary, e.g. `'dim = "b", start = 1'`.
    """

    def run(op, operands, result, *arrays, attrs=""):
        return interpret(parse_mtf(single_op_text(op, operands, result, attrs)), *arrays)

    return run
