"""mlir-opt's options in meshir-opt, in-process: what the lit tests (test/cli/) do not pin down -
mlir-opt's semantics of the IR-printing flags together, the report formats to the character,
the dumped pipeline reading back, and bad input."""
from __future__ import annotations

import io

import pytest

from meshir.cli.opt import main
from meshir.cli.pass_statistics import _statistic_lines
from meshir.cli.pipeline_dump import dump_pipeline
from meshir.cli.timing import _parse_mlir_report
from meshir.transforms import PASSES, build_pass_manager, parse_pipeline

TWO_RELUS = """sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: !mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  %1 = "mtf.relu"(%a) : (!mtf.tensor<b=8@x, f32>) -> !mtf.tensor<b=8@x, f32>
  return %1 : !mtf.tensor<b=8@x, f32>
}
"""


@pytest.fixture
def path(tmp_path):
    file = tmp_path / "in.mlir"
    file.write_text(TWO_RELUS)
    return str(file)


def test_after_change_alone_prints_nothing_as_in_mlir_opt(path, capsys):
    assert main([path, "--mtf-canonicalize", "--mlir-print-ir-after-change"]) == 0
    assert "IR Dump" not in capsys.readouterr().err


def test_after_all_also_prints_after_the_pass_that_failed(path, capsys):
    assert main([path, "--mtf-strip-layouts", "--mtf-lower-to-stablehlo", "--mlir-print-ir-after-all"]) == 1
    err = capsys.readouterr().err
    dumps = [line for line in err.splitlines() if "IR Dump" in line]
    assert dumps == ["// -----// IR Dump After mtf-strip-layouts //----- //",
                     "// -----// IR Dump After mtf-lower-to-stablehlo Failed //----- //"]
    assert err.index("error: 'mtf.relu' op is not partitioned") < err.index("Failed //")


def test_before_and_after_dumps_come_in_pipeline_order(path, capsys):
    assert main([path, "--mtf-strip-layouts", "--cse", "--mlir-print-ir-before-all", "--mlir-print-ir-after-all"]) == 0
    dumps = [line for line in capsys.readouterr().err.splitlines() if "IR Dump" in line]
    assert [d.split("IR Dump ")[1].split(" //")[0] for d in dumps] == [
        "Before mtf-strip-layouts", "After mtf-strip-layouts", "Before cse", "After cse"]


def test_statistics_are_aligned_as_mlir_opt_aligns_them():
    lines = _statistic_lines([("num-b", 12, "b"), ("num-aaa", 3, "a")], 2)
    assert lines == ["  (S)  3 num-aaa - a", "  (S) 12 num-b   - b"]


def test_statistics_and_timing_are_printed_for_each_chunk(tmp_path, capsys):
    file = tmp_path / "split.mlir"
    file.write_text(TWO_RELUS + "// -----\n" + TWO_RELUS)
    assert main([str(file), "--split-input-file", "--mtf-canonicalize", "--mlir-pass-statistics", "--mlir-timing"]) == 0
    err = capsys.readouterr().err
    assert err.count("... Pass statistics report ...") == 2 and err.count("... Execution time report ...") == 2
    assert err.count("(S) 1 num-ops-removed") == 2
    assert err.index("Pass statistics") < err.index("Execution time")  # as mlir-opt: the pass manager's first


def test_mlir_timing_report_is_read_with_its_nesting_and_without_hidden_passes():
    report = """===-------------------------------------------------------------------------===
                         ... Execution time report ...
===-------------------------------------------------------------------------===
  Total Execution Time: 0.0030 seconds

  ----User Time----  ----Wall Time----  ----Name----
    0.0001 (  3.2%)    0.0001 (  3.2%)  MeshIRHook
    0.0002 (  5.0%)    0.0002 (  5.0%)  'func.func' Pipeline
    0.0000 (  1.4%)    0.0000 (  1.4%)    CSEPass
    0.0000 (  0.0%)    0.0000 (  0.0%)      (A) DominanceInfo
    0.0001 (  1.9%)    0.0001 (  1.9%)  StripLayoutsPass
    0.0027 ( 89.6%)    0.0027 ( 89.6%)  Rest
    0.0030 (100.0%)    0.0030 (100.0%)  Total
"""
    timers = _parse_mlir_report(report, hidden="MeshIRHook")
    assert [t.name for t in timers] == ["'func.func' Pipeline", "StripLayoutsPass"]
    assert timers[0].wall == 0.0002 and timers[0].children[0].name == "CSEPass"
    assert timers[0].children[0].children[0].name == "(A) DominanceInfo"


@pytest.mark.parametrize("name", sorted(PASSES))
def test_dumped_pipeline_reads_back(name):
    """Every MeshIR pass, with all its options written out, is a pipeline meshir-opt accepts
    and dumps the same way again."""
    dumped = dump_pipeline(parse_pipeline(f"{name}, func.func(canonicalize)"))
    text = dumped.split("\n", 1)[1]  # after "Pass Manager with 2 passes:"
    elements = parse_pipeline(text)
    assert dump_pipeline(elements) == dumped
    build_pass_manager(elements).release()


def test_bytecode_from_standard_input_and_to_a_text_stream(path, tmp_path, capsys, monkeypatch):
    bytecode = tmp_path / "out.mlirbc"
    assert main([path, "--emit-bytecode", "-o", str(bytecode)]) == 0
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(bytecode.read_bytes())))
    monkeypatch.setattr("sys.stdout", io.StringIO())  # no .buffer: bytes cannot be written to it
    assert main(["-", "--emit-bytecode"]) == 1
    assert "cannot write bytecode to this standard output (a text stream); use -o FILE" in capsys.readouterr().err


@pytest.mark.parametrize("args, data, message", [
    ([], b"\x00\xff\xfe garbage", "it is neither UTF-8 MLIR text nor MLIR bytecode (which starts with 'ML\\xefR'); byte 1 is 0xff"),
    ([], b"ML\xefR", "error: attempting to parse a byte at the end of the bytecode"),
    (["--split-input-file"], b"ML\xefR", "is MLIR bytecode, which cannot be split"),
    (["--split-input-file=// x", "--emit-bytecode"], b"module {}", "it cannot be combined with --split-input-file"),
])
def test_bad_input_is_one_clear_message(args, data, message, tmp_path, capsys):
    file = tmp_path / "bad.mlirbc"
    file.write_bytes(data)
    assert main([str(file), *args]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and "internal error" not in err


def test_split_input_file_with_an_empty_marker_is_the_default_marker(tmp_path, capsys):
    file = tmp_path / "split.mlir"
    file.write_text("func.func @a() {\n  return\n}\n// -----\nfunc.func @a() {\n  return\n}\n")
    assert main([str(file), "--split-input-file="]) == 0
    assert capsys.readouterr().out.count("// -----\n") == 1
