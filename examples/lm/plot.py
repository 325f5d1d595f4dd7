"""The loss-curve PNG, with matplotlib's Agg backend when matplotlib is installed
(`pip install -e ".[viz]"`); without it, one notice and no PNG."""
from __future__ import annotations

import math
import os
import textwrap

TITLE_WIDTH = 95  # characters per title line that fit the figure


def matplotlib_available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def save_loss_curve(path: str, train_loss: list[float], val_loss: list[tuple[int, float]], title: str,
                    notice=print) -> str | None:
    """Write the curve to `path` (returns it), or print a one-line notice and return None."""
    if not matplotlib_available():
        notice(f"matplotlib is not installed: skipping the loss-curve PNG {path} "
               f"(install it with: pip install -e \".[viz]\")")
        return None
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4), dpi=110)
    ax = fig.add_subplot()
    steps = list(range(1, len(train_loss) + 1))
    ax.plot(steps, train_loss, lw=0.8, alpha=0.45, color="C0", label="train (per step)")
    window = max(1, len(train_loss) // 30)
    if window > 1:
        smooth = [sum(train_loss[max(0, i - window + 1):i + 1]) / len(train_loss[max(0, i - window + 1):i + 1])
                  for i in range(len(train_loss))]
        ax.plot(steps, smooth, lw=1.6, color="C0", label=f"train (mean of {window})")
    if val_loss:
        ax.plot([s for s, _ in val_loss], [v for _, v in val_loss], "o-", color="C1", ms=4, label="validation")
    ax.axhline(math.log(95), color="grey", lw=0.6, ls=":", label="uniform over 95 printable chars")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats / character)")
    ax.set_title("\n".join(textwrap.fill(line, TITLE_WIDTH) for line in title.splitlines()), fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path)
    return path
