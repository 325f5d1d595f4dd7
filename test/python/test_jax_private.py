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


def test_runtime_helpers_backend_started_and_run_sharded():
    import jax
    import numpy as np

    devices = jax.devices()[:1]
    assert jp.backend_started()  # jax.devices() started it
    text = "func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n"
    exe = jp.compile_and_load(text, devices)
    (shards,) = jp.run_sharded(exe, [jax.device_put(np.array([1.0, 2.0], np.float32), devices[0])])
    np.testing.assert_array_equal(np.asarray(shards[0]), [1.0, 2.0])


def test_dialect_python_module_is_found_without_an_import_search():
    import meshir.dialect.ops  # noqa: F401  (registers the mtf module)
    from jaxlib.mlir.dialects._ods_common import _cext

    assert _cext.globals._check_dialect_module_loaded("mtf")
