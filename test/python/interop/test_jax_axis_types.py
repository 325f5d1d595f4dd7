"""A program built on a jax mesh of Explicit, Auto or mixed axis types (jax.make_mesh's
default is Explicit since jax 0.10): jax.jit, jax.grad and jax.vjp through its executable
give jax's own numbers with cotangents of the primals' sharding types, jax.vmap is refused
at the user's line, and a "jax" export records the mesh's axis types, so
`in_shardings_jax(mesh)` of that mesh places the arguments of a round trip."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

import meshir as mi

B, M, F = mi.Dim("batch", 8), mi.Dim("d_model", 16), mi.Dim("d_ff", 64)
AXIS_TYPES = {"explicit": (AxisType.Explicit,) * 2, "auto": (AxisType.Auto,) * 2,
              "mixed": (AxisType.Explicit, AxisType.Auto), "mixed-yx": (AxisType.Auto, AxisType.Explicit)}
#: Layout rules, with the specs of x, w1 and w2 they give.
LAYOUTS = {"batch:x;d_ff:y": (P("x", None), P(None, "y"), P("y", None)),
           "batch:(x,y)": (P(("x", "y"), None), P(None, None), P(None, None)),
           "d_ff:(x,y)": (P(None, None), P(None, ("x", "y")), P(("x", "y"), None))}


def jax_mesh(types: str):
    return jax.make_mesh((4, 2), ("x", "y"), axis_types=AXIS_TYPES[types])


def ffn(mesh) -> mi.Program:
    """The loss sum((tanh(x @ w1) @ w2)^2) / 8 of an FFN, built on `mesh`."""
    with mi.Program("ffn", mesh) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, F]), prog.argument("w2", [F, M])
        y = mi.einsum(mi.tanh(mi.einsum(x, w1, output=[B, F])), w2, output=[B, M])
        prog.result(mi.reduce_sum(y * y) * 0.125, name="loss")
    return prog


def ffn_jax(x, w1, w2):
    return jnp.sum((jnp.tanh(x @ w1) @ w2) ** 2) * 0.125


def host(*arrays):
    """The arrays on the host: the oracle runs in plain jax without a mesh (jax's own ops on
    Explicit-axes arrays would ask for the shardings of their sharded contractions)."""
    return tuple(np.asarray(a) for a in arrays)


def values(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((8, 16)).astype(np.float32), (rng.standard_normal((16, 64)) * 0.3).astype(np.float32),
            (rng.standard_normal((64, 16)) * 0.3).astype(np.float32))


def placed(mesh, specs, arrays):
    return tuple(jax.device_put(a, NamedSharding(mesh, s)) for a, s in zip(arrays, specs))


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-5)


def same_type(got, primal):
    """A cotangent's type is its primal's: shape, dtype and sharding type (`16,64@y`)."""
    assert jax.typeof(got).str_short() == jax.typeof(primal).str_short()
    assert jax.typeof(got).sharding.spec == jax.typeof(primal).sharding.spec


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("types", AXIS_TYPES)
def test_value_and_grad_under_jit_gives_jaxs_numbers_and_the_primals_types(types, layout):
    mesh = jax_mesh(types)
    exe = mi.compile(ffn(mesh), layout=layout)
    x, w1, w2 = placed(mesh, LAYOUTS[layout], values())

    def via(loss):
        return jax.jit(jax.value_and_grad(lambda x, w, w2: loss(x, w, w2) * 2.0, argnums=1))

    value, g = via(lambda x, w, w2: exe(x=x, w1=w, w2=w2))(x, w1, w2)
    want_value, want_g = via(ffn_jax)(*host(x, w1, w2))
    close(value, want_value)
    close(g, want_g)
    same_type(g, w1)
    # every argument at once, outside jit too
    grads = jax.grad(lambda *a: exe(*a), argnums=(0, 1, 2))(x, w1, w2)
    for got, want, primal in zip(grads, jax.grad(ffn_jax, argnums=(0, 1, 2))(*host(x, w1, w2)), (x, w1, w2)):
        close(got, want)
        same_type(got, primal)


@pytest.mark.parametrize("types", AXIS_TYPES)
def test_arguments_laid_out_otherwise_get_cotangents_of_their_own_types(types):
    """Replicated weights and a batch split over both axes: the program reshards them into
    its layouts, under jax.jit and eagerly, and each cotangent keeps its primal's type."""
    mesh = jax_mesh(types)
    exe = mi.compile(ffn(mesh), layout="batch:x;d_ff:y")
    x, w1, w2 = placed(mesh, (P(("x", "y"), None), P(), P()), values(1))
    def vjp_of(f):
        def run(*a):
            out, pullback = jax.vjp(f, *a)
            return out, pullback(jnp.float32(3.0))
        return run

    want_out, want_cts = vjp_of(ffn_jax)(*host(x, w1, w2))
    for run in (jax.jit(vjp_of(lambda *a: exe(*a))), vjp_of(lambda *a: exe(*a))):  # under jit and eagerly
        out, cts = run(x, w1, w2)
        close(out, want_out)
        for got, want, primal in zip(cts, want_cts, (x, w1, w2)):
            close(got, want)
            same_type(got, primal)


@pytest.mark.parametrize("types", AXIS_TYPES)
def test_grad_under_disable_jit_gives_the_primals_types(types):
    """Without jit the custom VJP runs eagerly: the cotangent is resharded on the devices."""
    mesh = jax_mesh(types)
    exe = mi.compile(ffn(mesh), layout="batch:x;d_ff:y")
    x, w1, w2 = placed(mesh, LAYOUTS["batch:x;d_ff:y"], values(4))
    with jax.disable_jit():
        g = jax.grad(lambda w: exe(x, w, w2), argnums=0)(w1)
    close(g, jax.grad(ffn_jax, argnums=1)(*host(x, w1, w2)))
    same_type(g, w1)


def test_a_training_loop_on_jax_make_meshs_default_mesh_matches_jax():
    """The default axis types of this jax (Explicit since 0.10): three SGD steps."""
    mesh = jax.make_mesh((4, 2), ("x", "y"))
    exe = mi.compile(ffn(mesh), layout="batch:x;d_ff:y")

    def step_with(loss):
        @jax.jit
        def step(x, w1, w2):
            value, (g1, g2) = jax.value_and_grad(loss, argnums=(1, 2))(x, w1, w2)
            return value, w1 - 0.1 * g1, w2 - 0.1 * g2
        return step

    x, w1, w2 = placed(mesh, LAYOUTS["batch:x;d_ff:y"], values(2))
    ours, theirs = (w1, w2), host(w1, w2)
    for _ in range(3):
        a, b = step_with(lambda *v: exe(*v))(x, *ours), step_with(ffn_jax)(*host(x), *theirs)
        for got, want in zip(a, b):
            close(got, want)
        ours, theirs = a[1:], b[1:]
    same_type(ours[0], w1)


@pytest.mark.parametrize("types", ["explicit", "mixed"])
def test_vmap_on_an_explicit_mesh_is_refused_at_the_users_line(types):
    mesh = jax_mesh(types)
    exe = mi.compile(ffn(mesh), layout="batch:x;d_ff:y")
    x, w1, w2 = placed(mesh, LAYOUTS["batch:x;d_ff:y"], values())
    with pytest.raises(mi.MeshIRError, match=r"test_jax_axis_types.py:\d+:\d+: error: jax.vmap over the MeshIR "
                       r"program @ffn \(batched argument #1"):
        jax.vmap(lambda w: exe(x, w, w2))(jnp.stack([w1] * 3))


@pytest.mark.parametrize("layout", ["batch:x;d_ff:y", "d_ff:(x,y)"])
@pytest.mark.parametrize("types", AXIS_TYPES)
def test_a_jax_export_records_the_meshs_axis_types_and_round_trips(types, layout):
    mesh = jax_mesh(types)
    exe = mi.compile(ffn(mesh), layout=layout)
    exported = jax.export.deserialize(bytearray(mi.export(exe, format="jax")))
    shardings = exported.in_shardings_jax(mesh)
    assert [s.spec for s in shardings] == list(LAYOUTS[layout])
    assert all(s.mesh.axis_types == mesh.axis_types for s in shardings + exported.out_shardings_jax(mesh))
    arrays = values(3)
    args = [jax.device_put(a, s) for a, s in zip(arrays, shardings)]
    want = ffn_jax(*arrays)
    (out,) = exported.call(*args)
    close(out, want)
    assert out.sharding.mesh.axis_types == mesh.axis_types
    close(jax.jit(exported.call)(*args)[0], want)
    with jax.set_mesh(mesh):
        close(jax.jit(lambda *a: exported.call(*a)[0] * 2.0)(*args), 2 * want)
    close(mi.load(mi.export(exe, format="jax"), mesh=mesh)(*arrays), want)  # and back into MeshIR


def test_the_axis_types_come_from_the_mesh_the_program_runs_on():
    """`mi.compile(mesh=)` gives them; a MeshIR mesh written as axes alone has Auto axes."""
    plain = mi.Mesh({"x": 4, "y": 2})
    assert plain.axis_types is None and plain == mi.Mesh(jax_mesh("explicit"))
    assert mi.Mesh(jax_mesh("mixed")).axis_types == ("explicit", "auto")
    for mesh, compile_mesh, want in ((plain, None, AXIS_TYPES["auto"]), (plain, jax_mesh("mixed"), AXIS_TYPES["mixed"]),
                                     (jax_mesh("explicit"), None, AXIS_TYPES["explicit"])):
        exe = mi.compile(ffn(mesh), layout="batch:x;d_ff:y", mesh=compile_mesh)
        exported = jax.export.deserialize(bytearray(mi.export(exe, format="jax")))
        assert exported.in_shardings_jax(jax.make_mesh((4, 2), ("x", "y"), axis_types=want))[0].spec == P("x", None)


def test_axis_types_given_as_axes_are_checked_at_the_users_line():
    assert mi.Mesh({"x": 4, "y": 2}, axis_types=(AxisType.Explicit, "Auto")).axis_types == ("explicit", "auto")
    with pytest.raises(mi.MeshIRValueError, match=r"test_jax_axis_types.py:\d+:\d+: error: axis_types \('explicit',\) "
                       r"of mesh .*: expected one of explicit, auto for each of its 2 axes"):
        mi.Mesh({"x": 4, "y": 2}, axis_types=("explicit",))
    with pytest.raises(mi.MeshIRValueError, match=r"axis_types \('explicit', 'manual'\)"):
        mi.Mesh({"x": 4, "y": 2}, axis_types=("explicit", "manual"))
