"""The pass options that choose the cost model: one spelling for every pass that prices
collectives (propagation's conflicts, the reshard planner), so a user who says `x` is slow
says it the same way to both."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .cost_model import CostModel
from ..infra.registry import option


@dataclass
class CostModelOptions:
    objective: Literal["bytes", "time"] = option(
        "bytes", "what collectives are chosen to minimise: bytes per device, or α–β time by the links")
    links: tuple[str, ...] = option(
        (), "α–β link of each mesh axis for objective=time, as axis:latency_s:bytes_per_s (e.g. x:1e-5:1e9), "
        "optionally :large_bytes_per_s:large_from")
    device: str = option(
        "", "device kind whose link the axes without one get (cpu-virtual, tpu-v3, tpu-v4, a100, h100), "
        "or name:flops_per_s:latency_s:bytes_per_s[:large_bytes_per_s:large_from]")

    def cost_model(self) -> CostModel:
        return CostModel.from_options(self.objective, self.links, self.device)

    @staticmethod
    def options_of(model: CostModel) -> dict:
        """The options spelling `model` (as text, exactly)."""
        return {"objective": model.objective,
                "links": tuple(f"{axis}:{link.option_text()}" for axis, link in model.links),
                "device": model.device.option_text() if model.device is not None else ""}
