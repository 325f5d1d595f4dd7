"""The README's example runs and checks itself against NumPy."""

from script_modules import EXAMPLES, load_script


def load(name):
    return load_script(EXAMPLES / f"{name}.py", name)


def test_mlp_example_matches_numpy(capsys):
    assert load("mlp").main(["--batch", "8", "--d-model", "8", "--d-ff", "16"]) == 0
    out = capsys.readouterr().out
    assert '"mtf.einsum"' in out and "max |y - numpy|" in out
