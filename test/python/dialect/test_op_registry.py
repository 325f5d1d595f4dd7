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
