"""Load the repository's scripts (benchmarks/*.py, examples/*.py) as modules in tests."""
import importlib.util
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
BENCHMARKS = ROOT / "benchmarks"
EXAMPLES = ROOT / "examples"


def load_script(path: pathlib.Path, name: str):
    """The module of the script at `path`, executed under `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_benchmark(name: str):
    """benchmarks/<name>.py as the module `meshir_benchmarks_<name>`: registered in
    sys.modules (dataclasses look their module up there), with benchmarks/ on sys.path for
    the siblings it imports (as benchmarks/run.py arranges)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"meshir_benchmarks_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


#: The LM example's flags that leave only training: no progress bar, evaluation, samples or plot.
LM_QUIET = ["--no-progress", "--eval-every", "0", "--sample", "0", "--plot", ""]


@pytest.fixture(scope="module")
def lm():
    """examples/transformer_lm.py as the module `transformer_lm` (with examples/ on sys.path,
    so `from lm import ...` works after it), once per test module."""
    return load_script(EXAMPLES / "transformer_lm.py", "transformer_lm")
