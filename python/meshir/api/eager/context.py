"""`default_layout`: the mesh and layout rules that eager ops, `mi.array` and `mi.jit` use
when none are given, as Mesh-TensorFlow's layout rules were global. Contexts nest; the
innermost wins, and a context without a mesh keeps the enclosing one's."""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

from meshir.dialect import LayoutRules, Mesh
from meshir.dialect.call_site import reports_at_call_site

from meshir.api import _checks as checks

_state = threading.local()


@dataclass(frozen=True)
class Ambient:
    """What a `default_layout` context says: a mesh (or None) and rules (maybe empty)."""

    mesh: Mesh | None
    rules: LayoutRules


_NONE = Ambient(None, LayoutRules.of({}))


def ambient() -> Ambient:
    """The innermost context's mesh and rules (no mesh and no rules outside any)."""
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else _NONE


@reports_at_call_site
@contextlib.contextmanager
def default_layout(layout=None, mesh=None):
    """`with mi.default_layout("batch:x;d_ff:y", mesh=mi.Mesh("x:4;y:2")):` — layout rules
    (a dict, Mesh-TF text or mi.LayoutRules) and a mesh for eager ops, `mi.array` and traced
    functions inside the block. Nested contexts override: rules of the inner one replace
    the outer's, and an inner one without a mesh keeps the outer's mesh."""
    outer = ambient()
    mesh = checks.mesh(mesh, "default_layout mesh")
    rules = checks.layout_rules(layout, "default_layout rules") if layout is not None else outer.rules
    _state.__dict__.setdefault("stack", []).append(Ambient(mesh if mesh is not None else outer.mesh, rules))
    try:
        yield ambient()
    finally:
        _state.stack.pop()
