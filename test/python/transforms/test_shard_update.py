"""Weight-update sharding (ZeRO 1-2) and parameter sharding (ZeRO-3 / FSDP) in mi.train_step.

Oracles: the unsharded step under the same layout and the reference interpreter (losses and
parameters over several steps, with NaN data too); XLA's compiled HLO for the bytes (the
reduce-scatter and all-gather of a sharded update move what the all-reduce moved), its
memory analysis and the argument shards for the optimizer state, and its cost analysis for
the optimizer's FLOPs.
"""
import numpy as np
import pytest

import meshir as mi
from meshir.api.compilation.compile_report import collectives_of
from meshir.dialect.signature import entry_function, signature

B, M, F = mi.Dim("batch", 16), mi.Dim("d_model", 16), mi.Dim("d_ff", 32)
MESH = mi.Mesh({"x": 4, "y": 2})
TWO_D = {"batch": "x", "d_ff": "y"}
DATA_PARALLEL = {"batch": ("x", "y")}
OFF, UPDATE, PARAMS = {}, {"shard_update": True}, {"shard_update": True, "shard_params": True}


def ffn_loss(mesh=MESH):
    with mi.Program("ffn", mesh) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, F]), prog.argument("w2", [F, M])
        b1 = prog.argument("b1", [F])
        y = mi.einsum(mi.relu(mi.einsum(x, w1, output=[B, F]) + b1), w2, output=[B, M])
        prog.result(mi.mean((y - x) * (y - x)), name="loss")
    return prog


def initial(seed=0, nan=False):
    rng = np.random.default_rng(seed)
    data = {"x": rng.standard_normal((16, 16)).astype(np.float32)}
    if nan:
        data["x"][3, 5] = np.nan
    params = {"w1": (rng.standard_normal((16, 32)) * 0.2).astype(np.float32),
              "w2": (rng.standard_normal((32, 16)) * 0.2).astype(np.float32),
              "b1": np.zeros(32, np.float32)}
    return data, params


def run(step, runner, steps=3, nan=False):
    data, params = initial(nan=nan)
    state = mi.init_optimizer_state(step)
    losses = []
    for t in range(1, steps + 1):
        out = dict(zip(step.program.result_names, runner(**data, **params, **state, step=np.float32(t))))
        losses.append(float(np.asarray(out["loss"])))
        params = {k: np.asarray(out[k]) for k in params}
        state = {k: np.asarray(out[k]) for k in state}
    return losses, params


OPTIMIZERS = [mi.Adam(1e-2), mi.SGD(0.1, momentum=0.9), mi.Adafactor(min_dim_size_to_factor=16)]


@pytest.mark.parametrize("optimizer", OPTIMIZERS, ids=["adam", "momentum", "adafactor"])
@pytest.mark.parametrize("sharding", [UPDATE, PARAMS], ids=["update", "params"])
def test_sharded_steps_equal_the_unsharded_and_the_interpreter(optimizer, sharding):
    plain = mi.train_step(ffn_loss(), optimizer, params=["w1", "w2", "b1"])
    sharded = mi.train_step(ffn_loss(), optimizer, params=["w1", "w2", "b1"], **sharding)
    reference, ref_params = run(plain, lambda **kw: mi.interpret(plain, **kw))
    interpreted, _ = run(sharded, lambda **kw: mi.interpret(sharded, **kw))
    np.testing.assert_allclose(interpreted, reference, rtol=1e-6)
    for layout in (TWO_D, DATA_PARALLEL):
        losses, params = run(sharded, mi.compile(sharded, layout=layout))
        np.testing.assert_allclose(losses, reference, rtol=1e-5)
        for k in ref_params:
            np.testing.assert_allclose(params[k], ref_params[k], rtol=1e-4, atol=1e-6)


def test_nan_data_gives_the_same_nan_curve():
    plain = mi.train_step(ffn_loss(), mi.Adam(1e-2), params=["w1", "w2", "b1"])
    sharded = mi.train_step(ffn_loss(), mi.Adam(1e-2), params=["w1", "w2", "b1"], **PARAMS)
    want, want_params = run(plain, mi.compile(plain, layout=TWO_D), nan=True)
    got, got_params = run(sharded, mi.compile(sharded, layout=TWO_D), nan=True)
    assert np.isnan(want).all() and np.isnan(got).all()
    for k in want_params:
        np.testing.assert_array_equal(np.isnan(got_params[k]), np.isnan(want_params[k]))


def _param_gradient_bytes(exe):
    """Bytes per device of the compiled HLO's collectives over the data axis x (group size 4
    on the 2-D layout), by kind: the parameters' gradients and (sharded) updates."""
    from meshir.lowering.runtime import hlo_collectives as stats
    out = {}
    for c in stats.parse_collectives(exe.compiled_hlo_text()):
        if c.group_size == 4:
            out[c.kind] = out.get(c.kind, 0) + c.bytes_per_device
    return out


@pytest.mark.parametrize("sharding", [UPDATE, PARAMS], ids=["update", "params"])
def test_hlo_reduce_scatter_plus_all_gather_moves_what_the_all_reduce_moved(sharding):
    plain = mi.compile(mi.train_step(ffn_loss(), mi.Adam(), params=["w1", "w2", "b1"]), layout=TWO_D)
    sharded = mi.compile(mi.train_step(ffn_loss(), mi.Adam(), params=["w1", "w2", "b1"], **sharding), layout=TWO_D)
    before, after = _param_gradient_bytes(plain), _param_gradient_bytes(sharded)
    assert set(before) == {"all-reduce"}  # the weight gradients (and the loss, 4 bytes per device... on x)
    assert {"reduce-scatter", "all-gather"} <= set(after)
    assert after.get("all-reduce", 0) < before["all-reduce"]
    assert sum(after.values()) == sum(before.values())


def _argument_bytes(exe, names) -> int:
    """Bytes per device of the named arguments of the partitioned step."""
    sig = signature(entry_function(exe.partitioned_module))
    return sum(int(np.prod(t.local_shape(MESH.shape))) * t.dtype.itemsize
               for n, t in zip(sig.arg_names, sig.arg_types) if n in names)


def test_optimizer_state_per_device_drops_by_the_data_parallel_factor():
    def state_bytes(exe, step):
        return _argument_bytes(exe, step.state_shapes())

    plain_step = mi.train_step(ffn_loss(), mi.Adam(), params=["w1", "w2", "b1"])
    sharded_step = mi.train_step(ffn_loss(), mi.Adam(), params=["w1", "w2", "b1"], **UPDATE)
    params_step = mi.train_step(ffn_loss(), mi.Adam(), params=["w1", "w2", "b1"], **PARAMS)
    plain, sharded, fsdp = (mi.compile(s, layout=TWO_D) for s in (plain_step, sharded_step, params_step))
    assert state_bytes(sharded, sharded_step) * 4 == state_bytes(plain, plain_step)
    # XLA's view: arguments per device shrink by the state's 3/4 (and the parameters' with ZeRO-3)
    state = state_bytes(plain, plain_step)
    params = _argument_bytes(plain, ("w1", "w2", "b1"))
    args = [e.memory_analysis().argument_size_in_bytes for e in (plain, sharded, fsdp)]
    assert args[0] - args[1] == state * 3 // 4
    assert args[0] - args[2] == (state + params) * 3 // 4


def test_optimizer_flops_per_device_drop_by_the_data_parallel_factor():
    """Adam's FLOPs beyond plain SGD's (XLA's cost analysis of the two compiled steps, so the
    gradient and its collectives cancel) shrink by the data-parallel factor, 4."""
    wide = mi.Dim("d_ff", 512)

    def loss():
        with mi.Program("ffn", MESH) as prog:
            x, w1 = prog.argument("x", [B, M]), prog.argument("w1", [M, wide])
            prog.result(mi.mean(mi.einsum(x, w1, output=[B, wide])), name="loss")
        return prog

    def flops(optimizer, **sharding):
        step = mi.train_step(loss(), optimizer, params=["w1"], **sharding)
        return mi.compile(step, layout=TWO_D).cost_analysis()["flops"]

    plain = flops(mi.Adam()) - flops(mi.SGD(0.1))
    sharded = flops(mi.Adam(), **UPDATE) - flops(mi.SGD(0.1), **UPDATE)
    assert plain > 0 and sharded * 4 == pytest.approx(plain, rel=0.05), (plain, sharded)


def test_the_data_parallel_axes_and_the_split_dims_are_recorded():
    from meshir.dialect.update_sharding import update_split

    step = mi.train_step(ffn_loss(), mi.Adam(), params=["w1", "w2", "b1"], **UPDATE)
    exe = mi.compile(step, layout=TWO_D)
    assert update_split(entry_function(exe.partitioned_module)) == {
        "b1": ("d_ff", ("y", "x")), "w1": ("d_model", ("x",)), "w2": ("d_model", ("x",))}
    dp = mi.compile(step, layout=DATA_PARALLEL)
    assert update_split(entry_function(dp.partitioned_module))["w1"] == ("d_ff", ("x", "y"))
    # the memory estimate counts each gradient in its update layout
    plain = mi.compile(mi.train_step(ffn_loss(), mi.Adam(), params=["w1", "w2", "b1"]), layout=TWO_D)
    assert exe.compile_report.memory.categories["gradients"] * 4 == plain.compile_report.memory.categories["gradients"]


def test_fsdp_in_a_scanned_stack_gathers_inside_the_loop_bodies():
    """ZeRO-3 with stacked layers: the parameter slice is gathered in the forward scan's body
    and again in the backward scan's (which recomputes the body), never the whole stack."""
    layers, out = mi.Dim("layers", 3), mi.Dim("d_out", 16)

    def stacked_loss():
        with mi.Program("stack", MESH) as prog:
            x = prog.argument("x", [B, M])
            w = prog.argument("w", [layers, M, out])

            def body(h, w_i):
                return mi.rename(mi.tanh(mi.einsum(h, w_i, output=[B, out])), "d_out", "d_model"), None

            h = mi.scan(body, x, w, dim="layers")[0]
            prog.result(mi.mean(h * h), name="loss")
        return prog

    plain = mi.train_step(stacked_loss(), mi.Adam(1e-2), params=["w"])
    fsdp = mi.train_step(stacked_loss(), mi.Adam(1e-2), params=["w"], **PARAMS)
    rng = np.random.default_rng(1)
    data = {"x": rng.standard_normal((16, 16)).astype(np.float32),
            "w": (rng.standard_normal((3, 16, 16)) * 0.3).astype(np.float32)}

    def losses(step, runner):
        params, state, out = {"w": data["w"]}, mi.init_optimizer_state(step), []
        for t in (1, 2):
            r = dict(zip(step.program.result_names, runner(x=data["x"], **params, **state, step=np.float32(t))))
            out.append(float(np.asarray(r["loss"])))
            params, state = {"w": np.asarray(r["w"])}, {k: np.asarray(r[k]) for k in state}
        return out

    layout = {"batch": "x", "d_out": "y"}
    exe = mi.compile(fsdp, layout=layout)
    np.testing.assert_allclose(losses(fsdp, exe), losses(plain, lambda **kw: mi.interpret(plain, **kw)), rtol=1e-5)
    records = collectives_of(exe.partitioned_module)
    gathers = [c for c in records if c.kind == "all_gather" and "x" in c.axes]
    assert len(gathers) == 2 and all(c.repeats == 3 for c in gathers), gathers
    # each layer's gradient slice is reduce-scattered in the backward body: the stack never whole
    assert [c.repeats for c in records if c.kind == "reduce_scatter" and c.axes == ("x",)] == [3]
    assert not [c for c in records if c.kind == "all_reduce" and c.axes == ("x",)]
    # ZeRO 1-2 on the stack moves exactly the unsharded step's bytes
    zero2 = mi.compile(mi.train_step(stacked_loss(), mi.Adam(1e-2), params=["w"], **UPDATE), layout=layout)
    unsharded = mi.compile(plain, layout=layout)
    assert zero2.compile_report.total_bytes_per_device == unsharded.compile_report.total_bytes_per_device
    sig = signature(entry_function(exe.partitioned_module))
    assert sig.arg_types[sig.arg_names.index("w")].dim("d_model").axes == ("x",)  # stored split between steps


def test_microbatches_and_update_sharding_compose():
    plain = mi.train_step(ffn_loss(), mi.Adam(1e-2), params=["w1", "w2", "b1"])
    both = mi.train_step(ffn_loss(), mi.Adam(1e-2), params=["w1", "w2", "b1"], microbatches={"batch": 2}, **UPDATE)
    reference, _ = run(plain, mi.compile(plain, layout=TWO_D))
    np.testing.assert_allclose(run(both, mi.compile(both, layout=TWO_D))[0], reference, rtol=1e-5)


def test_named_axes_and_meshir_opt_pass():
    step = mi.train_step(ffn_loss(), mi.Adam(), params=["w1", "w2", "b1"], shard_update=("x",))
    from meshir.dialect.update_sharding import update_split

    propagated = mi.propagate(step, layout=DATA_PARALLEL)
    # only the named axis, although y splits the batch too
    assert update_split(entry_function(propagated))["w1"] == ("d_ff", ("x",))
    assert "param_layout" not in str(propagated)


# -- bad input ---------------------------------------------------------------------------------------


def test_an_axis_that_divides_no_dim_is_refused_naming_parameter_dims_and_axes():
    odd = mi.Dim("odd", 3)
    with mi.Program("odd", MESH) as prog:
        x, w = prog.argument("x", [B, M]), prog.argument("w", [odd])
        prog.result(mi.mean(x) + mi.reduce_sum(w), name="loss")
    step = mi.train_step(prog, mi.Adam(), params=["w"], shard_update=True)
    with pytest.raises(mi.MeshIRError, match=r"mesh axes x \(4 devices\) divides no dim of parameter 'w' \(odd=3\)"):
        mi.compile(step, layout=TWO_D)


def test_no_data_parallel_axis_is_refused():
    step = mi.train_step(ffn_loss(), mi.Adam(), params=["w1", "w2", "b1"], shard_update=True)
    with pytest.raises(mi.MeshIRError, match="found no data-parallel mesh axis"):
        mi.compile(step, layout={"d_ff": ("x", "y")})


def test_unknown_axis_is_refused():
    step = mi.train_step(ffn_loss(), mi.Adam(), params=["w1"], shard_update=("z",))
    with pytest.raises(mi.MeshIRError, match="mesh axis 'z', which mesh @mesh does not have"):
        mi.compile(step, layout=TWO_D)


@pytest.mark.parametrize("kwargs, message", [
    ({"shard_params": True}, "shard_params=True needs shard_update"),
    ({"shard_update": 3}, "shard_update must be True, False or mesh axis names"),
    ({"shard_update": ()}, "shard_update names no mesh axis"),
    ({"shard_update": True, "shard_params": "yes"}, "shard_params"),
])
def test_bad_options_are_refused_at_the_call(kwargs, message):
    with pytest.raises(mi.MeshIRError, match=message) as info:
        mi.train_step(ffn_loss(), mi.Adam(), params=["w1"], **kwargs)
    assert "test_shard_update.py" in str(info.value)


def test_propagation_refuses_unresolved_markers():
    from meshir.transforms import Pipeline
    from meshir.transforms.passes.propagate_sharding import PropagateShardingPass

    step = mi.train_step(ffn_loss(), mi.Adam(), params=["w1"], shard_update=True)
    module = step.module.operation.clone()
    with pytest.raises(mi.MeshIRError, match="run mtf-shard-update before mtf-propagate-sharding"):
        Pipeline([PropagateShardingPass()]).apply(module)


def test_microbatch_accumulator_is_split_and_each_microbatch_reduce_scattered():
    """ZeRO-2 with gradient accumulation: the running sum is a carry in the update layout,
    so each microbatch's pending sum is reduce-scattered into it; the step equals the plain one."""
    plain = mi.train_step(ffn_loss(), mi.Adam(1e-2), params=["w1", "w2", "b1"])
    both = mi.train_step(ffn_loss(), mi.Adam(1e-2), params=["w1", "w2", "b1"], microbatches={"batch": 2}, **UPDATE)
    exe = mi.compile(both, layout=TWO_D)
    scattered = [c for c in exe.compile_report.collectives if c.kind == "reduce_scatter" and c.axes == ("x",)]
    assert sorted(c.repeats for c in scattered) == [2, 2, 2]
    reference, _ = run(plain, mi.compile(plain, layout=TWO_D))
    np.testing.assert_allclose(run(both, exe)[0], reference, rtol=1e-5)


def test_each_sharded_update_collective_says_it_is_weight_update_sharding():
    step = mi.train_step(ffn_loss(), mi.Adam(), params=["w1"], **UPDATE)  # this line is the source
    exe = mi.compile(step, layout=TWO_D)
    records = [c for c in exe.compile_report.collectives if c.kind in ("reduce_scatter", "all_gather")]
    assert len(records) == 2
    for c in records:
        texts = [s.text for s in c.provenance.sources]
        assert any(t.startswith("weight-update sharding of parameter 'w1' (mi.train_step at ") and
                   "test_shard_update.py" in t for t in texts), texts
