"""The supported jax/jaxlib range (python/meshir/_versions.py): the installed pair is inside
it, and `import meshir` with a jax outside it, or jax and jaxlib of different releases, stops
with one ImportError naming the installed and the supported versions."""
import os
import subprocess
import sys
import textwrap

import jax
import jaxlib
import pytest

from meshir import _versions


def test_the_installed_jax_is_supported_and_is_what_jax_reports():
    assert _versions.installed() == (jax.__version__, jaxlib.__version__)
    assert _versions.problem(*_versions.installed()) is None


@pytest.mark.parametrize("text, numbers", [("0.10.2", (0, 10, 2)), ("0.12.0.1", (0, 12, 0, 1)),
                                           ("0.11.0.dev20260101", (0, 11, 0)), ("0.13.0rc1", (0, 13, 0))])
def test_release_numbers(text, numbers):
    assert _versions.release(text) == numbers


@pytest.mark.parametrize("jax_version, jaxlib_version", [("0.10.2", "0.10.2"), ("0.11.2", "0.11.2"),
                                                         ("0.12.0.1", "0.12.0.1"), ("0.12.0.1", "0.12.0")])
def test_supported_pairs(jax_version, jaxlib_version):
    assert _versions.problem(jax_version, jaxlib_version) is None


@pytest.mark.parametrize("jax_version, jaxlib_version, fragment", [
    ("0.10.1", "0.10.1", "jax 0.10.1 and jaxlib 0.10.1 are installed: MeshIR supports jax and jaxlib >=0.10.2,<0.13"),
    ("0.13.0", "0.13.0", "jax 0.13.0 and jaxlib 0.13.0 are installed: MeshIR supports"),
    ("0.9.0", "0.9.0", "jax 0.9.0"),
    ("0.12.0.1", "0.11.2", "jax 0.12.0.1 and jaxlib 0.11.2 are installed, different releases"),
    (None, "0.10.2", "jax is not installed"),
    (None, None, "jax and jaxlib are not installed"),
])
def test_unsupported_pairs_name_both_versions(jax_version, jaxlib_version, fragment):
    message = _versions.problem(jax_version, jaxlib_version)
    assert message is not None and fragment in message, message
    assert ">=0.10.2,<0.13" in message


@pytest.mark.parametrize("jax_version, jaxlib_version", [("0.9.0", "0.9.0"), ("0.12.0", "0.10.2")])
def test_import_stops_with_one_clear_error(jax_version, jaxlib_version):
    """A process whose package metadata reports other versions: `import meshir` raises
    UnsupportedJaxError (an ImportError) before anything imports jax."""
    code = textwrap.dedent(f"""
        import sys
        from importlib import metadata
        real = metadata.version
        metadata.version = lambda name: {{"jax": "{jax_version}", "jaxlib": "{jaxlib_version}"}}.get(name) or real(name)
        try:
            import meshir
        except ImportError as e:
            print(type(e).__name__, "|", e, "|", "jax" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert done.returncode == 0, done.stderr
    kind, message, jax_imported = (part.strip() for part in done.stdout.split("|"))
    assert kind == "UnsupportedJaxError" and jax_imported == "False", done.stdout
    assert message.startswith(f"MeshIR cannot run here: jax {jax_version} and jaxlib {jaxlib_version} are installed")
