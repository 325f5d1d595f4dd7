"""A compiled MeshIR program called inside jax: jax.jit embeds it (one XLA program, no host
callback), jax.grad runs MeshIR's own VJP program, a jax.jit training loop whose model body
is MeshIR gives the losses and gradients of MeshIR alone and of the same model in plain JAX;
shardings are resharded by jax, devices that differ and vmap are refused, donation is jax's."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import meshir as mi
from interop_programs import LAYOUTS, inputs, loss, loss_jax, mlp, mlp_numpy


@pytest.fixture(scope="module", params=[("2d", "explicit"), ("data", "explicit"), ("2d", "gspmd")],
                ids=lambda p: "-".join(p))
def loss_exe(request):
    mesh, rules = LAYOUTS[request.param[0]]
    return mi.compile(loss(mesh), layout=rules, mode=request.param[1])


@pytest.fixture(scope="module")
def mlp_exe():
    mesh, rules = LAYOUTS["2d"]
    return mi.compile(mlp(mesh), layout=rules)


def _labels(seed=0):
    return np.random.default_rng(seed).integers(0, 4, size=8).astype(np.int32)


def _placed(exe, args):
    return {name: jax.device_put(args[name], s) for name, s in zip(exe.argument_names, exe.in_shardings)}


def test_inside_jit_the_program_is_part_of_one_xla_program(mlp_exe):
    args = inputs()
    args["x"][1, 1] = np.nan
    f = jax.jit(lambda x, w1, w2: mlp_exe(x, w1, w2) * 2.0)
    placed = _placed(mlp_exe, args)
    np.testing.assert_allclose(np.asarray(f(**placed)), 2 * mlp_numpy(**args), rtol=1e-5, atol=1e-6, equal_nan=True)
    # the caller's layouts differ (replicated, or on one device): jax reshards at the boundary
    np.testing.assert_allclose(np.asarray(f(**args)), 2 * mlp_numpy(**args), rtol=1e-5, atol=1e-6, equal_nan=True)
    compiled = f.lower(**placed).compile().as_text()
    assert "callback" not in compiled.lower()
    assert "stablehlo.tanh" in f.lower(**placed).as_text()  # MeshIR's per-device module, merged in


def test_a_jit_training_loop_with_a_meshir_model_body_matches_meshir_and_jax(loss_exe):
    """Three SGD steps: jax.value_and_grad through the MeshIR loss inside jax.jit, against the
    same model in plain JAX and against MeshIR's own value_and_grad program."""
    args = inputs()
    labels = _labels()
    meshir_grad = mi.compile(mi.value_and_grad(loss(loss_exe.mesh.shape), wrt=["w1", "w2"], result="loss"),
                             layout=LAYOUTS["2d" if len(loss_exe.mesh.axes) == 2 else "data"][1])

    def step_with(loss_fn):
        @jax.jit
        def step(w1, w2, x, labels):
            value, (g1, g2) = jax.value_and_grad(lambda w1, w2: loss_fn(x, w1, w2, labels)[0], argnums=(0, 1))(w1, w2)
            return value, g1, g2, w1 - 0.5 * g1, w2 - 0.5 * g2
        return step

    via_meshir = step_with(lambda x, w1, w2, labels: loss_exe(x, w1, w2, labels))
    via_jax = step_with(loss_jax)
    w = {"meshir": (args["w1"], args["w2"]), "jax": (args["w1"], args["w2"]), "alone": (args["w1"], args["w2"])}
    losses = []
    for _ in range(3):
        a = via_meshir(*w["meshir"], args["x"], labels)
        b = via_jax(*w["jax"], args["x"], labels)
        c = meshir_grad(x=args["x"], w1=w["alone"][0], w2=w["alone"][1], labels=labels)
        for got, want in ((a[:3], b[:3]), (a[:3], tuple(c))):
            for g, e in zip(got, want):
                np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5, atol=1e-6)
        w["meshir"], w["jax"] = a[3:], b[3:]
        w["alone"] = (np.asarray(w["alone"][0]) - 0.5 * np.asarray(c[1]), np.asarray(w["alone"][1]) - 0.5 * np.asarray(c[2]))
        losses.append(float(a[0]))
    assert losses[-1] < losses[0]


def test_grad_runs_meshirs_vjp_program_and_never_traces_meshir_ops(loss_exe):
    args, labels = inputs(), _labels()
    jaxpr = str(jax.make_jaxpr(jax.grad(lambda w1: loss_exe(args["x"], w1, args["w2"], labels)[0]))(args["w1"]))
    assert "call_exported" in jaxpr and "loss_grad" in jaxpr  # the forward, then MeshIR's gradient program
    assert "tanh" not in jaxpr and "dot_general" not in jaxpr  # no MeshIR op was traced into jax ops
    # outside jit, on NumPy inputs, and through both results (the logits' cotangent too)
    def total(w1, w2):
        value, logits = loss_exe(args["x"], w1, w2, labels)
        return value + jnp.sum(jnp.sin(logits))

    def total_jax(w1, w2):
        value, logits = loss_jax(args["x"], w1, w2, labels)
        return value + jnp.sum(jnp.sin(logits))

    got = jax.grad(total, argnums=(0, 1))(args["w1"], args["w2"])
    want = jax.grad(total_jax, argnums=(0, 1))(args["w1"], args["w2"])
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5, atol=1e-6)


def test_gradients_with_respect_to_the_inputs_and_second_calls_reuse_the_vjp(mlp_exe):
    args = inputs()
    f = jax.jit(jax.grad(lambda x, w1, w2: jnp.sum(mlp_exe(x, w1, w2) ** 2), argnums=(0, 1, 2)))
    ref = jax.grad(lambda x, w1, w2: jnp.sum((jnp.tanh(x @ w1) @ w2) ** 2), argnums=(0, 1, 2))(*args.values())
    for _ in range(2):
        for g, e in zip(f(*args.values()), ref):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5, atol=1e-6)
    assert len(mlp_exe._traced._vjps) == 1  # one VJP program for (y, {x, w1, w2}), compiled once


def test_a_training_step_runs_inside_jit():
    mesh, rules = LAYOUTS["2d"]
    step = mi.train_step(loss(mesh, with_logits=False), mi.SGD(0.5), params=["w1", "w2"])
    exe = mi.compile(step, layout=rules)
    args, labels = inputs(), _labels()
    kw = dict(x=args["x"], w1=args["w1"], w2=args["w2"], labels=labels, step=np.float32(1))
    state = mi.init_optimizer_state(step)
    direct = exe(**kw, **state)
    inside = jax.jit(lambda kw: exe(**kw))({**kw, **state})
    assert direct._fields == inside._fields
    for a, b in zip(direct, inside):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)


def test_vmap_is_refused_with_what_to_do_instead(mlp_exe):
    args = inputs()
    with pytest.raises(mi.MeshIRError, match=r"test_in_jax.py:\d+:\d+: error: jax.vmap over the MeshIR program @mlp "
                       r"\(batched argument #0, 3 entries\).*give the program a batch dim"):
        jax.vmap(lambda x: mlp_exe(x, args["w1"], args["w2"]))(np.stack([args["x"]] * 3))


def test_wrong_global_shapes_and_dtypes_are_refused_at_the_call(mlp_exe):
    args = inputs()
    with pytest.raises(mi.MeshIRValueError, match=r"argument 'x' of @mlp: expected global shape \[batch=8, d_model=4\], "
                       r"got \(8, 5\)"):
        jax.jit(lambda x: mlp_exe(x, args["w1"], args["w2"]))(np.ones((8, 5), np.float32))
    with pytest.raises(mi.MeshIRValueError, match=r"argument 'w1' of @mlp: expected element type f32 \(float32\) inside "
                       r"jax transformations, got bfloat16"):
        jax.jit(lambda w1: mlp_exe(args["x"], w1, args["w2"]))(jnp.ones((4, 6), jnp.bfloat16))


def test_arrays_on_other_devices_are_refused_by_jax_at_the_users_line(mlp_exe):
    args = inputs()
    four = jax.make_mesh((4,), ("x",), devices=jax.devices()[:4])
    x = jax.device_put(args["x"], NamedSharding(four, P("x")))
    with pytest.raises(ValueError, match=r"incompatible devices.*device ids \[0, 1, 2, 3\].*jit inside jit with "
                       r"device ids \[0, 1, 2, 3, 4, 5, 6, 7\].*test_in_jax.py"):
        jax.jit(lambda x: mlp_exe(x, args["w1"], args["w2"]))(x)


def test_donation_inside_jit_is_jaxs(mlp_exe):
    args = inputs()
    deleted = {}
    for name, body in (("jax", lambda x, w1, w2: jnp.tanh(x @ w1) @ w2), ("meshir", mlp_exe)):
        placed = _placed(mlp_exe, args)
        extra = jax.device_put(np.ones((8, 4), np.float32), mlp_exe.out_shardings[0])
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a donation jax could not use would warn
            out = jax.jit(lambda x, w1, w2, e: body(x, w1, w2) + e, donate_argnums=(3,))(**placed, e=extra)
        deleted[name] = (extra.is_deleted(), placed["x"].is_deleted())
        np.testing.assert_allclose(np.asarray(out), mlp_numpy(**args) + 1, rtol=1e-5, atol=1e-6)
    assert deleted["meshir"] == deleted["jax"] == (True, False)


def test_a_loaded_export_runs_inside_jit_but_has_no_gradient(mlp_exe):
    loaded = mi.load(mi.export(mlp_exe, format="bytecode"))
    args = inputs()
    np.testing.assert_allclose(np.asarray(jax.jit(lambda *a: loaded(*a))(*args.values())), mlp_numpy(**args),
                               rtol=1e-5, atol=1e-6)
    where = r"test_in_jax.py:\d+:\d+: error: jax cannot differentiate @mlp with respect to "
    with pytest.raises(mi.MeshIRError, match=where + r"'w1': this executable was loaded from an export"):
        jax.grad(lambda w1: jnp.sum(loaded(args["x"], w1, args["w2"])))(args["w1"])
    with pytest.raises(mi.MeshIRError, match=where + r"'x', 'w2': this executable was loaded from an export"):
        jax.jit(jax.grad(lambda x, w2: jnp.sum(loaded(x, args["w1"], w2)), argnums=(0, 1)))(args["x"], args["w2"])
    with pytest.raises(mi.MeshIRError, match=where + r"'w1'.*compile the program with mi.compile"):
        jax.vjp(lambda w1: loaded(args["x"], w1, args["w2"]), args["w1"])


def test_a_program_compiled_for_a_jax_mesh_runs_inside_jit_on_that_meshs_arrays():
    """Devices in reverse order: compiled for the caller's mesh, the call and its gradient run
    on the caller's arrays without a transfer, every shard where the caller's mesh puts it."""
    mesh_axes, rules = LAYOUTS["2d"]
    reverse = jax.sharding.Mesh(np.array(jax.devices()[:8][::-1]).reshape(4, 2), ("x", "y"))
    exe = mi.compile(mlp(mesh_axes), layout=rules, mesh=reverse)
    args = inputs()
    placed = {k: jax.device_put(v, NamedSharding(reverse, s.spec))
              for (k, v), s in zip(args.items(), exe.in_shardings)}
    out = jax.jit(lambda x, w1, w2: exe(x, w1, w2))(**placed)
    np.testing.assert_allclose(np.asarray(out), mlp_numpy(**args), rtol=1e-5, atol=1e-6)
    assert out.sharding.is_equivalent_to(NamedSharding(reverse, P("x", None)), 2)
    g = jax.jit(jax.grad(lambda w1: jnp.sum(exe(placed["x"], w1, placed["w2"]) ** 2)))(placed["w1"])
    want = jax.grad(lambda w1: jnp.sum((jnp.tanh(args["x"] @ w1) @ args["w2"]) ** 2))(args["w1"])
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=2e-5, atol=1e-6)


def test_a_one_device_program_runs_and_differentiates_inside_jit():
    """One partition: XLA skips SPMD partitioning, so the embedded module has its manual
    computation inlined (lowering/runtime/single_device.py), as PJRT's own does."""
    exe = mi.compile(mlp({"x": 1}), layout={"batch": "x"})
    args = inputs()
    np.testing.assert_allclose(np.asarray(jax.jit(lambda *a: exe(*a))(*args.values())), mlp_numpy(**args),
                               rtol=1e-5, atol=1e-6)
    g = jax.jit(jax.grad(lambda w1: jnp.sum(exe(args["x"], w1, args["w2"]) ** 2)))(args["w1"])
    want = jax.grad(lambda w1: jnp.sum((jnp.tanh(args["x"] @ w1) @ args["w2"]) ** 2))(args["w1"])
    np.testing.assert_allclose(np.asarray(g), np.asarray(want), rtol=2e-5, atol=1e-6)
    exported = jax.export.deserialize(bytearray(mi.export(exe, format="jax")))
    np.testing.assert_allclose(np.asarray(jax.jit(exported.call)(*args.values())[0]), mlp_numpy(**args),
                               rtol=1e-5, atol=1e-6)


def test_vjp_through_a_program_with_an_integer_result_and_an_argument_named_cotangent():
    """jax.vjp passes float0 cotangents for integer results; a program argument may be named
    `cotangent` (the VJP program's own extra argument is called so too)."""
    b = mi.Dim("b", 8)
    with mi.Program("two", mi.Mesh({"x": 8})) as prog:
        c = prog.argument("cotangent", [b])
        prog.result(mi.reduce_sum(c * c), name="loss")
        prog.result(mi.cast(c > 0, "i32"), name="positive")
    exe = mi.compile(prog, layout={"b": "x"})
    x = np.arange(8, dtype=np.float32) - 3
    out, pullback = jax.vjp(lambda v: tuple(exe(v)), x)
    (g,) = pullback((jnp.float32(1.0), np.zeros((8,), jax.dtypes.float0)))
    np.testing.assert_allclose(np.asarray(g), 2 * x, rtol=1e-6)
