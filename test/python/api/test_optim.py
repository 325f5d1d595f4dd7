"""Optimizers in mtf ops against plain NumPy implementations written here, over several steps."""
import numpy as np
import pytest

import meshir as mi
from meshir.api.training.optimizers import SGD, Adafactor, Adam, AdamW

R, C = mi.Dim("rows", 128), mi.Dim("cols", 256)


def numpy_sgd(p, g, s, t, lr=0.1, momentum=0.0, nesterov=False):
    if not momentum:
        return p - lr * g, s
    v = momentum * s["velocity"] + g
    return p - lr * (g + momentum * v if nesterov else v), {"velocity": v}


def numpy_adam(p, g, s, t, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, wd=0.0):
    m = b1 * s["m"] + (1 - b1) * g
    v = b2 * s["v"] + (1 - b2) * g * g
    step = (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps) + wd * p
    return p - lr * step, {"m": m, "v": v}


def numpy_adafactor(p, g, s, t, factored):
    mixing = t ** -0.8
    g2 = g * g + 1e-30
    if factored:  # rows = axis 0 (second largest), cols = axis 1 (largest)
        vr = (1 - mixing) * s["vr"] + mixing * g2.mean(axis=1)
        vc = (1 - mixing) * s["vc"] + mixing * g2.mean(axis=0)
        update = g / np.sqrt(vr / vr.mean())[:, None] / np.sqrt(vc)[None, :]
        new = {"vr": vr, "vc": vc}
    else:
        v = (1 - mixing) * s["v"] + mixing * g2
        update, new = g / np.sqrt(v), {"v": v}
    update = update / max(1.0, np.sqrt((update**2).mean()))
    rate = min(1 / np.sqrt(t), 1e-2) * max(np.sqrt((p**2).mean()), 1e-3)
    return p - rate * update, new


def step_program(optimizer, dims):
    """params, grad, state, t -> new params and state, as one Program."""
    with mi.Program("step") as prog:
        p, g = prog.argument("p", dims), prog.argument("g", dims)
        state = {k: prog.argument(k, d) for k, d in optimizer.state_dims(dims).items()}
        t = prog.argument("t", [])
        new_p, new_state = optimizer.update(p, g, state, t)
        prog.result(new_p, name="p")
        for k in sorted(new_state):
            prog.result(new_state[k], name=k)
    return prog


CASES = [
    (SGD(learning_rate=0.1), numpy_sgd, {}),
    (SGD(learning_rate=0.1, momentum=0.9), lambda *a: numpy_sgd(*a, momentum=0.9), {}),
    (SGD(learning_rate=0.1, momentum=0.9, nesterov=True), lambda *a: numpy_sgd(*a, momentum=0.9, nesterov=True), {}),
    (Adam(), numpy_adam, {}),
    (AdamW(learning_rate=1e-3, weight_decay=0.1), lambda *a: numpy_adam(*a, wd=0.1), {}),
]


@pytest.mark.parametrize("optimizer, reference, _", CASES, ids=["sgd", "momentum", "nesterov", "adam", "adamw"])
def test_first_order_optimizers_match_numpy_over_steps(optimizer, reference, _):
    run_steps(optimizer, reference, [R, C])


@pytest.mark.parametrize("dims, factored", [([R, C], True), ([mi.Dim("small", 8), C], False), ([C], False)])
def test_adafactor_matches_numpy_over_steps(dims, factored):
    optimizer = Adafactor()
    assert (optimizer.factored_dims(dims) is not None) == factored
    run_steps(optimizer, lambda p, g, s, t: numpy_adafactor(p, g, s, t, factored), dims)


def run_steps(optimizer, reference, dims):
    prog = step_program(optimizer, dims)
    rng = np.random.default_rng(0)
    shape = [d.size for d in dims]
    p = rng.standard_normal(shape).astype(np.float32)
    state = {k: np.zeros([d.size for d in sd], np.float32) for k, sd in optimizer.state_dims(dims).items()}
    ref_p, ref_state = p.astype(np.float64), {k: v.astype(np.float64) for k, v in state.items()}
    for t in (1, 2, 3):
        g = rng.standard_normal(shape).astype(np.float32)
        out = mi.interpret(prog, p=p, g=g, t=np.float32(t), **state)
        out = out if isinstance(out, tuple) else (out,)
        p, state = out[0], dict(zip(sorted(state), out[1:]))
        ref_p, ref_state = reference(ref_p, g.astype(np.float64), ref_state, t)
        np.testing.assert_allclose(p, ref_p, rtol=2e-4, atol=1e-6)
        for k in state:
            np.testing.assert_allclose(state[k], ref_state[k], rtol=2e-4, atol=1e-6)


def test_optimizer_state_is_laid_out_like_its_parameter():
    """State has the parameter's dim names, so propagation gives it the parameter's layout:
    Adafactor's factored moments follow the layouts of the dims they keep."""
    optimizer = Adafactor()
    with mi.Program("laid", mi.Mesh({"x": 4, "y": 2}), layout={"rows": "x", "cols": "y"}) as prog:
        p, g = prog.argument("p", [R, C]), prog.argument("g", [R, C])
        state = {k: prog.argument(k, d) for k, d in optimizer.state_dims([R, C]).items()}
        new_p, new_state = optimizer.update(p, g, state, prog.argument("t", []))
        prog.result(new_p, name="p")
        for k in sorted(new_state):
            prog.result(new_state[k], name=k)
    text = str(mi.propagate(prog))
    assert '!mtf.tensor<rows=128@x, f32> {mtf.name = "vr"}' in text
    assert '!mtf.tensor<cols=256@y, f32> {mtf.name = "vc"}' in text
