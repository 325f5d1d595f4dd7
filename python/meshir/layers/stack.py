"""A stack of identical layers as one loop: the parameters of every layer stacked along a
leading `layers` dim, the layer run by mi.scan over it. The program (and its compile time)
does not grow with depth, and the layout rules may split the stacked dim like any other."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from meshir.api.ops.creation import iota
from meshir.api.ops.loops import scan
from meshir.api.programs.dims import Dim

from . import _checks as checks

__all__ = ["stack_params", "stacked", "stacked_params"]


def stacked_params(layer_params: Mapping[str, list[Dim]], layers: Dim) -> dict[str, list[Dim]]:
    """Each parameter of one layer with the leading `layers` dim."""
    return {name: [layers, *dims] for name, dims in layer_params.items()}


def stack_params(per_layer: list[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Per-layer parameter values (one mapping per layer, same names and shapes) as stacked
    arrays."""
    if not per_layer:
        raise checks.error("meshir.layers.stack_params: no layers to stack")
    names = list(per_layer[0])
    first = {n: np.shape(per_layer[0][n]) for n in names}
    for i, p in enumerate(per_layer):
        if set(p) != set(names) or any(np.shape(p[n]) != first[n] for n in names):
            raise checks.error(f"meshir.layers.stack_params: layer {i}'s parameters "
                               f"{ {n: np.shape(v) for n, v in p.items()} } differ from layer 0's {first}")
    return {n: np.stack([p[n] for p in per_layer]) for n in names}


def stacked(layer, x, params: Mapping, dim: str = "layers", with_index: bool = False):
    """x through `layer(x, p)` once per index of `dim`, p the slices of `params` (a mapping
    of name to Tensor, each with the leading `dim`) at that index. `with_index`: `layer(x,
    p, i)` also gets the index as a 0-d i32 Tensor (e.g. to fold it into a dropout seed)."""
    name = "meshir.layers.stacked"
    if not isinstance(params, Mapping) or not params:
        raise checks.error(f"{name}: the stacked parameters must be a non-empty mapping of name to Tensor, got "
                           f"{params!r}", checks.MeshIRTypeError)
    checks.tensor(x, name, "the input")
    sizes = {}
    for n, v in params.items():
        checks.tensor(v, name, f"parameter '{n}'")
        checks.has_dims(v, [dim], name, f"parameter '{n}'")
        sizes[n] = checks.size(v, dim)
    if len(set(sizes.values())) > 1:
        raise checks.error(f"{name}: the stacked parameters have different '{dim}' sizes: {sizes}")
    kinds = list(params)
    xs = tuple(params[k] for k in kinds)
    if with_index:
        xs += (iota([Dim(dim, next(iter(sizes.values())))], dim),)

    def body(h, slices):
        p = dict(zip(kinds, slices))
        return (layer(h, p, slices[-1]) if with_index else layer(h, p)), None

    return scan(body, x, xs, dim=dim)[0]
