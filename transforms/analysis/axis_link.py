"""`AxisLink`: the α–β figures of one mesh axis's link (latency per ring step, bandwidth),
what the cost model prices a collective with and a device kind describes its network by."""
from __future__ import annotations

from dataclasses import dataclass

from meshir.dialect.diagnostics import MeshIRValueError


@dataclass(frozen=True)
class AxisLink:
    """The link of one mesh axis: latency per ring step (seconds), bandwidth (bytes/second).

    Optionally a second bandwidth for large messages: the bytes a device sends beyond
    `large_from` go at `large_bytes_per_s` (a collective sending more than a cache-sized
    buffer's worth costs more per byte: mi.calibrate() fits both where it sees the knee), so
    `bytes_seconds(sent) = min(sent, large_from)/bytes_per_s + max(sent - large_from, 0)/large_bytes_per_s`,
    continuous in `sent`. Without them (the default) every byte goes at `bytes_per_s`."""

    latency_s: float
    bytes_per_s: float
    large_bytes_per_s: float | None = None
    large_from: int | None = None

    def __post_init__(self):
        if not (self.latency_s >= 0 and self.bytes_per_s > 0):
            raise MeshIRValueError(f"an axis link needs latency >= 0 and bandwidth > 0, got {self}")
        if (self.large_bytes_per_s is None) != (self.large_from is None):
            raise MeshIRValueError(f"an axis link's large-message bandwidth needs both large_bytes_per_s and "
                                   f"large_from, got {self}")
        if self.large_from is not None and not (self.large_bytes_per_s > 0 and self.large_from > 0):
            raise MeshIRValueError(f"an axis link needs large_bytes_per_s > 0 and large_from > 0, got {self}")

    def bytes_seconds(self, sent: float) -> float:
        """Seconds to send `sent` bytes (the bandwidth term; the large-message rate beyond `large_from`)."""
        if self.large_from is None or sent <= self.large_from:
            return sent / self.bytes_per_s
        return self.large_from / self.bytes_per_s + (sent - self.large_from) / self.large_bytes_per_s

    def seconds(self, steps: int, sent: float) -> float:
        """α–β seconds of a collective of `steps` ring steps sending `sent` bytes per device."""
        return steps * self.latency_s + self.bytes_seconds(sent)

    def option_text(self) -> str:
        """latency_s:bytes_per_s, with :large_bytes_per_s:large_from when it has them."""
        text = f"{self.latency_s!r}:{self.bytes_per_s!r}"
        return text if self.large_from is None else f"{text}:{self.large_bytes_per_s!r}:{self.large_from!r}"

    @staticmethod
    def parse(parts) -> "AxisLink":
        """From the option fields latency_s:bytes_per_s[:large_bytes_per_s:large_from] (ValueError if not)."""
        if len(parts) == 2:
            return AxisLink(float(parts[0]), float(parts[1]))
        if len(parts) == 4:
            return AxisLink(float(parts[0]), float(parts[1]), float(parts[2]), int(float(parts[3])))
        raise ValueError(parts)


#: The link of an axis the user did not describe: one order of magnitude of an accelerator
#: interconnect (10 µs per step, 10 GB/s). Only ratios between axes change a plan.
DEFAULT_LINK = AxisLink(latency_s=1e-5, bytes_per_s=1e10)
