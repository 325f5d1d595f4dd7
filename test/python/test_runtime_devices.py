"""Devices, jax meshes and shardings of meshir.lowering.runtime (lowering/runtime/devices.py)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import jax
import pytest
from jax.sharding import AxisType, PartitionSpec as P

from meshir.dialect import Mesh, MeshIRError, TensorType
from meshir.lowering.runtime import jax_mesh, mesh_devices, named_sharding


def run_fresh(code: str, **env) -> subprocess.CompletedProcess:
    """Run `code` in a new Python process (jax not started), without the inherited XLA flags."""
    environ = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_PLATFORMS", "JAX_NUM_CPU_DEVICES")}
    environ.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=environ, timeout=60)


def test_cpu_meshes_of_up_to_8_devices_need_no_setup():
    done = run_fresh("""
        import jax
        from meshir.dialect import Mesh
        from meshir.lowering.runtime import jax_mesh
        m = jax_mesh(Mesh({"x": 4, "y": 2}))
        print(jax.device_count(), m.devices.shape)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "8 (4, 2)"


def test_user_choice_of_more_devices_is_kept():
    done = run_fresh("""
        import jax
        from meshir.lowering.runtime import ensure_cpu_devices
        ensure_cpu_devices(2)
        print(jax.device_count())
    """, XLA_FLAGS="--xla_force_host_platform_device_count=12")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "12"


def test_jax_started_with_too_few_devices_is_a_clear_error():
    done = run_fresh("""
        import jax
        jax.config.update("jax_num_cpu_devices", 2)
        jax.numpy.zeros(1)  # the user's own jax code starts the backend first
        from meshir.dialect import Mesh, MeshIRError
        from meshir.lowering.runtime import jax_mesh
        try:
            jax_mesh(Mesh({"x": 4}))
        except MeshIRError as e:
            print(e)
    """)
    assert done.returncode == 0, done.stderr
    message = done.stdout
    assert "needs 4 devices, but the cpu backend has 2" in message
    assert 'jax.config.update("jax_num_cpu_devices", 4)' in message
    assert "XLA_FLAGS=--xla_force_host_platform_device_count=4" in message
    assert "before other jax calls" in message


def test_mesh_larger_than_the_devices_in_this_process():
    jax.devices()  # the backend runs (8 CPU devices, conftest)
    with pytest.raises(MeshIRError, match=r'<\["x"=4, "y"=4\]> needs 16 devices, but the cpu backend has 8'):
        mesh_devices(Mesh({"x": 4, "y": 4}))


@pytest.mark.parametrize("axes", [{"x": 1}, {"x": 8}, {"x": 4, "y": 2}, {"x": 2, "y": 4}, {"a": 2, "b": 2, "c": 2}])
def test_jax_mesh_is_row_major_over_partition_ids_with_auto_axes(axes):
    mesh = Mesh(axes)
    m = jax_mesh(mesh)
    assert m.axis_names == mesh.axis_names
    assert dict(m.shape) == axes
    assert [d.id for d in m.devices.flat] == list(range(mesh.size))
    assert m.axis_types == (AxisType.Auto,) * len(axes)


@pytest.mark.parametrize(
    "text, spec",
    [
        ("!mtf.tensor<b=8@x, d=4, f32>", P("x", None)),
        ("!mtf.tensor<b=8@(), d=4@y, f32>", P(None, "y")),
        ("!mtf.tensor<b=8@(x,y), d=4, f32>", P(("x", "y"), None)),
        ("!mtf.tensor<b=8@(y,x), d=4, f32>", P(("y", "x"), None)),
        ("!mtf.tensor<f32>", P()),
    ],
)
def test_named_sharding_of_a_layout(text, spec):
    sharding = named_sharding(Mesh({"x": 4, "y": 2}), TensorType.parse(text))
    assert sharding.spec == spec
    assert sharding.mesh.axis_names == ("x", "y")


def test_named_sharding_refuses_partial_and_indivisible_types():
    mesh = Mesh({"x": 4, "y": 2})
    with pytest.raises(MeshIRError, match="partial value"):
        named_sharding(mesh, TensorType.parse("!mtf.tensor<b=8@x, f32, partial@y>"))
    with pytest.raises(MeshIRError, match="'b' of size 6 is not divisible by 4"):
        named_sharding(mesh, TensorType.parse("!mtf.tensor<b=6@x, f32>"))
