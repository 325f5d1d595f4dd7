"""Checkpoints: `mi.Checkpoints` (Orbax) in the run directory, one subdirectory per saved step.

`DIR/<step>/` holds every parameter (`param/<name>`) and optimizer state array
(`state/<name>`), saved sharded from the training step's jax.Arrays (each process writes the
shards it holds) with a checksum each, and the metadata: the config, the step, the
training-loss history (one value per step), the validation-loss history ([step, loss] pairs)
and the corpus digest. Orbax writes a step under a temporary name and renames it when
complete, so a run killed while saving leaves the previous step intact; the last KEEP steps
are kept. docs/checkpoints.md describes the format.

`check` compares the latest step's metadata and array list with the model it is meant for
(before compiling) and raises `CheckpointError` naming everything that differs: config
fields, corpus, missing or extra arrays, shapes; `load` then restores the arrays straight into
the layout of the compiled step (any --layout: checkpoints hold global arrays), checking
each array's checksum. A damaged checkpoint is one CheckpointError too.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import meshir as mi

mi.hide_from_error_locations(__file__)  # MeshIR's errors name the line that called into this library

FORMAT = 2
KEEP = 2
CheckpointError = mi.CheckpointError


@dataclass
class State:
    step: int
    params: dict[str, object]  # NumPy arrays, or the jax.Arrays of the compiled step
    opt_state: dict[str, object]
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[tuple[int, float]] = field(default_factory=list)


def where(directory: str, step: int | None = None) -> str:
    """How messages name a checkpoint: its directory and step."""
    path = os.path.abspath(directory)
    return path if step is None else f"{path} step {step}"


def open_checkpoints(directory: str) -> mi.Checkpoints:
    """The run's checkpoints; saving is asynchronous (close() waits for the last save)."""
    return mi.Checkpoints(directory, keep=KEEP)


def save(checkpoints: mi.Checkpoints, state: State, config: dict, corpus_digest: str, extra: dict | None = None):
    """Start saving `state` as its step: returns once the arrays are copied off the devices
    (the next training step may then reuse the donated buffers), and writes in the background."""
    meta = {"format": FORMAT, "config": config, "corpus": corpus_digest, "step": state.step,
            "train_loss": [float(x) for x in state.train_loss],
            "val_loss": [[int(s), float(x)] for s, x in state.val_loss], **(extra or {})}
    checkpoints.save(state.step, {"param": dict(state.params), "state": dict(state.opt_state)}, meta)


def exists(directory: str) -> bool:
    """Whether `directory` holds a saved step (or a checkpoint of the old single-file format,
    which `check` then reports)."""
    old_format = os.path.exists(os.path.join(directory, "checkpoint.npz"))
    return old_format or mi.Checkpoints(directory).latest_step() is not None


def _metadata(directory: str):
    if os.path.exists(os.path.join(directory, "checkpoint.npz")):
        old = os.path.join(where(directory), "checkpoint.npz")
        raise CheckpointError(f"{old} is a checkpoint of format 1 (a single .npz file); this script reads format "
                              f"{FORMAT} (Orbax step directories): use another --checkpoint directory to start afresh")
    checkpoints = mi.Checkpoints(directory)
    try:
        step = checkpoints.latest_step()
        return step, checkpoints.metadata(step), checkpoints.specs(step)
    except mi.CheckpointError as e:
        raise CheckpointError(e.reason) from None


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


#: Each metadata field `save` writes, the test its value passes, and what that test wants.
FIELDS = {
    "config": (lambda v: isinstance(v, dict), "an object"),
    "corpus": (lambda v: isinstance(v, str), "a string"),
    "step": (_is_int, "an integer"),
    "train_loss": (lambda v: isinstance(v, list) and all(map(_is_number, v)), "a list of numbers"),
    "val_loss": (lambda v: isinstance(v, list) and all(
        isinstance(p, list) and len(p) == 2 and _is_int(p[0]) and _is_number(p[1]) for p in v),
                 "a list of [step, loss] pairs"),
}


def _check_fields(meta: dict, path: str) -> None:
    """Every field `save` writes is there with a value of its kind: a checkpoint edited or
    written by something else is one CheckpointError, not a KeyError or TypeError later."""
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} has format {meta.get('format')!r}, this script reads format {FORMAT}")
    problems = [f"'{key}' is missing" if key not in meta else f"'{key}' is {_kind(meta[key])}, expected {want}"
                for key, (ok, want) in FIELDS.items() if key not in meta or not ok(meta[key])]
    if problems:
        raise CheckpointError(f"checkpoint {path} has damaged metadata: " + "; ".join(problems)
                              + " (use another --checkpoint directory to start afresh)")


def _kind(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:40] + '...'}"


def check(directory: str, config: dict, corpus_digest: str, param_shapes: dict[str, tuple],
          state_shapes: dict[str, tuple]) -> int:
    """The latest step of the checkpoint in `directory`, checked against this run's config,
    corpus and arrays (reads no array data)."""
    step, meta, specs = _metadata(directory)
    path = where(directory, step)
    _check_fields(meta, path)
    problems = []
    saved = meta["config"]
    for key in sorted(set(saved) | set(config)):
        if saved.get(key) != config.get(key):
            flag = "--" + key.replace("_", "-")
            problems.append(f"{flag} is {saved.get(key, 'absent')} in the checkpoint but "
                            f"{config.get(key, 'absent')} now")
    if meta["corpus"] != corpus_digest:
        problems.append(f"corpus digest {meta['corpus']} in the checkpoint but {corpus_digest} now "
                        f"(another --corpus, or another Python version's standard library?)")
    for group, expected in (("param", param_shapes), ("state", state_shapes)):
        have = {n.split("/", 1)[1]: shape for n, (shape, _) in specs.items() if n.startswith(group + "/")}
        missing = sorted(set(expected) - set(have))
        extra = sorted(set(have) - set(expected))
        if missing:
            problems.append(f"missing {group} arrays: {', '.join(missing)}")
        if extra:
            problems.append(f"unexpected {group} arrays: {', '.join(extra)}")
        for name in sorted(set(have) & set(expected)):
            if tuple(have[name]) != tuple(expected[name]):
                problems.append(f"{group}/{name} has shape {tuple(have[name])}, "
                                f"the model needs {tuple(expected[name])}")
    unknown = sorted(n for n in specs if not n.startswith(("param/", "state/")))
    if unknown:
        problems.append(f"unexpected entries: {', '.join(unknown)}")
    if problems:
        raise CheckpointError(f"checkpoint {path} does not match this model: " + "; ".join(problems)
                     + " (use another --checkpoint directory to start afresh)")
    if meta["step"] != step or len(meta["train_loss"]) != step:
        raise CheckpointError(f"checkpoint {path} is inconsistent: step {meta['step']} but "
                              f"{len(meta['train_loss'])} losses")
    return step


def load(directory: str, step: int, exe) -> State:
    """Step `step` (checked by `check`) restored into the layout `exe` (the compiled training
    step) takes its parameters and optimizer state in."""
    try:
        arrays, meta = mi.Checkpoints(directory).restore(exe, step=step)
    except mi.CheckpointError as e:
        raise CheckpointError(e.reason) from None
    return State(step=step, params=arrays["param"], opt_state=arrays["state"],
                 train_loss=[float(x) for x in meta["train_loss"]],
                 val_loss=[(int(s), float(x)) for s, x in meta["val_loss"]])
