"""`mi.reshard` and cuts (`mtf.shard {cut}`): a reshard whose layout does not propagate back.

Sequence parallelism is the case that needs it: the residual stream (a scan's carry) keeps
`length` split, each layer gathers its layer norm's output and reduce-scatters its output
projection. With `mi.shard` at those points the gathered layout reaches the carry (a
constraint binds both sides); with `mi.reshard` the carry stays split, and so does the stack
of carries a scan's backward pass saves. Oracles: the reference interpreter and layouts read
from the partitioned program.
"""
import re

import numpy as np
import pytest

import meshir as mi

D = mi.Dim
B, L, M, F, LAYERS = D("batch", 8), D("length", 16), D("d_model", 32), D("d_ff", 64), D("layers", 2)
MESH = mi.Mesh({"x": 2, "y": 4})
RULES = {"batch": "x", "d_ff": "y"}


def sequence_parallel(gather):
    """Two stacked FFN layers on a carry split over y along `length`; `gather` is mi.reshard
    or mi.shard, used to gather the sequence before the matmul and scatter it after."""
    with mi.Program("sp", MESH) as prog:
        x = prog.argument("x", [B, L, M])
        w1, w2 = prog.argument("w1", [LAYERS, M, F]), prog.argument("w2", [LAYERS, F, M])

        def layer(h, ws):
            w1l, w2l = ws
            g = gather(h, {"length": ()})
            hidden = mi.relu(mi.einsum(g, w1l, output=[B, L, F]))
            out = gather(mi.einsum(hidden, w2l, output=[B, L, M]), {"length": "y"})
            return mi.shard(h + out, {"length": "y"}), None

        out = mi.scan(layer, mi.shard(x, {"length": "y"}), (w1, w2), dim="layers")[0]
        prog.result(mi.reduce_sum(out * out), name="loss")
    return prog


def data(nan=False):
    rng = np.random.default_rng(0)
    out = {"x": rng.standard_normal((8, 16, 32)).astype(np.float32),
           "w1": (rng.standard_normal((2, 32, 64)) * 0.2).astype(np.float32),
           "w2": (rng.standard_normal((2, 64, 32)) * 0.2).astype(np.float32)}
    if nan:
        out["x"][1, 2, 3] = np.nan
    return out


def carry_layouts(module) -> set[str]:
    """The `length` layout of every [batch, length, d_model] value (carries, saved stacks)."""
    return set(re.findall(r"batch=8@x, length=16@(\(\)|y), d_model=32", str(module)))


def saved_length_layouts(gather) -> set[str]:
    """The `length` layouts of the stack of carries the forward scan saves for its backward."""
    grad = mi.propagate(mi.value_and_grad(sequence_parallel(gather), wrt=["w1", "w2"]), layout=RULES)
    return set(re.findall(r"!mtf.tensor<layers=2@\(\), batch=8@x, length=16@(\S+?), d_model", str(grad)))


def test_reshard_keeps_the_saved_carries_split_where_shard_gathers_them():
    assert saved_length_layouts(mi.reshard) == {"y"}
    assert saved_length_layouts(mi.shard) == {"()"}  # the gathered layout reached the carry


@pytest.mark.parametrize("nan", [False, True])
def test_sequence_parallel_gradient_equals_the_interpreter_and_saves_split_carries(nan):
    grad = mi.value_and_grad(sequence_parallel(mi.reshard), wrt=["w1", "w2"])
    inputs = data(nan)
    want = mi.interpret(grad, **inputs)
    exe = mi.compile(grad, layout=RULES)
    got = exe(**inputs)
    for w, g in zip(want, got):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=1e-4)
    # the forward scan's stacked carries (what the backward pass reads) are split over y
    saved = re.findall(r"!mtf.tensor<layers=2@\(\), batch=8@x, length=16@(\S+?), d_model", str(exe.partitioned_module))
    assert saved and set(saved) == {"y"}, saved
    kinds = {c.kind for c in exe.compile_report.collectives if c.axes == ("y",)}
    assert {"all_gather", "reduce_scatter"} <= kinds


def test_reshard_errors_name_the_value_at_the_call():
    with mi.Program("e", MESH) as prog:
        x = prog.argument("x", [B, L])
        with pytest.raises(mi.MeshIRError, match=r"'heads' is not a dimension of .*test_reshard_cut.py|"
                                                  r"test_reshard_cut.py.*'heads' is not a dimension") as info:
            mi.reshard(x, {"heads": "y"})
        assert "test_reshard_cut.py" in str(info.value)
        with pytest.raises(mi.MeshIRError, match="mesh axis 'z'"):
            mi.reshard(x, {"length": "z"})
        with pytest.raises(mi.MeshIRError):
            mi.reshard(x, "length")
        prog.result(mi.reshard(x, {"length": "y"}), name="y")
