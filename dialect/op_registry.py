"""One registry of op behaviour: for each `mtf` op class, one rule per layer (slot).

An op's *facts* are traits on its class (dialect/ops/); its *behaviour* in each layer is a
rule registered here, by class, from the layer's family file:

    @rule("interpret", EinsumOp)
    def einsum(op, operands): ...

Keyed by class, not by name, so a misspelt op is an ImportError-time NameError, and the
registry refuses at import what used to pass silently: a second rule for one slot of one
class (`OpRegistryError`, naming both), a rule for a class that is not a registered op, an
unknown slot. A *special form* is a declared variant with a condition (`when=`), tried
before the class's plain rule, which stays its fallback — never an override decided by the
order of imports.

Slots (what a rule receives and returns is documented beside each layer's driver):
- "interpret": the reference interpreter (dialect/interpreter/);
- "lower": mtf-lower-to-stablehlo on per-device shards, or on a function without a mesh;
- "lower_global": gspmd mode on a mesh (lowering/stablehlo/gspmd.py); unregistered, the
  "lower" rule serves (both modes share one implementation per op unless stated);
- "vjp": reverse-mode autodiff (transforms/autodiff/), or "no gradient";
- "build": the public `mi` function that builds the op (meshir.api), or `INTERNAL` for ops
  only passes create.

A block's terminator (`mtf.yield`) is the drivers' business and has no rules
(`TERMINATOR`). The completeness test (test/python/dialect/test_op_registry.py) walks OP_CLASSES x
slots and fails on a gap.

Rules are found, not imported for their effect: `RULE_MODULES` names each slot's family files,
and the first question about a slot (a lookup, `rule_of`, `gaps`...) imports them, as MLIR
loads a dialect and xDSL a pass when first asked by name. A layer below the one that holds a
rule (the dialect's interpreter driver asking for nothing above it; the verifier asking for
no rule at all) thus imports no file above it, and no driver imports its family files.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from .diagnostics import MeshIRError
from .ops.base import OP_CLASSES, MtfOp

SLOTS = ("interpret", "lower", "lower_global", "vjp", "build")
#: Slots every op class (except terminators) must fill; "lower_global" falls back to "lower".
REQUIRED_SLOTS = ("interpret", "lower", "vjp", "build")
#: The "build" rule of an op that only passes create (collectives, barriers).
INTERNAL = "internal: created by passes, not by an mi function"

#: One file per op family in every layer, named as the op classes' file in dialect/ops/.
FAMILIES = ("attention", "collectives", "contraction", "creation", "cumulative", "dynamic", "elementwise", "indexing", "loops",
            "selection", "shape")
#: Each slot's package, and the files beyond its family files that register its rules.
_PACKAGES = {
    "interpret": ("meshir.dialect.interpreter", ()),
    "lower": ("meshir.lowering.stablehlo", ("random", "scatter_add")),
    "lower_global": ("meshir.lowering.stablehlo", ("gspmd",)),
    "vjp": ("meshir.transforms.autodiff", ("layout", "rules")),
    "build": ("meshir.api.ops", ("composites",)),
}
#: Families whose rules of a slot live in another file: the collectives' VJPs in
#: autodiff/layout.py, the creation ops' zero VJPs in autodiff/rules.py.
_ELSEWHERE = {("vjp", "collectives"): "layout", ("vjp", "creation"): "rules"}
#: The modules whose import registers each slot's rules, loaded on the slot's first use.
RULE_MODULES: dict[str, tuple[str, ...]] = {
    slot: tuple(f"{package}.{name}" for name in (*FAMILIES, *extra) if (slot, name) not in _ELSEWHERE)
    for slot, (package, extra) in _PACKAGES.items()
}


class OpRegistryError(MeshIRError):
    """A registration the registry refuses (a programming error, raised at import)."""


@dataclass(frozen=True)
class Variant:
    """A special form of a slot: `fn` applies to the ops for which `when(op)` holds."""

    when: Callable
    fn: object


_RULES: dict[str, dict[type, object]] = {slot: {} for slot in SLOTS}
_VARIANTS: dict[str, dict[type, tuple[Variant, ...]]] = {slot: {} for slot in SLOTS}
_LOADED: set[str] = set()


def load(slot: str) -> None:
    """Import the files that register `slot`'s rules (once); "lower_global" falls back to
    "lower", so it loads both."""
    if slot in _LOADED:
        return
    _LOADED.add(slot)  # first: a family file that asks its own slot while importing finds it loading
    if slot == "lower_global":
        load("lower")
    for module in RULE_MODULES[slot]:
        importlib.import_module(module)


def home_of(slot: str, op_class: type) -> str:
    """The family file where `op_class`'s `slot` rule belongs: what a missing rule names."""
    package = _PACKAGES[slot][0].removeprefix("meshir.")
    top, _, rest = package.partition(".")
    folder = "python/meshir/api" if top == "api" else top
    family = op_class.__module__.rsplit(".", 1)[-1]
    family = _ELSEWHERE.get((slot, family), family)
    return f"{folder}/{rest.replace('.', '/')}/{family}.py"


def missing_rule(slot: str, op) -> str:
    """Why `op` (an op, or an op class) has no `slot` rule: its class, and the file where
    the rule belongs."""
    cls = op if isinstance(op, type) else _class_of(op)
    if cls is None:
        return f"'{op.operation.name}' is not an mtf op, so it has no {slot!r} rule"
    return (f"'{cls.OPERATION_NAME}' ({cls.__name__}) has no {slot!r} rule: it belongs in {home_of(slot, cls)}, "
            f"registered with @rule({slot!r}, {cls.__name__})")


def _where(fn) -> str:
    module, name = getattr(fn, "__module__", "?"), getattr(fn, "__qualname__", repr(fn))
    return f"{module}.{name}"


def _check(slot: str, op_class) -> None:
    if slot not in SLOTS:
        raise OpRegistryError(f"unknown op registry slot {slot!r} (slots: {', '.join(SLOTS)})")
    ok = isinstance(op_class, type) and issubclass(op_class, MtfOp) and \
        OP_CLASSES.get(getattr(op_class, "OPERATION_NAME", None)) is op_class
    if not ok:
        raise OpRegistryError(f"a {slot!r} rule for {op_class!r}, which is not a registered mtf op class "
                              "(register rules for the concrete classes of OP_CLASSES)")


def register(slot: str, op_class: type, fn, when: Callable | None = None) -> None:
    """Make `fn` the `slot` rule of `op_class` (with `when`: a variant tried first)."""
    _check(slot, op_class)
    if when is not None:
        known = _VARIANTS[slot].get(op_class, ())
        if any(v.when is when for v in known):
            raise OpRegistryError(f"the {slot!r} variant {_where(when)} of '{op_class.OPERATION_NAME}' is registered twice")
        _VARIANTS[slot][op_class] = known + (Variant(when, fn),)
        return
    if op_class in _RULES[slot]:
        raise OpRegistryError(f"'{op_class.OPERATION_NAME}' has two {slot!r} rules: {_where(_RULES[slot][op_class])} "
                              f"and {_where(fn)} (declare a special form with when=, not a second rule)")
    _RULES[slot][op_class] = fn


def rule(slot: str, *op_classes: type, when: Callable | None = None):
    """Decorator: register the function as the `slot` rule of each of `op_classes`."""
    if not op_classes:
        raise OpRegistryError(f"a {slot!r} rule names no op class")

    def decorate(fn):
        for cls in op_classes:
            register(slot, cls, fn, when)
        return fn

    return decorate


def rule_of(slot: str, op_class: type):
    """The plain rule of a slot (no variants), or None."""
    load(slot)
    return _RULES[slot].get(op_class)


def variants_of(slot: str, op_class: type) -> tuple[Variant, ...]:
    load(slot)
    return _VARIANTS[slot].get(op_class, ())


def _class_of(op) -> type | None:
    """The registered class of an op: its own (an op of a block is an instance of it), or the
    one of its name for an ir.Operation; None for another dialect's op."""
    cls = type(op)
    return cls if issubclass(cls, MtfOp) else OP_CLASSES.get(op.operation.name)


def lookup(slot: str, op):
    """The rule that applies to `op` in `slot`: the first variant whose condition holds, else
    the plain rule; None when the op has none (or is not an `mtf` op)."""
    load(slot)
    cls = _class_of(op)
    if cls is None:
        return None
    variants = _VARIANTS[slot].get(cls)
    if variants:
        for variant in variants:
            if variant.when(op):
                return variant.fn
    return _RULES[slot].get(cls)


def gaps(slots=REQUIRED_SLOTS) -> list[tuple[str, str]]:
    """(op name, slot) of every required rule no layer registered; terminators excepted.
    Loads every slot's files first."""
    for slot in slots:
        load(slot)
    return [(name, slot) for name, cls in sorted(OP_CLASSES.items()) if not cls.TERMINATOR
            for slot in slots if cls not in _RULES[slot]]


def classes_with(slot: str) -> list[type]:
    """The op classes with a plain `slot` rule, in OP_CLASSES order."""
    load(slot)
    return [cls for cls in OP_CLASSES.values() if cls in _RULES[slot]]
