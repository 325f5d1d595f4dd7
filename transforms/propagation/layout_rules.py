"""Layout rules for propagation: the typed value lives in the dialect
(`meshir.dialect.layout_rules.LayoutRules`, one parser for every text form); these are the
names propagation and older callers use."""
from __future__ import annotations

from meshir.dialect.layout_rules import LayoutRules

Rules = LayoutRules
parse_rules_text = LayoutRules.parse
rules_from_attribute = LayoutRules.from_attribute


def format_rules(rules) -> str:
    """The pass-option spelling of rules (inverse of parse_rules_text)."""
    return str(LayoutRules.of(rules))
