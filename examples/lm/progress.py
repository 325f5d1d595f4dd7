"""A dependency-free progress bar on stderr:

    step 120/300 [=========>           ] loss 2.31 val 2.40 | lr 3.0e-03 | grad norm 0.52 | 12,345 tok/s | eta 0:09

On a terminal it redraws one line; otherwise (a log file, CI) it prints a line every
~5% of the run and at the end.
"""
from __future__ import annotations

import sys
import time


def format_duration(seconds: float) -> str:
    seconds = int(round(max(seconds, 0)))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


class ProgressBar:
    def __init__(self, total: int, start: int = 0, stream=None, width: int = 24, enabled: bool = True):
        self.total, self.start, self.width, self.enabled = total, start, width, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = max(1, (total - start) // 20)
        self.began = time.perf_counter()
        self._last_len = 0

    def line(self, step: int, loss: float, val: float | None, tokens_per_s: float | None,
             learning_rate: float | None = None, grad_norm: float | None = None) -> str:
        frac = step / self.total if self.total else 1.0
        filled = int(self.width * frac)
        bar = "=" * filled + (">" if filled < self.width else "") + " " * (self.width - filled - 1)
        parts = [f"step {step:>{len(str(self.total))}}/{self.total} [{bar[:self.width]}] loss {loss:.3f}"]
        if val is not None:
            parts[0] += f" val {val:.3f}"
        if learning_rate is not None:
            parts.append(f"lr {learning_rate:.1e}")
        if grad_norm is not None:
            parts.append(f"grad norm {grad_norm:.2f}")
        if tokens_per_s:
            parts.append(f"{tokens_per_s:,.0f} tok/s")
        done = step - self.start
        if 0 < done and step < self.total:
            elapsed = time.perf_counter() - self.began
            parts.append(f"eta {format_duration(elapsed / done * (self.total - step))}")
        return " | ".join(parts)

    def update(self, step: int, loss: float, val: float | None = None, tokens_per_s: float | None = None,
               learning_rate: float | None = None, grad_norm: float | None = None) -> None:
        if not self.enabled:
            return
        text = self.line(step, loss, val, tokens_per_s, learning_rate, grad_norm)
        if self.tty:
            pad = " " * max(0, self._last_len - len(text))
            self.stream.write("\r" + text + pad)
            self._last_len = len(text)
            if step >= self.total:
                self.stream.write("\n")
                self._last_len = 0
        elif step >= self.total or (step - self.start) % self.every == 0 or step == self.start + 1:
            self.stream.write(text + "\n")
        self.stream.flush()

    def message(self, text: str) -> None:
        """A line of text that does not garble the bar."""
        if self.enabled and self.tty and self._last_len:
            self.stream.write("\r" + " " * self._last_len + "\r")
            self._last_len = 0
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty and self._last_len:
            self.stream.write("\n")
            self.stream.flush()
            self._last_len = 0
