"""Loops (mi.scan, mi.fori_loop, mi.while_loop; dialect/ops/loops.py): built from Python
bodies, verified, and run by the reference interpreter against NumPy loops; bad input gets
a located error."""
from __future__ import annotations

import numpy as np
import pytest

import meshir as mi

MESH = mi.Mesh({"x": 4, "y": 2})
B, T, D = mi.Dim("b", 8), mi.Dim("t", 3), mi.Dim("d", 4)
RNG = np.random.default_rng(0)


def _data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_scan_carries_slices_stacks_and_captures():
    with mi.Program("p", MESH) as prog:
        c = prog.argument("c", [B])
        xs = prog.argument("xs", [B, T, D])  # the scanned dim need not lead
        w = prog.argument("w", [D])

        def body(h, x):
            n = h + mi.reduce_sum(x * w, over="d")  # w: an outer value, captured as an invariant
            return n, mi.tanh(x) * n

        h, ys = mi.scan(body, c, xs, dim="t")
        prog.result(h, name="h")
        prog.result(ys, name="ys")
    assert ys.names == ("t", "b", "d")
    c_, xs_, w_ = _data(8), _data(8, 3, 4), _data(4)
    c_[0] = np.nan
    h_, want = c_.copy(), []
    for i in range(3):
        h_ = h_ + (xs_[:, i] * w_).sum(-1)
        want.append(np.tanh(xs_[:, i]) * h_[:, None])
    got_h, got_ys = mi.interpret(prog, c=c_, xs=xs_, w=w_)
    np.testing.assert_allclose(got_h, h_, rtol=1e-5, equal_nan=True)
    np.testing.assert_allclose(got_ys, np.stack(want), rtol=1e-5, equal_nan=True)


def test_fori_loop_with_index_and_tuple_carry():
    with mi.Program("p", MESH) as prog:
        a = prog.argument("a", [B])
        s = prog.argument("s", [])

        def body(i, carry):
            x, total = carry
            return x * 0.5 + mi.cast(i, "f32"), total + mi.reduce_sum(x)

        x, total = mi.fori_loop(5, body, (a, s))
        prog.result(x, name="x")
        prog.result(total, name="total")
    a_, s_ = _data(8), np.float32(1.0)
    x_, t_ = a_.copy(), s_
    for i in range(5):
        x_, t_ = x_ * 0.5 + i, t_ + x_.sum()
    got_x, got_t = mi.interpret(prog, a=a_, s=s_)
    np.testing.assert_allclose(got_x, x_, rtol=1e-5)
    np.testing.assert_allclose(got_t, t_, rtol=1e-5)


def test_while_loop_nested_with_a_scan_and_invariants_in_both_regions():
    with mi.Program("p", MESH) as prog:
        c = prog.argument("c", [B])
        limit = prog.argument("limit", [])
        step = prog.argument("step", [B])

        def body(v):
            return mi.fori_loop(2, lambda i, u: u + step, v) * 1.5

        out = mi.while_loop(lambda v: mi.less(mi.reduce_sum(v), limit), body, c)
        prog.result(out, name="out")
    c_, step_ = np.abs(_data(8)), np.abs(_data(8)) + 0.1
    v = c_.copy()
    while v.sum() < 500:
        v = (v + 2 * step_) * 1.5
    np.testing.assert_allclose(mi.interpret(prog, c=c_, limit=np.float32(500), step=step_), v, rtol=1e-5)


def test_a_while_loop_that_never_runs_returns_its_carry():
    with mi.Program("p", MESH) as prog:
        c = prog.argument("c", [B])
        prog.result(mi.while_loop(lambda v: mi.less(mi.reduce_sum(v), -1e9), lambda v: v * 2.0, c), name="out")
    c_ = _data(8)
    np.testing.assert_array_equal(mi.interpret(prog, c=c_), c_)


# -- bad input: each a located MeshIRError ------------------------------------------------
def _expect(match: str, build):
    with pytest.raises(mi.MeshIRError, match=match) as info:
        with mi.Program("p", MESH) as prog:
            build(prog)
    assert "test_loops.py:" in str(info.value)


def test_a_carry_that_changes_dims_is_refused():
    _expect(r"changes carried value #0 from !mtf.tensor<b=8, f32> to !mtf.tensor<b=8, d=4, f32>",
            lambda p: mi.fori_loop(2, lambda i, x: x * p.argument("w", [D]), p.argument("a", [B])))


def test_a_carry_that_changes_element_type_is_refused():
    _expect(r"changes carried value #0 from !mtf.tensor<b=8, f32> to !mtf.tensor<b=8, i32>",
            lambda p: mi.fori_loop(2, lambda i, x: mi.cast(x, "i32"), p.argument("a", [B])))


def test_a_condition_that_is_not_a_scalar_i1_is_refused():
    _expect(r"cond of mi.while_loop must return a scalar i1 Tensor",
            lambda p: mi.while_loop(lambda v: v, lambda v: v, p.argument("a", [B])))


def test_scan_over_a_dim_an_input_lacks_is_refused():
    _expect(r"mi.scan over 't': xs #1 !mtf.tensor<b=8, f32> has no dim 't'",
            lambda p: mi.scan(lambda c, x: (c, None), p.argument("c", [B]),
                              (p.argument("xs", [T, B]), p.argument("ys", [B])), dim="t"))


def test_scan_over_xs_of_different_lengths_is_refused():
    _expect(r"the xs have sizes 3, 5",
            lambda p: mi.scan(lambda c, x: (c, None), p.argument("c", [B]),
                              (p.argument("xs", [T, B]), p.argument("zs", [mi.Dim("t", 5)])), dim="t"))


def test_a_body_returning_the_wrong_structure_is_refused():
    _expect(r"the body of mi.scan must return \(carry, y\)",
            lambda p: mi.scan(lambda c, x: c, p.argument("c", [B]), p.argument("xs", [T, B]), dim="t"))
    _expect(r"returns 1 carried values for 2",
            lambda p: mi.fori_loop(2, lambda i, c: (c[0],), (p.argument("a", [B]), p.argument("b", [B]))))


def test_a_trip_count_that_is_not_a_positive_int_is_refused():
    _expect(r"positive int trip count, got 0", lambda p: mi.fori_loop(0, lambda i, c: c, p.argument("a", [B])))
    _expect(r"needs length=n", lambda p: mi.scan(lambda c, x: (c, None), p.argument("a", [B])))


def test_a_failing_body_leaves_the_program_usable():
    with mi.Program("p", MESH) as prog:
        a = prog.argument("a", [B])
        with pytest.raises(ZeroDivisionError):
            mi.fori_loop(2, lambda i, c: c * (1 / 0), a)
        prog.result(mi.fori_loop(2, lambda i, c: c + 1.0, a), name="out")
    np.testing.assert_allclose(mi.interpret(prog, a=np.zeros(8, np.float32)), np.full(8, 2.0))


def test_text_form_round_trips_and_the_verifier_checks_regions():
    with mi.Program("p", MESH) as prog:
        a = prog.argument("a", [B])
        prog.result(mi.fori_loop(3, lambda i, c: c + 1.0, a), name="out")
    text = str(prog.module)
    module, diagnostics = mi.parse_module(text)
    assert str(module) == text and not diagnostics
    bad, _ = mi.parse_module(text.replace('"mtf.yield"(%2) : (!mtf.tensor<b=8, f32>) -> ()', '"mtf.yield"() : () -> ()'))
    with pytest.raises(mi.MeshIRError, match="body yields 0 values; expected 1 carried and 0 stacked"):
        mi.check_module(bad)


# -- compiled, on several meshes and layouts, against the interpreter -------------------------
def _scan_program(mesh):
    t = mi.Dim("t", 4)
    with mi.Program("scan", mesh) as prog:
        c = prog.argument("c", [B, D])
        xs = prog.argument("xs", [t, B, D])
        w = prog.argument("w", [D])

        def body(h, x):
            n = h + x * w
            return n, mi.exp(n) * mi.reduce_sum(n, over="d")  # a sum over a split d: pending in the body

        h, ys = mi.scan(body, c, xs, dim="t")
        prog.result(mi.fori_loop(3, lambda i, v: v * 0.5 + mi.cast(i, "f32"), h), name="k")
        prog.result(ys, name="ys")
    data = dict(c=_data(8, 4), xs=_data(4, 8, 4), w=_data(4))
    data["xs"][1, 2, 3] = np.nan
    return prog, data


def _while_program(mesh):
    with mi.Program("loop", mesh) as prog:
        c = prog.argument("c", [B])
        limit = prog.argument("limit", [])
        step = prog.argument("step", [B])
        cond = lambda v: mi.less(mi.reduce_sum(v), limit)  # noqa: E731  (a sum over a split b in cond)
        out = mi.while_loop(cond, lambda v: mi.fori_loop(2, lambda i, u: u + step, v) * 1.5, c)
        prog.result(out, name="out")
        prog.result(mi.fori_loop(3, lambda i, v: v + 1.0, c) - mi.fori_loop(3, lambda i, v: v * 2.0, c), name="d")
    return prog, dict(c=np.abs(_data(8)), limit=np.float32(500), step=np.abs(_data(8)) + 0.1)


CASES = [  # (program, mesh, layout rules)
    (_scan_program, {"x": 4, "y": 2}, {}),
    (_scan_program, {"x": 4, "y": 2}, {"b": "x", "d": "y"}),
    (_scan_program, {"x": 4, "y": 2}, {"t": "x", "d": "y"}),  # the scanned dim is gathered, ys re-split
    (_scan_program, {"x": 2, "y": 2, "z": 2}, {"b": ("x", "z"), "d": "y"}),
    (_while_program, {"x": 4, "y": 2}, {"b": "x"}),
    (_while_program, {"x": 8}, {"b": "x"}),
    (_while_program, {"x": 2, "y": 2, "z": 2}, {"b": ("y", "x")}),
]
CI_CASES = [0, 2, 3, 4]


def _compare(case, mode):
    build, mesh, layout = case
    prog, data = build(mi.Mesh(mesh))
    want = mi.interpret(prog, **data)
    got = mi.compile(prog, layout=layout, mode=mode)(**data)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("mode", ["explicit", "gspmd"])
@pytest.mark.parametrize("index", CI_CASES)
def test_compiled_loops_equal_the_interpreter(index, mode):
    _compare(CASES[index], mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["explicit", "gspmd"])
@pytest.mark.parametrize("index", [i for i in range(len(CASES)) if i not in CI_CASES])
def test_compiled_loops_equal_the_interpreter_full(index, mode):
    _compare(CASES[index], mode)


def test_one_layout_per_carried_value_and_the_scanned_dim_whole():
    prog, _ = _scan_program(mi.Mesh({"x": 4, "y": 2}))
    text = str(mi.propagate(prog, layout={"t": "x", "d": "y"}))
    # the scan reads xs whole along t: a reshard before it; its stacked result is re-split after
    assert '"mtf.shard"(%arg1) {reshard = true} : (!mtf.tensor<t=4@x, b=8@(), d=4@y, f32>) -> ' \
           '!mtf.tensor<t=4@(), b=8@(), d=4@y, f32>' in text
    exe = mi.compile(prog, layout={"b": "x", "d": "y"})
    records = exe.compile_report.collectives
    assert [(c.kind, c.repeats) for c in records] == [("all_reduce", 4)]  # the sum over d@y, each iteration
    assert exe.compile_report.total_bytes_per_device == 4 * records[0].bytes_per_device > 0
    assert f"{records[0].bytes_per_device} x4 (in a loop)" in str(exe.compile_report)


def test_a_call_in_a_loop_body_is_inlined_there():
    with mi.Program("inner", MESH) as inner:
        v = inner.argument("v", [B])
        inner.result(mi.tanh(v) * 2.0, name="o")
    with mi.Program("p", MESH) as prog:
        c = prog.argument("c", [B])
        prog.result(mi.fori_loop(3, lambda i, u: prog.call(inner, u)[0], c), name="out")
    c_ = np.linspace(-1, 1, 8).astype(np.float32)
    np.testing.assert_allclose(np.asarray(mi.compile(prog, layout={"b": "x"})(c=c_)), mi.interpret(prog, c=c_),
                               rtol=1e-6)


def test_an_invariant_resharded_by_its_uses_is_resharded_once_before_the_loop():
    with mi.Program("p", MESH) as prog:
        c = prog.argument("c", [B, D], layout={"b": "y"})
        w = prog.argument("w", [D], layout={"d": "y"})  # written d@y; the mul needs y for b

        def body(h, x):
            return mi.shard(h * w, {"b": "y"}), None

        prog.result(mi.scan(body, c, length=3)[0], name="out")
    exe = mi.compile(prog)
    in_loop = [(c.kind, c.repeats) for c in exe.compile_report.collectives if c.repeats != 1]
    assert in_loop == [], in_loop  # w's gather runs once, outside the scan
    c_, w_ = _data(8, 4), _data(4)
    np.testing.assert_allclose(np.asarray(exe(c=c_, w=w_)), mi.interpret(prog, c=c_, w=w_), rtol=1e-6)
