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


USERS_COUNT = """
    import jax
    {before}
    import meshir as mi
    {after}
    from meshir.lowering.runtime.devices import users_cpu_devices
    print(users_cpu_devices(), end=" | ")
    for size in {sizes}:
        text = (f'sdy.mesh @mesh = <["x"={{size}}]> func.func @f(%a: !mtf.tensor<b=16@x, f32>) -> '
                '!mtf.tensor<b=16@x, f32> {{ return %a : !mtf.tensor<b=16@x, f32> }}')
        try:
            mi.compile(mi.parse_module(text)[0])
            print("compiled", end=" | ")
        except mi.MeshIRError as e:
            print(str(e).partition("error: ")[2], end=" | ")
    print(jax.device_count())
"""
SET_4 = 'jax.config.update("jax_num_cpu_devices", 4)'


@pytest.mark.parametrize("before, after, env", [(SET_4, "", {}), ("", SET_4, {}), ("", "", {"JAX_NUM_CPU_DEVICES": "4"}),
                                                ("", "", {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"})],
                         ids=["config before import", "config after import", "JAX_NUM_CPU_DEVICES", "XLA_FLAGS"])
def test_a_users_device_count_stands_and_a_larger_mesh_names_both_counts(before, after, env):
    """However the user set 4 CPU devices, jax has 4 (MeshIR used to raise a count set before
    its import to 8): a mesh of 4 compiles, one of 8 is refused naming 8, 4 and the setting."""
    done = run_fresh(USERS_COUNT.format(before=before, after=after, sizes=[4, 8]), **env)
    assert done.returncode == 0, done.stderr
    setting = "XLA_FLAGS=--xla_force_host_platform_device_count=4" if "XLA_FLAGS" in env else "jax_num_cpu_devices=4"
    assert done.stdout.strip().split(" | ") == [
        "4", "compiled",
        f'mesh @mesh = <["x"=8]> needs 8 devices, but the cpu backend has 4, the count you configured ({setting}): '
        f'before jax starts, configure 8 or more (jax.config.update("jax_num_cpu_devices", 8) or '
        f"XLA_FLAGS=--xla_force_host_platform_device_count=8), or declare a mesh of at most 4 devices",
        "4"], done.stdout


def test_without_a_users_count_meshir_configures_what_the_mesh_needs():
    done = run_fresh(USERS_COUNT.format(before="", after="", sizes=[16]))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None | compiled | 16"


def test_jax_started_with_too_few_devices_is_a_clear_error():
    done = run_fresh("""
        import jax
        jax.numpy.zeros(1)  # the user's own jax code starts the backend first, with 1 CPU device
        from meshir.dialect import Mesh, MeshIRError
        from meshir.lowering.runtime import jax_mesh
        try:
            jax_mesh(Mesh({"x": 4}))
        except MeshIRError as e:
            print(e)
    """)
    assert done.returncode == 0, done.stderr
    message = done.stdout
    assert "needs 4 devices, but the cpu backend has 1" in message
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
