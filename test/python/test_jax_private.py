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
