"""Every op of docs/python-api.md, compiled with `mi.compile` and run on 2, 4, 8, 2x2, 4x2 and
2x4 CPU devices under several layouts, against the reference interpreter `mi.interpret`.

The cases are the table of op_cases.py: each is one small program built with the Python API
(unary, casts, binary with broadcasting by name, compares, select, einsum, reductions, shape
ops, creation, indexing, shard, hand-written collectives, composites). The layout-rule sets
op_cases.layout_sets gives a case on a mesh are: replicated (`{}`), its first split dim over
x, and a third set (on 1-D meshes the second split dim over
x; on 2x2 two dims over x and y; on 4x2 one dim over (x, y); on 2x4 y before x).

Selection: every case runs on every mesh under each of its non-replicated rule sets, and
replicated on two meshes only, one 1-D and one 2-D, rotating with the case's index
(`replicated_meshes`): a replicated program has no collectives, and skipping the other four
copies saves a quarter of the compilations. Rule sets that coincide are run once. That is
about 1300 compilations, one executable each, about 100 s of CPU; MESHIR_ALL_LAYOUTS=1 runs
the full product (about 1650), MESHIR_OPS_ON_TWO_MESHES=1 a third (every case on one 1-D and
one 2-D mesh).

Each run checks:
- every result's global value, and every device's shard (replicas included), against the
  interpreter: exact for integer and boolean results, casts and random_uniform; rtol 1e-5,
  atol 1e-6 for f32 elementwise (atol 1e-5 where the devices add partial sums in another
  order); ~1e-2 for bf16; a few ulps for random_normal;
- shape and element type;
- `result.sharding.spec` against the result layout that `mi.propagate` gives the program
  (and that the executable's partitioned module declares), and, unless the case states
  layouts itself, that a result dim named by a rule is laid out as the rule says.

Known MeshIR bugs are marked xfail (strict) in the table (op_cases.py `xfail=`); none is open.
Fixed ones keep their cases: a rule on a dim that a hand-written all_slice splits;
slice/pad/concat of a pending einsum sum along a dim split over another axis; gather whose ids
share a dim with the table (now a verifier error); compile(mesh=...) of a program without a
mesh (it crashed the process, so it runs in a subprocess).

`all_reduce` and `reduce_scatter` need a pending (partial) operand, which no Python API
function produces; they run here from IR text (`test_all_reduce_and_reduce_scatter_from_ir`).
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest
from jax.sharding import PartitionSpec

import meshir as mi
from meshir.api.ops import composites
from meshir.dialect.op_registry import INTERNAL, rule_of
from meshir.dialect.ops import OP_CLASSES
from meshir.dialect.signature import entry_function, signature
from meshir.lowering.runtime import partition_spec
from op_cases import CASES, EXACT, MESHES, NOT_COVERED, build, inputs, layout_sets, rules_id

BY_NAME = {c.name: c for c in CASES}


#: MESHIR_ALL_LAYOUTS=1 runs the replicated rule set on every mesh, not only on two.
ALL_LAYOUTS = os.environ.get("MESHIR_ALL_LAYOUTS", "") not in ("", "0")
#: MESHIR_OPS_ON_TWO_MESHES=1 runs every case and rule set on two meshes only, one 1-D and one
#: 2-D, rotating with the case's index: a third of the matrix, every case still on devices
#: (.ci/newest_jax's sample on the newest jax).
TWO_MESHES = os.environ.get("MESHIR_OPS_ON_TWO_MESHES", "") not in ("", "0")


def replicated_meshes(case_index: int) -> tuple[str, str]:
    """The meshes a case runs replicated on by default: one 1-D and one 2-D, rotating."""
    return ("x2", "x4", "x8")[case_index % 3], ("x2y2", "x4y2", "x2y4")[case_index % 3]


def _params():
    params = []
    for index, case in enumerate(CASES):
        for mesh_id in MESHES:
            if TWO_MESHES and mesh_id not in replicated_meshes(index):
                continue
            seen = set()
            for rules in layout_sets(case, mesh_id):
                key = rules_id(rules)
                if key in seen or (not rules and not ALL_LAYOUTS and mesh_id not in replicated_meshes(index)):
                    continue
                seen.add(key)
                reason = case.xfail(mesh_id, rules) if case.xfail else None
                marks = [pytest.mark.xfail(strict=True, raises=mi.MeshIRError, reason=reason)] if reason else []
                params.append(pytest.param(case.name, mesh_id, rules, id=f"{case.name}-{mesh_id}-{key}", marks=marks))
    return params


PARAMS = _params()


@functools.lru_cache(maxsize=None)
def program(case_name: str, mesh_id: str):
    """(program, inputs, interpreter results as a tuple) for a case on a mesh, built once."""
    case = BY_NAME[case_name]
    prog = build(case, mesh_id)
    values = inputs(case, zlib.crc32(f"{case_name}/{mesh_id}".encode()))
    want = mi.interpret(prog, **values)
    return prog, values, want if isinstance(want, tuple) else (want,)


def result_types(module):
    return signature(entry_function(module)).result_types


def compare(got: np.ndarray, want: np.ndarray, tol, what: str) -> None:
    if tol == EXACT:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        rtol, atol = tol
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                   err_msg=what)


def axes_entry(axes):
    """A rule's axes as a PartitionSpec entry."""
    axes = (axes,) if isinstance(axes, str) else tuple(axes)
    return None if not axes else axes[0] if len(axes) == 1 else axes


@pytest.mark.parametrize("case_name, mesh_id, rules", PARAMS)
def test_op_on_devices_matches_interpreter(case_name, mesh_id, rules):
    case = BY_NAME[case_name]
    prog, values, want = program(case_name, mesh_id)
    exe = mi.compile(prog, layout=rules)
    got = exe(**values)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)

    propagated = result_types(mi.propagate(prog, layout=rules))
    partitioned = result_types(exe.partitioned_module)
    for i, (g, w, t) in enumerate(zip(got, want, propagated)):
        what = f"result r{i} of {case_name} on {mesh_id} with rules {rules}"
        host = np.asarray(g)
        assert host.shape == w.shape, what
        assert host.dtype == w.dtype, what
        compare(host, w, case.tol, what)
        for shard in g.addressable_shards:
            compare(np.asarray(shard.data), w[shard.index], case.tol, f"{what}, shard on {shard.device}")
        spec = partition_spec(t)
        assert g.sharding.spec == spec, what
        assert partition_spec(partitioned[i]) == spec, what
        if case.check_rules:
            for dim_index, name in enumerate(t.names):
                if name in rules:
                    assert spec[dim_index] == axes_entry(rules[name]), f"{what}: dim '{name}' is laid out {spec}"


# -- coverage of the API -------------------------------------------------------------------------

#: The op functions (every op class's public builder, from the op registry) and the composites.
API_FUNCTIONS = sorted({fn.__name__ for cls in OP_CLASSES.values()
                        if (fn := rule_of("build", cls)) not in (None, INTERNAL)} | set(composites.__all__))


def test_every_api_op_has_a_case_on_every_mesh():
    covered = {op for case in CASES for op in case.ops}
    assert set(API_FUNCTIONS) - covered - set(NOT_COVERED) == set()
    assert all(hasattr(mi, f) for f in API_FUNCTIONS)
    ran = {(p.values[0], p.values[1]) for p in PARAMS}
    if TWO_MESHES:  # the sample: every case on its two meshes
        assert ran == {(c.name, m) for i, c in enumerate(CASES) for m in replicated_meshes(i)}
        return
    assert ran == {(c.name, m) for c in CASES for m in MESHES}
    # Every rule set of a case runs on every mesh that has it; the replicated one on at
    # least one 1-D and one 2-D mesh.
    for case in CASES:
        rep = {p.values[1] for p in PARAMS if p.values[0] == case.name and not p.values[2]}
        assert rep & {"x2", "x4", "x8"} and rep & {"x2y2", "x4y2", "x2y4"}, case.name
        for mesh_id in MESHES:
            kinds = {rules_id(p.values[2]) for p in PARAMS if p.values[:2] == (case.name, mesh_id)}
            assert kinds >= {rules_id(r) for r in layout_sets(case, mesh_id) if r}, (case.name, mesh_id)


# -- all_reduce and reduce_scatter (no API function makes a pending value) ------------------------

PARTIAL_IR = """
sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @f(%a: !mtf.tensor<b=16, k=32@x, f32> {mtf.name = "a"}, %w: !mtf.tensor<k=32@x, n=16, f32> {mtf.name = "w"})
    -> (!mtf.tensor<b=16, n=16, f32> {mtf.name = "sum"}, !mtf.tensor<b=16@x, n=16, f32> {mtf.name = "scattered"})
    attributes {mtf.mesh = @mesh} {
  %p = "mtf.einsum"(%a, %w) : (!mtf.tensor<b=16, k=32@x, f32>, !mtf.tensor<k=32@x, n=16, f32>) -> !mtf.tensor<b=16, n=16, f32, partial@x>
  %s = "mtf.all_reduce"(%p) {reduction = "sum", axes = ["x"]} : (!mtf.tensor<b=16, n=16, f32, partial@x>) -> !mtf.tensor<b=16, n=16, f32>
  %r = "mtf.reduce_scatter"(%p) {reduction = "sum", dim = "b", axes = ["x"]} : (!mtf.tensor<b=16, n=16, f32, partial@x>) -> !mtf.tensor<b=16@x, n=16, f32>
  func.return %s, %r : !mtf.tensor<b=16, n=16, f32>, !mtf.tensor<b=16@x, n=16, f32>
}
"""


@pytest.mark.parametrize("rules", [{}, {"n": "y"}], ids=rules_id)
def test_all_reduce_and_reduce_scatter_from_ir(rules):
    module, diagnostics = mi.parse_module(PARTIAL_IR, "partial.mlir")
    assert not diagnostics, diagnostics
    rng = np.random.default_rng(3)
    values = {"a": rng.standard_normal((16, 32)).astype(np.float32),
              "w": rng.standard_normal((32, 16)).astype(np.float32)}
    want = values["a"] @ values["w"]
    for w in mi.interpret(module, **values):
        np.testing.assert_allclose(w, want, rtol=1e-5, atol=1e-5)
    total, scattered = mi.compile(module, layout=rules)(**values)
    np.testing.assert_allclose(np.asarray(total), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(scattered), want, rtol=1e-5, atol=1e-5)
    n = axes_entry(rules.get("n", ()))
    assert total.sharding.spec == PartitionSpec(None, n)
    assert scattered.sharding.spec == PartitionSpec("x", n)


# -- a program without a mesh, given one by compile(mesh=...) --------------------------------------

MESHLESS = textwrap.dedent("""
    import numpy as np, meshir as mi
    with mi.Program("p") as prog:          # no mesh
        x = prog.argument("x", [mi.Dim("b", 8)])
        prog.result(mi.neg(x), name="y")
    y = mi.compile(prog, mesh={"x": 2}, layout={"b": "x"})(x=np.arange(8, dtype=np.float32))
    assert (np.asarray(y) == -np.arange(8)).all() and tuple(y.sharding.spec) == ("x",), y.sharding
    print("ok")
""")


def test_program_without_mesh_compiled_with_mesh_argument():
    # In a subprocess: the failure is a segmentation fault that would take pytest down.
    run = subprocess.run([sys.executable, "-c", MESHLESS], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTHONFAULTHANDLER="1"))
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


# -- gather whose ids share a dim with the table (a batched lookup) -------------------------------

def test_gather_with_a_dim_shared_by_table_and_ids_is_refused():
    """A batched lookup (rows[i] = table[ids[i], i]) is not an op MeshIR has: the verifier
    says so at the call instead of building a program nothing can run."""
    v, b = mi.Dim("v", 8), mi.Dim("b", 4)
    with pytest.raises(mi.MeshIRError, match=r"'mtf.gather' op ids and table share dimension\(s\) \[b\]"):
        with mi.Program("batched_gather", mi.Mesh({"x": 2})) as prog:
            mi.gather(prog.argument("table", [v, b]), prog.argument("ids", [b], dtype="i32"), "v")


def test_a_splat_constant_of_a_huge_global_shape_lowers_without_building_it():
    """A splat is lowered at the device's shape from its one value: the global array (here
    2^40 elements, 4 TiB) is never built (a microbatched train step's gradient accumulators
    at 1T parameters are such splats)."""
    import meshir as mi
    from meshir.api import _checks as checks
    from meshir.transforms.passes.partition import partition_passes
    from meshir.dialect import get_context
    from meshir.transforms import Pipeline
    from meshir.transforms.passes.lower_to_stablehlo import LowerToStableHLOPass

    a, b = mi.Dim("a", 2 ** 20), mi.Dim("b", 2 ** 20)
    with mi.Program("huge_splat", mi.Mesh({"x": 4, "y": 2})) as prog:
        prog.result(mi.shard(mi.constant(0.5, [a, b]), {"a": "x", "b": "y"}), name="c")
    with get_context():
        module = prog.module.operation.clone()
    passes = partition_passes(module, checks.layout_rules(None, "rules"), checks.cost_model(None))
    Pipeline(passes + [LowerToStableHLOPass()]).apply(module)
    assert "dense<5.000000e-01> : tensor<262144x524288xf32>" in str(module)
