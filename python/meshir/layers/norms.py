"""Layer norm and RMS norm over one named dim, with learned scale (and bias).

    norm_params(d_model)            -> {"scale": [d_model], "bias": [d_model]}
    norm_params(d_model, bias=False) -> {"scale": [d_model]}      (RMS norm's)
"""
from __future__ import annotations

from meshir.api.ops import composites, elementwise
from meshir.api.ops.contraction import reduce_sum
from meshir.api.programs.dims import Dim

from meshir.api import _checks as api_checks

from . import _checks as checks

__all__ = ["layer_norm", "norm_params", "rms_norm"]


def norm_params(dim: Dim, bias: bool = True) -> dict[str, list[Dim]]:
    return {"scale": [dim], **({"bias": [dim]} if bias else {})}


def layer_norm(x, p, dim: str = "d_model", epsilon: float = 1e-6):
    """(x - mean) / sqrt(var + epsilon) along `dim`, times `p["scale"]`, plus `p["bias"]`
    when given."""
    layer = "meshir.layers.layer_norm"
    checks.tensor(x, layer, "the input")
    checks.has_dims(x, [dim], layer, "the input")
    p = checks.params(p, ["scale"], layer, optional=["bias"])
    for name, t in p.items():
        checks.param_dims(t, [dim], x, layer, f"the {name}")
        checks.same_size(t, x, dim, layer, f"the {name}", "the input")
    return composites.layer_norm(x, dim, p["scale"], p.get("bias"), epsilon)


def rms_norm(x, p, dim: str = "d_model", epsilon: float = 1e-6):
    """x / sqrt(mean(x^2) + epsilon) along `dim`, times `p["scale"]` (no centring, no bias:
    T5's and LLaMA's norm)."""
    layer = "meshir.layers.rms_norm"
    checks.tensor(x, layer, "the input")
    checks.has_dims(x, [dim], layer, "the input")
    p = checks.params(p, ["scale"], layer)
    checks.param_dims(p["scale"], [dim], x, layer, "the scale")
    checks.same_size(p["scale"], x, dim, layer, "the scale", "the input")
    epsilon = api_checks.real(epsilon, "the epsilon of meshir.layers.rms_norm", minimum=0.0)
    mean_square = reduce_sum(x * x, over=[dim]) * (1.0 / checks.size(x, dim))
    return x * elementwise.rsqrt(mean_square + epsilon) * p["scale"]
