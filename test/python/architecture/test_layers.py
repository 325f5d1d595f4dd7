"""The layer rules of docs/architecture.md, checked on the source.

Every import of every `.py` file of the package (dialect/, transforms/, lowering/,
python/meshir/: the folders pyproject.toml's `package-dir` maps to `meshir.*`) is read from
its syntax tree: module-level and lazy (inside a function) alike, relative imports resolved,
`from P import n` taken as the module `P.n` when there is one. Each is checked against the
layer table, which is parsed from docs/architecture.md itself, so the document cannot drift
from the code. Imports of modules outside `meshir` are not this test's business (private jax
paths: test_jax_private.py).

A second test builds the graph of what importing each module executes (its module-level
imports, outside `if TYPE_CHECKING:`) and refuses any cycle in it: an import-time cycle is
an order in which a module meets a half-initialised one. A third checks that the pass
registry imports a pass module only when the pass is asked for by name.
"""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path


def _find_root() -> Path:
    for folder in Path(__file__).resolve().parents:
        if (folder / "pyproject.toml").is_file() and (folder / "docs" / "architecture.md").is_file():
            return folder
    raise RuntimeError("no repository root (pyproject.toml and docs/architecture.md) above this test")


ROOT = _find_root()
ARCHITECTURE = ROOT / "docs" / "architecture.md"


# -- the package: files and module names --------------------------------------------------------


@cache
def package_dirs() -> dict[str, Path]:
    """`package-dir` of pyproject.toml: package name → folder, relative to the root."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {name: Path(folder) for name, folder in config["tool"]["setuptools"]["package-dir"].items()}


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its name: its __init__.py)."""
    found: dict[str, Path] = {}
    dirs = package_dirs()
    tops = {folder for folder in dirs.values() if not any(folder != other and folder.is_relative_to(other)
                                                           for other in dirs.values())}
    for top in sorted(tops):
        for path in sorted((ROOT / top).rglob("*.py")):
            found[module_name(path.relative_to(ROOT))] = path.relative_to(ROOT)
    return found


def module_name(path: Path) -> str:
    """The dotted name of a source file (relative to the root), by the deepest package-dir."""
    best = max((name for name, folder in package_dirs().items() if path.parent.is_relative_to(folder)),
               key=lambda name: len(package_dirs()[name].parts))
    parts = list(path.parent.relative_to(package_dirs()[best]).parts)
    if path.stem != "__init__":
        parts.append(path.stem)
    return ".".join([best, *parts])


def is_package(module: str) -> bool:
    return modules()[module].name == "__init__.py"


# -- imports -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One imported module of one import statement."""

    path: Path  # the importing file, relative to the root
    line: int
    importer: str  # its module name
    target: str  # the module imported (for `from P import n`: P.n if a module, else P)
    text: str  # the statement as written
    lazy: bool  # inside a function: runs when called, not when the module is imported
    type_checking: bool  # under `if TYPE_CHECKING:`: never runs

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


class _Visitor(ast.NodeVisitor):
    def __init__(self, path: Path, source: str):
        self.path, self.source = path, source
        self.module = module_name(path)
        self.package = self.module if path.name == "__init__.py" else self.module.rpartition(".")[0]
        self.depth_fn = 0
        self.depth_tc = 0
        self.found: list[Import] = []

    def _function(self, node) -> None:
        self.depth_fn += 1
        self.generic_visit(node)
        self.depth_fn -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node: ast.If) -> None:
        test = ast.unparse(node.test)
        if test in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            self.depth_tc += 1
            for child in node.body:
                self.visit(child)
            self.depth_tc -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def _add(self, node, target: str) -> None:
        text = ast.get_source_segment(self.source, node) or ast.unparse(node)
        self.found.append(Import(self.path, node.lineno, self.module, target, " ".join(text.split()),
                                 self.depth_fn > 0, self.depth_tc > 0))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            parts = self.package.split(".")
            base = ".".join(parts[: len(parts) - (node.level - 1)])
            source = f"{base}.{node.module}" if node.module else base
        else:
            source = node.module
        for alias in node.names:
            submodule = f"{source}.{alias.name}"
            self._add(node, submodule if submodule in modules() else source)


@cache
def imports() -> tuple[Import, ...]:
    found: list[Import] = []
    for path in modules().values():
        source = (ROOT / path).read_text()
        visitor = _Visitor(path, source)
        visitor.visit(ast.parse(source, str(path)))
        found.extend(visitor.found)
    return tuple(found)


def within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


# -- the layer table of docs/architecture.md -------------------------------------------------------


@dataclass(frozen=True)
class Allowed:
    """`module` (and its submodules) may be imported; only from `only_from` files if given."""

    module: str
    only_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class Layer:
    name: str
    folder: str  # a folder ending in '/' or one file
    everything: bool
    allowed: tuple[Allowed, ...]
    text: str  # the "may import" cell, for messages

    def owns(self, path: Path) -> bool:
        return path.as_posix().startswith(self.folder) if self.folder.endswith("/") else path.as_posix() == self.folder

    def permits(self, imp: Import) -> bool:
        if self.everything:
            return True
        for rule in self.allowed:
            if within(imp.target, rule.module) and (not rule.only_from or imp.path.as_posix() in rule.only_from):
                return True
        return False


_ALLOWED = re.compile(r"`(meshir[\w.]*)`(?:\s+only\s+from\s+((?:`[^`]+`(?:,\s*|\s+and\s+|\s+or\s+)?)+))?")
_TICKED = re.compile(r"`([^`]+)`")


@cache
def layers() -> tuple[Layer, ...]:
    """The rows of the table whose header is `| layer | folder | owns | may import |`."""
    lines = ARCHITECTURE.read_text().splitlines()
    header = next((i for i, line in enumerate(lines) if _cells(line)[:2] == ["layer", "folder"]), None)
    assert header is not None, f"{ARCHITECTURE}: no table with columns | layer | folder | ... | may import |"
    columns = _cells(lines[header])
    assert "may import" in columns, f"{ARCHITECTURE}:{header + 1}: the layer table has no 'may import' column"
    rows = []
    for number, line in enumerate(lines[header + 2:], start=header + 3):
        if not line.startswith("|"):
            break
        cells = dict(zip(columns, _cells(line)))
        folder = _TICKED.fullmatch(cells["folder"])
        assert folder, f"{ARCHITECTURE}:{number}: the folder cell must be one `folder/` or `file.py`"
        may = cells["may import"]
        everything = may.strip().lower() == "everything"
        nothing = may.strip().lower() == "nothing"
        allowed = []
        for match in _ALLOWED.finditer(may):
            only = tuple(_TICKED.findall(match.group(2) or ""))
            allowed.append(Allowed(match.group(1), only))
        assert everything or nothing or allowed, (
            f"{ARCHITECTURE}:{number}: the 'may import' cell must be 'everything', 'nothing' or name modules "
            f"(`meshir.x`, optionally followed by 'only from `file.py`')")
        rows.append(Layer(cells["layer"], folder.group(1), everything, tuple(allowed), may))
    return tuple(rows)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []


def layer_of(path: Path) -> Layer | None:
    """The row for a file: the one whose folder holds it most narrowly."""
    owning = [layer for layer in layers() if layer.owns(path)]
    return max(owning, key=lambda layer: len(layer.folder), default=None)


# -- the tests --------------------------------------------------------------------------------------


def test_the_layer_table_parses_and_covers_every_file():
    assert modules(), "no source files found"
    for layer in layers():
        for rule in layer.allowed:
            assert any(within(m, rule.module) for m in modules()), (
                f"{ARCHITECTURE}: layer '{layer.name}' names `{rule.module}`, which is no module")
            for path in rule.only_from:
                assert (ROOT / path).is_file(), f"{ARCHITECTURE}: layer '{layer.name}' names `{path}`, which is no file"
    unowned = [str(path) for path in modules().values() if layer_of(path) is None]
    assert not unowned, f"files in no layer of {ARCHITECTURE.name}'s table: {unowned}"


def test_every_import_keeps_to_its_layer():
    broken = []
    for imp in imports():
        if not within(imp.target, "meshir"):
            continue
        layer = layer_of(imp.path)
        if not layer.permits(imp):
            kind = "lazy import" if imp.lazy else "import"
            broken.append(f"{imp.where}: {kind} `{imp.text}` ({imp.target}) breaks the rule of layer "
                          f"'{layer.name}' ({layer.folder} may import {layer.text})")
    assert not broken, f"imports across the layers of {ARCHITECTURE.relative_to(ROOT)}:\n" + "\n".join(broken)


def import_time_graph(every_import: bool = False) -> dict[str, dict[str, Import]]:
    """module → {module it makes Python execute at import time: the import that does}; with
    `every_import`, lazy and TYPE_CHECKING imports count too (test_import_cycles.py).

    Importing `a.b.c` executes the packages `a` and `a.b` first; those that already hold the
    importer are under way when it runs, so they add no edge (the root `meshir` among them)."""
    graph: dict[str, dict[str, Import]] = {m: {} for m in modules()}
    for imp in imports():
        if (not every_import and (imp.lazy or imp.type_checking)) or not within(imp.target, "meshir"):
            continue
        parts = imp.target.split(".")
        for n in range(1, len(parts) + 1):
            executed = ".".join(parts[:n])
            if executed in modules() and not within(imp.importer, executed) and executed != imp.importer:
                graph[imp.importer].setdefault(executed, imp)
    return graph


def import_cycles(graph: dict[str, dict[str, Import]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for v in sorted(graph):
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(limit)
    return components


def _one_cycle(graph, component: list[str]) -> list[Import]:
    """A shortest cycle through the component's first module, as the imports that make it."""
    members, start = set(component), component[0]
    paths = {start: []}
    frontier = [start]
    while frontier:
        step = []
        for v in frontier:
            for w, imp in sorted(graph[v].items()):
                if w == start:
                    return paths[v] + [imp]
                if w in members and w not in paths:
                    paths[w] = paths[v] + [imp]
                    step.append(w)
        frontier = step
    raise AssertionError("not a cycle")


def test_no_import_time_cycle():
    graph = import_time_graph()
    messages = []
    for component in import_cycles(graph):
        chain = "\n".join(f"    {imp.where}: `{imp.text}`" for imp in _one_cycle(graph, component))
        messages.append(f"import-time cycle among {', '.join(component)}; one cycle:\n{chain}")
    assert not messages, "\n".join(messages)


def test_importing_the_transforms_package_imports_no_pass():
    """`meshir.transforms` (the registry, pass manager, pipeline syntax) executes no pass
    module when imported: a pass is imported when it is asked for by name."""
    from meshir.transforms.infra.registry import PASS_MODULES

    graph = import_time_graph()
    reached, todo = set(), ["meshir.transforms"]
    while todo:
        module = todo.pop()
        if module not in reached:
            reached.add(module)
            todo.extend(graph[module])
    assert not reached & set(PASS_MODULES.values()), sorted(reached & set(PASS_MODULES.values()))


def test_passes_are_imported_on_lookup():
    script = """
import json, sys
from meshir.transforms import PASSES
from meshir.transforms.infra.registry import PASS_MODULES
before = set(sys.modules)
names = sorted(PASSES)
assert "mtf-verify" in PASSES and "mtf-no-such-pass" not in PASSES and PASSES.get("mtf-no-such-pass") is None
assert set(sys.modules) == before, "listing the passes imported a module"
unloaded = sorted(name for name, module in PASS_MODULES.items() if module not in sys.modules)
for name in unloaded:
    assert PASSES[name].__module__ == PASS_MODULES[name] and PASS_MODULES[name] in sys.modules, name
classes = {name: cls.__module__ for name, cls in PASSES.items()}
print(json.dumps([names == sorted(PASS_MODULES), classes == PASS_MODULES]))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [True, True]


def test_every_registered_pass_is_in_the_table():
    """A `@register_pass` class in transforms/ is listed in registry.PASS_MODULES under its NAME
    and its module (else `meshir-opt --help` and pipelines would not find it)."""
    from meshir.transforms.infra.registry import PASS_MODULES

    declared = {}
    for module, path in modules().items():
        if not within(module, "meshir.transforms"):
            continue
        for node in ast.walk(ast.parse((ROOT / path).read_text())):
            if isinstance(node, ast.ClassDef) and any(ast.unparse(d) == "register_pass" for d in node.decorator_list):
                name = next(ast.literal_eval(s.value) for s in node.body
                            if isinstance(s, ast.Assign) and [ast.unparse(t) for t in s.targets] == ["NAME"])
                declared[name] = module
    assert declared == PASS_MODULES
