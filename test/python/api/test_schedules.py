"""`mi.schedules` against optax's schedules (the oracle), on NumPy counts and inside a
program (the interpreter), and the located errors of bad schedules and training options."""
import numpy as np
import optax
import pytest

import meshir as mi

S = mi.schedules
COUNTS = np.arange(0, 40)

PAIRS = [
    ("constant", S.constant(0.3), optax.constant_schedule(0.3)),
    ("linear", S.linear(1.0, 0.1, 10), optax.linear_schedule(1.0, 0.1, 10)),
    ("linear_begin", S.linear(0.0, 2.0, 7, transition_begin=5), optax.linear_schedule(0.0, 2.0, 7, transition_begin=5)),
    ("linear_zero_steps", S.linear(0.5, 0.1, 0), optax.linear_schedule(0.5, 0.1, 0)),
    ("linear_warmup", S.linear_warmup(3e-4, 8), optax.linear_schedule(0.0, 3e-4, 8)),
    ("cosine", S.cosine_decay(1.0, 25), optax.cosine_decay_schedule(1.0, 25)),
    ("cosine_alpha_exponent", S.cosine_decay(2.0, 17, alpha=0.2, exponent=3.0),
     optax.cosine_decay_schedule(2.0, 17, alpha=0.2, exponent=3.0)),
    ("piecewise", S.piecewise_constant(1.0, {10: 0.5, 3: 0.1, 20: 4.0}),
     optax.piecewise_constant_schedule(1.0, {10: 0.5, 3: 0.1, 20: 4.0})),
    ("join", S.join([S.linear(0.0, 1.0, 5), S.constant(1.0), S.cosine_decay(1.0, 10)], [5, 12]),
     optax.join_schedules([optax.linear_schedule(0.0, 1.0, 5), optax.constant_schedule(1.0),
                           optax.cosine_decay_schedule(1.0, 10)], [5, 12])),
    ("warmup_cosine", S.warmup_cosine_decay(1e-3, 10, 30, init=1e-5, end=1e-6),
     optax.warmup_cosine_decay_schedule(1e-5, 1e-3, 10, 30, end_value=1e-6)),
    ("warmup_cosine_zero_peak", S.warmup_cosine_decay(0.0, 2, 9), optax.warmup_cosine_decay_schedule(0.0, 0.0, 2, 9)),
]


@pytest.mark.parametrize("schedule, oracle", [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_numbers_equal_optax(schedule, oracle):
    expected = np.array([float(oracle(c)) for c in COUNTS])
    atol = 1e-7 * np.abs(expected).max()  # optax computes in f32, NumPy here in f64
    np.testing.assert_allclose([schedule(int(c)) for c in COUNTS], expected, rtol=1e-6, atol=atol)
    np.testing.assert_allclose(schedule(COUNTS), expected, rtol=1e-6, atol=atol)  # an array at once


@pytest.mark.parametrize("schedule, oracle", [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_in_a_program_equals_optax(schedule, oracle):
    with mi.Program("schedule") as prog:
        count = prog.argument("count", [], "f32")
        prog.result(schedule(count), name="value")
    for c in (0, 1, 2, 3, 5, 9, 10, 11, 12, 17, 29, 30, 31, 1000):
        got = mi.interpret(prog, count=np.float32(c))
        np.testing.assert_allclose(float(got), float(oracle(c)), rtol=2e-6, atol=2e-7 * abs(float(oracle(0))) + 1e-12,
                                   err_msg=f"count {c}")


def test_a_users_callable_joins_and_serves_as_a_rate():
    halve = S.join([S.constant(1.0), lambda count: mi.exp(count * -0.5)], [4])
    with mi.Program("schedule") as prog:
        count = prog.argument("count", [], "f32")
        prog.result(halve(count), name="value")
    assert float(mi.interpret(prog, count=np.float32(2))) == 1.0
    np.testing.assert_allclose(float(mi.interpret(prog, count=np.float32(6))), np.exp(-1.0), rtol=1e-6)


def test_schedules_are_public_and_immutable():
    s = S.warmup_cosine_decay(1.0, 2, 5)
    assert isinstance(s, S.Schedule)
    with pytest.raises(AttributeError):
        s.boundaries = (3,)


@pytest.mark.parametrize("build, message", [
    (lambda: S.warmup_cosine_decay(1e-3, 100, 50), r"decay_steps 50 is the whole length.*warmup_steps 100"),
    (lambda: S.warmup_cosine_decay(1e-3, 10, 10), r"decay_steps 10 .* must exceed warmup_steps 10"),
    (lambda: S.linear(1.0, 0.0, -5), r"transition_steps of mi.schedules.linear must be at least 0, got -5"),
    (lambda: S.linear_warmup(1.0, -1), r"warmup_steps of mi.schedules.linear_warmup must be at least 0, got -1"),
    (lambda: S.cosine_decay(1.0, 0), r"decay_steps of mi.schedules.cosine_decay must be at least 1, got 0"),
    (lambda: S.linear(1.0, 0.0, 2.5), r"transition_steps of mi.schedules.linear must be an integer, got float 2.5"),
    (lambda: S.constant(float("nan")), r"value of mi.schedules.constant"),
    (lambda: S.piecewise_constant(1.0, {5: -0.5}), r"scale at step 5 .* must be at least 0"),
    (lambda: S.piecewise_constant(1.0, [(5, 0.5)]), r"must be a dict"),
    (lambda: S.join([S.constant(1.0), S.constant(2.0)], []), r"one boundary fewer than schedules"),
    (lambda: S.join([S.constant(1.0), S.constant(2.0), S.constant(3.0)], [5, 5]), r"must increase, got \[5, 5\]"),
    (lambda: S.join([S.constant(1.0), 0.5], [3]), r"schedules\[1\] of mi.schedules.join must be a schedule"),
    (lambda: S.constant(1.0)("three"), r"count must be a scalar float Tensor or a number, got str 'three'"),
])
def test_bad_schedules_are_located_errors(build, message):
    with pytest.raises(mi.MeshIRError, match=message) as info:
        build()
    assert "test_schedules.py" in str(info.value)  # located at the user's line


def _loss():
    a = mi.Dim("a", 4)
    with mi.Program("loss") as prog:
        w, g = prog.argument("w", [a]), prog.argument("g", [a])
        prog.result(mi.reduce_sum(w * g), name="loss")
    return prog


@pytest.mark.parametrize("build, error, message", [
    (lambda: mi.train_step(_loss(), mi.SGD(0.1), params=["w"], clip_norm=0.0), mi.MeshIRValueError,
     r"clip_norm of mi.train_step must be positive, got 0.0"),
    (lambda: mi.train_step(_loss(), mi.SGD(0.1), params=["w"], clip_norm=-1), mi.MeshIRValueError,
     r"must be positive, got -1"),
    (lambda: mi.train_step(_loss(), mi.SGD(0.1), params=["w"], clip_norm="big"), mi.MeshIRTypeError,
     r"clip_norm of mi.train_step must be a real number, got str 'big'"),
    (lambda: mi.train_step(_loss(), mi.SGD(0.1), params=["w"], metrics=["loss_scale"]), mi.MeshIRValueError,
     r"unknown metric str 'loss_scale' in mi.train_step; known: grad_norm, learning_rate"),
    (lambda: mi.train_step(_loss(), mi.SGD(0.1), params=["w"], metrics=["grad_norm", "grad_norm"]),
     mi.MeshIRValueError, r"metric 'grad_norm' asked for twice"),
    (lambda: mi.train_step(_loss(), mi.AdamW(weight_decay_mask=["w", "bias"]), params=["w"]), mi.MeshIRValueError,
     r"weight_decay_mask names \['bias'\], which are not parameters of the step \(w\)"),
    (lambda: mi.train_step(_loss(), mi.AdamW(weight_decay_mask=lambda n: "yes"), params=["w"]), mi.MeshIRTypeError,
     r"weight_decay_mask\('w'\) must return a bool, got str 'yes'"),
    (lambda: mi.AdamW(weight_decay_mask=[3]), mi.MeshIRTypeError, r"a parameter name of Adam weight_decay_mask"),
    (lambda: mi.SGD(learning_rate=-0.1), mi.MeshIRValueError, r"SGD learning_rate must be at least 0"),
])
def test_bad_training_options_are_located_errors(build, error, message):
    with pytest.raises(error, match=message) as info:
        build()
    assert "test_schedules.py" in str(info.value)


def test_a_rate_given_as_a_tensor_asks_for_a_schedule():
    with mi.Program("p") as prog:
        lr = prog.argument("lr", [], "f32")
        with pytest.raises(mi.MeshIRTypeError, match="SGD learning_rate must be a number or a schedule"):
            mi.SGD(lr)
        prog.result(lr)


def test_a_custom_optimizer_without_learning_rate_at_cannot_report_it():
    class Plain:
        def state_dims(self, dims):
            return {}

        def update(self, p, g, state, t):
            return p - g * 0.1, {}

    step = mi.train_step(_loss(), Plain(), params=["w"], metrics=["grad_norm"])  # the norm needs nothing
    assert step.program.result_names[-1] == "grad_norm"
    with pytest.raises(mi.MeshIRTypeError, match="needs an optimizer with learning_rate_at"):
        mi.train_step(_loss(), Plain(), params=["w"], metrics=["learning_rate"])
