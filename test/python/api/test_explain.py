"""mi.explain / exe.explain(): why each collective exists, and the cheapest rule change that
removes it. Oracles: the alternatives' bytes are those of compiling with the change
(mi.compile, the whole pipeline), and the cheapest is the minimum over every candidate change
this test enumerates itself."""
import pytest

import meshir as mi
from meshir.dialect.provenance import RULE, SHARD, WRITTEN

MESH = {"x": 4, "y": 2}
HERE = __file__


def ffn_with_slice():
    """An FFN whose output is sliced along batch: a pending sum (d_ff) and a dim computed along."""
    batch, d_model, d_ff = mi.Dim("batch", 8), mi.Dim("d_model", 4), mi.Dim("d_ff", 16)
    with mi.Program("ffn", mi.Mesh(MESH)) as prog:
        x = prog.argument("x", [batch, d_model])
        w1 = prog.argument("w1", [d_model, d_ff])
        w2 = prog.argument("w2", [d_ff, d_model])
        hidden = mi.einsum(x, w1, output=[batch, d_ff])
        out = mi.einsum(mi.relu(hidden), w2, output=[batch, d_model])
        prog.result(mi.slice(mi.tanh(out), "batch", 2, 4), name="y")
    return prog


def contraction_over_written_split():
    """A contraction over a dim a written layout splits over x, while the rule batch:x wants the
    result's batch over x too: the pending sum is reduce-scattered onto batch."""
    b, m, n = mi.Dim("b", 8), mi.Dim("m", 8), mi.Dim("n", 4)
    with mi.Program("contract", mi.Mesh(MESH)) as prog:
        x = prog.argument("x", [b, m])
        w = prog.argument("w", [m, n], layout={"m": "x"})
        prog.result(mi.tanh(mi.einsum(x, w, output=[b, n])), name="y")
    return prog


def shard_constraint():
    b, m = mi.Dim("b", 8), mi.Dim("m", 16)
    with mi.Program("constrained", mi.Mesh(MESH)) as prog:
        x = prog.argument("x", [b, m], layout={"b": "x"})
        prog.result(mi.exp(mi.shard(x, {"b": (), "m": "x"})), name="y")
    return prog


def shift_along_split():
    """A shift along a split dim: a halo exchange, explained like a collective."""
    b, m = mi.Dim("b", 8), mi.Dim("m", 16)
    with mi.Program("shifted", mi.Mesh(MESH)) as prog:
        x = prog.argument("x", [b, m])
        prog.result(mi.shift(mi.exp(x), "m", 1), name="y")
    return prog


CASES = [
    (ffn_with_slice, {"batch": "x", "d_ff": "y"}),
    (contraction_over_written_split, {"b": "x"}),
    (shift_along_split, {"m": "x", "b": "y"}),
]


def identity(record):
    return record.location, record.kind, record.dims


def test_each_collective_names_the_op_that_needs_it_and_the_rule(capsys):
    exe = mi.compile(ffn_with_slice(), layout={"batch": "x", "d_ff": "y"})
    explanations = exe.explain()
    printed = capsys.readouterr().out
    assert printed.strip() == str(explanations)
    kinds = [e.record.kind for e in explanations]
    assert kinds == [r.kind for r in exe.compile_report.collectives] and "all_reduce" in kinds
    for e in explanations:
        why = e.record.provenance
        assert e.record.location.startswith(HERE + ":"), e.record.location  # the user's line
        assert why.needed_by.startswith("mtf.") and why.dims and why.sources
    reduce = next(e for e in explanations if e.record.kind == "all_reduce")
    assert reduce.record.dims == ("d_ff",) and reduce.record.provenance.needed_by == "mtf.tanh"
    assert [(s.kind, s.rule, s.axes) for s in reduce.record.provenance.sources] == [(RULE, "d_ff", ("y",))]
    gather = next(e for e in explanations if e.record.kind == "all_gather")
    assert gather.record.dims == ("batch",) and gather.record.provenance.needed_by == "mtf.slice"
    assert "layout rule batch:x" in gather.record.provenance.because
    assert str(reduce.alternative).startswith("dropping layout rule d_ff:y (d_ff replicated) would remove this "
                                              "collective (")
    assert "d_ff" in printed and "layout rule d_ff:y" in printed and "test_explain.py:" in printed


def test_a_program_and_its_executable_explain_alike():
    prog, rules = CASES[1]
    exe = mi.compile(prog(), layout=rules)
    from_program = mi.explain(prog(), layout=rules, show=False)
    from_exe = mi.explain(exe, show=False)
    assert [(e.record.kind, e.record.axes, e.record.bytes_per_device, e.record.provenance, e.alternative)
            for e in from_program] == [(e.record.kind, e.record.axes, e.record.bytes_per_device,
                                        e.record.provenance, e.alternative) for e in from_exe]


def test_a_written_layout_and_a_shard_are_named_with_their_lines():
    reduce_scatter = next(e for e in mi.explain(contraction_over_written_split(), layout={"b": "x"}, show=False)
                          if e.record.kind == "reduce_scatter")
    kinds = {s.kind: s for s in reduce_scatter.record.provenance.sources}
    assert kinds[WRITTEN].dim == "m" and kinds[WRITTEN].where.startswith(HERE + ":")
    (shard,) = mi.explain(shard_constraint(), show=False)
    assert shard.record.kind == "all_to_all" and shard.record.provenance.sources[0].kind == SHARD
    assert shard.alternative is None  # a constraint the user wrote: no rule change removes it


@pytest.mark.parametrize("build, rules", CASES, ids=[c[0].__name__ for c in CASES])
def test_alternative_bytes_are_those_of_compiling_with_the_change(build, rules):
    exe = mi.compile(build(), layout=rules)
    base = exe.compile_report.total_bytes_per_device
    explanations = exe.explain(show=False)
    assert any(e.alternative for e in explanations)
    for e in explanations:
        if e.alternative is None:
            continue
        assert e.alternative.base_bytes == base
        changed = mi.compile(build(), layout=e.alternative.rules).compile_report
        assert changed.total_bytes_per_device == e.alternative.total_bytes
        assert identity(e.record) not in {identity(r) for r in changed.collectives}
        assert e.alternative.removed == e.record.bytes_per_device


@pytest.mark.parametrize("build, rules", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_alternative_is_the_cheapest_change_that_removes_the_collective(build, rules):
    """Every single-rule change (drop it, or split the dim over one mesh axis), compiled."""
    compiled = {}
    for dim, was in rules.items():
        for axes in [None] + [(a,) for a in MESH if (a,) != (was,)]:
            changed = {d: a for d, a in rules.items() if d != dim} | ({dim: axes} if axes else {})
            try:
                compiled[(dim, axes)] = mi.compile(build(), layout=changed).compile_report
            except mi.MeshIRError:
                pass  # not a layout of this program (two dims of one tensor over one axis)
    for e in mi.explain(build(), layout=rules, show=False):
        removing = [r.total_bytes_per_device for (dim, _), r in compiled.items()
                    if dim in e.record.provenance.rules and identity(e.record) not in map(identity, r.collectives)]
        assert (e.alternative.total_bytes if e.alternative else None) == (min(removing) if removing else None)


def test_a_halo_exchange_is_explained():
    (halo,) = mi.explain(shift_along_split(), layout={"m": "x"}, show=False)
    assert (halo.record.kind, halo.record.halo) == ("collective_permute", True) and halo.record.dims == ("m",)
    assert halo.record.provenance.needed_by == "mtf.shift" and halo.record.provenance.rules == ("m",)
    assert halo.record.location.startswith(HERE + ":")


def test_a_move_is_offered_when_it_is_as_cheap_as_dropping_the_rule():
    (reduce_scatter, *_) = [e for e in mi.explain(contraction_over_written_split(), layout={"b": "x"}, show=False)
                            if e.record.kind == "reduce_scatter"]
    assert reduce_scatter.alternative.axes == ("y",)
    assert str(reduce_scatter.alternative).startswith("splitting b over y instead of x would remove this collective")


def test_explain_errors_are_located_at_the_call():
    exe = mi.compile(ffn_with_slice(), layout={"batch": "x"})
    with pytest.raises(mi.MeshIRError, match="layouts are fixed") as info:
        mi.explain(exe, layout={"batch": "y"})
    assert str(info.value).startswith(HERE + ":")
    with pytest.raises(mi.MeshIRError, match="gspmd mode") as info:
        mi.compile(ffn_with_slice(), layout={"batch": "x"}, mode="gspmd").explain()
    assert str(info.value).startswith(HERE + ":")
    with pytest.raises(mi.MeshIRTypeError, match="expected a Program"):
        mi.explain(42)
    with mi.Program("no_mesh") as prog:
        prog.result(mi.exp(prog.argument("x", [mi.Dim("a", 4)])), name="y")
    with pytest.raises(mi.MeshIRError, match="has no mesh") as info:
        mi.explain(prog)
    assert str(info.value).startswith(HERE + ":")
    with pytest.raises(mi.MeshIRError, match="unknown mesh axis"):
        mi.explain(ffn_with_slice(), layout={"batch": "z"}, strict=True)
    exe.compile_report = None  # as an Executable made without mi.compile
    with pytest.raises(mi.MeshIRError, match="has no compile report") as info:
        exe.explain()
    assert str(info.value).startswith(HERE + ":")


def test_without_collectives():
    explanations = mi.explain(ffn_with_slice(), show=False)
    assert explanations == () and str(explanations) == "no collectives"
