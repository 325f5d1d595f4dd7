"""Training steps against optax, the library JAX users train with: the same gradients for 20
steps give the same parameters, for each optimizer, schedule, weight-decay mask and clipping,
on two layouts of an 8-device mesh.

The loss is sum(w * gw) + sum(bias * gb) with the gradients as data arguments, so a step's
gradients are exactly the arrays fed (drawn afresh each step), and optax's `update` sees the
same ones. Where MeshIR deliberately differs from optax (Adafactor's relative step, AdamW's
default decay), the optax side is configured to MeshIR's documented formula (docs/training.md).
"""
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import meshir as mi

STEPS = 20
MESH = mi.Mesh({"x": 4, "y": 2})
A, B = mi.Dim("a", 8), mi.Dim("b", 16)
LAYOUTS = {"replicated": {}, "2d": {"a": "x", "b": "y"}}
S = mi.schedules


def loss_program():
    with mi.Program("loss", MESH) as prog:
        w, bias = prog.argument("w", [A, B]), prog.argument("bias", [B])
        gw, gb = prog.argument("gw", [A, B]), prog.argument("gb", [B])
        prog.result(mi.reduce_sum(w * gw) + mi.reduce_sum(bias * gb), name="loss")
    return prog


def relative_step(count):
    return jnp.minimum(1e-2, 1.0 / jnp.sqrt(count + 1.0))


# (id, MeshIR optimizer, optax transformation, train_step keywords, gradient scale)
CASES = [
    ("sgd", mi.SGD(0.1), optax.sgd(0.1), {}, 1.0),
    ("sgd_momentum", mi.SGD(0.05, momentum=0.9), optax.sgd(0.05, momentum=0.9), {}, 1.0),
    ("sgd_nesterov", mi.SGD(0.05, momentum=0.9, nesterov=True), optax.sgd(0.05, momentum=0.9, nesterov=True), {}, 1.0),
    ("adam", mi.Adam(1e-2), optax.adam(1e-2), {}, 1.0),
    ("adamw_mask", mi.AdamW(1e-2, weight_decay=0.1, weight_decay_mask=["w"]),
     optax.adamw(1e-2, weight_decay=0.1, mask={"w": True, "bias": False}), {}, 1.0),
    ("adamw_mask_fn", mi.AdamW(1e-2, weight_decay=0.1, weight_decay_mask=lambda name: name != "bias"),
     optax.adamw(1e-2, weight_decay=0.1, mask={"w": True, "bias": False}), {}, 1.0),
    ("adafactor_relative", mi.Adafactor(min_dim_size_to_factor=8),
     optax.adafactor(learning_rate=relative_step, min_dim_size_to_factor=8), {}, 1.0),
    ("adafactor_rate", mi.Adafactor(learning_rate=1e-2, min_dim_size_to_factor=8),
     optax.adafactor(learning_rate=1e-2, min_dim_size_to_factor=8, multiply_by_parameter_scale=False), {}, 1.0),
    ("constant", mi.SGD(S.constant(0.1)), optax.sgd(optax.constant_schedule(0.1)), {}, 1.0),
    ("linear", mi.SGD(S.linear(0.1, 0.01, 12, transition_begin=3)),
     optax.sgd(optax.linear_schedule(0.1, 0.01, 12, transition_begin=3)), {}, 1.0),
    ("linear_warmup", mi.Adam(S.linear_warmup(1e-2, 5)), optax.adam(optax.linear_schedule(0.0, 1e-2, 5)), {}, 1.0),
    ("cosine_decay", mi.Adam(S.cosine_decay(1e-2, 15, alpha=0.1, exponent=2.0)),
     optax.adam(optax.cosine_decay_schedule(1e-2, 15, alpha=0.1, exponent=2.0)), {}, 1.0),
    ("piecewise", mi.SGD(S.piecewise_constant(0.1, {5: 0.5, 10: 0.1})),
     optax.sgd(optax.piecewise_constant_schedule(0.1, {5: 0.5, 10: 0.1})), {}, 1.0),
    ("join", mi.SGD(S.join([S.constant(0.1), S.linear(0.1, 0.0, 8)], [6])),
     optax.sgd(optax.join_schedules([optax.constant_schedule(0.1), optax.linear_schedule(0.1, 0.0, 8)], [6])), {}, 1.0),
    ("warmup_cosine", mi.AdamW(S.warmup_cosine_decay(1e-2, 4, 16, init=1e-3, end=1e-4), weight_decay=0.05),
     optax.adamw(optax.warmup_cosine_decay_schedule(1e-3, 1e-2, 4, 16, end_value=1e-4), weight_decay=0.05), {}, 1.0),
    ("decay_schedule", mi.AdamW(1e-2, weight_decay=S.linear(0.2, 0.0, 10)),
     optax.inject_hyperparams(optax.adamw)(learning_rate=1e-2, weight_decay=optax.linear_schedule(0.2, 0.0, 10)),
     {}, 1.0),
    # Gradient norms of about 13 (scale 1) against a clip of 5: every step clips; at scale 0.1
    # (norms near 1.3) no step does, and the result must equal plain SGD.
    ("clip", mi.SGD(0.05, momentum=0.9), optax.chain(optax.clip_by_global_norm(5.0), optax.sgd(0.05, momentum=0.9)),
     {"clip_norm": 5.0}, 1.0),
    ("clip_idle", mi.Adam(1e-2), optax.chain(optax.clip_by_global_norm(5.0), optax.adam(1e-2)),
     {"clip_norm": 5.0}, 0.1),
]


def _gradients(rng, scale):
    return {"w": (rng.normal(size=(A.size, B.size)) * scale).astype(np.float32),
            "bias": (rng.normal(size=B.size) * scale).astype(np.float32)}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_parameters_equal_optax_for_20_steps(case, layout):
    _, optimizer, reference, keywords, scale = case
    step = mi.train_step(loss_program(), optimizer, params=["w", "bias"], **keywords)
    exe = mi.compile(step, layout=LAYOUTS[layout])
    rng = np.random.default_rng(7)
    params = {"w": rng.normal(size=(A.size, B.size)).astype(np.float32),
              "bias": rng.normal(size=B.size).astype(np.float32)}
    state = mi.init_optimizer_state(step)
    ref_params = {k: jnp.asarray(v) for k, v in params.items()}
    ref_state = reference.init(ref_params)
    names = step.program.result_names
    for t in range(1, STEPS + 1):
        grads = _gradients(rng, scale)
        out = dict(zip(names, exe(**params, gw=grads["w"], gb=grads["bias"], **state, step=np.float32(t))))
        params = {k: out[k] for k in params}
        state = {k: out[k] for k in state}
        updates, ref_state = reference.update({k: jnp.asarray(v) for k, v in grads.items()}, ref_state, ref_params)
        ref_params = optax.apply_updates(ref_params, updates)
        for k in params:
            np.testing.assert_allclose(np.asarray(params[k]), np.asarray(ref_params[k]), rtol=2e-5, atol=2e-6,
                                       err_msg=f"{k} after step {t}")


def test_a_nan_gradient_makes_the_norm_and_every_parameter_nan_as_in_optax():
    step = mi.train_step(loss_program(), mi.SGD(0.1), params=["w", "bias"], clip_norm=1.0, metrics=["grad_norm"])
    exe = mi.compile(step, layout=LAYOUTS["2d"])
    gw = np.ones((A.size, B.size), np.float32)
    gw[3, 5] = np.nan
    params = {"w": np.zeros((A.size, B.size), np.float32), "bias": np.zeros(B.size, np.float32)}
    out = dict(zip(step.program.result_names, exe(**params, gw=gw, gb=np.ones(B.size, np.float32), step=np.float32(1))))
    ref, _ = optax.clip_by_global_norm(1.0).update({"w": jnp.asarray(gw), "bias": jnp.ones(B.size)}, None)
    assert np.isnan(float(out["grad_norm"]))
    assert np.isnan(np.asarray(out["w"])).all() and np.isnan(np.asarray(out["bias"])).all()
    assert np.isnan(np.asarray(ref["w"])).all() and np.isnan(np.asarray(ref["bias"])).all()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_metrics_are_the_global_norm_before_clipping_and_the_scheduled_rate(layout):
    schedule = S.warmup_cosine_decay(1e-2, 3, 12)
    step = mi.train_step(loss_program(), mi.Adam(schedule), params=["w", "bias"], clip_norm=0.5,
                         metrics=("grad_norm", "learning_rate"))
    assert step.program.result_names[-2:] == ("grad_norm", "learning_rate")
    exe = mi.compile(step, layout=LAYOUTS[layout])
    rng = np.random.default_rng(1)
    params = {"w": np.zeros((A.size, B.size), np.float32), "bias": np.zeros(B.size, np.float32)}
    state = mi.init_optimizer_state(step)
    oracle = optax.warmup_cosine_decay_schedule(0.0, 1e-2, 3, 12)
    for t in (1, 2, 4, 12, 15):
        grads = _gradients(rng, 1.0)
        out = dict(zip(step.program.result_names,
                       exe(**params, gw=grads["w"], gb=grads["bias"], **state, step=np.float32(t))))
        expected_norm = np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in grads.values()))
        np.testing.assert_allclose(float(out["grad_norm"]), expected_norm, rtol=1e-5)
        np.testing.assert_allclose(float(out["learning_rate"]), float(oracle(t - 1)), rtol=1e-6, atol=1e-9)


def test_without_metrics_or_clipping_the_step_is_unchanged():
    plain = mi.train_step(loss_program(), mi.Adam(1e-2), params=["w", "bias"])
    assert plain.program.result_names == ("loss", "w", "bias", "w__m", "w__v", "bias__m", "bias__v")
    assert "sqrt" not in str(mi.train_step(loss_program(), mi.SGD(0.1), params=["w", "bias"]).module)


def layer_loss_program():
    """A layer on a batch: the gradients need collectives of their own (over the batch axes)."""
    batch = mi.Dim("batch", 16)
    with mi.Program("layer", MESH) as prog:
        x = prog.argument("x", [batch, A])
        w, bias = prog.argument("w", [A, B]), prog.argument("bias", [B])
        y = mi.tanh(mi.einsum(x, w, output=[batch, B]) + bias)
        prog.result(mi.mean(y * y), name="loss")
    return prog


# Data parallel (the gradients are all-reduced whole: the norm is local, no extra bytes) and
# Megatron's 2-D layout (w's gradient split over y: one f32 more).
@pytest.mark.parametrize("layout, extra_bytes", [({"batch": ("x", "y")}, 0), ({"batch": "x", "b": "y"}, 4)])
def test_clipping_costs_at_most_one_scalar_all_reduce(layout, extra_bytes):
    """The global norm beyond the step's own collectives, read from the compiled HLO."""
    from meshir.lowering.runtime import hlo_collectives as hlo_stats

    def all_reduces(**keywords):
        step = mi.train_step(layer_loss_program(), mi.SGD(0.1), params=["w", "bias"], **keywords)
        hlo = mi.compile(step, layout=layout).compiled_hlo_text()
        return [c for c in hlo_stats.parse_collectives(hlo) if c.kind == "all-reduce"]

    plain, clipping = all_reduces(), all_reduces(clip_norm=1.0)
    # XLA may combine the norm's all-reduce with another (one tuple all-reduce): count bytes.
    assert sum(c.operand_bytes for c in clipping) == sum(c.operand_bytes for c in plain) + extra_bytes, \
        (plain, clipping)
    assert len(plain) <= len(clipping) <= len(plain) + 1
