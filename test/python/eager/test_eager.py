"""Eager execution: `mi.Array`s whose ops run at once (eager/dispatch.py), against NumPy.

Elementwise ops, reductions and contractions on several meshes and layouts, with NaN and
infinities, Python and NumPy scalars mixing in as constants; the layouts of results; repr,
`.numpy()`, float/int/bool; the compile cache (a second call compiles nothing, its LRU
bound evicts); random ops with a seed (the same values under every layout and mesh, a new
seed new values from the one compiled program); `mi.Array` around a compiled executable's
result; `mi.default_layout` nesting; loops run eagerly.

Shapes are small and shared by the tests, so most one-op programs compile once per file.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

import meshir as mi
from meshir.api.eager import dispatch
from meshir.api.eager.staging import LRU
from meshir.lowering.runtime import partition_spec
import eager_fixtures

compiles, fresh_eager_cache = eager_fixtures.compiles, eager_fixtures.fresh_eager_cache  # fixtures

B, D, N = mi.Dim("b", 4), mi.Dim("d", 8), mi.Dim("n", 2)
MESH_1D = mi.Mesh("x:4")
MESH_2D = mi.Mesh("x:4;y:2")

#: (mesh, layout of x [b, d]): replicated, split on a 1-D mesh, both dims split on a 2-D one.
LAYOUTS = [
    pytest.param(MESH_1D, {}, id="x4-rep"),
    pytest.param(MESH_1D, {"d": "x"}, id="x4-d@x"),
    pytest.param(MESH_2D, {"b": "y", "d": "x"}, id="x4y2-b@y+d@x"),
]

A = np.array([[1.5, np.nan, np.inf, -2.0, 0.0, 3.25, -np.inf, 0.5],
              [-1.0, 2.0, 0.0, np.nan, 4.0, -0.25, 1.0, -3.0],
              [0.75, -np.inf, 2.5, 1.0, -1.5, np.nan, 0.0, 6.0],
              [2.0, 1.0, -0.5, np.inf, 3.0, -4.0, 0.25, 1.0]], np.float32)
C = np.array([0.5, 1.0, 2.0, 4.0, 0.25, 1.5, 3.0, 8.0], np.float32)  # positive, over d


def same(got, want, rtol=1e-6):
    got = got.numpy() if isinstance(got, mi.Array) else got
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol)  # NaN where NaN, inf where inf


def axes(v) -> tuple:
    """A layout entry (None, an axis or axes) as a tuple of axes."""
    return () if not v else (v,) if isinstance(v, str) else tuple(v)


def laid_out(r: mi.Array):
    """The Array's layout is its jax.Array's sharding."""
    assert r.jax_array.sharding.spec == partition_spec(r.type), (r.type, r.jax_array.sharding)
    return r.layout


# -- ops against NumPy ----------------------------------------------------------------------------

@pytest.mark.parametrize("mesh, layout", LAYOUTS)
def test_elementwise_ops_with_nan_inf_and_scalars_match_numpy(mesh, layout):
    x = mi.array(A, [B, D], mesh=mesh, layout=layout)
    c = mi.array(C, [D], mesh=mesh, layout={"d": layout.get("d", ())})
    with np.errstate(invalid="ignore", divide="ignore"):
        cases = [
            (x + 1.0, A + 1), (x + 1, A + 1), (np.float32(2.0) * x, 2 * A), (x * np.float64(0.5), A / 2),
            (1 - x, 1 - A), (x / c, A / C), (c ** 2, C ** 2), (2.0 ** c, 2 ** C), (-x, -A), (abs(x), np.abs(A)),
            (mi.maximum(x, c), np.maximum(A, C)), (mi.minimum(x, 0.0), np.minimum(A, 0)),
            (mi.exp(x), np.exp(A)), (mi.log(c), np.log(C)), (mi.tanh(x), np.tanh(A)),
            (mi.where(x > 0, x, 0.0), np.where(A > 0, A, 0).astype(np.float32)),
            (x < c, A < C), (x == x, A == A), (x != 1.5, A != 1.5),
        ]
    for got, want in cases:
        same(got, want)
        assert got.mesh == mesh and got.names == ("b", "d")[2 - got.type.rank:]
        assert laid_out(got) == {name: axes(layout.get(name)) for name in got.names}  # the operands' layout


@pytest.mark.parametrize("mesh, layout", LAYOUTS)
def test_reductions_and_contractions_match_numpy(mesh, layout):
    x = mi.array(A, [B, D], mesh=mesh, layout=layout)
    finite = mi.where(x == x, mi.minimum(mi.maximum(x, -10.0), 10.0), 0.0)
    f = np.where(A == A, np.clip(A, -10, 10), 0).astype(np.float32)
    w = np.arange(16, dtype=np.float32).reshape(8, 2) / 8
    same(mi.reduce_sum(x, over=["d"]), A.sum(1))  # NaN and inf propagate
    same(mi.reduce_max(x), np.max(A))
    same(mi.reduce_min(finite, over=["b"]), f.min(0))
    same(mi.reduce_sum(finite), f.sum(), rtol=1e-5)
    same(mi.mean(finite, over=["b"]), f.mean(0), rtol=1e-5)
    same(mi.einsum(finite, mi.array(w, [D, N], mesh=mesh)), f @ w, rtol=1e-5)
    same(mi.softmax(finite, "d"), np.exp(f) / np.exp(f).sum(1, keepdims=True), rtol=1e-5)
    assert laid_out(mi.reduce_sum(x, over=["d"])) == {"b": laid_out(x)["b"]}


def test_integer_arrays_and_numpy_scalars():
    i = mi.array(np.arange(-4, 4, dtype=np.int64).reshape(2, 4), ["b", "d"], mesh=MESH_1D)
    assert i.dtype == "i32" and i.numpy().dtype == np.int32  # 64-bit narrowed as jax does
    v = np.arange(-4, 4).reshape(2, 4)
    same(i + np.int32(3), (v + 3).astype(np.int32))
    same(i * 2, (v * 2).astype(np.int32))
    same(np.int64(10) - i, (10 - v).astype(np.int32))
    same(mi.cast(i, "f32") / 2, (v / 2).astype(np.float32))
    same(mi.reduce_sum(i), np.int32(v.sum()))
    assert mi.array(np.ones(3), ["d"], mesh=MESH_1D, dtype="bf16").dtype == "bf16"
    assert mi.array([True, False], ["d"], mesh=MESH_1D).dtype == "i1"


def test_layouts_of_results():
    x = mi.array(np.ones((4, 8), np.float32), [B, D], mesh=MESH_2D, layout={"b": "x"})
    w = mi.array(np.ones((8, 2), np.float32), [D, N], mesh=MESH_2D, layout={"n": "y"})
    y = mi.einsum(x, w)
    assert y.names == ("b", "n") and laid_out(y) == {"b": ("x",), "n": ("y",)}
    same(y, np.full((4, 2), 8, np.float32))
    z = mi.reshard(x, {"b": (), "d": ("x", "y")})
    assert laid_out(z) == {"b": (), "d": ("x", "y")} and z.jax_array.sharding.spec[1] == ("x", "y")
    same(z, x.numpy())
    # An array's layout is stated: results follow their operands', and the rules in
    # context lay out only the dims no operand has (a new dim, a created array).
    with mi.default_layout({"n": "y", "b": "x"}):
        r = mi.einsum(mi.array(np.ones((4, 8), np.float32), [B, D], mesh=MESH_2D, layout={}), w)
        wide = mi.broadcast(x, [B, D, N])
        ids = mi.one_hot(mi.array(np.array([0, 1, 1, 0], np.int32), [B], mesh=MESH_2D, layout={"b": "x"}), N)
    assert laid_out(r) == {"b": (), "n": ("y",)}
    assert laid_out(wide) == {"b": ("x",), "d": (), "n": ("y",)} and laid_out(ids) == {"b": ("x",), "n": ("y",)}
    same(ids, np.eye(2, dtype=np.float32)[[0, 1, 1, 0]])


def test_repr_numpy_and_python_scalars():
    x = mi.array(np.arange(8, dtype=np.float32).reshape(2, 4), ["b", "d"], mesh=MESH_1D, layout={"d": "x"})
    assert repr(x) == ('mi.Array(!mtf.tensor<b=2@(), d=4@x, f32> on @mesh = <["x"=4]>,\n'
                       "  [[0., 1., 2., 3.],\n"
                       "   [4., 5., 6., 7.]])")
    assert (x.names, x.shape, x.dtype, x.layout) == (("b", "d"), (2, 4), "f32", {"b": (), "d": ("x",)})
    assert [(d.name, d.size) for d in x.dims] == [("b", 2), ("d", 4)] and x.dim("d").size == 4
    got = x.numpy()
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_array_equal(got, np.arange(8).reshape(2, 4))
    np.testing.assert_array_equal(np.asarray(x), got)
    total = mi.reduce_sum(x)
    assert total.shape == () and float(total) == 28.0 and int(total) == 28 and bool(total)
    assert not bool(mi.reduce_min(x) > 0) and float(mi.slice(mi.slice(x, "d", 1, 1), "b", 1, 1)) == 5.0
    assert float(mi.reduce_max(mi.log(x + 1.0))) == pytest.approx(np.log(8))
    assert np.isnan(float(mi.reduce_max(mi.log(x - 8.0))))
    assert repr(mi.reduce_sum(mi.cast(x, "i32"))).endswith("\n  28)")


# -- the cache --------------------------------------------------------------------------------------

def test_second_call_compiles_nothing(compiles, fresh_eager_cache):
    x = mi.array(A, [B, D], mesh=MESH_2D, layout={"d": "x"})
    c = mi.array(C, [D], mesh=MESH_2D)
    mi.maximum(x, c)
    assert (compiles.eager, len(fresh_eager_cache)) == (1, 1)
    y = mi.array(A * 2, [B, D], mesh=MESH_2D, layout={"d": "x"})  # other values, same signature
    same(mi.maximum(y, c), np.maximum(A * 2, C))
    assert (compiles.eager, len(fresh_eager_cache)) == (1, 1)
    mi.maximum(mi.array(A, [B, D], mesh=MESH_2D, layout={"b": "y"}), c)  # another layout: a signature
    mi.maximum(x, 1.0)  # a constant is part of the signature
    mi.maximum(x, 1.0)
    mi.maximum(x, 2.0)
    assert (compiles.eager, len(fresh_eager_cache)) == (4, 4)
    with mi.default_layout({"b": "y"}):  # the rules in context are part of it
        mi.maximum(x, c)
        mi.maximum(x, c)
    assert (compiles.eager, len(fresh_eager_cache)) == (5, 5)
    with np.errstate(invalid="ignore"):
        same(c - 1.0, C - 1)
        same(1.0 - c, 1 - C)  # where the array is in the call is part of it too (a fixed bug)
        same(mi.pow(c, 2), C ** 2)
        same(mi.pow(2, c), 2.0 ** C)
    assert compiles.eager == 9


def test_cache_is_a_bounded_lru(compiles, monkeypatch):
    lru = LRU(limit=2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # a is now the most recently used
    lru.put("c", 3)
    assert (lru.get("b"), lru.get("a"), lru.get("c"), len(lru)) == (None, 1, 3, 2)
    lru.limit = 1  # a lowered limit holds from the next put
    lru.put("d", 4)
    assert (len(lru), lru.get("d")) == (1, 4)

    monkeypatch.setattr(dispatch, "EAGER_CACHE", LRU(limit=2))
    x = mi.array(C, [D], mesh=MESH_1D)
    mi.neg(x), mi.exp(x), mi.neg(x)  # neg is kept: used after exp
    assert compiles.eager == 2
    mi.sin(x)  # evicts exp
    mi.neg(x)
    assert compiles.eager == 3 and len(dispatch.EAGER_CACHE) == 2
    same(mi.exp(x), np.exp(C))
    assert compiles.eager == 4 and len(dispatch.EAGER_CACHE) == 2


# -- random ops -------------------------------------------------------------------------------------

RANDOM_LAYOUTS = [(MESH_1D, {}), (MESH_1D, {"d": "x"}), (MESH_2D, {"b": "y", "d": "x"}), (MESH_2D, {"d": ("y", "x")}),
                  (mi.Mesh("x:2"), {"b": "x"})]


def test_random_ops_same_seed_same_values_under_every_layout(compiles, fresh_eager_cache):
    first = None
    for mesh, rules in RANDOM_LAYOUTS:
        before = compiles.eager
        with mi.default_layout(rules, mesh=mesh):
            x = mi.array(np.ones((4, 8), np.float32), [B, D])
            draws = (mi.random_uniform([B, D], seed=5, minval=-1.0), mi.random_normal([B, D], seed=5),
                     mi.dropout(x, 0.5, seed=5), mi.categorical(x, "d", seed=5))
            again = (mi.random_uniform([B, D], seed=5, minval=-1.0), mi.random_normal([B, D], seed=5),
                     mi.dropout(x, 0.5, seed=5), mi.categorical(x, "d", seed=5))
            other = (mi.random_uniform([B, D], seed=6, minval=-1.0), mi.random_normal([B, D], seed=6),
                     mi.dropout(x, 0.5, seed=6), mi.categorical(x, "d", seed=6))
        assert compiles.eager - before == 4  # one program per op, for every seed
        for d in draws:
            assert d.mesh == mesh
            for name, rule in rules.items():
                if name in d.names:
                    assert laid_out(d)[name] == axes(rule)
        values = [d.numpy() for d in draws]
        for d, v in zip(again, values):
            np.testing.assert_array_equal(d.numpy(), v)
        for d, v in zip(other, values):
            assert (d.numpy() != v).any()
        first = first or values
        for v, f in zip(values, first):
            np.testing.assert_array_equal(v, f)
    u, n, drop, cat = first
    assert -1 <= u.min() and u.max() < 1 and len(np.unique(u)) == u.size and abs(n.mean()) < 1
    assert set(np.unique(drop)) <= {0.0, 2.0} and cat.dtype == np.int32 and ((0 <= cat) & (cat < 8)).all()


def test_a_seed_array_is_a_runtime_argument_too(compiles, fresh_eager_cache):
    with mi.default_layout(mesh=MESH_1D):
        seeds = [mi.array(np.int32(s), []) for s in (1, 2, 1)]
        draws = [mi.random_uniform([D], s).numpy() for s in seeds]
        ints = [mi.random_uniform([D], s).numpy() for s in (1, 2)]
    assert compiles.eager == 1  # an int seed becomes the same 0-d i32 argument
    np.testing.assert_array_equal(draws[0], draws[2])
    np.testing.assert_array_equal(draws[0], ints[0])
    assert (draws[0] != draws[1]).any()


# -- mi.Array around jax arrays -----------------------------------------------------------------------

def test_array_wraps_the_result_of_a_compiled_executable():
    with mi.Program("triple", MESH_2D) as prog:
        a = prog.argument("a", [B, D], layout={"b": "x", "d": "y"})
        prog.result(a * 3.0, name="r")
    out = mi.compile(prog)(a=A)
    r = mi.Array(out, ["b", "d"])
    assert r.jax_array is out and r.mesh == MESH_2D and laid_out(r) == {"b": ("x",), "d": ("y",)}
    same(r, A * 3)
    with np.errstate(invalid="ignore"):
        same(r - mi.array(A, [B, D], mesh=MESH_2D), A * 3 - A)  # the same mesh as one placed by mi.array
    same(mi.Array(out, [B, D], mesh=MESH_2D), A * 3)
    # A jax.Array without a NamedSharding takes the mesh given (or in context), replicated.
    placed = mi.Array(jnp.asarray(A), ["b", "d"], mesh=MESH_1D)
    assert placed.mesh == MESH_1D and laid_out(placed) == {"b": (), "d": ()}
    with mi.default_layout(mesh=MESH_1D):
        assert mi.Array(jnp.asarray(C), [D]).mesh == MESH_1D


# -- default_layout -----------------------------------------------------------------------------------

def test_default_layout_nests():
    x2 = mi.Mesh("x:2")
    with mi.default_layout("b:x", mesh=MESH_2D) as outer:
        assert outer.mesh == MESH_2D and dict(outer.rules) == {"b": ("x",)}
        assert mi.array(A, [B, D]).layout == {"b": ("x",), "d": ()}
        with mi.default_layout({"d": "y"}) as inner:  # new rules, the outer mesh
            assert inner.mesh == MESH_2D and dict(inner.rules) == {"d": ("y",)}
            assert mi.array(A, [B, D]).layout == {"b": (), "d": ("y",)}
            u = mi.random_uniform([B, D], seed=1)
            assert u.mesh == MESH_2D and laid_out(u) == {"b": (), "d": ("y",)}
            with mi.default_layout(mesh=x2):  # a new mesh, the enclosing rules
                z = mi.array(A, [B, D])
                assert z.mesh == x2 and z.layout == {"b": (), "d": ()}  # y is not an axis of x2
                assert mi.array(A, [B, D], layout={"b": "x"}).layout == {"b": ("x",), "d": ()}
        assert mi.array(A, [B, D]).layout == {"b": ("x",), "d": ()}
        assert mi.iota([B], "b").layout == {"b": ("x",)}
    from meshir.api.eager.context import ambient

    assert ambient().mesh is None and dict(ambient().rules) == {}


# -- loops ------------------------------------------------------------------------------------------

def test_loops_run_eagerly():
    x = mi.array(A[:, :4], ["b", "d"], mesh=MESH_2D, layout={"d": "y"})
    finite = mi.where(x == x, x, 0.0)
    f = np.where(A[:, :4] == A[:, :4], A[:, :4], 0)
    same(mi.fori_loop(3, lambda i, c: c * 2.0, finite), f * 8)
    total, partial = mi.scan(lambda c, col: (c + col, c), mi.array(np.zeros(4, np.float32), ["b"], mesh=MESH_2D),
                             mi.minimum(mi.maximum(finite, -9.0), 9.0), dim="d")
    clipped = np.clip(f, -9, 9).astype(np.float32)
    same(total, clipped.sum(1))
    assert partial.names == ("d", "b")
    same(partial, np.cumsum(np.concatenate([np.zeros((4, 1), np.float32), clipped[:, :3]], 1), 1).T)


def test_threads_sharing_the_eager_cache_get_their_own_results():
    """Eager ops from several threads at once, on a cache small enough to evict while they
    run: every result is its own call's (the LRU is locked)."""
    import threading

    small = LRU(limit=2)
    old, dispatch.EAGER_CACHE = dispatch.EAGER_CACHE, small
    try:
        x = mi.array(A, [B, D], mesh=MESH_2D)
        errors, results = [], {}

        def work(k):
            try:
                for _ in range(3):
                    results[k] = (x * float(k)).numpy()
            except Exception as e:  # recorded: the test fails below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        with np.errstate(invalid="ignore"):  # inf * 0
            for k in range(4):
                np.testing.assert_array_equal(results[k], A * np.float32(k))
        assert len(small) <= 2
    finally:
        dispatch.EAGER_CACHE = old
