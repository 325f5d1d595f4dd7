"""The README's example runs and checks itself against NumPy."""
import importlib.util
import pathlib

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mlp_example_matches_numpy(capsys):
    assert load("mlp").main(["--batch", "8", "--d-model", "8", "--d-ff", "16"]) == 0
    out = capsys.readouterr().out
    assert '"mtf.einsum"' in out and "max |y - numpy|" in out
