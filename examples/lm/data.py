"""The corpora and the batches: real English text every Python installation has, offline.

The "small" corpus (the default) is the docstrings of a fixed list of pure-Python
standard-library modules (`MODULES`), read from their source files under
`sysconfig.get_paths()["stdlib"]` and extracted with `ast` (nothing is imported, so no side
effects; `python -OO` does not matter), in source order, separated by blank lines: about
460,000 characters on CPython 3.11. A module whose source file is missing (a stripped
installation) is skipped and listed in `Corpus.source`.

The "large" corpus, for models that would overfit the small one, is the small corpus's text
followed by the docstrings of every other `.py` file under the standard library (sorted by
path; test suites, codec tables and site-packages left out) and the Python language
reference topics that `pydoc` ships (`pydoc_data/topics.py`): about 2.3 million characters
on CPython 3.11. It starts with the small corpus's text, so the small corpus's validation
chunks are the first validation chunks of the large one (held out from both).

Either corpus is fixed for a given Python version (its digest says which text it is).

Characters map to a fixed vocabulary: id 0 is "unknown" (every character outside it), id 1
newline, ids 2..96 printable ASCII (space to '~'). The vocab dim has `VOCAB_SIZE` = 104
entries: 97 characters plus 7 ids that never occur, so that it divides by 8 devices.

Train/validation split: the text is cut into chunks of `CHUNK` characters; every 10th chunk
(index 9, 19, ...) is validation, the rest training. Training batches are a pure function of
(seed, step) — random windows drawn with `np.random.default_rng([seed, step])` — so a resumed
run sees exactly the batches an uninterrupted one would. Validation batches are fixed
(evenly spaced windows).
"""
from __future__ import annotations

import ast
import hashlib
import os
import sys
import sysconfig
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

MODULES = (
    "argparse", "textwrap", "collections/__init__", "functools", "json/__init__", "json/decoder",
    "json/encoder", "dataclasses", "typing", "inspect", "random", "statistics", "fractions", "heapq",
    "bisect", "string", "difflib", "shutil", "tempfile", "subprocess", "threading", "queue",
    "logging/__init__", "unittest/case", "doctest", "calendar", "csv", "configparser", "contextlib",
    "enum", "abc", "copy", "pprint", "shlex", "glob", "fnmatch", "tarfile", "gzip", "base64", "hmac",
    "secrets", "ipaddress", "urllib/parse", "http/client", "codecs", "locale", "numbers", "operator",
    "os", "posixpath", "sched", "selectors", "timeit", "tokenize", "weakref", "warnings",
)

UNKNOWN, NEWLINE, FIRST_PRINTABLE = 0, 1, 2
CHARS = 2 + (127 - 32)          # unknown, newline, printable ASCII
VOCAB_SIZE = 104                # CHARS rounded up to a multiple of 8 (ids >= CHARS never occur)
CHUNK = 2048
VALIDATION_EVERY = 10


#: Directory names under the standard library whose files the large corpus leaves out: test
#: suites (their docstrings describe tests), codec tables (one generated docstring, repeated),
#: installed packages (not the standard library) and the topics file (read on its own).
SKIPPED_DIRS = frozenset({"test", "tests", "idle_test", "encodings", "site-packages", "pydoc_data", "__pycache__"})
TOPICS = "pydoc_data/topics.py"
CORPORA = ("small", "large")


def describe_source() -> str:
    """One line naming the default corpus (for --help and the README)."""
    return (f"the docstrings of {len(MODULES)} pure-Python standard-library modules "
            f"(argparse, textwrap, collections, ..., warnings), read with ast from the .py files under "
            f"sysconfig.get_paths()['stdlib']")


def encode(text: str) -> np.ndarray:
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    ids = np.full(codes.shape, UNKNOWN, dtype=np.int32)
    printable = (codes >= 32) & (codes < 127)
    ids[printable] = (codes[printable] - 32 + FIRST_PRINTABLE).astype(np.int32)
    ids[codes == 10] = NEWLINE
    return ids


def decode(ids) -> str:
    out = []
    for i in np.asarray(ids).reshape(-1).tolist():
        if i == NEWLINE:
            out.append("\n")
        elif FIRST_PRINTABLE <= i < CHARS:
            out.append(chr(i - FIRST_PRINTABLE + 32))
        else:
            out.append("\N{REPLACEMENT CHARACTER}")
    return "".join(out)


def _parse(path: str) -> ast.Module | None:
    """The file's syntax tree, or None if it is not UTF-8 Python 3 (a few deliberately
    broken files under the standard library)."""
    try:
        with open(path, encoding="utf-8") as f:
            return ast.parse(f.read(), filename=path)
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None


def _docstrings(path: str) -> list[str]:
    tree = _parse(path)
    if tree is None:
        return []
    nodes = [tree] + sorted((n for n in ast.walk(tree)
                             if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))),
                            key=lambda n: (n.lineno, n.col_offset))
    return [d for d in (ast.get_docstring(n) for n in nodes) if d]


@dataclass(frozen=True)
class Corpus:
    text: str
    train: np.ndarray       # i32 ids
    validation: np.ndarray  # i32 ids
    source: str             # what the text is, for humans
    digest: str             # sha256 of the text (first 16 hex digits): a checkpoint records it

    def __str__(self) -> str:
        return (f"{self.source}: {len(self.text):,} characters ({self.digest}), "
                f"{len(self.train):,} training / {len(self.validation):,} validation")


def _other_modules(stdlib: str, listed: set[str]) -> list[str]:
    """Every .py file under `stdlib` outside SKIPPED_DIRS and not in `listed`, sorted by its
    path relative to `stdlib` ('/'-separated, so the order does not depend on the OS)."""
    found = []
    for root, dirs, files in os.walk(stdlib):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        rel = os.path.relpath(root, stdlib)
        for name in files:
            module = (name if rel == "." else f"{rel}/{name}").replace(os.sep, "/")[:-len(".py")]
            if name.endswith(".py") and module not in listed:
                found.append(module)
    return sorted(found)


def _topics(path: str) -> list[str]:
    """The texts of pydoc's language reference topics (the `topics` dict literal), in file order."""
    tree = _parse(path) if os.path.exists(path) else None
    for node in tree.body if tree else []:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["topics"]:
            return [text.strip() for text in ast.literal_eval(node.value).values()]
    return []


@lru_cache(maxsize=None)
def load_corpus(name: str = "small", stdlib: str | None = None) -> Corpus:
    """The corpus `name` ("small" or "large") of this Python installation (see the module
    docstring)."""
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r} (expected one of {', '.join(CORPORA)})")
    stdlib = stdlib or sysconfig.get_paths()["stdlib"]
    docs, missing = [], []
    for module in MODULES:
        path = os.path.join(stdlib, *module.split("/")) + ".py"
        if os.path.exists(path):
            docs.extend(_docstrings(path))
        else:
            missing.append(module)
    if not docs:
        raise FileNotFoundError(f"no standard-library sources found under {stdlib} (needed for the corpus)")
    modules = len(MODULES) - len(missing)
    topics = []
    if name == "large":
        others = _other_modules(stdlib, set(MODULES))
        for module in others:
            docs.extend(_docstrings(os.path.join(stdlib, *module.split("/")) + ".py"))
        modules += len(others)
        topics = _topics(os.path.join(stdlib, *TOPICS.split("/")))
        docs.extend(topics)
    text = "\n\n".join(docs) + "\n"
    ids = encode(text)
    n_chunks = -(-len(ids) // CHUNK)
    chunks = [ids[i * CHUNK:(i + 1) * CHUNK] for i in range(n_chunks)]
    validation = np.concatenate([c for i, c in enumerate(chunks) if i % VALIDATION_EVERY == VALIDATION_EVERY - 1])
    train = np.concatenate([c for i, c in enumerate(chunks) if i % VALIDATION_EVERY != VALIDATION_EVERY - 1])
    version = ".".join(map(str, sys.version_info[:3]))
    source = f"docstrings of {modules} standard-library modules"
    if topics:
        source += f" and pydoc's {len(topics)} language reference topics"
    source += f" of Python {version}"
    if missing:
        source += f" (source missing, skipped: {', '.join(missing)})"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return Corpus(text, train, validation, source, digest)


def _windows(ids: np.ndarray, starts: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    idx = starts[:, None] + np.arange(length + 1)[None, :]
    window = ids[idx]
    return window[:, :-1].astype(np.int32), window[:, 1:].astype(np.int32)


def train_batch(corpus: Corpus, seed: int, step: int, batch: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, targets) for training step `step` (1-based): a pure function of its arguments.
    targets are the tokens shifted by one character (the next character at each position)."""
    rng = np.random.default_rng([seed, step])
    starts = rng.integers(0, len(corpus.train) - length - 1, size=batch)
    return _windows(corpus.train, starts, length)


def validation_batches(corpus: Corpus, batch: int, length: int, count: int = 4) -> list[tuple[np.ndarray, np.ndarray]]:
    """`count` fixed batches of evenly spaced windows over the validation text."""
    starts = np.linspace(0, len(corpus.validation) - length - 1, batch * count).astype(np.int64)
    return [_windows(corpus.validation, starts[i * batch:(i + 1) * batch], length) for i in range(count)]


def heldout_batches(corpus: Corpus, batch: int, length: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The whole validation text as consecutive non-overlapping windows, `batch` per batch (the
    last incomplete batch left out): every held-out character but the last < batch * length + 1
    is predicted once, so models of any batch and length are compared on nearly the same text."""
    windows = (len(corpus.validation) - 1) // length // batch * batch
    starts = np.arange(windows, dtype=np.int64) * length
    return [_windows(corpus.validation, starts[i:i + batch], length) for i in range(0, windows, batch)]
