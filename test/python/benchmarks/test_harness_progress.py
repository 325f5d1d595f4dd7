"""benchmarks/harness.py's progress bars: tqdm's, drawn on stderr only when it is a terminal,
so a benchmark's log file or CI output keeps only its result lines (`harness.write`, on stdout
whether or not a bar is drawn)."""
import io

from tqdm import tqdm

from script_modules import load_benchmark

harness = load_benchmark("harness")


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_bar_is_tqdm_drawn_on_a_terminal_only(monkeypatch):
    for stream, drawn in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr("sys.stderr", stream)
        bar = harness.progress(range(3), "cases", unit="case")
        assert isinstance(bar, tqdm) and bar.disable is not drawn
        assert list(bar) == [0, 1, 2]
        assert ("cases:" in stream.getvalue() and "/3 [" in stream.getvalue()) is drawn, stream.getvalue()


def test_interleaved_rounds_shows_its_rounds_and_write_keeps_the_lines(monkeypatch, capsys):
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    medians = harness.interleaved_rounds({"a": lambda: 1.0, "b": lambda: 2.0}, 4, desc="timing")
    assert medians == {"a": [1.0] * 4, "b": [2.0] * 4}
    assert "timing:" in stderr.getvalue() and "/4 [" in stderr.getvalue() and "round/s" in stderr.getvalue()
    harness.write("a result line")
    assert capsys.readouterr().out == "a result line\n"
