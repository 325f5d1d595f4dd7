"""MeshIR: named-dimension tensor programs on a mesh, compiled through MLIR to StableHLO.

Build a program with `Program`, `Dim` and the op functions, print `prog.module`, run it with
the reference interpreter `interpret`, or parse and transform IR with `parse_module` and the
passes of `meshir.transforms` (also on the command line: `meshir-opt`).

The public namespace is assembled in `_namespace.py`, its names listed in `_public_names.py`
and documented in docs/python-api.md (test/python/api/test_public_names.py checks both). The modules behind them are under `meshir.api` by purpose; a name starting with `_`
there is internal.
"""
import os as _os
import re as _re
import sys as _sys

# Before anything imports jax: a jax or jaxlib outside the supported range is one clear error.
from meshir import _versions

_versions.check()

# XLA logs one INFO line per device when its backend starts; MeshIR programs start it for
# meshes of many devices. Quiet by default; a value the user set wins.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")


def _started_as_meshir_opt() -> bool:
    """Whether this process is the `meshir-opt` command: its console script (`meshir-opt`,
    on Windows `meshir-opt.exe` or `meshir-opt-script.py`) is `sys.argv[0]` while it imports
    `meshir.cli.opt`, which runs this file first."""
    script = _os.path.basename((getattr(_sys, "argv", None) or [""])[0])
    return _re.sub(r"(-script\.pyw?|\.exe)$", "", script) == "meshir-opt"


#: meshir-opt's start-up skips the public namespace below: it imports jax (1 s) and sets
#: jax's CPU device count, and the CLI (parse, verify, passes, print) needs neither; the
#: CLI's modules import what they use. Every other `import meshir` is unchanged.
_CLI = _started_as_meshir_opt()

from meshir._public_names import PUBLIC_NAMES as __all__  # noqa: E402

if not _CLI:
    from meshir._namespace import *  # noqa: F403  (the public names, assembled in _namespace.py)

__version__ = "0.1.0"


def __getattr__(name: str):
    """`mi.Dimension`, public until issue 31: the IR type's dim (name, size, layout), which
    users never build (they write `mi.Dim`); it lives in `meshir.dialect`."""
    if name == "Dimension":
        import warnings

        # Imported when asked for: meshir-opt imports this package without the dialect's Python API
        from meshir.dialect import Dimension

        warnings.warn("meshir.Dimension is deprecated: write mi.Dim for a named dimension; the IR type's "
                      "dimension with its layout is meshir.dialect.Dimension", DeprecationWarning, stacklevel=2)
        return Dimension
    if _CLI and name in __all__:
        raise AttributeError(f"meshir.{name} is not loaded in meshir-opt, which skips the public namespace to "
                             f"start without jax (python/meshir/__init__.py): import it from its module")
    raise AttributeError(f"module 'meshir' has no attribute {name!r}")


# CPU meshes of up to 8 devices without setup: configure jax's CPU device count now, before
# user code can start the backend with one device (starts nothing; a user's setting wins).
if not _CLI:
    from meshir.lowering.runtime.devices import ensure_cpu_devices as _ensure_cpu_devices

    _ensure_cpu_devices(8)
