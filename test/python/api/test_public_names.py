"""The public namespace: `meshir.__all__` is exactly what docs/python-api.md documents.

A public name must be documented: written as `mi.NAME`, or, for the op functions, named in the
op tables and lists (sections "Ops", "Loops", "Composites") by a code span that calls it,
`cast(x, dtype)`, or lists names, `neg abs exp`. Every `mi.NAME` the page writes must be in
`__all__`.
"""
import re
import warnings
from pathlib import Path

import meshir as mi
import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "python-api.md"
OP_SECTIONS = ("Ops", "Loops", "Composites")


def written_with_prefix(text: str) -> set[str]:
    """Names the page writes as `mi.NAME`."""
    return set(re.findall(r"\bmi\.([A-Za-z_]\w*)", text))


def named_in_op_sections(text: str) -> set[str]:
    """Names the op sections' code spans name as functions."""
    names = set()
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        if not section.startswith(OP_SECTIONS):
            continue
        for span in re.findall(r"`([^`]+)`", section):
            if re.fullmatch(r"[\w\s()/]+", span):  # a run of names: `neg abs logistic (sigmoid)`
                names.update(re.findall(r"[A-Za-z_]\w*", span))
            elif call := re.fullmatch(r"((?:[A-Za-z_]\w*\s*/\s*)*[A-Za-z_]\w*)\(.*", span, re.S):  # `cast(x, dtype)`
                names.update(re.findall(r"[A-Za-z_]\w*", call.group(1)))
    return names


def test_all_is_exactly_the_documented_names():
    text = DOC.read_text()
    public = set(mi.__all__)
    missing = sorted(public - written_with_prefix(text) - named_in_op_sections(text))
    assert not missing, f"public in meshir.__all__ but not documented in docs/python-api.md: {missing}"
    unknown = sorted(written_with_prefix(text) - public)
    assert not unknown, f"documented in docs/python-api.md as mi.NAME but not in meshir.__all__: {unknown}"


def test_every_public_name_exists_and_no_other_public_attribute():
    for name in mi.__all__:
        assert hasattr(mi, name), name
    modules = {"api", "cli", "dialect", "layers", "lowering", "transforms"}  # subpackages, bound by importing them
    extra = sorted(n for n in vars(mi) if not n.startswith("_") and n not in mi.__all__ and n not in modules)
    assert not extra, f"public attributes of meshir outside __all__: {extra}"


def test_every_op_builder_is_public():
    from meshir.api.ops import collectives, composites, contraction, creation, elementwise, indexing, loops, shape

    for family in (collectives, composites, contraction, creation, elementwise, indexing, loops, shape):
        assert set(family.__all__) <= set(mi.__all__), (family.__name__, set(family.__all__) - set(mi.__all__))


def test_dimension_is_a_deprecated_alias_of_the_dialects():
    from meshir.dialect import Dimension

    with pytest.warns(DeprecationWarning, match="mi.Dim"):
        assert mi.Dimension is Dimension
    with pytest.raises(AttributeError, match="no attribute 'Dimensions'"):
        mi.Dimensions  # noqa: B018


@pytest.mark.parametrize("old, new, name", [
    ("meshir.api.checks", "meshir.api._checks", "module_of"),
    ("meshir.api.compile_report", "meshir.api.compilation.compile_report", "collectives_of"),
    ("meshir.api.optim", "meshir.api.training.optimizers", "SGD"),
    ("meshir.api.shape_ops", "meshir.api.ops.shape", "split"),
    ("meshir.api.program", "meshir.api.programs.program", "Program"),
])
def test_old_module_paths_import_with_a_deprecation_warning(old, new, name):
    import importlib
    import sys

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{re.escape(old)} moved to {re.escape(new)}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__.name == new  # the module keeps its own identity
    assert hasattr(module, name)


def test_names_meshir_api_used_to_export_still_resolve():
    import meshir.api

    with pytest.warns(DeprecationWarning, match="meshir.api.Program moved to meshir.Program"):
        assert meshir.api.Program is mi.Program
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError):
            meshir.api.not_a_name  # noqa: B018
