"""The op cases of op_cases.py three ways, with the same numbers: eagerly (the case's builder
run on `mi.Array`s, so each op it calls runs at once as its own compiled one-op program),
traced (the same builder under `mi.jit`: one program) and in the reference interpreter
(`mi.interpret` of the case's Program, as test_compile_ops.py builds it).

Each run checks every result of the eager and the traced run against the interpreter's:
shape, element type and values within the case's tolerance (NaN positions equal), every
device's shard of it, and that the mi.Array's layout is its jax.Array's sharding. The layout
rules are the case's rule set, in force through `mi.default_layout(rules, mesh=...)` (which
also gives creation and random ops their mesh); arguments with a stated layout are made with
it (`mi.array(..., layout=...)`), the others laid out by the rules (replicated for the cases
of REPLICATED_ARGUMENTS).

CI runs a sample: one case per op family (`FAMILIES`: every case is in one), each on one 1-D
and one 2-D mesh (rotating with the family) under the case's last rule set; `-m slow` runs
every case on every mesh under each of its rule sets.
"""
from __future__ import annotations

import functools
import zlib

import numpy as np
import pytest

import meshir as mi
from meshir.lowering.runtime import partition_spec
from op_cases import CASES, EXACT, MESHES, build, inputs, layout_sets, rules_id

BY_NAME = {c.name: c for c in CASES}

#: Op families: each op function of the cases -> its family. A case's family is its first
#: op's ("passthrough" has none). A case of an op not listed fails
#: test_every_case_has_a_family, so a new op is filed here.
_FAMILY_OPS = {
    "unary": "neg abs sign relu exp log sqrt rsqrt tanh logistic sin cos floor erf stop_gradient sigmoid",
    "cast": "cast",
    "binary": "add sub mul div maximum minimum pow",
    "compare": "equal not_equal less less_equal greater greater_equal",
    "select": "select where",
    "contraction": "einsum",
    "reduction": "reduce_sum reduce_max reduce_min",
    "shape": "broadcast reshape rename transpose",
    "window": "slice concat split pad shift",
    "creation": "constant iota",
    "random": "random_uniform random_normal fold_in",
    "indexing": "one_hot gather",
    "dynamic": "dynamic_slice dynamic_update_slice",
    "selection": "top_k argmax argmin",
    "cumulative": "cumsum cumprod",
    "attention": "dot_product_attention",
    "sampling": "dropout categorical",
    "layout": "shard all_gather all_slice all_to_all collective_permute",
    "composite": "softmax log_softmax layer_norm cross_entropy gelu mean",
}
FAMILY_OF_OP = {op: family for family, ops in _FAMILY_OPS.items() for op in ops.split()}

#: The case CI runs for each family (and for the case without ops).
SAMPLE = {
    "unary": "unary_i32", "cast": "cast_f32_bf16", "binary": "operators", "compare": "less_equal",
    "select": "select", "contraction": "einsum_3_operands", "reduction": "reduce_sum_output",
    "shape": "reshape_merge", "window": "concat_pending_sum", "creation": "constant_dense",
    "random": "random_uniform_seed_operand", "indexing": "gather", "dynamic": "dynamic_slices",
    "selection": "top_k", "cumulative": "cumsum_cumprod", "attention": "dot_product_attention", "sampling": "categorical", "layout": "all_to_all",
    "composite": "layer_norm", "passthrough": "passthrough",
}


def family(case) -> str | None:
    return FAMILY_OF_OP.get(case.ops[0]) if case.ops else "passthrough"


#: Cases whose arguments are made replicated (`layout={}`) instead of by the rules, and why.
REPLICATED_ARGUMENTS = {
    # Its hand-written all_slice splits b over x itself: an argument the rule b:x lays out
    # b@x is refused by the all_slice (as a Program argument stated b@x is); in the case's
    # Program the argument is free, and propagation gathers it for the all_slice.
    "all_slice_free_operand",
}


def _xfail(case, rules) -> str | None:
    """Known bugs: the reason an eager run fails, or None (none today: a rule that does not
    divide a staged argument's written layout used to be refused, seeds.rule_seeds)."""
    return None


def _param(case_name, mesh_id, rules, slow=False):
    reason = _xfail(BY_NAME[case_name], rules)
    marks = [pytest.mark.slow] if slow else []
    if reason:
        marks.append(pytest.mark.xfail(strict=True, raises=mi.MeshIRError, reason=reason))
    return pytest.param(case_name, mesh_id, rules, id=f"{case_name}-{mesh_id}-{rules_id(rules)}", marks=marks)


def _sample():
    params = []
    for index, name in enumerate(SAMPLE.values()):
        for mesh_id in (("x2", "x4", "x8")[index % 3], ("x2y2", "x4y2", "x2y4")[index % 3]):
            params.append(_param(name, mesh_id, layout_sets(BY_NAME[name], mesh_id)[-1]))
    return params


def _matrix():
    params = []
    for case in CASES:
        for mesh_id in MESHES:
            seen = set()
            for rules in layout_sets(case, mesh_id):
                if rules_id(rules) not in seen:
                    seen.add(rules_id(rules))
                    params.append(_param(case.name, mesh_id, rules, slow=True))
    return params


@functools.lru_cache(maxsize=None)
def interpreted(case_name: str, mesh_id: str):
    """(inputs, the interpreter's results as a tuple) of a case on a mesh, computed once."""
    case = BY_NAME[case_name]
    values = inputs(case, zlib.crc32(f"{case_name}/{mesh_id}".encode()))
    want = mi.interpret(build(case, mesh_id), **values)
    return values, want if isinstance(want, tuple) else (want,)


def _tuple(out):
    return out if isinstance(out, tuple) else (out,)


def compare(got: np.ndarray, want: np.ndarray, tol, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, got.dtype, want.shape, want.dtype)
    if tol == EXACT:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        rtol, atol = tol
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, err_msg=what)


def check(results, want, case, mesh, rules, how: str) -> None:
    assert len(results) == len(want), how
    for i, (r, w) in enumerate(zip(results, want)):
        what = f"{how} result r{i} of {case.name} on {mesh} with rules {rules}"
        assert isinstance(r, mi.Array) and r.mesh == mesh, (what, type(r))
        compare(r.numpy(), w, case.tol, what)
        for shard in r.jax_array.addressable_shards:
            compare(np.asarray(shard.data), w[shard.index], case.tol, f"{what}, shard on {shard.device}")
        assert r.jax_array.sharding.spec == partition_spec(r.type), (what, r.type, r.jax_array.sharding)


def _layout(case, arg, mesh_id: str) -> dict | None:
    """An argument's stated layout, {} (replicated) for REPLICATED_ARGUMENTS, else None (the rules')."""
    if arg.layout:
        return arg.layout(mesh_id)
    return {} if case.name in REPLICATED_ARGUMENTS else None


def run_three_ways(case_name: str, mesh_id: str, rules: dict) -> None:
    case = BY_NAME[case_name]
    values, want = interpreted(case_name, mesh_id)
    mesh = mi.Mesh(MESHES[mesh_id])
    with mi.default_layout(rules, mesh=mesh):
        arrays = [mi.array(values[a.name], list(a.dims), dtype=a.dtype, layout=_layout(case, a, mesh_id))
                  for a in case.args]
        traced = mi.jit(lambda *args: case.body(mesh_id, *args))
        check(_tuple(traced(*arrays)), want, case, mesh, rules, "traced")
        assert len(traced._cache) == 1
        check(_tuple(case.body(mesh_id, *arrays)), want, case, mesh, rules, "eager")


@pytest.mark.parametrize("case_name, mesh_id, rules", _sample())
def test_sample_same_numbers_eager_traced_interpreted(case_name, mesh_id, rules):
    run_three_ways(case_name, mesh_id, rules)


@pytest.mark.parametrize("case_name, mesh_id, rules", _matrix())
def test_every_case_same_numbers_eager_traced_interpreted(case_name, mesh_id, rules):
    run_three_ways(case_name, mesh_id, rules)


def test_every_case_has_a_family_and_the_sample_one_case_of_each():
    assert [c.name for c in CASES if family(c) is None] == []
    assert {family(c) for c in CASES} == set(SAMPLE)
    assert all(family(BY_NAME[name]) == fam for fam, name in SAMPLE.items())
