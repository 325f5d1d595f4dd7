"""Random small programs whose arguments carry random written layouts (a test helper, not a
test file): where written layouts of one priority meet, propagation has conflicts to resolve.

`program(seed)` builds one on a 4x2 or 2x2x2 mesh: 2-4 arguments of 1-3 named dims, each dim
written split over 1-2 axes, written replicated or left free; then 2-5 random ops (add, mul,
einsum over the shared names, exp, reduce_sum), the last value (and sometimes the one before)
returned. The same seed gives the same program.
"""
from __future__ import annotations

import random

import meshir as mi

MESHES = ({"x": 4, "y": 2}, {"x": 2, "y": 2, "z": 2})
SIZES = {"a": 8, "b": 16, "c": 8, "d": 32}


def _layout(rng: random.Random, names, mesh) -> dict:
    axes = list(mesh)
    rng.shuffle(axes)
    out = {}
    for n in names:
        r = rng.random()
        if r < 0.35:
            continue  # free
        if r < 0.5:
            out[n] = ()
            continue
        k = rng.choice([1, 1, 2])
        if axes[:k]:
            out[n] = tuple(axes[:k])
        axes = axes[k:]
    return out


def program(seed: int) -> mi.Program:
    rng = random.Random(seed)
    mesh = rng.choice(MESHES)
    with mi.Program(f"random{seed}", mi.Mesh(mesh)) as prog:
        values = []
        for i in range(rng.randint(2, 4)):
            names = rng.sample(list(SIZES), rng.randint(1, 3))
            values.append(prog.argument(f"a{i}", [mi.Dim(n, SIZES[n]) for n in names],
                                        layout=_layout(rng, names, mesh)))
        for _ in range(rng.randint(2, 5)):
            kind = rng.choice(["add", "mul", "einsum", "exp", "sum"])
            a, b = rng.choice(values), rng.choice(values)
            if kind == "add":
                v = a + b
            elif kind == "mul":
                v = a * b
            elif kind == "einsum":
                shared = set(a.names) & set(b.names)
                names = sorted(set(a.names) | set(b.names))
                out = [n for n in names if n not in shared or rng.random() < 0.4] or names[:1]
                v = mi.einsum(a, b, output=[mi.Dim(n, SIZES[n]) for n in out])
            elif kind == "exp":
                v = mi.exp(a)
            elif len(a.names) > 1:
                v = mi.reduce_sum(a, rng.choice(a.names))
            else:
                continue
            values.append(v)
        prog.result(values[-1])
        if rng.random() < 0.5 and len(values) > 3:
            prog.result(values[-2], name="r1")
    return prog
