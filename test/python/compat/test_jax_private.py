"""Smoke test of every private jax/jaxlib name MeshIR uses (python/meshir/_jax_private.py):
a jax upgrade that moves one of them fails here first."""
from meshir import _jax_private as jp


def test_context_knows_func_stablehlo_sdy_and_unregistered_mtf():
    ctx = jp.new_context()
    with ctx:
        module = jp.ir.Module.parse(
            'sdy.mesh @m = <["x"=2]>\n'
            'func.func @f(%a: !mtf.tensor<b=2@x, f32>) -> !mtf.tensor<b=2@x, f32> {\n'
            '  %0 = "mtf.relu"(%a) : (!mtf.tensor<b=2@x, f32>) -> !mtf.tensor<b=2@x, f32>\n'
            "  return %0 : !mtf.tensor<b=2@x, f32>\n}\n"
        )
        assert "mtf.relu" in str(module)
        assert jp.sdy.MeshAttr(module.body.operations[0].attributes["mesh"]).axes


def test_registration_decorators_are_callable():
    assert callable(jp.register_dialect) and callable(jp.register_operation)


def test_python_pass_runs_in_a_pass_manager():
    ctx = jp.new_context()
    seen = []
    with ctx:
        module = jp.ir.Module.parse("func.func @f() { return }")
        pm = jp.passmanager.PassManager.parse("builtin.module(canonicalize)")
        pm.add(lambda op, p: seen.append(op.name), name="probe", argument="probe")
        pm.run(module.operation)
    assert seen == ["builtin.module"]


def test_pjrt_helpers_compile_and_run_a_one_device_module():
    import jax
    import numpy as np

    devices = jax.devices()[:1]
    text = (
        "module attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
        "  func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        "    %0 = stablehlo.add %a, %a : tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}\n"
    )
    exe = jp.compile_and_load(text, devices)
    out = exe.execute_sharded([jax.device_put(np.array([1.0, 2.0], np.float32), devices[0])])
    (shards,) = out.disassemble_into_single_device_arrays()
    np.testing.assert_array_equal(np.asarray(shards[0]), [2.0, 4.0])


def test_runtime_helpers_backend_started_execute_and_result_handlers():
    import jax
    import numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P

    from meshir.lowering.runtime.pjrt import compile_for_devices

    devices = jax.devices()[:2]
    assert jp.backend_started()  # jax.devices() started it
    assert not jp.distributed_initialized()
    mesh = jax.sharding.Mesh(np.array(devices), ("x",))
    split = NamedSharding(mesh, P("x"))
    text = (
        "module attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n"
        "  sdy.mesh @mesh = <[\"x\"=2]>\n"
        "  func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) -> "
        "(tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>}) {\n"
        "    %0 = stablehlo.add %a, %a : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n"
    )
    exe = compile_for_devices(text, devices)  # jp.compile_options and jp.device_list, with SPMD and Shardy on
    aval = jp.abstract_array((4,), np.dtype(np.float32), split)
    (placed,) = jp.put_host_arrays([np.arange(4, dtype=np.float32)], [split])
    assert placed.sharding == split and (placed.shape, placed.dtype) == (aval.shape, aval.dtype)
    assert jax.device_put(np.zeros(4, np.float32), split).aval == aval  # equal to jax's own
    (out,) = jp.execute(exe, [placed], jp.result_handlers([aval], [split]))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, 4.0, 6.0])
    assert out.sharding is split and out.aval is aval

    compiled = jax.jit(lambda a: a * 3, in_shardings=split, out_shardings=split).lower(placed).compile()
    loaded, handlers = jp.compiled_executable_and_handlers(compiled)
    (tripled,) = jp.execute(loaded, [placed], handlers)
    np.testing.assert_array_equal(np.asarray(tripled), [0.0, 3.0, 6.0, 9.0])

    # jax.jit's C++ dispatch around the same executable: one miss, then C++ alone
    misses = []

    def cache_miss(*args):
        misses.append(args)
        arrays = [a if isinstance(a, jax.Array) else jp.put_host_arrays([a], [split])[0] for a in args]
        (result,) = jp.execute(exe, arrays, jp.result_handlers([aval], [split]))
        return result, jp.fastpath_data(exe, result, [split]), False

    dispatch = jp.cpp_dispatcher("main", cache_miss, lambda x, sharding, layout: jp.put_host_arrays([x], [sharding])[0])
    assert dispatch is not None, "jax's private dispatch changed: MeshIR would fall back to Python calls"
    out = placed
    for _ in range(3):
        out = dispatch(out)
    np.testing.assert_array_equal(np.asarray(out), [0.0, 8.0, 16.0, 24.0])
    assert len(misses) == 1 and out.sharding == split
    for _ in range(2):  # a miss, then a hit that puts the NumPy array on the devices by the hook
        np.testing.assert_array_equal(np.asarray(dispatch(np.ones(4, np.float32))), [2.0] * 4)
    assert len(misses) == 2
    assert not jp.jit_disabled()
    with jax.disable_jit():
        assert jp.jit_disabled()


def test_dialect_python_module_is_found_without_an_import_search():
    import meshir.dialect.ops  # noqa: F401  (registers the mtf module)
    from jaxlib.mlir.dialects._ods_common import _cext

    assert _cext.globals._check_dialect_module_loaded("mtf")


def test_export_helpers_round_trip_a_module_and_build_an_exported():
    import jax

    text = 'module {\n  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n    return %a : tensor<2xf32>\n  }\n}\n'
    artifact = jp.portable_artifact(text)
    assert artifact.startswith(b"ML\xefR") and "func.func" in jp.portable_artifact_text(artifact)
    assert jp.stablehlo_version().count(".") == 2
    assert jp.export_platform(jax.devices()[0]) == "cpu"
    aval = jax.core.ShapedArray((2,), "float32")
    exported = jp.make_exported(
        fun_name="f", in_tree=jax.tree_util.tree_structure(((0,), {})), in_avals=(aval,),
        out_tree=jax.tree_util.tree_structure((0,)), out_avals=(aval,), has_named_shardings=True,
        in_named_shardings=(None,), out_named_shardings=(None,), in_shardings_hlo=(None,), out_shardings_hlo=(None,),
        nr_devices=1, platforms=("cpu",), ordered_effects=(), unordered_effects=(), disabled_safety_checks=(),
        mlir_module_serialized=artifact, calling_convention_version=jax.config.jax_export_calling_convention_version,
        module_kept_var_idx=(0,), uses_global_constants=False, get_vjp=None)
    assert list(exported.call(jax.numpy.arange(2.0))[0]) == [0.0, 1.0]


def test_jax_locations_skip_registered_files(tmp_path):
    jp.hide_from_jax_locations(str(tmp_path / "nothing.py"))  # accepted; jax's own list grows


def test_compile_only_helpers_tell_devices_apart_and_compile_for_a_topology():
    """`is_compile_only_device` on this machine's devices; with libtpu, `compile_only` on a TPU
    topology's devices (the TPU tests cover the rest)."""
    import jax
    import pytest

    assert not jp.is_compile_only_device(jax.devices()[0])
    from meshir.lowering.runtime import tpu

    if tpu.libtpu_version() is None:
        pytest.skip('libtpu is not installed (pip install "meshir[tpu]")')
    devices = list(tpu.topology_devices("v5e:2x4"))[:1]
    assert jp.is_compile_only_device(devices[0])
    ctx = jp.new_context()
    with ctx:
        module = jp.ir.Module.parse(
            "module attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
            "  func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
            "    %0 = stablehlo.add %a, %a : tensor<8xf32>\n    return %0 : tensor<8xf32>\n  }\n}\n")
        compiled = jp.compile_only(module, devices, jp.compile_options(1, devices))
    assert "HloModule" in compiled.hlo_modules()[0].to_string()
