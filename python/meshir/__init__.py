"""MeshIR: named-dimension tensor programs on a mesh, compiled through MLIR to StableHLO.

Build a program with `Program`, `Dim` and the op functions, print `prog.module`, run it with
the reference interpreter `interpret`, or parse and transform IR with `parse_module` and the
passes of `meshir.transforms` (also on the command line: `meshir-opt`).
"""
import os as _os

# Before anything imports jax: a jax or jaxlib outside the supported range is one clear error.
from meshir import _versions

_versions.check()

# XLA logs one INFO line per device when its backend starts; MeshIR programs start it for
# meshes of many devices. Quiet by default; a value the user set wins.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from meshir.api import *  # noqa: F403, E402
from meshir import distributed  # noqa: F401,E402
from meshir.api import __all__ as _api_all  # noqa: F401,E402
from meshir.dialect.call_site import reports_at_call_site as _reports_at_call_site  # noqa: E402
from meshir.dialect import (  # noqa: F401,E402
    CheckpointError,
    Diagnostic,
    Dimension,
    LayoutRules,
    Mesh,
    MeshIRError,
    MeshIRKeyError,
    MeshIRTypeError,
    MeshIRValueError,
    TensorType,
    check_module,
    parse_module,
    verify_module,
)

__version__ = "0.1.0"

# Checking a module from Python: its errors without an IR location point at the caller.
check_module = _reports_at_call_site(check_module)
verify_module = _reports_at_call_site(verify_module)

# CPU meshes of up to 8 devices without setup: configure jax's CPU device count now, before
# user code can start the backend with one device (starts nothing; a user's setting wins).
from meshir.lowering.runtime.devices import ensure_cpu_devices as _ensure_cpu_devices  # noqa: E402

_ensure_cpu_devices(8)


@_reports_at_call_site
def interpret(program_or_module, *args, function: str | None = None, **inputs):
    """Run a program with the NumPy reference interpreter (global semantics).

    Inputs are NumPy arrays (or anything np.asarray accepts) by argument name or position;
    returns one array for one result, a tuple for several.
    """
    from meshir.api import checks
    from meshir.dialect.interpreter import interpret as _interpret

    from meshir.api import precision

    module = checks.module_of(program_or_module, "the program of mi.interpret")
    function = checks.optional_name(function, "function")
    if function is None:  # a program built with a mixed-precision policy computes under it
        module, _ = precision.under_default(module, "the program of mi.interpret")
    return _interpret(module, *args, function=function, **inputs)
