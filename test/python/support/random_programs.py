"""Random MeshIR programs for property tests (hypothesis): chains of elementwise ops,
einsums, reductions, transposes, reshapes, slices and shard constraints on random meshes,
with random argument layouts and layout rules. Every program is valid; each comes with
inputs."""
import numpy as np
from hypothesis import strategies as st

import meshir as mi

MESHES = [{"x": 2}, {"x": 4}, {"x": 8}, {"x": 2, "y": 2}, {"x": 4, "y": 2}, {"x": 2, "y": 4}]
POOL = {"a": 4, "b": 8, "c": 6, "d": 12, "e": 2, "f": 16}


def legal_layout(draw, dims, mesh, taken=()):
    """A random legal layout for some of `dims`: distinct axes that divide their sizes."""
    free_axes = [a for a in mesh if a not in taken]
    layout = {}
    for d in dims:
        if not free_axes or not draw(st.booleans()):
            continue
        axis = draw(st.sampled_from(free_axes))
        if d.size % mesh[axis] == 0:
            layout[d.name] = axis
            free_axes.remove(axis)
    return layout


@st.composite
def programs(draw):
    mesh = draw(st.sampled_from(MESHES))
    rule_names = draw(st.lists(st.sampled_from(sorted(POOL)), unique=True, max_size=len(mesh)))
    rules = {}
    for name, axis in zip(rule_names, mesh):
        if POOL[name] % mesh[axis] == 0:
            rules[name] = axis
    prog = mi.Program("random", mi.Mesh(mesh), layout=rules or None)
    inputs, fresh = {}, iter(f"n{i}" for i in range(100))
    with prog:
        values = []
        for i in range(draw(st.integers(1, 3))):
            names = draw(st.lists(st.sampled_from(sorted(POOL)), min_size=1, max_size=3, unique=True))
            dims = [mi.Dim(n, POOL[n]) for n in names]
            layout = legal_layout(draw, dims, mesh) if draw(st.booleans()) else None
            values.append(prog.argument(f"arg{i}", dims, layout=layout))
            inputs[f"arg{i}"] = np.random.default_rng(i).standard_normal([d.size for d in dims]).astype(np.float32)
        sharded = set()
        for _ in range(draw(st.integers(1, 8))):
            x = draw(st.sampled_from(values))
            kind = draw(st.sampled_from(["unary", "binary", "einsum", "reduce", "transpose", "reshape", "slice", "shard"]))
            if kind == "unary":
                y = mi.tanh(x)
            elif kind == "binary":
                other = draw(st.sampled_from(values))
                if any(x.type.size(n) != other.type.size(n) for n in set(x.names) & set(other.names)):
                    continue
                y = x * other + x
            elif kind == "einsum":
                other = draw(st.sampled_from(values))
                if any(x.type.size(n) != other.type.size(n) for n in set(x.names) & set(other.names)):
                    continue
                union = list(dict.fromkeys(x.names + other.names))
                if not union:
                    continue
                out = draw(st.lists(st.sampled_from(union), unique=True, max_size=3))
                y = mi.einsum(x, other, output=out)
            elif kind == "reduce":
                if not x.type.rank:
                    continue
                y = mi.reduce_sum(x, over=draw(st.lists(st.sampled_from(list(x.names)), unique=True, max_size=2)))
            elif kind == "transpose":
                y = mi.transpose(x, list(draw(st.permutations(list(x.names)))))
            elif kind == "reshape":
                if x.type.rank >= 2 and draw(st.booleans()):
                    i = draw(st.integers(0, x.type.rank - 2))
                    merged = x.dims[:i] + [mi.Dim(next(fresh), x.shape[i] * x.shape[i + 1])] + x.dims[i + 2:]
                    y = mi.reshape(x, merged)
                else:
                    i = draw(st.integers(0, x.type.rank - 1)) if x.type.rank else None
                    if i is None or x.shape[i] % 2:
                        continue
                    split = [mi.Dim(next(fresh), 2), mi.Dim(next(fresh), x.shape[i] // 2)]
                    y = mi.reshape(x, x.dims[:i] + split + x.dims[i + 1:])
            elif kind == "slice":
                if not x.type.rank:
                    continue
                d = draw(st.sampled_from(x.dims))
                # A rule must divide every dim of its name (an error otherwise, tested below).
                length = d.size if d.name in rules else max(d.size // 2, 1)
                y = mi.slice(x, d.name, 0, length)
            else:
                if id(x) in sharded or not x.type.rank:
                    continue
                layout = legal_layout(draw, x.dims, mesh)
                y = mi.shard(x, layout)
                sharded.add(id(x))
            values.append(y)
        prog.result(values[-1], name="out")
        if len(values) > 2:
            prog.result(values[len(values) // 2], name="mid")
    return prog, inputs
