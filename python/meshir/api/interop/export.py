"""`export` and `load`: a compiled MeshIR program as a file, and back.

    mi.export(exe, "mlp.mlir")                    # StableHLO text, Shardy shardings
    mi.export(exe, "mlp.mlirbc", format="bytecode")  # StableHLO portable artifact (versioned)
    mi.export(exe, "mlp.jax", format="jax")       # a serialized jax.export.Exported
    exe2 = mi.load("mlp.mlirbc")                  # an Executable again, any of the three

Every format holds the module the executable runs (entry `@main`), each argument and result
with its name and MeshIR type; `jax.export.deserialize(data).call(*args)` runs the "jax" one
without MeshIR (arguments positional, in the program's declaration order; results a tuple).
docs/jax-interop.md says which artefacts of other jax versions load.
"""
from __future__ import annotations

import os
import re

import jax

from meshir import _jax_private as jp
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.context import parse_module
from meshir.dialect.diagnostics import MeshIRError, MeshIRTypeError, MeshIRValueError
from meshir.lowering.runtime import Executable
from meshir.lowering.runtime import jax_export
from meshir.lowering.runtime.from_stablehlo import executable_from_stablehlo

from meshir.api import _checks as checks
from meshir.api.compilation.compile import compile

FORMATS = ("mlir", "bytecode", "jax")

#: The first bytes of MLIR bytecode, which StableHLO portable artifacts are.
_BYTECODE_MAGIC = b"ML\xefR"


@reports_at_call_site
def export(program_or_executable, path: str | os.PathLike | None = None, format: str = "mlir"):
    """The lowered StableHLO of a compiled program (an Executable; a Program is compiled with
    `mi.compile`'s defaults first): text for "mlir", bytes for "bytecode" (a StableHLO
    portable artifact) and "jax" (`jax.export.Exported.serialize()`). With `path`, also
    written there."""
    format = checks.choice(format, FORMATS, "format")
    exe = program_or_executable
    if not isinstance(exe, Executable):
        exe = compile(checks.module_of(program_or_executable, "the program to export"))
    if format == "mlir":
        data = jax_export.export_text(exe)
    elif format == "bytecode":
        data = jp.portable_artifact(jax_export.export_text(exe))
    else:
        data = bytes(jax_export.exported(exe, axis_types=_axis_types(exe)).serialize())
    if path is not None:
        _write(path, data)
    return data


@reports_at_call_site
def load(path_or_data, mesh=None, function: str | None = None) -> Executable:
    """An Executable from what `export` wrote (a path, or the text or bytes themselves), or
    from any lowered MeshIR module (what `meshir-opt --mtf-lower-to-stablehlo` prints). The
    format is read from the data. `mesh`: a mesh of the same axes whose devices to run on."""
    mesh = checks.mesh(mesh, "load mesh")
    data, what = _read(path_or_data)
    text = _module_text(data, what)
    module_op, diagnostics = parse_module(text, source_name=what)
    if module_op is None:
        raise MeshIRError(f"{what} does not parse as StableHLO{_written_by(text)}:\n" + "\n".join(map(str, diagnostics)),
                          diagnostics)
    return executable_from_stablehlo(module_op, mesh, function, what)


def _axis_types(exe) -> tuple[str, ...]:
    """The jax axis types a "jax" export records: those of the mesh the program runs on (a
    jax mesh's own, `jax.make_mesh`'s Explicit by default), Auto where it states none."""
    return exe.mesh.axis_types or ("auto",) * len(exe.mesh.axes)


def _write(path, data) -> None:
    try:
        if isinstance(data, str):
            with open(path, "w", encoding="utf-8") as f:
                f.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)
    except OSError as e:
        raise MeshIRError(f"cannot write the export to {os.fspath(path)!r}: {e.strerror or e}") from None


def _read(path_or_data) -> tuple[bytes, str]:
    """The bytes to load and how to name them in errors."""
    if isinstance(path_or_data, (bytes, bytearray)):
        return bytes(path_or_data), "the export"
    if isinstance(path_or_data, str) and not os.path.exists(path_or_data) and (
            "\n" in path_or_data or re.match(r"\s*(module\s*[{@]|module\s+attributes|sdy\.mesh\s+@)", path_or_data)):
        return path_or_data.encode(), "the export"
    if not isinstance(path_or_data, (str, os.PathLike)):
        raise MeshIRTypeError(f"mi.load takes a path, or the text or bytes mi.export returned; got "
                              f"{type(path_or_data).__name__}")
    try:
        with open(path_or_data, "rb") as f:
            return f.read(), os.fspath(path_or_data)
    except OSError as e:
        raise MeshIRError(f"cannot read {os.fspath(path_or_data)!r}: {e.strerror or e}") from None


def _module_text(data: bytes, what: str) -> str:
    """The StableHLO text in an export of any format; MeshIRValueError if `data` is none."""
    if data.startswith(_BYTECODE_MAGIC):
        try:
            return jp.portable_artifact_text(data)
        except Exception as e:  # jaxlib's own error type differs between releases
            producer = re.search(rb"StableHLO_v([0-9.]+)", data[:64])
            written = f"written for StableHLO {producer.group(1).decode()}; " if producer else ""
            raise MeshIRValueError(
                f"{what} is MLIR bytecode but not a StableHLO portable artifact this jaxlib can read ({written}jax "
                f"{jax.__version__} reads StableHLO {jp.stablehlo_version()} and older): {_first_line(e)}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and re.search(r"\b(module|func\.func|sdy\.mesh)\b", text):
        return text
    try:
        exported = jax.export.deserialize(bytearray(data))
    except Exception:  # flatbuffers raises whatever the bytes make it trip over
        raise MeshIRValueError(f"{what} is not a MeshIR export: neither StableHLO text, a StableHLO portable artifact "
                               f"nor a serialized jax.export.Exported ({len(data)} bytes, starting {data[:8]!r})") from None
    return exported.mlir_module()


def _written_by(text: str) -> str:
    match = re.search(rf'{re.escape(jax_export.WRITER_ATTRIBUTE)} = "([^"]*)"', text)
    if match is None or match.group(1) == jax_export.writer():
        return ""
    return f" (written by {match.group(1)}; this is {jax_export.writer()})"


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]
