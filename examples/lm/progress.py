"""The training loop's progress bar: tqdm's, on stderr, the step's numbers as its postfix:

    train:  40%|████      | 120/300 [00:09<00:13, 13.2step/s, loss=2.310, val=2.400, lr=3.0e-03, grad norm=0.52, tok/s=12,345]

tqdm's bar because it is the one people know (rate, elapsed time, ETA). It is drawn on a
terminal only (tqdm's `disable=None`): a log file or CI gets none of it, only the summary
lines the script prints. `--no-progress` turns it off on a terminal too.
"""
from __future__ import annotations

import sys

from tqdm import tqdm


def training_bar(total: int, start: int = 0, stream=None, enabled: bool = True) -> tqdm:
    """The bar of steps `start + 1 .. total` (a resumed run starts at its checkpoint's step)."""
    return tqdm(total=total, initial=start, file=stream if stream is not None else sys.stderr, desc="train",
                unit="step", dynamic_ncols=True, disable=None if enabled else True)


def postfix(loss: float, val: float | None = None, tokens_per_s: float | None = None,
            learning_rate: float | None = None, grad_norm: float | None = None) -> dict[str, str]:
    """The postfix's fields, formatted here so that tqdm does not round them to 3 digits."""
    fields = {"loss": f"{loss:.3f}"}
    if val is not None:
        fields["val"] = f"{val:.3f}"
    if learning_rate is not None:
        fields["lr"] = f"{learning_rate:.1e}"
    if grad_norm is not None:
        fields["grad norm"] = f"{grad_norm:.2f}"
    if tokens_per_s:
        fields["tok/s"] = f"{tokens_per_s:,.0f}"
    return fields


def step(bar: tqdm, loss: float, val: float | None = None, tokens_per_s: float | None = None,
         learning_rate: float | None = None, grad_norm: float | None = None) -> None:
    """One training step done: its numbers in the postfix, the bar one step on."""
    bar.set_postfix(postfix(loss, val, tokens_per_s, learning_rate, grad_norm), refresh=False)
    bar.update()
