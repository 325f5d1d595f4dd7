"""Results and arguments by name: a call returns a named tuple (positional use unchanged, on
the C++ fast path too), shardings are available by name, and `.result_names` is one property
on programs, gradient programs, training steps and executables."""
import jax
import numpy as np
import pytest

import meshir as mi

MESH = mi.Mesh({"x": 4, "y": 2})
A, B = mi.Dim("a", 8), mi.Dim("b", 4)


def loss_program():
    with mi.Program("loss", MESH) as prog:
        x, w = prog.argument("x", [A, B]), prog.argument("w", [B])
        prog.result(mi.reduce_sum(x * w), name="loss")
        prog.result(x * 2.0, name="doubled")
    return prog


def test_a_call_returns_a_named_tuple_on_every_path():
    exe = mi.compile(loss_program(), layout={"a": "x", "b": "y"})
    x, w = np.arange(32, dtype=np.float32).reshape(8, 4), np.ones(4, np.float32)
    first = exe(x=x, w=w)                        # the checked path
    again = exe(x=x, w=w)                        # jax's C++ dispatch, from its cache
    fed_back = exe(first.doubled, w)             # jax.Arrays by position
    for out in (first, again, fed_back):
        assert isinstance(out, tuple) and out._fields == ("loss", "doubled")
        assert out[0] is out.loss and out[1] is out.doubled
        assert isinstance(out.loss, jax.Array)
    loss, doubled = first                        # unpacking as before
    assert float(loss) == float(np.sum(x)) and float(fed_back.loss) == 2 * float(np.sum(x))
    assert list(first._asdict()) == ["loss", "doubled"]
    np.testing.assert_array_equal(np.asarray(doubled), 2 * x)


def test_one_result_is_still_one_array():
    with mi.Program("p", MESH) as prog:
        prog.result(prog.argument("x", [A]) + 1.0, name="y")
    out = mi.compile(prog)(x=np.zeros(8, np.float32))
    assert isinstance(out, jax.Array)
    assert isinstance(mi.interpret(prog, x=np.zeros(8, np.float32)), np.ndarray)


def test_the_interpreter_returns_the_same_named_tuple():
    out = mi.interpret(loss_program(), x=np.ones((8, 4), np.float32), w=np.ones(4, np.float32))
    assert out._fields == ("loss", "doubled") and float(out.loss) == 32.0


def test_shardings_by_name():
    exe = mi.compile(loss_program(), layout={"a": "x", "b": "y"})
    assert exe.in_shardings._fields == ("x", "w") and exe.out_shardings._fields == ("loss", "doubled")
    assert exe.in_shardings.x is exe.in_shardings[0]
    assert exe.in_shardings.x.spec == jax.sharding.PartitionSpec("x", "y")
    assert exe.in_shardings.w.spec == jax.sharding.PartitionSpec("y")
    assert exe.out_shardings.loss.spec == jax.sharding.PartitionSpec()
    assert exe.argument_names == ("x", "w") and exe.result_names == ("loss", "doubled")


def test_result_names_is_one_property_everywhere():
    prog = loss_program()
    grad = mi.value_and_grad(prog, wrt=["w"], result="loss")
    with mi.Program("scalar", MESH) as scalar:
        x, w = scalar.argument("x", [A, B]), scalar.argument("w", [B])
        scalar.result(mi.reduce_sum(x * w), name="loss")
    step = mi.train_step(scalar, mi.Adam(1e-3), params=["w"], metrics=["grad_norm"])
    assert prog.result_names == ("loss", "doubled")
    assert grad.result_names == ("value", "grad_w")
    assert step.result_names == ("loss", "w", "w__m", "w__v", "grad_norm")
    assert step.argument_names == ("x", "w", "w__m", "w__v", "step")
    for built in (prog, grad, step):
        assert mi.compile(built).result_names == built.result_names
    exe = mi.compile(step, layout={"b": "y"})
    out = exe(x=np.ones((8, 4), np.float32), w=np.ones(4, np.float32), **mi.init_optimizer_state(step), step=1.0)
    assert out._fields == step.result_names and float(out.grad_norm) == pytest.approx(np.sqrt(4 * 64.0))


def test_names_that_are_not_identifiers_become_positional_fields():
    text = """
    sdy.mesh @mesh = <["x"=8]>
    func.func @f(%a: !mtf.tensor<n=8, f32> {mtf.name = "a"}) -> (!mtf.tensor<n=8, f32> {mtf.name = "class"},
        !mtf.tensor<n=8, f32> {mtf.name = "_hidden"}, !mtf.tensor<n=8, f32> {mtf.name = "ok"}) attributes {mtf.mesh = @mesh} {
      return %a, %a, %a : !mtf.tensor<n=8, f32>, !mtf.tensor<n=8, f32>, !mtf.tensor<n=8, f32>
    }
    """
    module, problems = mi.parse_module(text, "named.mlir")
    assert not problems
    out = mi.compile(module)(a=np.arange(8, dtype=np.float32))
    assert out._fields == ("_0", "_1", "ok")  # as namedtuple(rename=True) names them
    np.testing.assert_array_equal(np.asarray(out[0]), np.asarray(out.ok))
