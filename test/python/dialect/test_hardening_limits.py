"""Limits that keep malformed input from crashing MeshIR: int64-sized types, deep nesting."""
import sys

import pytest

from meshir.dialect import parse_module, verify_module
from meshir.dialect.nesting import MAX_NESTING
from meshir.dialect.tensor_type import INT64_MAX, TensorType, TypeContentError


@pytest.mark.parametrize("dims, element_type, what", [
    ([("a", 2**33), ("b", 2**33)], "f32", "elements, more than int64 can count"),
    ([("a", 2**63)], "i1", "more than int64 holds"),
    ([("a", 2**61), ("b", 2)], "f64", "bytes, more than int64 can count"),
])
def test_type_refuses_counts_beyond_int64(dims, element_type, what):
    with pytest.raises(TypeContentError, match=what):
        TensorType.make(dims, element_type)


def test_type_accepts_the_largest_int64_size():
    assert TensorType.make([("a", INT64_MAX)], "i1").num_elements == INT64_MAX


def test_verifier_walks_nesting_up_to_the_limit_without_recursion():
    depth = MAX_NESTING // 2 - 1  # each level opens '(' and '{'
    text = '"test.op"() ({' * depth + '"test.op"() : () -> !mtf.tensor<a=0, f32>' + "}) : () -> ()" * depth
    module, diags = parse_module(text, "deep.mlir")
    assert not diags
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(__import__("inspect").stack()) + 60)  # far fewer frames than levels
    try:
        found = verify_module(module)
    finally:
        sys.setrecursionlimit(old)
    assert [d.message for d in found] == ["'test.op' op result #0: dimension 'a' has size 0; sizes must be positive"]


def test_parse_refuses_nesting_beyond_the_limit_located():
    text = "\n" + "module {" * (MAX_NESTING + 1) + "}" * (MAX_NESTING + 1)
    module, diags = parse_module(text, "deep.mlir")
    assert module is None
    assert diags[0].file_line_col == ("deep.mlir", 2, 8 * MAX_NESTING + 8)
    assert f"deeper than {MAX_NESTING} levels" in diags[0].message


def test_pipeline_nesting_beyond_the_limit_is_a_located_error(monkeypatch, capsys):
    import io

    from meshir.cli.opt import main

    depth = MAX_NESTING + 100
    monkeypatch.setattr(sys, "stdin", io.StringIO("module {}\n"))
    assert main(["--pass-pipeline=" + "builtin.module(" * depth + "cse" + ")" * depth]) == 1
    err = capsys.readouterr().err
    assert f"<pass-pipeline>:1:{15 * MAX_NESTING + 15}: error: pipeline nested deeper than {MAX_NESTING} levels" in err
    assert "internal error" not in err


def test_call_chains_longer_than_the_recursion_limit_are_ordered(monkeypatch):
    from meshir.dialect.call_graph import callees_first
    from meshir.dialect.signature import function_name

    t = "!mtf.tensor<d=4, f32>"
    n = 400
    text = "\n".join(
        f"func.func @f{i}(%a: {t}) -> {t} {{\n  %0 = call @f{i + 1}(%a) : ({t}) -> {t}\n  return %0 : {t}\n}}"
        for i in range(n - 1)) + f"\nfunc.func @f{n - 1}(%a: {t}) -> {t} {{\n  return %a : {t}\n}}"
    module, diags = parse_module(text, "chain.mlir")
    assert not diags
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(__import__("inspect").stack()) + 100)  # fewer frames than calls
    try:
        order = [function_name(fn) for fn in callees_first(module)]
    finally:
        sys.setrecursionlimit(old)
    assert order == [f"f{i}" for i in reversed(range(n))]
