"""The pass registry and pass manager: typed options, registration rules, mixing MeshIR and
upstream passes, and how a failing pass's diagnostics come out of `Pipeline.run`."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from meshir.dialect import Diagnostic, MeshIRError, parse_module
from meshir.transforms import (
    PASSES,
    ModulePass,
    PassPipelineError,
    PipelineError,
    build_pass_manager,
    option,
    register_pass,
)
from meshir.transforms.infra.registry import PassOptionError
from meshir.transforms.infra.upstream import UPSTREAM_PASSES

MODULE = """func.func @f(%a: !mtf.tensor<b=4, f32>) {
  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=4, f32>) -> !mtf.tensor<b=4, f32>
  return
}
"""


@dataclass
class _Options(ModulePass):
    NAME = "test-options"
    SUMMARY = "A pass with one option of each kind"

    count: int = option(2, "an integer")
    scale: float = option(1.0, "a number")
    strict: bool = option(False, "a flag")
    mode: Literal["explicit", "gspmd"] = option("explicit", "a choice")
    rules: str = option("", "free text")
    axes: tuple[str, ...] = option((), "a comma list")

    def apply(self, module_op) -> None:
        pass


@dataclass
class _Failing(ModulePass):
    NAME = "test-failing"
    SUMMARY = "Fails with a located diagnostic on the first mtf op"
    located: bool = option(True, "attach the op's location")

    def apply(self, module_op) -> None:
        fn = module_op.regions[0].blocks[0].operations[0]
        op = fn.regions[0].blocks[0].operations[0]
        if self.located:
            diags = [Diagnostic(op.location, "not today"), Diagnostic(op.location, "because", "note")]
            raise MeshIRError("not today", diags)
        raise MeshIRError("no location at all")


@pytest.fixture
def test_passes():
    for cls in (_Options, _Failing):
        register_pass(cls)
    yield
    for cls in (_Options, _Failing):
        PASSES.pop(cls.NAME)


def _module():
    module, diags = parse_module(MODULE, "m.mlir")
    assert not diags
    return module


def test_builtin_passes_are_registered():
    assert {"mtf-verify", "mtf-strip-layouts"} <= set(PASSES)
    info = PASSES["mtf-strip-layouts"].info()
    assert [(o.name, o.type_text, o.default) for o in info.options] == [("keep-collectives", "bool", False)]


def test_options_are_typed_and_kebab_case(test_passes):
    p = _Options.from_options(
        {"count": "3", "scale": "0.5", "strict": None, "mode": "gspmd", "rules": "batch:x, d_ff:y", "axes": "x, y"}
    )
    assert (p.count, p.scale, p.strict, p.mode, p.rules, p.axes) == (3, 0.5, True, "gspmd", "batch:x, d_ff:y", ("x", "y"))
    assert [o.type_text for o in _Options.info().options] == [
        "int", "float", "bool", "one of explicit|gspmd", "str", "list of str",
    ]
    assert _Options(count=3, rules="a b").option_text() == '{count=3 rules="a b"}'


@pytest.mark.parametrize(
    "options, message",
    [
        ({"cuont": "1"}, "unknown option 'cuont' for pass 'test-options'; did you mean 'count'?"),
        ({"count": "two"}, "option 'count' of pass 'test-options' expects an integer, got 'two'"),
        ({"strict": "maybe"}, "expects true or false, got 'maybe'"),
        ({"mode": "gspd"}, "must be one of explicit, gspmd, got 'gspd'; did you mean 'gspmd'?"),
        ({"rules": None}, "option 'rules' of pass 'test-options' needs a value"),
    ],
)
def test_option_errors(options, message, test_passes):
    with pytest.raises(PassOptionError, match=message.replace("(", r"\(").replace("?", r"\?")):
        _Options.from_options(options)


def test_registration_rules():
    class NotADataclass(ModulePass):
        NAME, SUMMARY = "x-a", "s"

    @dataclass
    class BadName(ModulePass):
        NAME, SUMMARY = "Bad Name", "s"

    with pytest.raises(TypeError, match="must be a dataclass"):
        register_pass(NotADataclass)
    with pytest.raises(TypeError, match="kebab-case"):
        register_pass(BadName)
    with pytest.raises(TypeError, match="immutable"):
        option([], "a list default")


MIXED = "builtin.module(test-options{count=5}, canonicalize, func.func(cse), sdy-insert-explicit-reshards)"


def run_mixed_pipeline() -> tuple[list[str], list[str]]:
    """(labels of the passes run, severities of the diagnostics) of MIXED on MODULE."""
    for cls in (_Options, _Failing):
        PASSES.setdefault(cls.NAME, cls)
    labels = []
    pipeline = build_pass_manager(MIXED, after_each=lambda label, op: labels.append(label))
    warnings = pipeline.run(_module())
    return labels, [d.severity for d in warnings]


def test_pipeline_mixes_meshir_and_upstream_passes():
    # Shardy warns about an op it does not know once per process (any earlier compile with,
    # say, a chlo op uses it up), so the pipeline runs in a fresh process.
    script = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_pass_registry as t; "
              "print(json.dumps(t.run_mixed_pipeline()))")
    done = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parent)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    labels, severities = json.loads(done.stdout.splitlines()[-1])
    assert labels == ["test-options{count=5}", "canonicalize", "func.func(cse)", "sdy-insert-explicit-reshards"]
    assert severities == ["warning", "note"]  # Shardy does not know mtf.relu


@pytest.mark.parametrize("name", sorted(UPSTREAM_PASSES))
def test_every_listed_upstream_pass_is_registered(name):
    build_pass_manager(name)


def test_failing_pass_diagnostics_come_out_of_run(test_passes):
    pipeline = build_pass_manager("test-failing,cse")
    with pytest.raises(PassPipelineError) as info:
        pipeline.run(_module())
    diags = info.value.diagnostics
    assert [(d.severity, d.message, d.line) for d in diags] == [("error", "not today", 2), ("note", "because", 2)]
    assert "m.mlir:2:8: error: not today" in str(info.value)


def test_failing_pass_without_location_reports_at_the_module(test_passes):
    with pytest.raises(PassPipelineError) as info:
        build_pass_manager("test-failing{located=false}").run(_module())
    (diag,) = info.value.diagnostics
    assert diag.message == "pass 'test-failing' failed: no location at all" and diag.line == 1


@pytest.mark.parametrize(
    "text, column, message",
    [
        ("cse, mtf-verfy", 6, "unknown pass 'mtf-verfy'; did you mean 'mtf-verify'?"),
        ("func.func(canonicalise)", 11, "unknown pass 'canonicalise'; did you mean 'canonicalize'?"),
        ("func.func(mtf-verify)", 11, "MeshIR pass 'mtf-verify' runs on the whole module"),
        ("mtf-verify(cse)", 1, "give its options in braces"),
        ("canonicalize{bogus=1}", 1, "no such option bogus"),
        ("mtf-strip-layouts{keep=1}", 19, "unknown option 'keep' for pass 'mtf-strip-layouts'"),
    ],
)
def test_pipeline_build_errors_are_located(text, column, message):
    with pytest.raises(PipelineError) as info:
        build_pass_manager(text)
    assert info.value.column == column and message in info.value.message


def test_function_passes_nest_implicitly():
    # sdy-insert-explicit-reshards runs on func.func only; like mlir-opt, it is nested for us.
    build_pass_manager("sdy-insert-explicit-reshards").run(_module())
