"""meshir-opt starts without jax (issue 50, item 10): `--help`, and parsing, verifying and
printing a 10-line mtf module, import neither `jax` (about 1 s) nor `ml_dtypes` (0.1 s, 0.9 s
with NumPy 2.4); `jaxlib`'s MLIR bindings are all they need. A structural check, read from
`python -X importtime` of the installed command: no time is asserted. `import meshir` in
Python still imports jax and sets its CPU device count (python/meshir/__init__.py).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TEN_LINES = """\
// A 10-line mtf module: parse, verify, print.
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @ffn(%x: !mtf.tensor<b=8@x, d=16, f32>, %w: !mtf.tensor<d=16, f=32@y, f32>) -> !mtf.tensor<b=8@x, f=32@y, f32> {
  %0 = "mtf.einsum"(%x, %w) : (!mtf.tensor<b=8@x, d=16, f32>, !mtf.tensor<d=16, f=32@y, f32>) -> !mtf.tensor<b=8@x, f=32@y, f32>
  %1 = "mtf.relu"(%0) : (!mtf.tensor<b=8@x, f=32@y, f32>) -> !mtf.tensor<b=8@x, f=32@y, f32>
  %2 = "mtf.neg"(%1) : (!mtf.tensor<b=8@x, f=32@y, f32>) -> !mtf.tensor<b=8@x, f=32@y, f32>
  %3 = "mtf.add"(%1, %2) : (!mtf.tensor<b=8@x, f=32@y, f32>, !mtf.tensor<b=8@x, f=32@y, f32>) -> !mtf.tensor<b=8@x, f=32@y, f32>
  return %3 : !mtf.tensor<b=8@x, f=32@y, f32>
}
"""
HEAVY = ("jax", "ml_dtypes")


def meshir_opt() -> str:
    """The installed console script, next to this Python first (as test/lit.cfg.py finds it)."""
    found = shutil.which("meshir-opt", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if found is None:
        pytest.skip("meshir-opt is not installed (pip install -e .)")
    return found


def imported_by(args: list[str]) -> tuple[set[str], str]:
    """(the modules `meshir-opt ARGS` imports, its stdout), from `-X importtime`'s report."""
    run = subprocess.run([sys.executable, "-X", "importtime", meshir_opt(), *args],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    report = [line for line in run.stderr.splitlines() if line.startswith("import time:")]
    assert report, run.stderr[-3000:]
    return {line.rpartition("|")[2].strip() for line in report}, run.stdout


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_help_imports_no_jax():
    modules, out = imported_by(["--help"])
    assert "MeshIR passes:" in out and "--mtf-propagate-sharding" in out
    assert "jaxlib.mlir.ir" in modules  # the check reads the report it thinks it reads
    assert not heavy(modules), f"meshir-opt --help imports {heavy(modules)[:10]}"


def test_parse_verify_print_imports_no_jax(tmp_path):
    path = tmp_path / "ten.mlir"
    path.write_text(TEN_LINES)
    assert len(TEN_LINES.splitlines()) == 10
    modules, out = imported_by([str(path)])
    assert '"mtf.einsum"(%arg0, %arg1)' in out and "sdy.mesh @mesh" in out
    assert "meshir.dialect.verifier" in modules
    assert not heavy(modules), f"meshir-opt {path.name} imports {heavy(modules)[:10]}"


def test_import_meshir_still_imports_jax_and_sets_cpu_devices():
    env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES", "JAX_PLATFORMS")}
    code = "import sys, meshir, jax; print('jax' in sys.modules, jax.config.jax_num_cpu_devices, meshir.Program.__name__)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["True", "8", "Program"]
