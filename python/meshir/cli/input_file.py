"""Read meshir-opt's input: MLIR text or MLIR bytecode, from a file or standard input.

Bytecode is recognized by its magic number (`ML\\xefR`), as mlir-opt recognizes it; anything
else must be UTF-8 text. A file that is neither is refused with a message saying what it looks
like, instead of a decoding error.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

BYTECODE_MAGIC = b"ML\xefR"
_FOREIGN = {b"BC\xc0\xde": "LLVM bitcode", b"\x7fELF": "an ELF binary", b"PK\x03\x04": "a zip archive"}


class InputError(Exception):
    """The input cannot be read; the message says why."""


@dataclass(frozen=True)
class InputFile:
    """What meshir-opt reads: `text` (MLIR text) or `bytecode` (MLIR bytecode), one of them."""

    name: str  # the file name, or <stdin>
    text: str | None = None
    bytecode: bytes | None = None


def read_input(path: str) -> InputFile:
    """The input at `path` ('-': standard input); raises InputError."""
    name = "<stdin>" if path == "-" else path
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream in place of stdin (in-process callers)
            return InputFile(name, text=sys.stdin.read())
        data = stream.read()
    else:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise InputError(f"cannot read input file '{path}': {e.strerror or e}") from None
    if data.startswith(BYTECODE_MAGIC):
        return InputFile(name, bytecode=data)
    try:
        return InputFile(name, text=data.decode("utf-8"))
    except UnicodeDecodeError as e:
        what = next((kind for magic, kind in _FOREIGN.items() if data.startswith(magic)), None)
        looks = f"it is {what}" if what else f"byte {e.start} is 0x{data[e.start]:02x}"
        raise InputError(
            f"cannot read input file '{name}': it is neither UTF-8 MLIR text nor MLIR bytecode "
            f"(which starts with 'ML\\xefR'); {looks}"
        ) from None
