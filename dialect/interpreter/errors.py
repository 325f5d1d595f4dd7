"""Located interpreter errors, in the same format as the verifier's."""
from __future__ import annotations

from ..diagnostics import Diagnostic, MeshIRError


def located_error(location, message: str) -> MeshIRError:
    """A MeshIRError `file:line:col: error: message` that carries its Diagnostic."""
    diag = Diagnostic(location, message)
    return MeshIRError(str(diag), [diag])
