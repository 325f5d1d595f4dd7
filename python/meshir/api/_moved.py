"""Old import paths of the API's modules, kept working with a DeprecationWarning.

Until issue 31 `meshir.api` was one flat folder and re-exported every public name; both
kinds of old import still work and say where the thing went:

    import meshir.api.checks           # -> meshir.api._checks
    from meshir.api.optim import SGD   # -> meshir.api.training.optimizers
    from meshir.api import Program     # -> meshir.Program
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

import meshir

#: Old module of `meshir.api` -> where it lives now.
MOVED_MODULES = {
    "meshir.api." + old: "meshir.api." + new for old, new in {
        "collectives": "ops.collectives", "composites": "ops.composites", "contraction": "ops.contraction",
        "creation": "ops.creation", "elementwise": "ops.elementwise", "indexing": "ops.indexing",
        "loops": "ops.loops", "shape_ops": "ops.shape", "builder": "ops._builder", "bodies": "programs._bodies",
        "program": "programs.program", "dims": "programs.dims", "tensor": "programs.tensor", "precision": "programs.precision",
        "subfunction": "programs._subfunction", "locations": "programs._locations",
        "grad": "training.grad", "custom_gradient": "training.custom_gradient", "remat": "training.remat",
        "optim": "training.optimizers", "train": "training.train_step",
        "shard_update": "training._update_sharding", "microbatch": "training._microbatch",
        "compile": "compilation.compile", "compile_report": "compilation.compile_report",
        "explain": "compilation.explain", "alternatives": "compilation._alternatives",
        "propagation": "compilation.propagation", "visualize": "compilation.visualize",
        "auto_layout": "compilation.auto_layout", "calibrate": "calibration.calibrate",
        "timing": "calibration._timing", "checkpoint": "checkpoints.store",
        "checkpoint_manifest": "checkpoints._manifest", "checksums": "checkpoints._checksums",
        "orbax_quiet": "checkpoints._orbax_quiet", "checks": "_checks",
    }.items()
}


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} moved to {new}; import it from there (or the name from `meshir`)",
                  DeprecationWarning, stacklevel=3)


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old module path as the module that now lives elsewhere (one object, two names)."""

    def __init__(self):
        self._specs = {}

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = MOVED_MODULES[spec.name]
        _warn(spec.name, new)
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        # The import system gave the module the old name's spec; give it back its own.
        old = module.__spec__.name
        module.__spec__ = self._specs.pop(old)


def install() -> None:
    if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())


def module_getattr(name: str):
    """`meshir.api.<name>`: an old module (as `from meshir.api import checks` reads it), or a
    public name that `meshir.api` used to re-export."""
    old = f"meshir.api.{name}"
    if old in MOVED_MODULES:
        return importlib.import_module(old)
    if name in meshir.__all__:
        _warn(old, f"meshir.{name}")
        return getattr(meshir, name)
    raise AttributeError(f"module 'meshir.api' has no attribute {name!r}")
