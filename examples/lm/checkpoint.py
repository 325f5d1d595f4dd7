"""Checkpoints: one `.npz` file per run directory, written atomically.

`DIR/checkpoint.npz` holds every parameter (`param/<name>`) and optimizer state array
(`state/<name>`) as global NumPy arrays (so a run may resume under another layout), and
`meta`, a JSON string: the config, the step, the training-loss history (one value per step),
the validation-loss history ([step, loss] pairs) and the corpus digest. It is written to a
temporary file in DIR and renamed over the old one, so a run killed while saving leaves the
previous checkpoint intact.

`load` checks the checkpoint against the model it is meant for and raises `CheckpointError`
naming everything that differs: config fields, corpus, missing or extra arrays, shapes.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

FILENAME = "checkpoint.npz"
FORMAT = 1


class CheckpointError(Exception):
    """A checkpoint that cannot be used for this run."""


@dataclass
class State:
    step: int
    params: dict[str, np.ndarray]
    opt_state: dict[str, np.ndarray]
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[tuple[int, float]] = field(default_factory=list)


def path_in(directory: str) -> str:
    return os.path.join(directory, FILENAME)


def save(directory: str, state: State, config: dict, corpus_digest: str, extra: dict | None = None) -> str:
    """Write `state` atomically to `directory/checkpoint.npz`; returns the path."""
    os.makedirs(directory, exist_ok=True)
    meta = {"format": FORMAT, "config": config, "corpus": corpus_digest, "step": state.step,
            "train_loss": [float(x) for x in state.train_loss],
            "val_loss": [[int(s), float(x)] for s, x in state.val_loss], **(extra or {})}
    arrays = {"meta": np.array(json.dumps(meta))}
    arrays.update({f"param/{k}": np.asarray(v) for k, v in state.params.items()})
    arrays.update({f"state/{k}": np.asarray(v) for k, v in state.opt_state.items()})
    target = path_in(directory)
    fd, tmp = tempfile.mkstemp(prefix=".checkpoint-", suffix=".npz.tmp", dir=directory)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a checkpoint is an ordinary file
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target


def exists(directory: str) -> bool:
    return os.path.exists(path_in(directory))


def load(directory: str, config: dict, corpus_digest: str, param_shapes: dict[str, tuple],
         state_shapes: dict[str, tuple]) -> State:
    """The checkpoint in `directory`, checked against this run's config, corpus and arrays."""
    path = path_in(directory)
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except (OSError, ValueError) as e:
        raise CheckpointError(f"{path} is not a readable checkpoint: {e}") from None
    if "meta" not in arrays:
        raise CheckpointError(f"{path} has no 'meta' entry: not a checkpoint of this script")
    meta = json.loads(str(arrays.pop("meta")))
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} has format {meta.get('format')!r}, this script reads format {FORMAT}")

    problems = []
    saved = meta.get("config", {})
    for key in sorted(set(saved) | set(config)):
        if saved.get(key) != config.get(key):
            flag = "--" + key.replace("_", "-")
            problems.append(f"{flag} is {saved.get(key, 'absent')} in the checkpoint but {config.get(key, 'absent')} now")
    if meta.get("corpus") != corpus_digest:
        problems.append(f"corpus digest {meta.get('corpus')} in the checkpoint but {corpus_digest} now "
                        f"(another --corpus, or another Python version's standard library?)")
    for prefix, expected in (("param/", param_shapes), ("state/", state_shapes)):
        have = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
        missing = sorted(set(expected) - set(have))
        extra = sorted(set(have) - set(expected))
        if missing:
            problems.append(f"missing {prefix[:-1]} arrays: {', '.join(missing)}")
        if extra:
            problems.append(f"unexpected {prefix[:-1]} arrays: {', '.join(extra)}")
        for name in sorted(set(have) & set(expected)):
            if tuple(have[name].shape) != tuple(expected[name]):
                problems.append(f"{prefix}{name} has shape {tuple(have[name].shape)}, the model needs {tuple(expected[name])}")
    unknown = sorted(k for k in arrays if not k.startswith(("param/", "state/")))
    if unknown:
        problems.append(f"unexpected entries: {', '.join(unknown)}")
    if problems:
        raise CheckpointError(f"checkpoint {path} does not match this model: " + "; ".join(problems)
                              + " (use another --checkpoint directory to start afresh)")
    step = int(meta["step"])
    if len(meta["train_loss"]) != step:
        raise CheckpointError(f"checkpoint {path} is inconsistent: step {step} but {len(meta['train_loss'])} losses")
    return State(step=step,
                 params={k[len("param/"):]: v for k, v in arrays.items() if k.startswith("param/")},
                 opt_state={k[len("state/"):]: v for k, v in arrays.items() if k.startswith("state/")},
                 train_loss=list(meta["train_loss"]),
                 val_loss=[(int(s), float(x)) for s, x in meta["val_loss"]])
