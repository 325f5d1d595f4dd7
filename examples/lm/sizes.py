"""Named sizes for `--size`: each is the command-line defaults of one model and its training.

"small" is the README's model (model.Config's defaults, 1200 steps on the small corpus: about
half a minute of training on 2 CPU cores). "medium" has 10.7 million parameters (the depth and
width of nanoGPT's character-level Shakespeare model) and trains on the large corpus, whose 2.0
million training characters its 2000 steps of 8 x 128 characters read about once (about 22
minutes on 2 otherwise idle CPU cores); its learning rate warms up over 100 steps and decays
linearly to a tenth at the last step. Explicit flags override a size's values.
"""
from __future__ import annotations

import dataclasses

from . import model

TRAINING = ("steps", "corpus")  # the defaults that are not model.Config fields

SIZES = {
    "small": {"steps": 1200, "corpus": "small"},
    "medium": {"layers": 6, "d_model": 384, "heads": 8, "d_ff": 1536, "length": 128, "batch": 8,
               "lr": 1e-3, "warmup": 100, "decay_steps": 2000, "steps": 2000, "corpus": "large"},
}


def defaults(size: str) -> dict:
    """Every default of `size`: model.Config's fields (the size's values, else Config's) and
    TRAINING's."""
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r} (expected one of {', '.join(SIZES)})")
    config = {f.name: f.default for f in dataclasses.fields(model.Config)}
    return {**config, **SIZES[size]}
