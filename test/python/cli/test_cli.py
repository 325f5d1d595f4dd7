"""meshir-opt in-process: exit codes and messages of `main([...])`, and the pipeline parser.

The lit suite (test/cli/) runs the installed command; these tests cover what lit cannot see
easily: the internal-error path, and the parser's structure and error columns.
"""
from __future__ import annotations

import pytest

from meshir.cli import opt
from meshir.cli.opt import main
from meshir.transforms import PipelineError, parse_pipeline

VALID = """sdy.mesh @mesh = <["x"=2]>
func.func @f(%a: !mtf.tensor<b=4@x, f32>) -> !mtf.tensor<b=4@x, f32> {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=4@x, f32>) -> !mtf.tensor<b=4@x, f32>
  return %0 : !mtf.tensor<b=4@x, f32>
}
"""
INVALID = """func.func @f(%a: !mtf.tensor<b=4, i32>) {
  %0 = "mtf.exp"(%a) : (!mtf.tensor<b=4, i32>) -> !mtf.tensor<b=4, i32>
  return
}
"""


@pytest.fixture
def write(tmp_path):
    def write(text: str, name: str = "in.mlir") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


# -- main ------------------------------------------------------------------------------------


def test_valid_input_prints_module_and_exits_0(write, capsys):
    assert main([write(VALID), "--mtf-verify", "--cse"]) == 0
    out, err = capsys.readouterr()
    assert '"mtf.relu"(%arg0)' in out and err == ""


def test_invalid_input_reports_located_error_and_exits_1(write, capsys):
    path = write(INVALID)
    assert main([path]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert f"{path}:2:8: error: 'mtf.exp' op operand element type i32 is not supported" in err
    assert "Traceback" not in err


def test_pass_failure_reports_the_pass_diagnostics(write, capsys):
    path = write(INVALID)
    assert main([path, "--mlir-very-unsafe-disable-verifier-on-parsing", "--mtf-verify"]) == 1
    assert f"{path}:2:8: error: 'mtf.exp' op" in capsys.readouterr().err


def test_output_file(write, tmp_path, capsys):
    out_path = tmp_path / "out.mlir"
    assert main([write(VALID), "-o", str(out_path)]) == 0
    assert capsys.readouterr().out == ""
    assert "func.func @f" in out_path.read_text()


def test_verify_diagnostics_accepts_expected_errors(write, capsys):
    text = INVALID.replace("i32>\n  return", "i32> // expected-error {{not supported}}\n  return")
    assert main([write(text), "--verify-diagnostics"]) == 0
    assert capsys.readouterr().err == ""


def test_verify_diagnostics_reports_missing_and_unexpected(write, capsys):
    text = "// expected-error @+1 {{never}}\n" + INVALID
    path = write(text)
    assert main([path, "--verify-diagnostics"]) == 1
    err = capsys.readouterr().err
    assert f'{path}:1:4: error: expected error "never" was not produced' in err
    assert f"{path}:3:8: error: unexpected error: 'mtf.exp' op" in err


def test_split_input_file_keeps_file_line_numbers(write, capsys):
    path = write(VALID + "// -----\n" + INVALID)
    assert main([path, "--split-input-file"]) == 1
    assert f"{path}:8:8: error: 'mtf.exp' op" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--pass-pipeline=builtin.module(mtf-verfy)"], "unknown pass 'mtf-verfy'; did you mean 'mtf-verify'?"),
        (["--mtf-strip-layots"], "unknown option or pass '--mtf-strip-layots'; did you mean '--mtf-strip-layouts'?"),
        (["--mtf-strip-layouts=keep=1"], "unknown option 'keep' for pass 'mtf-strip-layouts'"),
        (["--pass-pipeline=cse", "--cse"], "use either --pass-pipeline or pass flags"),
        (["-o"], "expected one argument"),
        (["b.mlir"], "unrecognized arguments: b.mlir"),
    ],
)
def test_command_line_errors_exit_1(args, message, write, capsys):
    path = write(VALID)
    assert main([path, *args]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_unreadable_input(tmp_path, capsys):
    assert main([str(tmp_path / "missing.mlir")]) == 1
    assert "cannot read input file" in capsys.readouterr().err


def test_help_and_version(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--mtf-verify" in out and "--mtf-strip-layouts" in out and "keep-collectives=<bool>" in out
    assert "--canonicalize" in out and "--cse" in out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("meshir-opt (MeshIR) ")


def test_internal_error_is_one_line_without_traceback(write, capsys, monkeypatch):
    monkeypatch.delenv("MESHIR_DEBUG", raising=False)
    monkeypatch.setattr(opt, "parse_module", _boom)
    assert main([write(VALID)]) == 2
    err = capsys.readouterr().err
    assert "meshir-opt: error: internal error: RuntimeError: boom" in err
    assert "MESHIR_DEBUG=1" in err and "Traceback" not in err


def test_internal_error_traceback_with_meshir_debug(write, capsys, monkeypatch):
    monkeypatch.setenv("MESHIR_DEBUG", "1")
    monkeypatch.setattr(opt, "parse_module", _boom)
    assert main([write(VALID)]) == 2
    assert "Traceback" in capsys.readouterr().err


def _boom(*args, **kwargs):
    raise RuntimeError("boom")


def test_a_mesh_name_that_is_no_identifier_is_located_at_the_mesh_op_only(write, capsys):
    path = write('sdy.mesh @"mésh" = <["x"=2]>\n')
    assert main([path]) == 1
    first = capsys.readouterr().err.splitlines()[0]
    assert first == f"{path}:1:1: error: 'sdy.mesh' op mesh name 'mésh' is not an identifier"  # no Python line


# -- what meshir-opt prints, it reads back (issue 27) ---------------------------------------------

_T, _B = "!mtf.tensor<b=8, f32>", "!mtf.tensor<i1>"


def _nested_whiles(name: str, levels: int, innermost: str) -> str:
    """@name: `levels` mtf.while loops, each in the body of the one before, around `innermost`
    (which defines %r<levels> from %h<levels> and %k<levels>)."""
    head = "".join(f'%r{i} = "mtf.while"(%h{i}, %k{i}) ({{\n^bb0(%c{i}: {_T}, %q{i}: {_B}):\n'
                   f'"mtf.yield"(%q{i}) : ({_B}) -> ()\n}}, {{\n^bb0(%h{i + 1}: {_T}, %k{i + 1}: {_B}):\n'
                   for i in range(levels))
    tail = "".join(f'"mtf.yield"(%r{i + 1}) : ({_T}) -> ()\n}}) {{invariants = 1}} : ({_T}, {_B}) -> {_T}\n'
                   for i in reversed(range(levels)))
    return (f"func.func @{name}(%h0: {_T}, %k0: {_B}) -> {_T} {{\n{head}{innermost.format(n=levels)}\n{tail}"
            f"return %r0 : {_T}\n}}\n")


def _nested_ops(levels: int, innermost: str = '"test.op"() : () -> ()') -> str:
    """`levels` test.ops, each in the region of the one before (two brackets each)."""
    return '"test.op"() ({\n' * levels + innermost + "\n" + "}) : () -> ()\n" * levels


@pytest.mark.parametrize("text, accepted", [
    (_nested_ops(99), True),  # 199 levels, 200 in the module MLIR wraps it in
    (_nested_ops(100, ""), False),  # 200 levels, 201 printed
    ("module {\n" + _nested_ops(99) + "}\n", True),
    ("!t = tuple<tuple<f32>>\n" + _nested_ops(97, '"test.op"() : () -> !t'), True),
    ("!t = " + "tuple<" * 150 + "f32" + ">" * 150 + "\n" + _nested_ops(30, '"test.op"() : () -> !t'), False),
], ids=["wrapped-199", "wrapped-200", "module-200", "shallow-alias", "deep-alias"])
def test_what_meshir_opt_prints_it_reads_back(text, accepted, write, tmp_path, capsys):
    printed = str(tmp_path / "printed.mlir")
    assert main([write(text), "-o", printed]) == (0 if accepted else 1)
    if accepted:
        assert main([printed]) == 0, capsys.readouterr().err
    else:
        assert "nests deeper than 200 levels of brackets" in capsys.readouterr().err


def test_output_a_pass_nests_deeper_than_meshir_opt_reads_back_is_refused(write, capsys):
    # Each function nests 193 levels; inlining @callee in the innermost loop of @caller nests
    # about twice as deep.
    callee = _nested_whiles("callee", 95, f'%r{{n}} = "mtf.neg"(%h{{n}}) : ({_T}) -> {_T}')
    caller = _nested_whiles("caller", 95, f"%r{{n}} = func.call @callee(%h{{n}}, %k{{n}}) : ({_T}, {_B}) -> {_T}")
    path = write(callee.replace("func.func @", "func.func private @", 1) + caller)
    assert main([path]) == 0
    capsys.readouterr()
    assert main([path, "--mtf-inline"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "internal error" not in err
    assert f"{path}:1:1: error: the output nests deeper than 200 levels of brackets (at its line " in err
    assert "deeper than meshir-opt reads back; it is not printed" in err


# -- pipeline parser ---------------------------------------------------------------------------


def test_parse_nested_pipeline_with_options():
    text = 'builtin.module(mtf-foo{opt=1 rules="batch:x, d_ff:y" flag}, canonicalize, cse, func.func(cse))'
    foo, canon, cse, nested = parse_pipeline(text)
    assert foo.name == "mtf-foo" and foo.children is None
    assert foo.option_dict() == {"opt": "1", "rules": "batch:x, d_ff:y", "flag": None}
    assert foo.text == 'mtf-foo{opt=1 rules="batch:x, d_ff:y" flag}'
    assert [o.column for o in foo.options] == [24, 30, 54]
    assert canon.name == "canonicalize" and canon.options is None
    assert nested.name == "func.func" and [c.name for c in nested.children] == ["cse"]
    assert nested.text == "func.func(cse)"


def test_parse_bare_list_and_empty():
    assert [e.name for e in parse_pipeline("mtf-foo,canonicalize")] == ["mtf-foo", "canonicalize"]
    assert parse_pipeline("") == () and parse_pipeline("builtin.module()") == ()


def test_parse_quotes_and_braces_group_option_values():
    (element,) = parse_pipeline("p{a='x y' b={c=1 d=2} e=\"{\"}")
    assert element.option_dict() == {"a": "x y", "b": "c=1 d=2", "e": "{"}


@pytest.mark.parametrize(
    "text, column, message",
    [
        ("cse,", 5, "expected a pass name"),
        ("func.func(cse", 14, "unbalanced '('"),
        ("cse)", 4, "unbalanced ')'"),
        ("p{a=1", 2, "unbalanced '{'"),
        ('p{a="x}', 5, "unterminated quote"),
        ("p{a=1 a=2}", 7, "option 'a' is given twice"),
        ("p{=1}", 3, "expected an option name"),
        ("a b", 3, "expected ',' or the end of the pipeline"),
    ],
)
def test_parse_errors_carry_a_column(text, column, message):
    with pytest.raises(PipelineError) as info:
        parse_pipeline(text)
    assert info.value.column == column and message in info.value.message
    assert info.value.render().splitlines()[2] == " " * (column - 1) + "^"
