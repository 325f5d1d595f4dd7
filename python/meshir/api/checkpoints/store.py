"""`mi.Checkpoints`: sharded checkpoints with Orbax, checked on restore, resharded on restore.

One step is one directory `DIR/<step>` that Orbax commits atomically (written as
`<step>.orbax-checkpoint-tmp-*`, renamed when complete, with `commit_success.txt` inside) and
holds three items: `state` (the arrays, Orbax's PyTree format: OCDBT/zarr through tensorstore,
each process writing the shards it holds), `meta` (the caller's JSON metadata) and `manifest`
(checkpoint_manifest.py: every array's dtype, shape and layout-free checksum, checksums.py).
A restore checks the commit, the manifest and Orbax's own array metadata against the targets
before reading any data, restores each array straight into the target's sharding (any
layout, mesh shape or process count), and compares the checksums: every problem is one
`CheckpointError` naming the checkpoint. docs/checkpoints.md has the whole story.
"""
from __future__ import annotations

import json
import os
import re

import numpy as np

from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.diagnostics import CheckpointError, MeshIRTypeError, MeshIRValueError
from meshir.lowering.runtime.executable import Executable

from meshir.api.checkpoints import _manifest as manifest_lib
from meshir.api.checkpoints import _orbax_quiet as orbax_quiet
from meshir.api.checkpoints._manifest import Entry, Problem
from meshir.api.checkpoints._checksums import checksums

ITEMS = ("state", "meta", "manifest")
COMMIT_FILE = "commit_success.txt"
_STEP = re.compile(r"^\d+$")
_UNFINISHED = re.compile(r"^\d+\.orbax-checkpoint-tmp")


def _inner(error: BaseException) -> BaseException | None:
    """The error `error` was raised from or while handling, as Python shows it: none where
    it was raised `from None` (json's JSONDecodeError hides the StopIteration of its scanner)."""
    if error.__cause__ is not None:
        return error.__cause__
    return None if error.__suppress_context__ else error.__context__


def _first_line(error: BaseException, limit: int = 300) -> str:
    """The first line of the innermost error of the chain (tensorstore's, under Orbax's
    wrappers), without its status code and the checkpoint's path (the message names it)."""
    for _ in range(10):
        inner = _inner(error)
        if inner is None:
            break
        error = inner
    text = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
    text = re.sub(r"^[A-Z_]+: ", "", text)
    text = re.sub(r' (in OCDBT database )?at local file "[^"]*"| \[tensorstore_spec=.*$', "", text)
    text = re.sub(r'local file "[^"]*/(state/[^"]*)"', r"\1", text)
    return text if len(text) <= limit else text[:limit] + "..."


def _array_of(error: BaseException) -> str:
    """` (array NAME)` when tensorstore's error names a key of an array, else ''."""
    for _ in range(10):
        match = re.search(r'"([^"/ ]+)/[^"]*"', str(error))
        if match:
            return f" (array {match.group(1).replace('.', '/')})"
        error = _inner(error)
        if error is None:
            break
    return ""


class Checkpoints:
    """The checkpoints of one run: `DIR/<step>` directories (see the module docstring).

    `keep`: how many of the latest steps to keep (None: all); `asynchronous`: `save` returns
    once the arrays are copied off the devices and writes in the background (Orbax's
    asynchronous checkpointing); `wait()` or `close()` (or leaving a `with` block) waits.
    Under `jax.distributed` every process makes the same calls; each writes its own shards.
    """

    def __init__(self, directory, keep: int | None = None, asynchronous: bool = True):
        if keep is not None and (not isinstance(keep, int) or isinstance(keep, bool) or keep < 1):
            raise MeshIRValueError(f"Checkpoints: keep must be a positive int or None, got {keep!r}")
        self.directory = os.path.abspath(os.fspath(directory))
        self.keep, self.asynchronous = keep, asynchronous
        self._manager = None

    def __repr__(self) -> str:
        return f"Checkpoints({self.directory!r}, keep={self.keep})"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- steps ----------------------------------------------------------------------------

    def _listing(self) -> list[str]:
        try:
            return os.listdir(self.directory)
        except FileNotFoundError:
            return []
        except OSError as e:
            raise CheckpointError(f"checkpoints {self.directory}: cannot list the directory: {e}") from None

    def all_steps(self) -> list[int]:
        """The steps saved and committed (renamed from their temporary name), ascending."""
        return sorted(int(n) for n in self._listing() if _STEP.match(n) and os.path.isdir(self._step_dir(int(n))))

    def latest_step(self) -> int | None:
        steps = self.all_steps()
        return steps[-1] if steps else None

    def _step_dir(self, step: int) -> str:
        return os.path.join(self.directory, str(step))

    # -- save -----------------------------------------------------------------------------

    def _writer(self):
        if self._manager is None:
            import orbax.checkpoint as ocp

            options = ocp.CheckpointManagerOptions(max_to_keep=self.keep, create=True, cleanup_tmp_directories=True,
                                                   enable_async_checkpointing=self.asynchronous)
            self._manager = ocp.CheckpointManager(self.directory, options=options, item_handlers=_handlers())
        return self._manager

    @reports_at_call_site
    def save(self, step: int, arrays: dict, metadata: dict | None = None) -> None:
        """Save `arrays` (`{name: array}` or `{group: {name: array}}`; jax.Arrays, global
        across processes or not, or NumPy arrays) and `metadata` (a JSON object) as `step`.

        Returns when the arrays are copied off the devices (so a donated or deleted array may
        be reused at once); with `asynchronous`, the files are written in the background and
        the step appears (atomically) when complete."""
        import jax
        import orbax.checkpoint as ocp

        if not isinstance(step, (int, np.integer)) or isinstance(step, bool) or step < 0:
            raise MeshIRValueError(f"Checkpoints.save: step must be a non-negative int, got {step!r}")
        step = int(step)
        flat = manifest_lib.flatten(arrays)
        flat = {n: v if isinstance(v, jax.Array) else _host_array(v, n) for n, v in flat.items()}
        for name, value in flat.items():
            if isinstance(value, jax.Array) and value.is_deleted():
                raise MeshIRValueError(f"Checkpoints.save: array {name} was deleted (donated to a call?)")
        metadata = {} if metadata is None else metadata
        try:
            meta_text = json.dumps(metadata, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise MeshIRTypeError(f"Checkpoints.save: metadata must be JSON (dicts, lists, strings, finite "
                                  f"numbers): {e}") from None
        if not isinstance(metadata, dict):
            raise MeshIRTypeError(f"Checkpoints.save: metadata must be a dict, got {type(metadata).__name__}")
        manager = self._writer()
        if step in manager.all_steps():
            raise MeshIRValueError(f"Checkpoints.save: step {step} is already saved in {self.directory}")
        sums = checksums(flat)
        entries = {n: Entry(tuple(v.shape), np.dtype(v.dtype), sums[n]) for n, v in flat.items()}
        manager.save(step, force=True, args=ocp.args.Composite(
            state=ocp.args.PyTreeSave(manifest_lib.unflatten(flat)),
            meta=ocp.args.JsonSave(json.loads(meta_text)),
            manifest=ocp.args.JsonSave(manifest_lib.make(step, entries))))

    def wait(self) -> None:
        """Wait until every save has been written and committed."""
        if self._manager is not None:
            self._manager.wait_until_finished()

    def close(self) -> None:
        if self._manager is not None:
            self._manager.wait_until_finished()
            self._manager.close()
            self._manager = None

    # -- restore --------------------------------------------------------------------------

    def _where(self, step) -> str:
        return f"checkpoint {self.directory} step {step}" if step is not None else f"checkpoints {self.directory}"

    def _error(self, step, problems) -> CheckpointError:
        problems = [problems] if isinstance(problems, str) else problems
        return CheckpointError(f"{self._where(step)}: " + "; ".join(problems))

    def _resolve(self, step) -> int:
        """`step`, checked to be a committed step; the latest committed one for None."""
        self.wait()
        if step is not None:
            if not isinstance(step, (int, np.integer)) or isinstance(step, bool) or step < 0:
                raise MeshIRValueError(f"Checkpoints: step must be a non-negative int or None, got {step!r}")
            step = int(step)
        names = self._listing()
        if step is None:
            if not os.path.isdir(self.directory):
                raise self._error(None, "the directory does not exist: nothing to restore")
            steps = self.all_steps()
            if not steps:
                unfinished = sorted(n for n in names if _UNFINISHED.match(n))
                raise self._error(None, "no saved step" + (
                    f": only unfinished saves ({', '.join(unfinished)}), killed before they were committed"
                    if unfinished else " (the directory is empty)" if not names else ""))
            step = steps[-1]
        elif step not in self.all_steps():
            raise self._error(step, f"no such step (saved steps: {self.all_steps() or 'none'})")
        if not os.path.exists(os.path.join(self._step_dir(step), COMMIT_FILE)):
            raise self._error(step, f"{COMMIT_FILE} is missing: the save of this step was not committed")
        return step

    def _read_json(self, step: int, item: str):
        path = os.path.join(self._step_dir(step), item, "metadata")
        try:
            with open(path, "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            raise self._error(step, f"its {item} ({item}/metadata) is missing") from None
        except OSError as e:
            raise self._error(step, f"its {item} ({item}/metadata) cannot be read: {e}") from None
        if not raw.strip():
            raise self._error(step, f"its {item} ({item}/metadata) is empty")
        try:
            return json.loads(raw.decode("utf-8"))  # as written; json.loads(bytes) would guess UTF-16 for garbage
        except (UnicodeDecodeError, ValueError) as e:
            raise self._error(step, f"its {item} ({item}/metadata) is not valid JSON (truncated or damaged): "
                                    f"{_first_line(e)}") from None

    def _entries(self, step: int) -> dict[str, Entry]:
        try:
            return manifest_lib.check_manifest(self._read_json(step, "manifest"), step)
        except Problem as p:
            raise self._error(step, str(p)) from None

    @reports_at_call_site
    def metadata(self, step: int | None = None) -> dict:
        """The JSON metadata saved with `step` (default: the latest step), checked to be an
        object; reads no array data."""
        step = self._resolve(step)
        self._entries(step)
        meta = self._read_json(step, "meta")
        if not isinstance(meta, dict):
            raise self._error(step, f"its metadata is {manifest_lib._json_kind(meta)}, expected an object")
        return meta

    @reports_at_call_site
    def specs(self, step: int | None = None) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
        """{name: (global shape, dtype)} of every array of `step` (group members as
        `group/name`), from its manifest; reads no array data."""
        return {n: (e.shape, e.dtype) for n, e in self._entries(self._resolve(step)).items()}

    @reports_at_call_site
    def restore(self, targets=None, step: int | None = None):
        """(arrays, metadata) of `step` (default: the latest committed step).

        `targets` says what to restore into, in the structure the arrays were saved in: a
        dict whose leaves are `jax.ShapeDtypeStruct`s with a sharding or jax.Arrays (restored
        as jax.Arrays with that sharding: any layout, mesh shape or process count) or NumPy
        arrays / ShapeDtypeStructs without one (restored as NumPy arrays); an `Executable`:
        every array into the argument of the same name, in the layout the program takes; None:
        every array as a NumPy array. The checkpoint's arrays must be exactly the targets',
        with the same dtypes and shapes. Raises CheckpointError naming the checkpoint and
        every problem found."""
        orbax_quiet.install()  # before the first Orbax read: its echoes come from _stored's too
        step = self._resolve(step)
        entries = self._entries(step)
        metadata = self.metadata(step)
        wanted = _wanted(targets, entries)
        problems = manifest_lib.differences({n: e for n, (e, _) in wanted.items()}, entries, "the checkpoint",
                                            "the restore")
        if problems:
            raise self._error(step, problems)
        state_dir = os.path.join(self._step_dir(step), "state")
        stored = self._stored(step, state_dir)
        problems = manifest_lib.differences(entries, stored, "the array data", "the manifest")
        if problems:
            raise self._error(step, problems)
        arrays = self._read(step, state_dir, wanted)
        found = checksums(arrays)
        bad = [f"array {n} fails its checksum (saved {entries[n].checksum}, read {found[n]}): its data is damaged"
               for n in arrays if found[n] != entries[n].checksum]
        if bad:
            raise self._error(step, bad)
        return manifest_lib.unflatten(arrays), metadata

    def _stored(self, step: int, state_dir: str) -> dict[str, Entry]:
        """Name -> (shape, dtype) of the arrays Orbax's own metadata says are stored."""
        import orbax.checkpoint as ocp

        if not os.path.isdir(state_dir):
            raise self._error(step, "its array data (state/) is missing")
        try:
            tree = ocp.PyTreeCheckpointHandler().metadata(_epath(state_dir)).tree
            flat = _flatten_stored(tree)
            return {n: Entry(tuple(m.shape), np.dtype(m.dtype)) for n, m in flat.items()}
        except Exception as e:
            raise self._error(step, f"its array metadata (state/) cannot be read{_array_of(e)}: "
                                    f"{_first_line(e)}") from None

    def _read(self, step: int, state_dir: str, wanted: dict) -> dict:
        import jax
        import orbax.checkpoint as ocp

        items, restore_args = {}, {}
        for name, (entry, sharding) in wanted.items():
            if sharding is None:
                items[name] = np.zeros((), entry.dtype)
                restore_args[name] = ocp.RestoreArgs(restore_type=np.ndarray, dtype=entry.dtype)
            else:
                items[name] = jax.ShapeDtypeStruct(entry.shape, entry.dtype, sharding=sharding)
                restore_args[name] = ocp.ArrayRestoreArgs(sharding=sharding, global_shape=entry.shape,
                                                          dtype=entry.dtype)
        try:
            with ocp.Checkpointer(ocp.PyTreeCheckpointHandler()) as checkpointer:
                tree = checkpointer.restore(_epath(state_dir), args=ocp.args.PyTreeRestore(
                    item=manifest_lib.unflatten(items), restore_args=manifest_lib.unflatten(restore_args)))
        except Exception as e:
            raise self._error(step, f"its array data cannot be read{_array_of(e)} (truncated or damaged): "
                                    f"{_first_line(e)}") from None
        arrays = manifest_lib.flatten(tree, "the restored arrays")
        for name, (entry, _) in wanted.items():
            if tuple(arrays[name].shape) != entry.shape or np.dtype(arrays[name].dtype) != entry.dtype:
                raise self._error(step, f"array {name} was read as {np.dtype(arrays[name].dtype).name}"
                                        f"{list(arrays[name].shape)}, expected {entry.text()}")
        return {n: arrays[n] for n in wanted}


def _handlers() -> dict:
    import orbax.checkpoint as ocp

    return {"state": ocp.PyTreeCheckpointHandler(), "meta": ocp.JsonCheckpointHandler(),
            "manifest": ocp.JsonCheckpointHandler()}


def _epath(path: str):
    from etils import epath

    return epath.Path(path)


def _host_array(value, name: str) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype == object:
        raise MeshIRTypeError(f"Checkpoints.save: array {name} is a {type(value).__name__}, not an array")
    return array


def _flatten_stored(tree) -> dict:
    """Orbax's metadata tree (dicts of array metadata) as {"name" or "group/name": metadata}."""
    flat = {}
    for key, value in dict(tree).items():
        if isinstance(value, dict) or hasattr(value, "items") and not hasattr(value, "shape"):
            for name, leaf in dict(value).items():
                flat[f"{key}/{name}"] = leaf
        else:
            flat[key] = value
    return flat


def _wanted(targets, entries: dict[str, Entry]) -> dict[str, tuple[Entry, object]]:
    """Name -> (dtype and shape wanted, sharding or None for NumPy) of every target."""
    if targets is None:
        return {n: (e, None) for n, e in entries.items()}
    if isinstance(targets, Executable):
        sig = targets.signature
        index = {n: i for i, n in enumerate(sig.arg_names)}
        wanted = {}
        for name in entries:
            i = index.get(name.rpartition("/")[2])
            if i is not None:
                t = sig.arg_types[i]
                wanted[name] = (Entry(tuple(t.shape), np.dtype(t.dtype)), targets.in_shardings[i])
        return wanted
    wanted = {}
    for name, leaf in manifest_lib.flatten(targets, "the restore targets").items():
        if not hasattr(leaf, "shape") or not hasattr(leaf, "dtype"):
            raise MeshIRTypeError(f"Checkpoints.restore: target {name} is a {type(leaf).__name__}; expected a "
                                  f"jax.ShapeDtypeStruct, a jax.Array or a NumPy array")
        wanted[name] = (Entry(tuple(leaf.shape), np.dtype(leaf.dtype)), getattr(leaf, "sharding", None))
    return wanted
