"""A checkpoint's manifest: every array's name, dtype, shape and checksum, saved as JSON.

Arrays are given flat (`{name: array}`) or in groups (`{group: {name: array}}`, one level);
inside the manifest and in error messages an array of a group is `group/name`. The manifest
is what a restore is checked against before any array data is read: `check_manifest` turns
a JSON value of any shape into {name: Entry} or a `Problem` saying what is wrong with it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from meshir.dialect.diagnostics import MeshIRTypeError, MeshIRValueError

FORMAT = "meshir-checkpoint"
VERSION = 1


class Problem(Exception):
    """What is wrong with a checkpoint (the caller adds which checkpoint)."""


@dataclass(frozen=True)
class Entry:
    shape: tuple[int, ...]
    dtype: np.dtype
    checksum: str | None = None

    def text(self) -> str:
        return f"{self.dtype.name}{list(self.shape)}"


def _check_name(name, what: str) -> str:
    if not isinstance(name, str) or not name or "/" in name or "." in name:
        raise MeshIRValueError(f"{what} {name!r}: names must be non-empty strings without '/' or '.'")
    return name


def flatten(tree, what: str = "the arrays to save") -> dict[str, object]:
    """`{name: leaf}` or `{group: {name: leaf}}` as {"name" or "group/name": leaf}."""
    if not isinstance(tree, dict) or not tree:
        raise MeshIRTypeError(f"{what} must be a non-empty dict of arrays (or of dicts of arrays), "
                              f"got {type(tree).__name__}")
    flat = {}
    for key, value in tree.items():
        _check_name(key, "array or group name")
        if isinstance(value, dict):
            if not value:
                raise MeshIRValueError(f"{what}: group {key!r} is empty")
            for name, leaf in value.items():
                flat[f"{key}/{_check_name(name, f'array name in group {key!r}:')}"] = leaf
        else:
            flat[key] = value
    return flat


def unflatten(flat: dict[str, object]) -> dict:
    tree: dict = {}
    for name, value in flat.items():
        group, _, leaf = name.rpartition("/")
        (tree.setdefault(group, {}) if group else tree)[leaf] = value
    return tree


def make(step: int, entries: dict[str, Entry]) -> dict:
    return {"format": FORMAT, "version": VERSION, "step": step,
            "arrays": {n: {"dtype": e.dtype.name, "shape": list(e.shape), "checksum": e.checksum}
                       for n, e in entries.items()}}


def _field(obj: dict, key: str, kind, what: str):
    if key not in obj:
        raise Problem(f"{what} has no field {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise Problem(f"{what}: field {key!r} is {_json_kind(value)}, expected {_kind_name(kind)}")
    return value


def _json_kind(value) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
             float: "a number", type(None): "null"}
    kind = names.get(type(value), type(value).__name__)
    return kind if isinstance(value, (dict, list, type(None))) else f"{kind} {repr(value)[:40]}"


def _kind_name(kind) -> str:
    return {dict: "an object", list: "a list", str: "a string", int: "an integer"}[kind]


def _dtype(text: str, what: str) -> np.dtype:
    import ml_dtypes

    try:
        return np.dtype(getattr(ml_dtypes, text)) if hasattr(ml_dtypes, text) else np.dtype(text)
    except TypeError:
        raise Problem(f"{what}: unknown dtype {text!r}") from None


def check_manifest(obj, step: int) -> dict[str, Entry]:
    """The manifest's entries, or a Problem naming the first thing wrong with it."""
    if not isinstance(obj, dict):
        raise Problem(f"the manifest is {_json_kind(obj)}, expected an object")
    if "format" not in obj:
        raise Problem(f"the manifest has no field 'format' (expected {FORMAT!r}): not a MeshIR checkpoint")
    if obj["format"] != FORMAT:
        raise Problem(f"the manifest's format is {obj.get('format')!r}, expected {FORMAT!r}: not a MeshIR checkpoint")
    version = _field(obj, "version", int, "the manifest")
    if version != VERSION:
        raise Problem(f"the manifest has version {version}; this MeshIR reads version {VERSION}")
    saved_step = _field(obj, "step", int, "the manifest")
    if saved_step != step:
        raise Problem(f"the manifest says step {saved_step}, its directory step {step}")
    arrays = _field(obj, "arrays", dict, "the manifest")
    if not arrays:
        raise Problem("the manifest lists no arrays")
    entries = {}
    for name, entry in arrays.items():
        what = f"the manifest's entry for array {name!r}"
        if not isinstance(entry, dict):
            raise Problem(f"{what} is {_json_kind(entry)}, expected an object")
        shape = _field(entry, "shape", list, what)
        if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
            raise Problem(f"{what}: shape {shape} is not a list of sizes")
        checksum = _field(entry, "checksum", str, what)
        entries[name] = Entry(tuple(shape), _dtype(_field(entry, "dtype", str, what), what), checksum)
    return entries


def differences(expected: dict[str, Entry], found: dict[str, Entry], found_where: str, wanted_where: str) -> list[str]:
    """Missing and unexpected arrays, and dtype or shape differences, as phrases."""
    problems = []
    missing = [n for n in expected if n not in found]
    extra = [n for n in found if n not in expected]
    if missing:
        problems.append(f"{found_where} has no array{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if extra:
        problems.append(f"{found_where} has array{'s' if len(extra) > 1 else ''} {', '.join(extra)} "
                        f"that {wanted_where} does not have")
    for name in expected:
        if name in found and (expected[name].shape, expected[name].dtype) != (found[name].shape, found[name].dtype):
            problems.append(f"array {name} is {found[name].text()} in {found_where}, {wanted_where} wants "
                            f"{expected[name].text()}")
    return problems
