"""No import circles in the source, counting every import the code holds (issue 51).

test_layers.py refuses cycles among what importing a module executes; a cycle that only a
function-level import (or one under `if TYPE_CHECKING:`) keeps from failing at import time is
still a circle in the design: the two modules cannot be read, tested or moved apart. Here the
graph has an edge for every `import` statement in the syntax tree, module-level, lazy and
TYPE_CHECKING alike, plus the package `__init__`s an import executes; it must have no cycle.
A lazy import must say in a comment (on its line or the lines above it) why it is not at the
top: a heavy dependency or a start-up time (docs/architecture.md, "Import time").
"""
from __future__ import annotations

from test_layers import ROOT, Import, _one_cycle, import_cycles, import_time_graph, imports, within


def every_import_graph() -> dict[str, dict[str, Import]]:
    """module -> {module an import statement of it names, or a package that import executes}."""
    return import_time_graph(every_import=True)


def test_no_import_circle_counting_lazy_and_type_checking_imports():
    graph = every_import_graph()
    messages = []
    for component in import_cycles(graph):
        chain = "\n".join(f"    {imp.where}: `{imp.text}`" + (" (lazy)" if imp.lazy else "")
                          + (" (TYPE_CHECKING)" if imp.type_checking else "")
                          for imp in _one_cycle(graph, component))
        messages.append(f"import circle among {', '.join(component)}; one cycle:\n{chain}")
    assert not messages, "\n".join(messages)


def test_the_graph_sees_lazy_and_type_checking_imports():
    """The walk finds imports inside functions and under TYPE_CHECKING (else the test above
    could pass by not looking): the package has lazy imports, and each is in the graph."""
    lazy = [imp for imp in imports() if imp.lazy and within(imp.target, "meshir")]
    assert lazy, "no lazy import found: the AST walk is broken"
    graph = every_import_graph()
    for imp in lazy:
        assert any(within(imp.target, w) for w in graph[imp.importer]), imp.where


def test_a_cycle_through_a_lazy_import_is_found():
    """The cycle finder on a hand-made graph: a -> b at module level, b -> a inside a function."""
    a_to_b = Import(ROOT / "a.py", 1, "a", "b", "import b", False, False)
    b_to_a = Import(ROOT / "b.py", 5, "b", "a", "import a", True, False)
    graph = {"a": {"b": a_to_b}, "b": {"a": b_to_a}, "c": {}}
    assert import_cycles(graph) == [["a", "b"]]
    assert _one_cycle(graph, ["a", "b"]) == [a_to_b, b_to_a]


def test_every_lazy_import_says_why():
    missing = []
    for imp in imports():
        if not imp.lazy or not within(imp.target, "meshir"):
            continue
        lines = (ROOT / imp.path).read_text().splitlines()
        line = lines[imp.line - 1]
        above = []
        k = imp.line - 2
        while k >= 0 and lines[k].strip().startswith("#"):
            above.append(lines[k])
            k -= 1
        if "#" not in line and not above:
            missing.append(f"{imp.where}: `{imp.text}`")
    assert not missing, ("lazy imports without a comment saying why they are not at module level "
                         "(a heavy dependency or start-up time):\n" + "\n".join(missing))
