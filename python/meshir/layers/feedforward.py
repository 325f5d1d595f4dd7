"""Position-wise feed-forward layers on named dims.

    ffn_params(d_model, d_ff)              w1 [d_model, d_ff], b1 [d_ff], w2 [d_ff, d_model], b2 [d_model]
    ffn_params(d_model, d_ff, gated=True)  also w_gate [d_model, d_ff] (SwiGLU: act(x w_gate) * (x w1))
    ffn_params(..., bias=False)            without b1, b2

The input and output are [..., d_model]; the hidden activations [..., d_ff].
"""
from __future__ import annotations

from meshir.api.ops import composites, elementwise
from meshir.api.ops.contraction import einsum
from meshir.api.programs.dims import Dim

from . import _checks as checks
from ._sequence_parallel import pin, scatter

__all__ = ["ACTIVATIONS", "ffn", "ffn_params"]


def _silu(x):
    return x * elementwise.sigmoid(x)


#: The activations by name (GELU is the tanh approximation, as in GPT-2).
ACTIVATIONS = {"gelu": composites.gelu, "relu": elementwise.relu, "silu": _silu, "swish": _silu}


def ffn_params(d_model: Dim, d_ff: Dim, bias: bool = True, gated: bool = False) -> dict[str, list[Dim]]:
    out = {"w1": [d_model, d_ff]}
    if gated:
        out["w_gate"] = [d_model, d_ff]
    if bias:
        out["b1"] = [d_ff]
    out["w2"] = [d_ff, d_model]
    if bias:
        out["b2"] = [d_model]
    return out


def ffn(x, p, activation: str | None = None, *, d_model: str = "d_model", d_ff: str = "d_ff",
        length: str = "length", sequence_parallel: str | None = None):
    """act(x w1 + b1) w2 + b2; with `p["w_gate"]`, the gated form act(x w_gate) * (x w1 + b1)
    (SwiGLU with "silu", GeGLU with "gelu"). `activation`: a name of ACTIVATIONS (default:
    "gelu", or "silu" when gated). `sequence_parallel`: see meshir.layers.attention."""
    layer = "meshir.layers.ffn"
    p = checks.params(p, ["w1", "w2"], layer, optional=["w_gate", "b1", "b2"])
    checks.tensor(x, layer, "the input")
    checks.has_dims(x, [d_model], layer, "the input")
    gated = "w_gate" in p
    activation = activation or ("silu" if gated else "gelu")
    if activation not in ACTIVATIONS:
        raise checks.error(f"{layer}: unknown activation {activation!r} (expected one of {', '.join(ACTIVATIONS)})")
    for name in ("w1", "w_gate"):
        if name in p:
            checks.param_dims(p[name], [d_model, d_ff], x, layer, f"the parameter '{name}'")
            checks.same_size(x, p[name], d_model, layer, "the input", f"the parameter '{name}'")
    checks.param_dims(p["w2"], [d_ff, d_model], x, layer, "the parameter 'w2'")
    act = ACTIVATIONS[activation]
    outer = [Dim(n, s) for n, s in zip(x.names, x.shape) if n != d_model]
    f, m = Dim(d_ff, checks.size(p["w1"], d_ff)), Dim(d_model, checks.size(x, d_model))
    sp = sequence_parallel
    hidden = pin(einsum(x, p["w1"], output=[*outer, f]), sp, length, d_ff)
    if "b1" in p:
        hidden = hidden + p["b1"]
    if gated:
        hidden = act(pin(einsum(x, p["w_gate"], output=[*outer, f]), sp, length, d_ff)) * hidden
    else:
        hidden = act(hidden)
    out = scatter(einsum(hidden, p["w2"], output=[*outer, m]), sp, length)
    return out + p["b2"] if "b2" in p else out
