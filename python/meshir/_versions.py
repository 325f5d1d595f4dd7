"""The jax and jaxlib versions MeshIR supports, checked at `import meshir`.

MeshIR is built on private jax paths and on the MLIR bindings inside jaxlib, whose API moves
between releases (python/meshir/_jax_private.py keeps every difference). The supported range
is exactly the one CI and the maintainers test (README, "Supported versions"); outside it, or
with jax and jaxlib of different releases, the import stops with one error naming the
installed and the supported versions (UnsupportedJaxError, an ImportError) instead of failing
later in a private path.
"""
from __future__ import annotations

import re

#: Oldest supported release, and the first release not supported.
OLDEST = (0, 10, 2)
FIRST_UNSUPPORTED = (0, 13)
SUPPORTED_TEXT = "jax and jaxlib >=0.10.2,<0.13 (the same release of both)"


def release(version: str) -> tuple[int, ...]:
    """`0.12.0.1` -> (0, 12, 0, 1); a suffix (`.dev20261001`, `rc1`) ends the numbers."""
    numbers = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(n) for n in numbers.group(0).split(".")) if numbers else ()


def problem(jax_version: str | None, jaxlib_version: str | None) -> str | None:
    """Why MeshIR cannot run with these versions (None: not installed), or None when it can."""
    missing = [name for name, v in (("jax", jax_version), ("jaxlib", jaxlib_version)) if v is None]
    if missing:
        return (f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed: MeshIR needs "
                f'{SUPPORTED_TEXT}; pip install "jax>=0.10.2,<0.13" "jaxlib>=0.10.2,<0.13"')
    installed = f"jax {jax_version} and jaxlib {jaxlib_version} are installed"
    if release(jax_version)[:3] != release(jaxlib_version)[:3]:
        return (f"{installed}, different releases: MeshIR needs {SUPPORTED_TEXT}; install matching versions, "
                f'e.g. pip install "jax=={jax_version}" "jaxlib=={jax_version}"')
    if not OLDEST <= release(jax_version) < FIRST_UNSUPPORTED:
        return (f"{installed}: MeshIR supports {SUPPORTED_TEXT}; install a supported jax, e.g. "
                f'pip install "jax>=0.10.2,<0.13" "jaxlib>=0.10.2,<0.13"')
    return None


def installed() -> tuple[str | None, str | None]:
    """(jax version, jaxlib version) as installed (None: not installed), read without
    importing either."""
    from importlib import metadata

    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    return version("jax"), version("jaxlib")


class UnsupportedJaxError(ImportError):
    """`import meshir` with a jax or jaxlib MeshIR does not support: an ImportError (the
    import failed; `except ImportError` in code that treats MeshIR as optional keeps
    working), raised before anything imports jax, so no private path fails first."""


def check() -> None:
    """Raise UnsupportedJaxError when the installed jax or jaxlib is outside the range."""
    found = problem(*installed())
    if found is not None:
        raise UnsupportedJaxError(f"MeshIR cannot run here: {found}")
