"""`mtf-insert-collectives`: the collectives it inserts for known patterns, and properties on
random programs (partitioned form holds, module verifies, global numbers unchanged)."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from random_programs import programs

import meshir as mi
from meshir.dialect.signature import entry_function
from meshir.transforms.passes.insert_collectives import InsertCollectivesPass
from meshir.dialect.partitioned import verify_partitioned

MESH = mi.Mesh({"x": 4, "y": 2})
B, M, F = mi.Dim("batch", 8), mi.Dim("d_model", 16), mi.Dim("d_ff", 64)


def partition(prog, layout=None):
    module = mi.propagate(prog, layout=layout)
    InsertCollectivesPass().apply(module)
    return module


def collectives(module):
    """(op name, attributes text) of every collective, in order."""
    fn = entry_function(module)
    out = []
    for op in fn.regions[0].blocks[0].operations:
        name = op.operation.name
        if name in ("mtf.all_reduce", "mtf.all_gather", "mtf.reduce_scatter", "mtf.all_slice", "mtf.all_to_all",
                    "mtf.collective_permute"):
            attrs = {name_: str(op.operation.attributes[name_]) for name_ in op.operation.attributes}
            out.append((name, attrs.get("axes"), attrs.get("dim"), int(attrs["bytes_per_device"].split(" ")[0])))
    return out


def ffn():
    with mi.Program("ffn", MESH) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, F]), prog.argument("w2", [F, M])
        prog.result(mi.einsum(mi.relu(mi.einsum(x, w1, output=[B, F])), w2, output=[B, M]), name="y")
    return prog


def test_ffn_has_one_all_reduce_over_y_and_none_over_x():
    module = partition(ffn(), {"batch": "x", "d_ff": "y"})
    # Forward pass of Mesh-TensorFlow's FFN with batch:x, d_ff:y: one activation-sized
    # all-reduce over y. Shard [batch/4, d_model] f32 = 2*16*4 = 128 bytes; ring: 2(n-1)/n = 1.
    assert collectives(module) == [("mtf.all_reduce", '["y"]', None, 128)]
    assert not verify_partitioned(module)


def test_data_parallel_ffn_needs_no_collective():
    assert collectives(partition(ffn(), {"batch": "x"})) == []


def test_pending_sums_add_lazily_and_reduce_once():
    with mi.Program("lazy", MESH, layout={"d_ff": "y"}) as prog:
        h1, h2 = prog.argument("h1", [B, F]), prog.argument("h2", [B, F])
        w = prog.argument("w", [F, M])
        s = mi.einsum(h1, w, output=[B, M]) + mi.einsum(h2, w, output=[B, M])
        prog.result(mi.relu(s * 2.0))
    module = partition(prog)
    assert [c[:2] for c in collectives(module)] == [("mtf.all_reduce", '["y"]')]
    text = str(module)
    assert '"mtf.add"' in text and "partial@y>) -> !mtf.tensor<batch=8@(), d_model=16@(), f32, partial@y>" in text


def test_a_pending_sum_meeting_a_split_becomes_reduce_scatter():
    with mi.Program("rs", MESH) as prog:
        h = prog.argument("h", [B, F], layout={"d_ff": "y"})
        w = prog.argument("w", [F, M], layout={"d_ff": "y"})
        prog.result(mi.shard(mi.einsum(h, w, output=[B, M]), {"d_model": "y"}))
    assert [c[:3] for c in collectives(partition(prog))] == [("mtf.reduce_scatter", '["y"]', '"d_model"')]


def test_slice_along_a_split_dim_gathers_then_resplits():
    with mi.Program("sl", MESH, layout={"batch": "x"}) as prog:
        prog.result(mi.slice(prog.argument("a", [mi.Dim("batch", 16), M]), "batch", 0, 8))
    kinds = [c[:3] for c in collectives(partition(prog))]
    assert kinds == [("mtf.all_gather", '["x"]', '"batch"'), ("mtf.all_slice", '["x"]', '"batch"')]


def test_reduce_max_over_a_split_dim_is_a_max_all_reduce():
    with mi.Program("mx", MESH, layout={"batch": "x"}) as prog:
        prog.result(mi.reduce_max(prog.argument("a", [B, M]), over=[B]))
    module = partition(prog)
    assert "partial_max@x" in str(module) and 'reduction = "max"' in str(module)


def test_gather_from_a_vocab_split_table_is_pending_then_reduced():
    v = mi.Dim("vocab", 32)
    with mi.Program("emb", MESH, layout={"vocab": "y", "batch": "x"}) as prog:
        prog.result(mi.gather(prog.argument("table", [v, M]), prog.argument("ids", [B], "i32"), v))
    module = partition(prog)
    assert [c[:2] for c in collectives(module)] == [("mtf.all_reduce", '["y"]')]


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(programs())
def test_random_programs_become_partitioned_and_keep_their_numbers(case):
    prog, inputs = case
    module = partition(prog)
    assert not mi.verify_module(module)
    assert not verify_partitioned(module)
    assert "mtf.shard" not in str(module)
    before = mi.interpret(prog, **inputs)
    after = mi.interpret(module, **inputs)
    for b, a in zip(before if isinstance(before, tuple) else (before,), after if isinstance(after, tuple) else (after,)):
        np.testing.assert_array_equal(a, b)
