"""pyproject.toml's package list against the source tree: a new folder of Python files that
the list lacks would install without its modules (an ImportError on a user's machine, while
an editable install here works), and a listed package with no folder fails the build.

`packages` and `package-dir` are written by hand because the folders are laid out by layer
(`dialect/`, `transforms/`, `lowering/` beside `python/meshir/`), which setuptools' package
discovery cannot map to `meshir.*`; this test is the second edit's reminder.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

from test_layers import ROOT, module_name, package_dirs


def listed_packages() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(config["tool"]["setuptools"]["packages"])


def source_folders() -> set[Path]:
    """Every folder under a package-dir root that holds a `.py` file, relative to the root."""
    roots = {folder for folder in package_dirs().values()}
    return {path.parent.relative_to(ROOT) for root in roots for path in (ROOT / root).rglob("*.py")}


def test_every_folder_of_python_files_is_a_listed_package():
    missing = {}
    for folder in sorted(source_folders()):
        package = module_name(folder / "__init__.py")
        if package not in listed_packages():
            missing[package] = folder.as_posix()
    assert not missing, (f"pyproject.toml's [tool.setuptools] packages lacks {sorted(missing)} (folders "
                         f"{sorted(missing.values())}): add each, and a package-dir entry when its folder is not "
                         "its parent's folder plus its name")


def test_every_listed_package_is_a_folder_with_an_init():
    absent = [p for p in sorted(listed_packages())
              if not (ROOT / package_folder(p) / "__init__.py").is_file()]
    assert not absent, f"pyproject.toml lists packages without a folder holding __init__.py: {absent}"


def package_folder(package: str) -> Path:
    """The folder setuptools installs `package` from: its deepest package-dir, plus the rest."""
    dirs = package_dirs()
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        base = ".".join(parts[:n])
        if base in dirs:
            return dirs[base].joinpath(*parts[n:])
    raise AssertionError(f"{package}: no package-dir entry above it")
