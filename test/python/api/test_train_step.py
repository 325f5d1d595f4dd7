"""A training step (forward, backward, optimizer update) compiled as one program: the same
loss curve under every layout, equal to the reference interpreter's, and decreasing."""
import numpy as np
import pytest

import meshir as mi

B, M, F = mi.Dim("batch", 8), mi.Dim("d_model", 16), mi.Dim("d_ff", 32)
MESH = mi.Mesh({"x": 4, "y": 2})


def ffn_loss():
    with mi.Program("ffn", MESH) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, F]), prog.argument("w2", [F, M])
        y = mi.einsum(mi.relu(mi.einsum(x, w1, output=[B, F])), w2, output=[B, M])
        prog.result(mi.mean((y - x) * (y - x)), name="loss")
    return prog


def run(step, runner, steps=4):
    rng = np.random.default_rng(0)
    data = {"x": rng.standard_normal((8, 16), np.float32)}
    params = {"w1": rng.standard_normal((16, 32), np.float32) * 0.2, "w2": rng.standard_normal((32, 16), np.float32) * 0.2}
    state = mi.init_optimizer_state(step)
    losses = []
    for t in range(1, steps + 1):
        out = dict(zip(step.program.result_names, runner(**data, **params, **state, step=np.float32(t))))
        losses.append(float(np.asarray(out["loss"])))
        params = {k: out[k] for k in params}
        state = {k: out[k] for k in state}
    return losses


@pytest.mark.parametrize("optimizer", [mi.SGD(0.1, momentum=0.9), mi.Adam(1e-2), mi.Adafactor(min_dim_size_to_factor=16)],
                         ids=["momentum", "adam", "adafactor"])
def test_same_loss_curve_under_every_layout(optimizer):
    step = mi.train_step(ffn_loss(), optimizer, params=["w1", "w2"])
    reference = run(step, lambda **kw: mi.interpret(step, **kw))
    assert reference[-1] < reference[0]
    for layout in ({"batch": "x", "d_ff": "y"}, {"batch": ("x", "y")}, {"d_ff": ("x", "y")}, {}):
        np.testing.assert_allclose(run(step, mi.compile(step, layout=layout)), reference, rtol=1e-4)


def test_data_parallel_step_all_reduces_weight_gradients_over_the_batch_axis():
    from meshir.api.compilation.compile_report import collectives_of

    step = mi.train_step(ffn_loss(), mi.SGD(0.1), params=["w1", "w2"])
    exe = mi.compile(step, layout={"batch": ("x", "y")})
    kinds = {(c.kind, c.axes) for c in collectives_of(exe.partitioned_module)}
    assert ("all_reduce", ("x", "y")) in kinds


def test_train_step_errors():
    with pytest.raises(mi.MeshIRError, match="'w9' is not an argument of @ffn"):
        mi.train_step(ffn_loss(), mi.Adam(), params=["w9"])
    with pytest.raises(mi.MeshIRError, match="is not an optimizer"):
        mi.train_step(ffn_loss(), "adam", params=["w1"])
