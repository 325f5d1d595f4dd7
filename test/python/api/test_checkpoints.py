"""mi.Checkpoints in one process: restore into other layouts and mesh shapes (values equal to
the saved NumPy arrays bit for bit, NaN and inf included), into an Executable's layout, as
NumPy; asynchronous saves of donated arrays; `keep`; a save killed midway."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import meshir as mi
from conftest import donated_views_stay_alive
from meshir.api.checkpoints._checksums import checksums


def oracle():
    """The saved values: edge sizes and special values; batch/d_ff-like dims split unevenly
    by some meshes below (12 rows over 8 devices is not allowed, so sizes divide 8)."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    w[0, 0], w[1, 1], w[2, 2], w[3, 3] = np.nan, np.inf, -np.inf, -0.0
    return {"params": {"w": w, "b": rng.standard_normal(8).astype(np.float32),
                       "one": np.full((1, 8), 7.5, np.float32), "h": (w * 3).astype(jax.numpy.bfloat16)},
            "opt": {"count": np.int32(-5), "flags": rng.standard_normal((8, 4)) > 0}}


SPECS = {"w": ("x", "y"), "b": ("y",), "one": (None, "x"), "h": (None, "y"), "count": (), "flags": ("x",)}


def placed(tree, mesh, specs=SPECS):
    return {g: {n: jax.device_put(v, NamedSharding(mesh, P(*specs[n]))) for n, v in group.items()}
            for g, group in tree.items()}


def abstract(tree, sharding_of):
    return {g: {n: jax.ShapeDtypeStruct(np.shape(v), np.asarray(v).dtype, sharding=sharding_of(n))
                for n, v in group.items()} for g, group in tree.items()}


def assert_same(restored, tree):
    for g, group in tree.items():
        for n, want in group.items():
            got = np.asarray(restored[g][n])
            assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want), (g, n)
            assert got.tobytes() == np.asarray(want).tobytes(), (g, n)  # bit for bit: NaN, -0.0


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("ckpt")
    with mi.Checkpoints(d) as ckpt:
        ckpt.save(3, placed(oracle(), jax.make_mesh((4, 2), ("x", "y"))), {"note": "4x2"})
    return d


@pytest.mark.parametrize("shape", [(2, 4), (8, 1), (1, 8), (4, 2)])
def test_restore_into_another_mesh_shape(saved, shape):
    mesh = jax.make_mesh(shape, ("a", "b"))
    specs = {"w": ("b", "a"), "b": ("a",), "one": (None, "b"), "h": ("a", None), "count": (), "flags": (("a", "b"),)}
    restored, meta = mi.Checkpoints(saved).restore(abstract(oracle(), lambda n: NamedSharding(mesh, P(*specs[n]))))
    assert_same(restored, oracle())
    assert meta == {"note": "4x2"}
    for group in restored.values():
        for n, value in group.items():
            assert value.sharding == NamedSharding(mesh, P(*specs[n])), (n, value.sharding)


def test_restore_on_one_device_and_as_numpy(saved):
    one = jax.sharding.SingleDeviceSharding(jax.devices()[5])
    restored, _ = mi.Checkpoints(saved).restore(abstract(oracle(), lambda n: one))
    assert_same(restored, oracle())
    assert all(v.sharding == one for group in restored.values() for v in group.values())
    as_numpy, _ = mi.Checkpoints(saved).restore()
    assert_same(as_numpy, oracle())
    assert all(type(v) is np.ndarray for group in as_numpy.values() for v in group.values())
    assert mi.Checkpoints(saved).specs() == {f"{g}/{n}": (np.shape(v), np.asarray(v).dtype)
                                             for g, group in oracle().items() for n, v in group.items()}


def test_checksum_is_layout_free_and_catches_any_one_bit():
    w = oracle()["params"]["w"]
    mesh = jax.make_mesh((4, 2), ("x", "y"))
    on_host = checksums({"w": w})["w"]
    assert {checksums({"w": jax.device_put(w, NamedSharding(mesh, P(*spec)))})["w"]
            for spec in [("x", "y"), ("y", "x"), (None, ("x", "y")), ()]} == {on_host}
    seen = {on_host}
    for bit in range(0, w.size * 32, 97):
        flipped = w.copy().reshape(-1).view(np.uint32)
        flipped[bit // 32] ^= np.uint32(1 << (bit % 32))
        seen.add(checksums({"w": flipped.view(np.float32).reshape(w.shape)})["w"])
    assert len(seen) == 1 + len(range(0, w.size * 32, 97))


def train_step():
    B, M, F = mi.Dim("batch", 8), mi.Dim("d_model", 8), mi.Dim("d_ff", 16)
    with mi.Program("ffn", mi.Mesh({"x": 4, "y": 2})) as prog:
        x, w1, w2 = prog.argument("x", [B, M]), prog.argument("w1", [M, F]), prog.argument("w2", [F, M])
        y = mi.einsum(mi.relu(mi.einsum(x, w1, output=[B, F])), w2, output=[B, M])
        prog.result(mi.mean((y - x) * (y - x)), name="loss")
    return mi.train_step(prog, mi.Adam(1e-2), params=["w1", "w2"])


def test_async_save_of_donated_arrays_and_restore_into_an_executable(tmp_path):
    """The step donates its parameters: saving the results, then calling the step (which
    deletes them) before the asynchronous write finished, saves the values of that moment."""
    step = train_step()
    exe = mi.compile(step, layout={"batch": "x", "d_ff": "y"}, donate=True)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 8), np.float32)
    carried = {"w1": rng.standard_normal((8, 16), np.float32), "w2": rng.standard_normal((16, 8), np.float32),
               **mi.init_optimizer_state(step)}
    ckpt = mi.Checkpoints(tmp_path, keep=2)
    snapshots = {}
    for t in range(1, 5):
        results = dict(zip(exe.signature.result_names, exe(x=x, **carried, step=np.float32(t))))
        carried = {k: results[k] for k in carried}
        snapshots[t] = {k: np.asarray(v) for k, v in carried.items()}
        ckpt.save(t, {"params": {k: carried[k] for k in ("w1", "w2")},
                      "opt": {k: v for k, v in carried.items() if k not in ("w1", "w2")}})
    ckpt.close()
    assert ckpt.all_steps() == [3, 4]  # keep=2
    restored, _ = mi.Checkpoints(tmp_path).restore(exe, step=3)
    names = exe.signature.arg_names
    for group in restored.values():
        for n, value in group.items():
            assert value.sharding == exe.in_shardings[names.index(n)], n
            np.testing.assert_array_equal(np.asarray(value), snapshots[3][n])
    old = carried["w1"]
    exe(x=x, **carried, step=np.float32(5))
    if donated_views_stay_alive():  # jax 0.11: `old` (viewed by np.asarray above) is not marked deleted
        return
    with pytest.raises(mi.MeshIRError, match=r"array params/w1 was deleted \(donated to a call\?\)"):
        mi.Checkpoints(tmp_path / "other").save(5, {"params": {"w1": old}})


def test_save_errors_are_located(tmp_path):
    ckpt = mi.Checkpoints(tmp_path)
    with pytest.raises(mi.MeshIRError, match=rf"^{__file__}:\d+:\d+: error: Checkpoints.save: step must be"):
        ckpt.save(-1, {"w": np.zeros(2)})
    with pytest.raises(mi.MeshIRError, match="metadata must be JSON"):
        ckpt.save(1, {"w": np.zeros(2)}, {"x": np.zeros(2)})
    with pytest.raises(mi.MeshIRError, match="names must be non-empty strings without '/' or '.'"):
        ckpt.save(1, {"a.b": np.zeros(2)})
    ckpt.save(1, {"w": np.zeros(2)})
    with pytest.raises(mi.MeshIRError, match="step 1 is already saved"):
        ckpt.save(1, {"w": np.zeros(2)})
    ckpt.close()
    with pytest.raises(mi.CheckpointError, match=r"no such step \(saved steps: \[1\]\)"):
        mi.Checkpoints(tmp_path).restore(step=2)


KILLED_SAVER = textwrap.dedent("""
    import sys
    import numpy as np
    import meshir as mi
    ckpt = mi.Checkpoints(sys.argv[1], asynchronous=False)
    big = np.random.default_rng(0).standard_normal((4, 1024, 1024)).astype(np.float32)
    for step in range(1, 1000):
        print("saving", step, flush=True)
        ckpt.save(step, {"big": big + step, "step": np.int64(step)})
""")


def test_a_save_killed_midway_leaves_the_previous_step(tmp_path):
    saver = subprocess.Popen([sys.executable, "-c", KILLED_SAVER, str(tmp_path)], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and saver.poll() is None:
            committed = [n for n in os.listdir(tmp_path) if n.isdigit()]
            unfinished = [n for n in os.listdir(tmp_path) if "orbax-checkpoint-tmp" in n]
            if committed and unfinished:
                break
            time.sleep(0.005)
        os.kill(saver.pid, signal.SIGKILL)
        output = saver.communicate(timeout=60)[0]
    finally:
        saver.kill()
    assert committed and unfinished, f"the save was not caught midway:\n{output[-3000:]}"
    ckpt = mi.Checkpoints(tmp_path)
    latest = ckpt.latest_step()
    restored, _ = ckpt.restore()
    assert int(restored["step"]) == latest
    expected = np.random.default_rng(0).standard_normal((4, 1024, 1024)).astype(np.float32) + latest
    np.testing.assert_array_equal(restored["big"], expected)
    ckpt.save(latest + 1, {"w": np.zeros(2)})  # a new save clears the unfinished one
    ckpt.close()
    assert not [n for n in os.listdir(tmp_path) if "orbax-checkpoint-tmp" in n]
