"""Damaged checkpoints: each damage of a saved mi.Checkpoints step (on its real on-disk layout:
Orbax's step directory with the `state` item's OCDBT/zarr files and the `meta` and `manifest`
JSON items) gives one CheckpointError naming the checkpoint and the problem, never a raw
traceback and never a silent restore."""
import json
import os
import re
import shutil
import subprocess
import sys

import jax
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import meshir as mi

MESH = jax.make_mesh((4, 2), ("x", "y"))


def arrays(seed=0, w_dtype=np.float32, w_shape=(64, 48), with_b=True):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal(w_shape) * 50).astype(w_dtype)
    out = {"params": {"w": w}, "opt": {"count": np.int32(7)}}
    if with_b:
        out["params"]["b"] = rng.standard_normal(48).astype(np.float32)
    return out


def placed(tree):
    shardings = {"w": P("x", "y"), "b": P("y"), "count": P()}
    return {g: {n: jax.device_put(v, NamedSharding(MESH, shardings[n])) for n, v in group.items()}
            for g, group in tree.items()}


def targets():
    tree = placed(arrays())
    return {g: {n: jax.ShapeDtypeStruct(v.shape, v.dtype, sharding=v.sharding) for n, v in group.items()}
            for g, group in tree.items()}


def save(directory, tree, step=1):
    with mi.Checkpoints(directory) as ckpt:
        ckpt.save(step, placed(tree), {"config": {"d_ff": 32}, "step": step})


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A checkpoint and, for damages that swap in another save's array data, three others."""
    root = tmp_path_factory.mktemp("saved")
    save(root / "good", arrays())
    save(root / "other_values", arrays(seed=1))
    save(root / "int8", arrays(w_dtype=np.int8))
    save(root / "other_shape", arrays(w_shape=(64, 40)))
    save(root / "no_b", arrays(with_b=False))
    return root


# -- damages: each takes the checkpoint directory (step 1 inside) and the saved ones ------

def edit_json(item, change):
    def damage(d, saved):
        path = d / "1" / item / "metadata"
        value = json.loads(path.read_text())
        path.write_text(json.dumps(change(value)))
    return damage


def write(relative, content):
    def damage(d, saved):
        (d / relative).write_bytes(content(d / relative) if callable(content) else content)
    return damage


def state_from(name):
    def damage(d, saved):
        shutil.rmtree(d / "1" / "state")
        shutil.copytree(saved / name / "1" / "state", d / "1" / "state")
    return damage


def data_files(d):
    """The OCDBT data files of the array data, largest first."""
    files = [p for p in (d / "1" / "state").rglob("*") if p.is_file() and p.parent.name == "d"]
    return sorted(files, key=lambda p: -p.stat().st_size)


def on_data_files(change):
    def damage(d, saved):
        for f in data_files(d):
            f.write_bytes(change(f.read_bytes()))
    return damage


def flip_byte(where):
    def damage(d, saved):
        f = data_files(d)[0]
        data = bytearray(f.read_bytes())
        data[int(where * (len(data) - 1))] ^= 0x10
        f.write_bytes(bytes(data))
    return damage


def remove(relative):
    def damage(d, saved):
        path = d / relative
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return damage


def empty_directory(d, saved):
    shutil.rmtree(d)
    d.mkdir()


def only_unfinished(d, saved):
    os.rename(d / "1", d / "1.orbax-checkpoint-tmp-1700000000")


def renamed_step(d, saved):
    os.rename(d / "1", d / "2")


def manifest_entry(change):
    def edit(m):
        change(m["arrays"])
        return m
    return edit_json("manifest", edit)


def orbax_file(relative, change):
    """`change` (bytes -> bytes) applied to each file of Orbax's own at `relative` (a file, or
    a directory whose files all change)."""
    def damage(d, saved):
        path = d / "1" / relative
        for f in sorted(path.iterdir()) if path.is_dir() else [path]:
            f.write_bytes(change(f.read_bytes()))
    return damage


def truncated(b):
    return b[: len(b) // 3]


def garbled(b):
    return bytes(x ^ 0x5A for x in b)


def emptied(b):
    return b""


UNREADABLE_DATA = (r"(its array data cannot be read \(array params/w\) \(truncated or damaged\): Error reading "
                   r"\"params\.w/\d\.\d\"|array params/w fails its checksum)")
DAMAGES = {
    "directory missing": (remove(""), r"checkpoints {d}: the directory does not exist"),
    "directory empty": (empty_directory, r"checkpoints {d}: no saved step \(the directory is empty\)"),
    "only an unfinished save": (only_unfinished, r"checkpoints {d}: no saved step: only unfinished saves "
                                                 r"\(1\.orbax-checkpoint-tmp-1700000000\)"),
    "commit marker deleted": (remove("1/commit_success.txt"), r"{s}: commit_success.txt is missing: the save of "
                                                               r"this step was not committed"),
    "step directory emptied": (lambda d, s: (shutil.rmtree(d / "1"), (d / "1").mkdir()),
                               r"{s}: commit_success.txt is missing"),
    "step directory renamed": (renamed_step, r"checkpoint {d} step 2: the manifest says step 1, its directory step 2"),
    "manifest deleted": (remove("1/manifest"), r"{s}: its manifest \(manifest/metadata\) is missing"),
    "manifest empty": (write("1/manifest/metadata", b""), r"{s}: its manifest \(manifest/metadata\) is empty"),
    "manifest truncated": (write("1/manifest/metadata", lambda p: p.read_bytes()[: p.stat().st_size // 2]),
                           r"{s}: its manifest \(manifest/metadata\) is not valid JSON \(truncated or damaged\)"),
    "manifest garbled": (write("1/manifest/metadata", lambda p: bytes(b ^ 0x5A for b in p.read_bytes())),
                         r"{s}: its manifest \(manifest/metadata\) is not valid JSON"),
    "manifest a list": (edit_json("manifest", lambda m: [m]), r"{s}: the manifest is a list, expected an object"),
    "manifest of another format": (edit_json("manifest", lambda m: {**m, "format": "npz"}),
                                   r"{s}: the manifest's format is 'npz', expected 'meshir-checkpoint'"),
    "manifest step a string": (edit_json("manifest", lambda m: {**m, "step": "1"}),
                               r"{s}: the manifest: field 'step' is a string '1', expected an integer"),
    "manifest without arrays": (edit_json("manifest", lambda m: {k: v for k, v in m.items() if k != "arrays"}),
                                r"{s}: the manifest has no field 'arrays'"),
    "manifest entry a number": (manifest_entry(lambda a: a.update({"params/b": 3})),
                                r"{s}: the manifest's entry for array 'params/b' is an integer 3, expected an object"),
    "manifest entry without checksum": (manifest_entry(lambda a: a["params/w"].pop("checksum")),
                                        r"{s}: the manifest's entry for array 'params/w' has no field 'checksum'"),
    "manifest entry of unknown dtype": (manifest_entry(lambda a: a["params/w"].update(dtype="float33")),
                                        r"{s}: the manifest's entry for array 'params/w': unknown dtype 'float33'"),
    "manifest with an extra array": (manifest_entry(lambda a: a.update({"params/extra": a["params/b"]})),
                                     r"{s}: the checkpoint has array params/extra that the restore does not have"),
    "manifest without an array": (manifest_entry(lambda a: a.pop("params/b")),
                                  r"{s}: the checkpoint has no array params/b"),
    "manifest dtype int8": (manifest_entry(lambda a: a["params/w"].update(dtype="int8")),
                            r"{s}: array params/w is int8\[64, 48\] in the checkpoint, the restore wants "
                            r"float32\[64, 48\]"),
    "manifest shape changed": (manifest_entry(lambda a: a["params/b"].update(shape=[48, 1])),
                               r"{s}: array params/b is float32\[48, 1\] in the checkpoint, the restore wants "
                               r"float32\[48\]"),
    "metadata deleted": (remove("1/meta"), r"{s}: its meta \(meta/metadata\) is missing"),
    "metadata empty": (write("1/meta/metadata", b"  \n"), r"{s}: its meta \(meta/metadata\) is empty"),
    "metadata truncated": (write("1/meta/metadata", lambda p: p.read_bytes()[:-3]),
                           r"{s}: its meta \(meta/metadata\) is not valid JSON"),
    "metadata a list": (edit_json("meta", lambda m: [m]), r"{s}: its metadata is a list, expected an object"),
    "metadata a string": (edit_json("meta", lambda m: "config"),
                          r"{s}: its metadata is a string 'config', expected an object"),
    "array data int8": (state_from("int8"), r"{s}: array params/w is int8\[64, 48\] in the array data, the "
                                            r"manifest wants float32\[64, 48\]"),
    "array data of another shape": (state_from("other_shape"), r"{s}: array params/w is float32\[64, 40\] in the "
                                                               r"array data, the manifest wants float32\[64, 48\]"),
    "array data without an array": (state_from("no_b"), r"{s}: the array data has no array params/b"),
    "array data of another save": (state_from("other_values"),
                                   r"{s}: array params/w fails its checksum \(saved [0-9a-f-]+, read [0-9a-f-]+\): "
                                   r"its data is damaged; array params/b fails its checksum"),
    "array data deleted": (remove("1/state"), r"{s}: its array data \(state/\) is missing"),
    "array metadata deleted": (remove("1/state/_METADATA"), r"{s}: its array metadata \(state/\) cannot be read"),
    "array metadata truncated": (write("1/state/_METADATA", lambda p: p.read_bytes()[:40]),
                                 r"{s}: its array metadata \(state/\) cannot be read"),
    "OCDBT manifest deleted": (remove("1/state/manifest.ocdbt"), r"{s}: its array (meta)?data .*cannot be read"),
    "data files truncated": (on_data_files(lambda b: b[: len(b) // 2]), r"{s}: its array (meta)?data .*cannot be read"),
    "data files emptied": (on_data_files(lambda b: b""), r"{s}: its array (meta)?data .*cannot be read"),
    "data files deleted": (lambda d, s: [f.unlink() for f in data_files(d)],
                           r"{s}: its array (meta)?data .*cannot be read"),
    **{f"byte flipped at {where:.0%} of the largest data file": (flip_byte(where), "{s}: " + UNREADABLE_DATA)
       for where in (0.0, 0.1, 0.35, 0.5, 0.75, 0.9)},
    # Orbax's own files: the top-level OCDBT tree (state/manifest.ocdbt, state/d/*), which the
    # restore reads first through Orbax's array metadata, and Orbax's JSON side files
    **{f"top-level data file {how.__name__}": (orbax_file("state/d", how), r"{s}: its array metadata \(state/\) "
       r"cannot be read \(array \S+\): Error opening \"zarr\" driver: Error reading \"\S+/\.zarray\": Error reading "
       r"Byte range \[0, \d+\) of state/d/[0-9a-f]+") for how in (truncated, garbled, emptied)},
    **{f"OCDBT manifest {how.__name__}": (orbax_file("state/manifest.ocdbt", how), r"{s}: its array metadata "
       r"\(state/\) cannot be read \(array \S+\): .*Error decoding state/manifest.ocdbt")
       for how in (truncated, garbled, emptied)},
    "Orbax's sharding file garbled": (orbax_file("state/_sharding", garbled),
                                      r"{s}: its array metadata \(state/\) cannot be read: Error reading "
                                      r"state/_sharding: Invalid JSON"),
    "Orbax's array metadatas truncated": (orbax_file("state/array_metadatas", truncated),
                                          r"{s}: its array data cannot be read \(truncated or damaged\): Expecting"),
    # text where JSON belongs: the parser's own reason, not the index its scanner stopped at
    "manifest plain text": (write("1/manifest/metadata", b"not a manifest"), r"{s}: its manifest "
                            r"\(manifest/metadata\) is not valid JSON \(truncated or damaged\): Expecting value: "
                            r"line 1 column 1 \(char 0\)$"),
    "manifest an empty object": (write("1/manifest/metadata", b"{}"), r"{s}: the manifest has no field 'format'"),
    "metadata binary": (write("1/meta/metadata", b"\x00\x01garbage"), r"{s}: its meta \(meta/metadata\) is not "
                        r"valid JSON \(truncated or damaged\): Expecting value: line 1 column 1 \(char 0\)$"),
}

# Damages to files a restore does not need: Orbax merged the per-process OCDBT tree into the
# top-level one, and its sharding, array-metadata and step-metadata files are advisory.
# Each still restores exactly the saved values (the checksums would catch any other).
HARMLESS = {
    "per-process OCDBT manifest truncated": orbax_file("state/ocdbt.process_0/manifest.ocdbt", truncated),
    "per-process OCDBT manifest deleted": remove("1/state/ocdbt.process_0/manifest.ocdbt"),
    "Orbax's sharding file deleted": remove("1/state/_sharding"),
    "Orbax's array metadatas deleted": remove("1/state/array_metadatas"),
    "Orbax's step metadata garbled": orbax_file("_CHECKPOINT_METADATA", garbled),
    "Orbax's step metadata deleted": remove("1/_CHECKPOINT_METADATA"),
    "the state item's commit marker deleted": remove("1/state/commit_success.txt"),
}


@pytest.mark.parametrize("name", list(DAMAGES))
def test_damage_is_one_clear_error(saved, tmp_path, name):
    damage, pattern = DAMAGES[name]
    d = tmp_path / "ckpt"
    shutil.copytree(saved / "good", d)
    damage(d, saved)
    with pytest.raises(mi.CheckpointError) as info:
        mi.Checkpoints(d).restore(targets())
    message = str(info.value)
    regex = pattern.format(d=d, s=f"checkpoint {d} step 1").replace(str(d), re.escape(str(d)))
    assert re.search(regex, message), message
    assert message.startswith(f"{__file__}:"), message  # at the caller's line
    assert len(message.splitlines()) == 1, message
    error = info.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__), "a chained traceback"


@pytest.mark.parametrize("name", list(HARMLESS))
def test_damage_to_a_file_the_restore_does_not_need_is_harmless(saved, tmp_path, name):
    d = tmp_path / "ckpt"
    shutil.copytree(saved / "good", d)
    HARMLESS[name](d, saved)
    restored, meta = mi.Checkpoints(d).restore(targets())
    for group, values in arrays().items():
        for array_name, want in values.items():
            np.testing.assert_array_equal(np.asarray(restored[group][array_name]), want)
    assert meta == {"config": {"d_ff": 32}, "step": 1}


RESTORE_IN_A_FRESH_PROCESS = """
import gc, sys
import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
import meshir as mi
sharding = NamedSharding(jax.make_mesh((4, 2), ("x", "y")), P("x", "y"))
targets = {"params": {f"w{i}": jax.ShapeDtypeStruct((64, 48), np.float32, sharding=sharding) for i in range(40)}}
try:
    mi.Checkpoints(sys.argv[1]).restore(targets)
except mi.CheckpointError as e:
    print(e.reason)
gc.collect()
"""


@pytest.fixture(scope="module")
def forty_arrays(tmp_path_factory):
    """A step of 40 sharded arrays: enough concurrent reads that, when one fails, Orbax's
    closed event loop still has others in flight."""
    directory = tmp_path_factory.mktemp("forty") / "ckpt"
    sharding = NamedSharding(MESH, P("x", "y"))
    rng = np.random.default_rng(0)
    with mi.Checkpoints(directory) as ckpt:
        ckpt.save(1, {"params": {f"w{i}": jax.device_put(rng.standard_normal((64, 48), np.float32), sharding)
                                 for i in range(40)}})
    return directory


@pytest.mark.parametrize("relative, reason", [
    ("state/d", "its array metadata (state/) cannot be read"),
    ("state/ocdbt.process_0/d", "its array data cannot be read"),
], ids=["top-level tree", "per-process chunks"])
def test_a_failed_restore_prints_nothing_but_its_error(forty_arrays, tmp_path, relative, reason):
    """In a process of its own (where nothing silenced Orbax before): the error and nothing
    else, also after the failed reads are collected; no 'Event loop is closed' traceback and
    no asyncio log. Before the fix, 3 of 4 runs of the top-level damage printed tracebacks."""
    for run in range(2):
        d = tmp_path / f"ckpt{run}"
        shutil.copytree(forty_arrays, d)
        orbax_file(relative, truncated)(d, None)
        done = subprocess.run([sys.executable, "-c", RESTORE_IN_A_FRESH_PROCESS, str(d)], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0 and f"checkpoint {d} step 1: {reason}" in done.stdout, done.stdout + done.stderr
        assert done.stderr.strip() == "", done.stderr[-3000:]


def test_undamaged_copy_restores_exactly(saved, tmp_path):
    shutil.copytree(saved / "good", tmp_path / "ckpt")
    restored, meta = mi.Checkpoints(tmp_path / "ckpt").restore(targets())
    for group, values in arrays().items():
        for name, want in values.items():
            np.testing.assert_array_equal(np.asarray(restored[group][name]), want)
    assert meta == {"config": {"d_ff": 32}, "step": 1}


def test_a_flipped_byte_anywhere_is_caught_or_harmless(saved, tmp_path):
    """A flipped bit at offsets all over every data file: a CheckpointError, or (where the
    byte is one the restore does not read: Orbax merges each process's OCDBT tree into the
    top-level one, leaving parts of the per-process files unreferenced) exactly the saved
    values; never other values. In the largest file (params/w's chunks) every flip in its
    first 90% is caught."""
    caught = harmless = 0
    for index, size in enumerate(f.stat().st_size for f in data_files(saved / "good")):
        for offset in range(0, size, max(1, size // 12)):
            d = tmp_path / f"f{index}-{offset}"
            shutil.copytree(saved / "good", d)
            f = data_files(d)[index]
            data = bytearray(f.read_bytes())
            data[offset] ^= 0x01
            f.write_bytes(bytes(data))
            try:
                restored, _ = mi.Checkpoints(d).restore(targets())
                assert index or offset > 0.9 * size, f"flipped byte {offset} of {size} of params/w's chunks not caught"
            except mi.CheckpointError as e:
                assert re.search(f"checkpoint {re.escape(str(d))} step 1: (its array (meta)?data .*cannot be read|"
                                 r"array \S+ fails its checksum)", str(e)), e
                caught += 1
                continue
            for group, values in arrays().items():
                for name, want in values.items():
                    np.testing.assert_array_equal(np.asarray(restored[group][name]), want)
            harmless += 1
    assert caught >= 12, (caught, harmless)


def test_there_are_enough_damages():
    assert len(DAMAGES) >= 25 and len(HARMLESS) >= 5


def _drop_a_future_with(error: BaseException) -> None:
    """A future whose exception nobody retrieves, collected after its loop closed: what a
    failed restore leaves behind for each of its other reads."""
    import asyncio
    import gc

    loop = asyncio.new_event_loop()
    future = loop.create_future()
    future.set_exception(error)
    loop.close()
    del future
    gc.collect()


def test_asyncio_logs_of_dropped_orbax_reads_are_silenced_and_only_those(caplog):
    import orbax.checkpoint as ocp
    from etils import epath

    from meshir.api.checkpoints import _orbax_quiet as orbax_quiet

    orbax_quiet.install()
    try:
        ocp.PyTreeCheckpointHandler().metadata(epath.Path("/nonexistent/meshir/state"))
    except Exception as e:
        through_orbax = e
    with caplog.at_level("ERROR", logger="asyncio"):
        _drop_a_future_with(through_orbax)
        assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
        _drop_a_future_with(ValueError("the user's own"))
        assert [r for r in caplog.records if "never retrieved" in r.getMessage()]
