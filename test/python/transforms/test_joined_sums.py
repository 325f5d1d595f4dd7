"""Sums pending over different axes join (`mtf.as_partial`, docs/partitioning.md "Joining
pending sums"): one all-reduce completes them, and the compiled program's numbers equal
NumPy's in float64 and the interpreter's, NaN and inf included, on several meshes and
layouts, in explicit and gspmd mode."""
import numpy as np
import pytest

import meshir as mi

U, V, W = mi.Dim("u", 8), mi.Dim("v", 6), mi.Dim("w", 4)

# (mesh, layout rules, all-reduces MeshIR emits, as_partials it emits)
CASES = [
    # u's sum pending over x joins v's over y (2), then c (1) and w's complete sum (1)
    (mi.Mesh({"x": 4, "y": 2}), {"u": "x", "v": "y"}, 1, 4),
    # over (x,y) and z (2), c (1), w's over y (1)
    (mi.Mesh({"x": 2, "y": 2, "z": 2}), {"u": ("x", "y"), "v": "z", "w": "y"}, 1, 4),
    (mi.Mesh({"x": 8}), {"u": "x"}, 1, 3),  # v's and w's sums are complete, each joins x's
    (mi.Mesh({"x": 3}), {"v": "x"}, 1, 3),  # an axis of size 3
    (mi.Mesh({"x": 4, "y": 2}), {}, 0, 0),  # nothing split: nothing pending
]


def norm_program(mesh, rules):
    """sqrt(sum(u^2) + sum(v^2) + sum(w^2) - c): three sums pending over whichever axes split
    u, v, w, and a replicated scalar."""
    with mi.Program("norm", mesh, layout=rules) as prog:
        u, v, w = prog.argument("u", [U]), prog.argument("v", [V]), prog.argument("w", [W])
        c = prog.argument("c", [])
        total = mi.reduce_sum(u * u) + mi.reduce_sum(v * v)
        total = (total - c) + mi.reduce_sum(w * w)
        prog.result(mi.sqrt(total), name="norm")
    return prog


def inputs(seed, special=None):
    r = np.random.default_rng(seed)
    args = [r.normal(size=n).astype(np.float32) for n in (8, 6, 4)] + [np.float32(r.uniform(0, 1))]
    if special is not None:
        args[1][2] = special
    return args


def oracle(u, v, w, c):
    f = [np.asarray(a, np.float64) for a in (u, v, w, c)]
    with np.errstate(invalid="ignore"):
        return np.sqrt((f[0] ** 2).sum() + (f[1] ** 2).sum() - f[3] + (f[2] ** 2).sum())


@pytest.mark.parametrize("mesh,rules,all_reduces,joins", CASES, ids=[str(c[1]) or "none" for c in CASES])
@pytest.mark.parametrize("mode", ["explicit", "gspmd"])
def test_joined_sums_equal_numpy_and_the_interpreter(mesh, rules, all_reduces, joins, mode):
    prog = norm_program(mesh, rules)
    exe = mi.compile(prog, mode=mode)
    for seed, special in [(0, None), (1, np.inf), (2, np.nan), (3, -np.inf)]:
        args = inputs(seed, special)
        got = exe(*args)
        want = oracle(*args)
        np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6)
        np.testing.assert_array_equal(np.isnan(np.asarray(got)), np.isnan(np.asarray(mi.interpret(prog, *args))))
    if mode == "explicit":
        kinds = [c.kind for c in exe.compile_report.collectives]
        assert kinds.count("all_reduce") == all_reduces and kinds.count("as_partial") == joins
        assert set(kinds) <= {"all_reduce", "as_partial"}


def test_a_joined_sum_pays_one_all_reduce_where_completing_each_paid_three():
    """The same program with the sums completed one by one (an all-reduce before each add,
    by a non-linear op in between) pays one all-reduce per split sum."""
    mesh, rules = CASES[1][:2]
    with mi.Program("each", mesh, layout=rules) as prog:
        u, v, w = prog.argument("u", [U]), prog.argument("v", [V]), prog.argument("w", [W])
        sums = [mi.abs(mi.reduce_sum(t * t)) for t in (u, v, w)]  # abs: not linear, so completed first
        prog.result(mi.sqrt(sums[0] + sums[1] + sums[2]))
    kinds = [c.kind for c in mi.compile(prog).compile_report.collectives]
    assert kinds.count("all_reduce") == 3 and "as_partial" not in kinds
