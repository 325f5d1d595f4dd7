"""One verify step per pipeline (issue 11, item 3) and typed layout rules (item 4).

The pass manager verifies the module once before the first pass and after each pass; passes
do not verify themselves; the partitioned-form verifier runs once, between
mtf-insert-collectives and the lowering (or before the lowering when it runs alone).
`mi.compile`, `mi.propagate` and `mi.train_step` run their passes through that pipeline, and
Python hands layout rules to the propagation pass as a typed `LayoutRules`.
"""
from __future__ import annotations

import cProfile
import pstats

import pytest

import meshir as mi
from meshir.dialect.layout_rules import LayoutRules
from meshir.transforms import Pipeline, build_pass_manager
from meshir.transforms.passes.propagate_sharding import PropagateShardingPass

CHECKS = ("verify_module", "verify_partitioned", "verify_global")


def count_checks(fn) -> dict[str, int]:
    """How many times each verifier ran during `fn()` (cProfile sees every call, however
    the function was imported)."""
    profile = cProfile.Profile()
    profile.enable()
    try:
        fn()
    finally:
        profile.disable()
    counts = dict.fromkeys(CHECKS, 0)
    for (_, _, name), (_, calls, *_rest) in pstats.Stats(profile).stats.items():
        if name in counts:
            counts[name] += calls
    return counts


def ffn() -> mi.Program:
    with mi.Program("ffn", mi.Mesh({"x": 2, "y": 2})) as prog:
        x = prog.argument("x", [mi.Dim("batch", 8), mi.Dim("d", 4)])
        w = prog.argument("w", [mi.Dim("d", 4), mi.Dim("f", 8)])
        prog.result(mi.relu(mi.einsum(x, w, output=["batch", "f"])), name="y")
    return prog


def test_compile_verifies_once_between_passes():
    prog = ffn()
    counts = count_checks(lambda: mi.compile(prog, layout={"batch": "x", "d": "y"}))
    # input, after mtf-inline, after propagation, after collective insertion, after the lowering
    assert counts == {"verify_module": 5, "verify_partitioned": 1, "verify_global": 0}


def test_gspmd_compile_checks_the_global_form_once():
    prog = ffn()
    counts = count_checks(lambda: mi.compile(prog, layout={"batch": "x"}, mode="gspmd"))
    assert counts == {"verify_module": 4, "verify_partitioned": 0, "verify_global": 1}


def test_propagate_verifies_before_and_after():
    prog = ffn()
    assert count_checks(lambda: mi.propagate(prog, layout="batch:x"))["verify_module"] == 2


def test_pipeline_checks_the_partitioned_form_between_insertion_and_lowering():
    module = mi.propagate(ffn(), layout={"batch": "x", "f": "y"})
    labels = []
    pipeline = build_pass_manager("mtf-insert-collectives,mtf-lower-to-stablehlo",
                                  after_each=lambda label, op: labels.append(label))
    counts = count_checks(lambda: pipeline.run(module))
    assert labels == ["mtf-insert-collectives", "mtf-lower-to-stablehlo"]
    assert counts == {"verify_module": 3, "verify_partitioned": 1, "verify_global": 0}


def test_lowering_alone_checks_its_input_form_itself():
    module = mi.propagate(ffn(), layout={"batch": "x"})
    build_pass_manager("mtf-insert-collectives").run(module)
    counts = count_checks(lambda: build_pass_manager("mtf-lower-to-stablehlo").run(module, verify_input=False))
    assert counts == {"verify_module": 1, "verify_partitioned": 1, "verify_global": 0}


def test_a_pass_between_insertion_and_lowering_makes_the_lowering_check_again():
    module = mi.propagate(ffn(), layout={"batch": "x"})
    pipeline = build_pass_manager("mtf-insert-collectives,canonicalize,mtf-lower-to-stablehlo")
    assert count_checks(lambda: pipeline.run(module))["verify_partitioned"] == 2


def test_verify_pass_is_not_verified_again_and_verify_each_false_skips_the_steps():
    module = ffn().module
    assert count_checks(lambda: build_pass_manager("mtf-verify,mtf-verify").run(module))["verify_module"] == 3
    off = build_pass_manager("mtf-propagate-sharding", verify_each=False)
    module = ffn().module
    assert count_checks(lambda: off.run(module, verify_input=False))["verify_module"] == 0


def test_unpartitioned_input_to_the_lowering_is_refused_once_with_the_located_error():
    module = mi.propagate(ffn(), layout={"d": "x"})  # the contraction over d leaves a pending sum
    with pytest.raises(mi.MeshIRError, match="is not partitioned") as info:
        Pipeline([*build_pass_manager("mtf-lower-to-stablehlo").elements]).apply(module)
    assert str(info.value).count("is not partitioned") >= 1
    assert "loc(unknown)" not in str(info.value).splitlines()[0]


def test_a_pass_error_propagates_unchanged_through_apply():
    """The pass checks Python's rules on the mesh, and reports at the user's call, with the
    type and text the API's own check had (strict: without it the API drops the absent axis)."""
    prog = ffn()
    with pytest.raises(mi.MeshIRValueError) as info:
        mi.compile(prog, layout={"batch": "z"}, strict=True)
    message = str(info.value)
    assert message.startswith(f"{__file__}:"), message
    assert message.endswith("error: layout rule for 'batch' names unknown mesh axis 'z' ([\"x\"=2, \"y\"=2])")


# -- typed layout rules ----------------------------------------------------------------------

def test_both_text_forms_parse_to_the_same_rules():
    meshir_form = LayoutRules.parse("batch:x,d_ff:(x,y),d_model:()")
    assert meshir_form == {"batch": ("x",), "d_ff": ("x", "y"), "d_model": ()}
    assert LayoutRules.parse("batch:x;d_ff:y") == LayoutRules.parse(" batch : x ; d_ff : (y) ") == {"batch": ("x",), "d_ff": ("y",)}
    assert LayoutRules.parse("batch:x;d_ff:(x,y)") == {"batch": ("x",), "d_ff": ("x", "y")}
    assert LayoutRules.parse(str(meshir_form)) == meshir_form
    assert LayoutRules.parse("") == LayoutRules() == {}
    assert hash(LayoutRules.parse("a:x;b:y")) == hash(LayoutRules.parse("a:x,b:y"))


def test_rules_from_python_values():
    rules = LayoutRules.of({mi.Dim("batch", 8): "x", "d_ff": ["x", "y"]})
    assert rules == {"batch": ("x",), "d_ff": ("x", "y")} and rules["batch"] == ("x",) and rules.get("q") is None
    assert LayoutRules.of(rules) is rules and LayoutRules.of(None) == {} and LayoutRules.of("b:x;c:y") == {"b": ("x",), "c": ("y",)}
    assert rules.merged(LayoutRules.of({"batch": ()})) == {"batch": (), "d_ff": ("x", "y")}
    assert rules.problems_on(mi.Mesh({"x": 2})) == [
        "layout rule for 'd_ff' names unknown mesh axis 'y' ([\"x\"=2])"]
    with pytest.raises(mi.MeshIRError, match="not an identifier"):
        LayoutRules.of({"1b": "x"})


@pytest.mark.parametrize("text, message", [
    ("b:x;", "malformed layout rules: 'b:x;' ends with a semicolon"),
    ("b:x,", "malformed layout rules: 'b:x,' ends with a comma"),
    ("b:x;;d:y", "malformed layout rules at column 5 of 'b:x;;d:y'"),
    ("b:x;b:y", "layout rules give 'b' twice in 'b:x;b:y'"),
    ("b:x d:y", "malformed layout rules at column 1 of 'b:x d:y'"),
])
def test_malformed_text_in_either_form(text, message):
    with pytest.raises(mi.MeshIRError, match=message):
        LayoutRules.parse(text)


def test_malformed_text_given_to_compile_is_located_at_the_call():
    prog = ffn()
    with pytest.raises(mi.MeshIRValueError) as info:
        mi.compile(prog, layout="batch:x;;d:y")
    message = str(info.value)
    assert message.startswith(f"{__file__}:"), message
    assert "'batch:x;;d:y'" in message and "malformed layout rules at column 9" in message


def test_python_rules_reach_the_pass_without_text(monkeypatch):
    """A dict given to mi.compile goes to the pass as LayoutRules: nothing parses text (the
    rules are formatted once, for `exe.pipeline`'s record, never read back)."""
    def no_text(*args):
        raise AssertionError("layout rules went through text")

    monkeypatch.setattr(LayoutRules, "parse", classmethod(no_text))
    seen = []
    apply = PropagateShardingPass.apply
    monkeypatch.setattr(PropagateShardingPass, "apply", lambda self, op: (seen.append(self.rules), apply(self, op)))
    mi.compile(ffn(), layout={"batch": "x", "f": ("y",)})
    assert len(seen) == 1 and isinstance(seen[0], LayoutRules) and seen[0] == {"batch": ("x",), "f": ("y",)}


def test_the_pass_option_reads_and_writes_rules_text():
    p = PropagateShardingPass.from_options({"rules": "batch:x;d_ff:(x,y)"})
    assert isinstance(p.rules, LayoutRules) and p.rules == {"batch": ("x",), "d_ff": ("x", "y")}
    assert p.option_text() == '{rules="batch:x,d_ff:(x,y)"}'
    assert PropagateShardingPass().option_text() == ""
