"""Hand-written collectives are honoured under any layout rules, in both modes.

In global semantics a collective is the identity: it only says how the data is laid out
before and after. A program that writes one is valid whatever rules it is compiled under;
the collective changes only the dims it names (for a collective_permute, the dims written
with a different layout on each side), and propagation reshards its operand into the layout
it needs and its result into the layout the rules want. Before, a rule on a dim the permute
does not move, but over an axis it uses, was refused ("keeps each device's shard shape").

Each program applies one collective to x[b, d] and a relu; every rule set of b and d over
{none, x, y, (x,y), (y,x)} that is legal (no axis on two dims) is compiled on 2x2, 4x2 and
2x4 in explicit and gspmd mode, and the result must equal relu(x) exactly and the
interpreter. CI runs a fixed sample (every 5th combination); `-m slow` runs all of them.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import meshir as mi

B, D = mi.Dim("b", 8), mi.Dim("d", 8)
MESHES = {"x2y2": {"x": 2, "y": 2}, "x4y2": {"x": 4, "y": 2}, "x2y4": {"x": 2, "y": 4}}
AXES = [None, "x", "y", ("x", "y"), ("y", "x")]


def _collectives(mesh: dict) -> dict:
    """name -> (argument layout, collective). Permutes between axes of one size only."""
    out = {
        "permute_b_xy_to_yx": ({"b": ("x", "y")}, lambda x: mi.collective_permute(x, {"b": ("y", "x")})),
        "all_to_all_b_to_d_over_x": ({"b": "x"}, lambda x: mi.all_to_all(x, "b", "d", "x")),
        "all_gather_b_over_x": ({"b": "x"}, lambda x: mi.all_gather(x, "b", "x")),
        "all_slice_d_over_y": (None, lambda x: mi.all_slice(x, "d", "y")),
        "all_slice_b_pinned_replicated": ({"b": ()}, lambda x: mi.all_slice(x, "b", "x")),
    }
    if mesh["x"] == mesh["y"]:
        out["permute_b_x_to_y"] = ({"b": "x"}, lambda x: mi.collective_permute(x, {"b": "y"}))
        out["permute_swap_b_and_d"] = ({"b": "y", "d": "x"}, lambda x: mi.collective_permute(x, {"b": "x", "d": "y"}))
    else:
        out["permute_b_xy_to_yx_d_free"] = ({"b": ("x", "y"), "d": None},
                                           lambda x: mi.collective_permute(x, {"b": ("y", "x")}))
    return out


def _rule_sets():
    for b_axes, d_axes in itertools.product(AXES, AXES):
        used_b = {b_axes} if isinstance(b_axes, str) else set(b_axes or ())
        used_d = {d_axes} if isinstance(d_axes, str) else set(d_axes or ())
        if not used_b & used_d:
            yield {k: v for k, v in (("b", b_axes), ("d", d_axes)) if v is not None}


def _params():
    index = 0
    for mesh_id, mesh in MESHES.items():
        for name in _collectives(mesh):
            for rules in _rule_sets():
                rules_id = ",".join(f"{k}:{v if isinstance(v, str) else '(' + '.'.join(v) + ')'}"
                                    for k, v in rules.items()) or "none"
                marks = [] if index % 5 == 0 else [pytest.mark.slow]
                index += 1
                yield pytest.param(mesh_id, name, rules, id=f"{mesh_id}-{name}-{rules_id}", marks=marks)


def _program(mesh_id: str, name: str) -> mi.Program:
    arg_layout, collective = _collectives(MESHES[mesh_id])[name]
    if arg_layout is not None:
        arg_layout = {k: v for k, v in arg_layout.items() if v is not None}
    with mi.Program(name, mi.Mesh(MESHES[mesh_id])) as prog:
        x = prog.argument("x", [B, D], layout=arg_layout)
        prog.result(mi.relu(collective(x)), name="y")
    return prog


@pytest.mark.parametrize("mesh_id, name, rules", list(_params()))
def test_handwritten_collective_under_rules_is_identity(mesh_id, name, rules):
    prog = _program(mesh_id, name)
    x = np.linspace(-3, 3, 64, dtype=np.float32).reshape(8, 8)
    x[2, 3] = np.nan
    want = np.maximum(x, 0)  # NumPy's maximum keeps the NaN, like relu
    np.testing.assert_array_equal(mi.interpret(prog, x=x), want)
    for mode in ("explicit", "gspmd"):
        got = mi.compile(prog, layout=rules, mode=mode)(x=x)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{mode} under {rules}")


def test_sample_covers_every_collective_and_mesh():
    """The CI sample keeps at least one rule set of each (mesh, collective)."""
    sampled = {(p.values[0], p.values[1]) for p in _params() if not p.marks}
    every = {(m, n) for m in MESHES for n in _collectives(MESHES[m])}
    assert sampled == every, every - sampled
