"""Import `meshir` from any checkout of MeshIR, not only the one pip installed (editable).

The fuzzer must run against other trees (e.g. a worktree of an older commit) without
installing them. pyproject.toml maps folders to packages (`meshir.dialect` = `dialect/`, ...);
this finder reads that map from the tree and serves those packages ahead of the installed ones.

`python tree_import.py TREE ARGS...` runs TREE's meshir-opt with ARGS (the subprocess re-check).
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import tomllib


class _TreeFinder(importlib.abc.MetaPathFinder):
    def __init__(self, package_dirs: dict[str, str]):
        self.package_dirs = package_dirs

    def find_spec(self, name, path=None, target=None):
        folder = self.package_dirs.get(name)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(
            name, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])


def install(tree: str) -> None:
    """Make `import meshir...` load from `tree` (call before anything imports meshir)."""
    tree = os.path.abspath(tree)
    with open(os.path.join(tree, "pyproject.toml"), "rb") as f:
        mapping = tomllib.load(f)["tool"]["setuptools"]["package-dir"]
    if any(name == "meshir" or name.startswith("meshir.") for name in sys.modules):
        raise RuntimeError("install() must run before meshir is imported")
    sys.meta_path.insert(0, _TreeFinder({name: os.path.join(tree, folder) for name, folder in mapping.items()}))


def main() -> int:
    install(sys.argv[1])
    from meshir.cli.opt import main as opt_main

    return opt_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
