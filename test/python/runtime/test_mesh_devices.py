"""Meshes with devices: `mi.Mesh(..., devices=)` and `jax.sharding.Mesh`es run each partition
on the device the user's mesh puts at its coordinates (lowering/runtime/devices.py), and the
mesh texts "x=4, y=2" and Mesh-TensorFlow's "x:4;y:2" (dialect/mesh.py)."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding

import meshir as mi

B, D, F = 8, 4, 6
LAYOUT = {"batch": "x", "d_ff": "y"}


def ffn(mesh) -> mi.Program:
    """h = relu(x · w1) [batch@x, d_ff@y], y = h · w2 [batch@x, d_model]: both axes, collectives."""
    batch, d_model, d_ff = mi.Dim("batch", B), mi.Dim("d_model", D), mi.Dim("d_ff", F * 2)
    with mi.Program("ffn", mesh, layout=LAYOUT if mesh is not None else None) as prog:
        x = prog.argument("x", [batch, d_model])
        w1 = prog.argument("w1", [d_model, d_ff])
        w2 = prog.argument("w2", [d_ff, d_model])
        h = mi.relu(mi.einsum(x, w1, output=[batch, d_ff]))
        prog.result(h, name="h")
        prog.result(mi.einsum(h, w2, output=[batch, d_model]), name="y")
    return prog


RNG = np.random.default_rng(0)
INPUTS = {"x": RNG.standard_normal((B, D), np.float32), "w1": RNG.standard_normal((D, F * 2), np.float32),
          "w2": RNG.standard_normal((F * 2, D), np.float32)}
H = np.maximum(INPUTS["x"] @ INPUTS["w1"], 0)
EXPECTED = {"h": H, "y": H @ INPUTS["w2"]}


def reversed_devices():
    return np.array(jax.devices()[:8][::-1]).reshape(4, 2)


def check_runs_on(exe, grid) -> None:
    """Results equal NumPy's, and each result's shard on the device at mesh position
    (i, j) of `grid` is the block a NamedSharding on a mesh of `grid` gives that position."""
    assert exe.devices == list(grid.flat)  # partition p on the p-th device, row-major
    user_mesh = jax.sharding.Mesh(grid, ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    out = exe(**INPUTS)
    for name in ("h", "y"):
        arr = getattr(out, name)
        np.testing.assert_allclose(np.asarray(arr), EXPECTED[name], rtol=1e-5, atol=1e-5)
        assert arr.sharding.mesh == user_mesh and list(arr.sharding.mesh.devices.flat) == list(grid.flat)
        wanted = NamedSharding(user_mesh, arr.sharding.spec).devices_indices_map(arr.shape)
        got = {shard.device: shard.index for shard in arr.addressable_shards}
        assert got == wanted
        for shard in arr.addressable_shards:  # each device holds its block's values
            np.testing.assert_allclose(np.asarray(shard.data), EXPECTED[name][shard.index], rtol=1e-5, atol=1e-5)


def test_a_jax_mesh_of_reversed_devices_runs_each_partition_where_it_says():
    grid = reversed_devices()
    prog = ffn(jax.sharding.Mesh(grid, ("x", "y")))
    exe = mi.compile(prog)
    check_runs_on(exe, grid)
    assert exe.out_shardings.h.spec == jax.sharding.PartitionSpec("x", "y")
    check_runs_on(mi.compile(prog, mode="gspmd"), grid)  # XLA's partitioner, same device assignment


def test_mi_mesh_with_devices_runs_on_them_flat_or_as_an_array():
    grid = reversed_devices()
    prog = ffn(mi.Mesh({"x": 4, "y": 2}, devices=list(grid.flat)))
    check_runs_on(mi.compile(prog), grid)
    check_runs_on(mi.compile(ffn(mi.Mesh("x:4;y:2", devices=grid))), grid)


def test_devices_stay_out_of_the_ir_and_of_equality():
    mesh = mi.Mesh({"x": 4, "y": 2}, devices=reversed_devices())
    plain = mi.Mesh({"x": 4, "y": 2})
    assert mesh == plain and hash(mesh) == hash(plain) and mesh.to_mlir_text() == plain.to_mlir_text()
    assert mesh.devices == tuple(reversed_devices().flat) and plain.devices is None
    assert "devices=" in repr(mesh) and "devices=" not in repr(plain)
    assert "device" not in str(ffn(mesh).module)


def test_program_on_make_mesh():
    jmesh = jax.make_mesh((4, 2), ("x", "y"))
    prog = ffn(jmesh)
    assert prog.mesh == mi.Mesh("x=4, y=2") and prog.mesh.devices == tuple(jmesh.devices.flat)
    check_runs_on(mi.compile(prog), jmesh.devices)


def test_compile_mesh_replaces_the_programs_devices():
    grid = reversed_devices()
    prog = ffn(mi.Mesh("x=4, y=2"))
    check_runs_on(mi.compile(prog, mesh=jax.sharding.Mesh(grid, ("x", "y"))), grid)
    on_jax_mesh = ffn(jax.make_mesh((4, 2), ("x", "y")))
    check_runs_on(mi.compile(on_jax_mesh, mesh=jax.sharding.Mesh(grid, ("x", "y"))), grid)
    # a compile mesh without devices leaves the program's
    check_runs_on(mi.compile(ffn(jax.sharding.Mesh(grid, ("x", "y"))), mesh="x=4, y=2"), grid)
    with pytest.raises(mi.MeshIRError, match="differs from the program's mesh"):
        mi.compile(prog, mesh=jax.make_mesh((2, 4), ("x", "y")))


def test_explicit_axes_are_accepted_and_results_use_auto_axes():
    grid = reversed_devices()
    explicit = jax.sharding.Mesh(grid, ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    exe = mi.compile(ffn(explicit))
    check_runs_on(exe, grid)
    assert exe.jax_mesh.axis_types == (AxisType.Auto,) * 2
    # arrays placed on the user's Explicit mesh are accepted as arguments
    placed = {n: jax.device_put(v, NamedSharding(explicit, s.spec))
              for (n, v), s in zip(INPUTS.items(), exe.in_shardings)}
    np.testing.assert_allclose(np.asarray(exe(**placed).y), EXPECTED["y"], rtol=1e-5, atol=1e-5)


def test_gradient_and_training_step_keep_the_devices():
    grid = reversed_devices()
    batch, d_model = mi.Dim("batch", B), mi.Dim("d_model", D)
    with mi.Program("loss", jax.sharding.Mesh(grid, ("x", "y")), layout={"batch": "x", "d_model": "y"}) as prog:
        x = prog.argument("x", [batch, d_model])
        w = prog.argument("w", [d_model])
        prog.result(mi.reduce_sum(x * w * w, output=[]), name="loss")
    grad = mi.grad(prog, wrt=["w"])
    assert grad.mesh.devices == tuple(grid.flat)
    assert mi.compile(grad).devices == list(grid.flat)
    step = mi.train_step(prog, mi.SGD(0.1), params=["w"])
    assert step.mesh.devices == tuple(grid.flat)
    exe = mi.compile(step)
    assert exe.devices == list(grid.flat)
    x, w = INPUTS["x"], np.arange(D, dtype=np.float32)
    out = exe(x=x, w=w, step=np.int32(0))
    np.testing.assert_allclose(np.asarray(out.w), w - 0.1 * 2 * w * x.sum(0), rtol=1e-5)
    assert list(out.w.sharding.mesh.devices.flat) == list(grid.flat)


# -- bad devices: located MeshIRErrors that name the values ------------------------------------


def test_devices_of_another_client_are_refused_at_compile():
    from meshir._jax_private import xla_client

    other = xla_client.make_cpu_client().devices()[0]  # a second CPU client: devices jax's backend lacks
    devices = [other] + jax.devices()[1:8]
    prog = ffn(mi.Mesh("x=4, y=2", devices=devices))
    with pytest.raises(mi.MeshIRError) as info:
        mi.compile(prog)
    message = str(info.value)
    assert message.startswith(f"{__file__}:"), message
    assert "device 0 of mesh @mesh" in message and "is not one of the cpu backend's devices" in message


@pytest.mark.parametrize("devices, kind, message", [
    (lambda ds: ds[:6], mi.MeshIRValueError, r"needs 8 devices, got 6: \[CpuDevice\(id=0\)"),
    (lambda ds: ds[:8] + ds[:1], mi.MeshIRValueError, "needs 8 devices, got 9"),
    (lambda ds: ds[:7] + ds[2:3], mi.MeshIRValueError, r"list CpuDevice\(id=2\) twice \(items 2 and 7\)"),
    (lambda ds: np.array(ds[:8]).reshape(2, 4), mi.MeshIRValueError,
     r"8 devices in a flat sequence or an array of shape \(4, 2\), got an array of shape \(2, 4\)"),
    (lambda ds: list(range(8)), mi.MeshIRTypeError, "item 0 is not a jax device, got int 0"),
    (lambda ds: "cpu", mi.MeshIRTypeError, "must be a sequence of jax devices"),
])
def test_bad_devices(devices, kind, message):
    with pytest.raises(kind, match=message) as info:
        mi.Mesh("x=4, y=2", devices=devices(jax.devices()))
    assert str(info.value).startswith(f"{__file__}:")


def test_devices_given_twice_and_bad_jax_axis_names():
    with pytest.raises(mi.MeshIRValueError, match="not both"):
        mi.Mesh(jax.make_mesh((4, 2), ("x", "y")), devices=jax.devices()[:8])
    with pytest.raises(mi.MeshIRValueError, match="'a-b' is not an identifier") as info:
        mi.Program("p", jax.make_mesh((8,), ("a-b",)))
    assert str(info.value).startswith(f"{__file__}:")


def test_auto_layout_takes_a_jax_mesh():
    prog = ffn(None)
    chosen = mi.auto_layout(prog, mesh=jax.make_mesh((4, 2), ("x", "y")))
    assert chosen.mesh == mi.Mesh("x=4, y=2")


# -- mesh text ------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["x=4, y=2", "x:4;y:2", " x : 4 ; y : 2 ", "x=4;y=2", "x:4, y:2"])
def test_mesh_text_in_either_form(text):
    assert mi.Mesh(text) == mi.Mesh({"x": 4, "y": 2})


@pytest.mark.parametrize("text, column, what", [
    ("x:4;y:", 7, "expected the size of axis 'y'"),
    ("x=4,y", 6, "expected '=' or ':' after axis name 'y'"),
    ("x=four", 3, "expected the size of axis 'x'"),
    ("4=x", 1, "expected an axis name"),
    ("x=4;;y=2", 5, "expected an axis name after ';'"),
    ("x=4;", 5, "expected an axis name after ';'"),
    ("x=4 y=2", 5, "expected ',' or ';' between axes"),
    ("x=4.5", 4, "expected ',' or ';' between axes"),
    ("x:-2", 3, "expected the size of axis 'x'"),
])
def test_malformed_mesh_text_names_the_column(text, column, what):
    with pytest.raises(mi.MeshIRValueError) as info:
        mi.Mesh(text)
    message = str(info.value)
    assert message.startswith(f"{__file__}:"), message
    assert f"malformed mesh {text!r} at column {column}: {what}" in message
    assert message.endswith(f"\n  {text}\n  {' ' * (column - 1)}^")


def test_malformed_mesh_text_given_to_compile_is_located_at_the_call():
    with pytest.raises(mi.MeshIRValueError) as info:
        mi.compile(ffn(None), mesh="x:4;y:")
    assert str(info.value).startswith(f"{__file__}:") and "at column 7" in str(info.value)
