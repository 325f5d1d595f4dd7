"""Committed repros: `corpus/<class>-<hash>.mlir`, the meshir-opt arguments on the first line
(`// FUZZ-ARGS: [json list]`), what it did when found on the second, then the input."""
from __future__ import annotations

import hashlib
import json
import os

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
_ARGS, _FOUND = "// FUZZ-ARGS: ", "// FUZZ-FOUND: "


def read_repro(path: str) -> tuple[list[str], str]:
    """(args, input text) of a repro file; the header lines stay in the text (comments)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    first = text.split("\n", 1)[0]
    args = json.loads(first[len(_ARGS):]) if first.startswith(_ARGS) else []
    return args, text


def write_repro(args: list[str], text: str, found: str, directory: str = CORPUS) -> str | None:
    """Save a minimized repro; None when the same one is there already."""
    os.makedirs(directory, exist_ok=True)
    digest = hashlib.sha1(json.dumps([args, text]).encode()).hexdigest()[:10]
    path = os.path.join(directory, f"{found.split(':', 1)[0]}-{digest}.mlir")
    if os.path.exists(path):
        return None
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{_ARGS}{json.dumps(args)}\n{_FOUND}{found}\n{text}")
    return path
