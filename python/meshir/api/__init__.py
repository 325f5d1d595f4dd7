"""The user's API, by what each part serves; `meshir/__init__.py` assembles the public names.

- `ops/`: one builder per `mtf` op, by family (`_builder.py` makes an op at the caller's
  line; `_bodies.py` traces a Python function into a loop's region).
- `programs/`: `Dim`, `Tensor`, `Program`, mixed-precision policies, `interpret`, IR checks.
- `training/`: gradients (`grad`, `remat`, `custom_gradient`), optimizers, `train_step`.
- `compilation/`: `compile`, its report, `explain`, `propagate`, `visualize`, `auto_layout`.
- `calibration/`: measured device and link figures for the cost model.
- `checkpoints/`: sharded checkpoints with Orbax.
- `_checks.py`: argument checks shared by all of them.

A module whose name starts with `_` is internal. Modules that moved in the reorganisation
of issue 31 still import from their old paths, with a DeprecationWarning (`_moved.py`).
"""
from meshir.api import _moved

_moved.install()
__getattr__ = _moved.module_getattr
