"""`meshir-opt --emit-bytecode x.mlir | meshir-opt -` prints what `meshir-opt x.mlir` prints, for
every lit input that meshir-opt reads (each chunk of a split one), mtf ops and all. In-process:
`main` as the command line runs it, standard input included."""
from __future__ import annotations

import io
from pathlib import Path

import pytest

from meshir.cli.opt import main
from meshir.cli.split_input import SPLIT_MARKER, split_input

TEST_ROOT = Path(__file__).resolve().parents[2]
LIT_INPUTS = sorted(p for p in TEST_ROOT.rglob("*.mlir")
                    if not {"Output", "fuzz", "python"} & set(p.relative_to(TEST_ROOT).parts))


def _run(capsys, args, stdin: bytes | None = None, monkeypatch=None) -> tuple[int, str]:
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(args)
    return code, capsys.readouterr().out


def test_there_are_lit_inputs():
    assert len(LIT_INPUTS) > 50


@pytest.mark.parametrize("path", LIT_INPUTS, ids=lambda p: str(p.relative_to(TEST_ROOT)))
def test_bytecode_round_trip_prints_the_same_ir(path, tmp_path, capsys, monkeypatch):
    chunks = split_input(path.read_text(), SPLIT_MARKER)
    read = 0
    for i, chunk in enumerate(chunks):
        text_file, bytecode_file = tmp_path / f"{i}.mlir", tmp_path / f"{i}.mlirbc"
        text_file.write_text(chunk.text)
        code, printed = _run(capsys, [str(text_file)])
        if code != 0:  # an input meant to fail (a diagnostics test)
            continue
        read += 1
        assert _run(capsys, [str(text_file), "--emit-bytecode", "-o", str(bytecode_file)]) == (0, "")
        assert bytecode_file.read_bytes().startswith(b"ML\xefR")
        code, from_bytecode = _run(capsys, ["-"], bytecode_file.read_bytes(), monkeypatch)
        assert code == 0, capsys.readouterr().err
        assert from_bytecode == printed, f"chunk {i} (line {chunk.first_line}) of {path}"
    if read == 0:
        pytest.skip("no chunk of this file is read without errors")
