"""Mesh-TensorFlow layout rules (dim name -> mesh axes) from their three spellings: the
function attribute `mtf.layout_rules`, the pass option `rules="batch:x,d_ff:(x,y)"`, and the
Python `layout={"batch": "x", "d_ff": ("x", "y")}`."""
from __future__ import annotations

import re

from meshir._jax_private import ir
from meshir.dialect.diagnostics import MeshIRError

Rules = dict[str, tuple[str, ...]]
_AXIS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RULE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(\(\s*\)|\([^)]*\)|[A-Za-z_][A-Za-z0-9_]*)\s*(,|\Z)")


def parse_rules_text(text: str) -> Rules:
    """`"batch:x,d_ff:(x,y),d_model:()"` -> {"batch": ("x",), "d_ff": ("x", "y"), "d_model": ()}."""
    rules: Rules = {}
    pos = 0
    text = text.strip()
    while pos < len(text):
        match = _RULE.match(text, pos)
        if not match:
            raise MeshIRError(
                f"malformed layout rules at column {pos + 1} of '{text}': expected 'dim:axis' or 'dim:(axis,...)'"
            )
        name, axes = match.group(1), match.group(2)
        parts = [a.strip() for a in axes.strip("()").split(",")] if axes.strip("() ") else []
        if any(not _AXIS.match(a) for a in parts):
            raise MeshIRError(f"malformed layout rules at column {pos + 1} of '{text}': "
                              f"axes of '{name}' must be mesh axis names, got '{axes}'")
        if match.group(3) == "," and match.end() == len(text):
            raise MeshIRError(f"malformed layout rules: '{text}' ends with a comma")
        axes_tuple = tuple(parts)
        if name in rules:
            raise MeshIRError(f"layout rules give '{name}' twice in '{text}'")
        rules[name] = axes_tuple
        pos = match.end()
    return rules


def rules_from_attribute(fn) -> Rules:
    """The function's `mtf.layout_rules` (the verifier has checked its shape)."""
    if "mtf.layout_rules" not in fn.attributes:
        return {}
    attr = ir.DictAttr(fn.attributes["mtf.layout_rules"])
    return {
        attr[i].name: tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attr[i].attr)) for i in range(len(attr))
    }


def rules_from_python(layout: dict | None) -> Rules:
    """`{"batch": "x", "d_ff": ("x", "y")}` with Dim keys or names."""
    if layout is None:
        return {}
    if not isinstance(layout, dict):
        raise MeshIRError(f"layout must be a dict {{dim: axis or axes}}, got {type(layout).__name__} {layout!r}")
    rules: Rules = {}
    for dim, axes in layout.items():
        name = getattr(dim, "name", dim)
        axes = (axes,) if isinstance(axes, str) else axes
        if not isinstance(name, str) or not isinstance(axes, (tuple, list)) or not all(isinstance(a, str) for a in axes):
            raise MeshIRError(f"layout rule {dim!r}: {layout[dim]!r} must map a dim name to a mesh axis name "
                              f"or a tuple of them")
        rules[name] = tuple(axes)
    return rules


def format_rules(rules: Rules) -> str:
    """The pass-option spelling of rules (inverse of parse_rules_text)."""
    return ",".join(f"{n}:{a[0] if len(a) == 1 else '(' + ','.join(a) + ')'}" for n, a in rules.items())
