"""The op registry: every op class has a rule in every layer, and the registry refuses what
used to pass silently (a second rule, a rule for a non-op, an unknown slot)."""
from __future__ import annotations

import pytest

import meshir as mi
import meshir.dialect.interpreter
import meshir.lowering.stablehlo
import meshir.transforms.autodiff
from meshir.dialect import op_registry
from meshir.dialect.op_registry import INTERNAL, OpRegistryError, lookup, register, rule, rule_of
from meshir.dialect.ops import OP_CLASSES, EinsumOp, OneHotOp, SplitOp
from meshir.dialect.ops.contraction import ReduceOp
from meshir.dialect.ops.elementwise import UNARY_CLASSES


def test_every_op_class_has_a_rule_in_every_slot():
    assert op_registry.gaps() == []


def test_every_public_builder_is_an_mi_function():
    for cls in OP_CLASSES.values():
        fn = rule_of("build", cls)
        if fn is None or fn == INTERNAL:
            continue
        assert getattr(mi, fn.__name__, None) is not None, (cls.OPERATION_NAME, fn.__name__)


def test_split_is_complete():
    """The op issue 30 added through the registry alone."""
    for slot in op_registry.REQUIRED_SLOTS:
        assert rule_of(slot, SplitOp) is not None, slot
    assert rule_of("build", SplitOp).__name__ == "split"


def test_a_second_rule_for_one_slot_is_refused_naming_both():
    with pytest.raises(OpRegistryError, match=r"'mtf.einsum' has two 'lower' rules: .*contraction.*einsum and .*_mine"):
        @rule("lower", EinsumOp)
        def _mine(p, op):
            return None


def test_a_rule_for_a_class_that_is_not_an_op_is_refused():
    for not_an_op in (ReduceOp, int, "mtf.einsum"):
        with pytest.raises(OpRegistryError, match="not a registered mtf op class"):
            register("interpret", not_an_op, lambda op, operands: None)


def test_an_unknown_slot_and_an_empty_rule_are_refused():
    with pytest.raises(OpRegistryError, match="unknown op registry slot 'lowering'"):
        register("lowering", EinsumOp, lambda p, op: None)
    with pytest.raises(OpRegistryError, match="names no op class"):
        rule("vjp")


def test_a_variant_is_declared_with_its_condition_and_falls_back():
    """The scatter-add form of einsum is a variant of the plain rule, not an override."""
    variants = op_registry.variants_of("lower", EinsumOp)
    assert len(variants) == 1 and rule_of("lower", EinsumOp) is not variants[0].fn
    assert len(op_registry.variants_of("lower", OneHotOp)) == 1
    with pytest.raises(OpRegistryError, match="registered twice"):
        register("lower", EinsumOp, variants[0].fn, when=variants[0].when)


def test_lookup_tries_variants_before_the_plain_rule():
    cls = UNARY_CLASSES["neg"]
    plain, special = object(), object()
    saved = op_registry._RULES["interpret"].pop(cls), op_registry._VARIANTS["interpret"].pop(cls, ())
    try:
        register("interpret", cls, plain)
        register("interpret", cls, special, when=lambda op: op.attr("marked") is not None)

        class Op:
            class operation:
                name = cls.OPERATION_NAME

            def __init__(self, marked):
                self.marked = marked

            def attr(self, name):
                return self.marked

        assert lookup("interpret", Op(True)) is special
        assert lookup("interpret", Op(None)) is plain
    finally:
        op_registry._RULES["interpret"][cls] = saved[0]
        op_registry._VARIANTS["interpret"].pop(cls, None)
        if saved[1]:
            op_registry._VARIANTS["interpret"][cls] = saved[1]


# -- rules are found by name, not imported for effect --------------------------------------------

def _registering_modules() -> dict[str, set[str]]:
    """slot -> the modules whose source registers a rule of it (`@rule("slot", ...)`,
    `register("slot", ...)`, `@vjp`/`no_gradient` for "vjp", `@builds` for "build")."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    folders = {"interpret": "dialect/interpreter", "lower": "lowering/stablehlo", "vjp": "transforms/autodiff",
               "build": "python/meshir/api/ops"}
    packages = {"interpret": "meshir.dialect.interpreter", "lower": "meshir.lowering.stablehlo",
                "vjp": "meshir.transforms.autodiff", "build": "meshir.api.ops"}
    found: dict[str, set[str]] = {slot: set() for slot in op_registry.SLOTS}
    for slot, folder in folders.items():
        for path in sorted((root / folder).glob("*.py")):
            if path.stem.startswith("_"):  # the decorators' own definitions (api/ops/_builder.py)
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if not isinstance(node, ast.Call):
                    continue
                name = ast.unparse(node.func).rsplit(".", 1)[-1]
                first = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
                if name in ("rule", "register") and isinstance(first, str):
                    found[first].add(f"{packages[slot]}.{path.stem}")
                elif name in {"vjp": ("vjp", "no_gradient"), "build": ("builds",)}.get(slot, ()):
                    found[slot].add(f"{packages[slot]}.{path.stem}")
    return found


def test_the_rule_table_names_every_module_that_registers_rules():
    """A family file missing from RULE_MODULES would register its rules only if something
    imported it for another reason: a rule that exists and is not found."""
    for slot, modules in _registering_modules().items():
        wanted = set(op_registry.RULE_MODULES[slot]) | (set(op_registry.RULE_MODULES["lower"]) if slot == "lower_global"
                                                        else set())
        assert modules <= wanted, (slot, sorted(modules - wanted))
        assert modules, slot


def test_rule_modules_are_imported_when_a_slot_is_first_asked_for():
    import subprocess
    import sys

    script = """
import sys
import meshir as mi
lowering = [m for m in sys.modules if m.startswith("meshir.lowering.stablehlo.") and m.rsplit(".", 1)[1] in
            ("elementwise", "shape", "random", "scatter_add")]
with mi.Program("f", mi.Mesh({"x": 2})) as prog:
    prog.result(mi.exp(prog.argument("a", [mi.Dim("i", 4)])), name="r")
mi.compile(prog, layout={"i": "x"})
print(lowering, "meshir.lowering.stablehlo.elementwise" in sys.modules, "meshir.lowering.stablehlo.random" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-3:] == ["[]", "True", "True"], done.stdout


def test_a_missing_rule_names_the_class_and_the_file_where_it_belongs():
    from meshir.dialect.ops import AllGatherOp, IotaOp

    assert op_registry.home_of("lower", EinsumOp) == "lowering/stablehlo/contraction.py"
    assert op_registry.home_of("interpret", EinsumOp) == "dialect/interpreter/contraction.py"
    assert op_registry.home_of("build", EinsumOp) == "python/meshir/api/ops/contraction.py"
    assert op_registry.home_of("vjp", AllGatherOp) == "transforms/autodiff/layout.py"
    assert op_registry.home_of("vjp", IotaOp) == "transforms/autodiff/rules.py"
    text = op_registry.missing_rule("lower", EinsumOp)
    assert text == ("'mtf.einsum' (EinsumOp) has no 'lower' rule: it belongs in lowering/stablehlo/contraction.py, "
                    "registered with @rule('lower', EinsumOp)")
