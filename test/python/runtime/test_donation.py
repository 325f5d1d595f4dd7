"""Buffer donation: a training step compiled with `donate=True` aliases parameters and
optimizer state to their results, consumes the donated inputs, and trains exactly as without."""
import jax
import numpy as np
import pytest

import meshir as mi

B, M, F = mi.Dim("batch", 8), mi.Dim("d_model", 16), mi.Dim("d_ff", 32)
MESH = mi.Mesh({"x": 4, "y": 2})
LAYOUT = {"batch": "x", "d_ff": "y"}


def train_step():
    with mi.Program("ffn", MESH) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, F]), prog.argument("w2", [F, M])
        y = mi.einsum(mi.relu(mi.einsum(x, w1, output=[B, F])), w2, output=[B, M])
        prog.result(mi.mean((y - x) * (y - x)), name="loss")
    return mi.train_step(prog, mi.Adam(1e-2), params=["w1", "w2"])


def losses(exe, step, steps=3):
    """Losses of `steps` steps, results fed back as jax.Arrays; also the arrays passed in."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16), np.float32)
    carried = {"w1": rng.standard_normal((16, 32), np.float32) * 0.2,
               "w2": rng.standard_normal((32, 16), np.float32) * 0.2, **mi.init_optimizer_state(step)}
    out, passed = [], []
    for t in range(1, steps + 1):
        passed.append(carried)
        results = dict(zip(exe.signature.result_names, exe(x=x, **carried, step=np.float32(t))))
        out.append(float(results["loss"]))
        carried = {k: results[k] for k in carried}
    return out, passed


def test_donated_train_step_matches_and_consumes_its_inputs():
    step = train_step()
    plain = mi.compile(step, layout=LAYOUT)
    donating = mi.compile(step, layout=LAYOUT, donate=True)
    carried = {"w1", "w2", *mi.init_optimizer_state(step)}
    assert donating.donated == {n: n for n in carried}
    assert "tf.aliasing_output" in donating.stablehlo_text()
    assert "tf.aliasing_output" not in plain.stablehlo_text()
    stats = donating.memory_analysis()
    if stats is not None:
        assert stats.alias_size_in_bytes > 0 and plain.memory_analysis().alias_size_in_bytes == 0

    want, _ = losses(plain, step)
    got, passed = losses(donating, step)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # Steps 2 and 3 were given the previous step's jax.Arrays: donated, so deleted.
    for inputs in passed[1:]:
        assert all(isinstance(v, jax.Array) and v.is_deleted() for v in inputs.values())


def test_donate_by_name_and_errors():
    step = train_step()
    exe = mi.compile(step, layout=LAYOUT, donate=["w1"])
    assert exe.donated == {"w1": "w1"}
    w1 = jax.device_put(np.zeros((16, 32), np.float32), exe.in_shardings[exe.signature.arg_names.index("w1")])
    args = {n: np.zeros(t.shape, np.float32) for n, t in zip(exe.signature.arg_names, exe.signature.arg_types)}
    exe(**dict(args, w1=w1))
    assert w1.is_deleted()
    with pytest.raises(mi.MeshIRError, match="'nope' is not an argument"):
        mi.compile(step, layout=LAYOUT, donate=["nope"])
    with pytest.raises(mi.MeshIRError, match="argument 'x' .* has no result of its type"):
        mi.compile(step, layout=LAYOUT, donate=["x"])
