"""`mi.einsum` without `output=`: the output Mesh-TensorFlow's `mtf.einsum` infers (every name
that appears in exactly one operand, in order of first appearance), and `reduced=` (the names
to sum, every other one kept: Mesh-TensorFlow's `reduced_dims`), against `np.einsum`: through
the interpreter, and compiled on two meshes under layouts that split an output dim over one
axis and a summed dim over the other. Bad inputs are located MeshIRErrors naming the values.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import meshir as mi
from misuse_world import check_located

SIZES = {"b": 8, "d": 4, "f": 8, "h": 4, "l": 4, "m": 4, "k": 4}
MESHES = [mi.Mesh({"x": 2, "y": 2}), mi.Mesh({"x": 4, "y": 2})]


def dim(name: str) -> mi.Dim:
    return mi.Dim(name, SIZES[name])


# (id, operands' names, keyword arguments of mi.einsum, np.einsum's subscripts, layout rules:
# an output dim over x and, where the einsum sums one, a summed dim over y)
CASES = [
    ("matmul", ["bd", "df"], {}, "bd,df->bf", {"b": "x", "d": "y"}),
    ("outer-product", ["b", "f"], {}, "b,f->bf", {"b": "x", "f": "y"}),
    ("three-operands-chain", ["bd", "df", "fh"], {}, "bd,df,fh->bh", {"h": "x", "f": "y"}),
    ("dim-shared-by-all-three", ["bd", "bf", "bh"], {}, "bd,bf,bh->dfh", {"d": "x", "b": "y"}),
    ("one-operand-alone", ["bd"], {}, "bd->bd", {"b": "x", "d": "y"}),
    ("reduced-keeps-shared-dims", ["bhlk", "bhmk"], {"reduced": ["k"]}, "bhlk,bhmk->bhlm", {"b": "x", "k": "y"}),
    ("reduced-sums-a-dim-of-one-operand", ["bd", "df"], {"reduced": [mi.Dim("b", 8), "d"]}, "bd,df->f",
     {"f": "x", "d": "y"}),
]


def build(names: list[str], kwargs: dict):
    """(the program, the names of its einsum's result)."""
    with mi.Program("e") as prog:
        args = [prog.argument(f"a{i}", [dim(n) for n in ns]) for i, ns in enumerate(names)]
        out = mi.einsum(*args, **kwargs)
        prog.result(out, name="out")
    return prog, out.names


def inputs(names: list[str]) -> dict:
    rng = np.random.default_rng(len(names))
    return {f"a{i}": rng.standard_normal([SIZES[n] for n in ns]).astype(np.float32) for i, ns in enumerate(names)}


def expected(subscripts: str, arrays: dict) -> np.ndarray:
    return np.einsum(subscripts, *[a.astype(np.float64) for a in arrays.values()])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_inferred_output_against_numpy(case):
    _, names, kwargs, subscripts, rules = case
    prog, inferred = build(names, kwargs)
    out_names = subscripts.split("->")[1]
    assert inferred == tuple(out_names)
    arrays = inputs(names)
    want = expected(subscripts, arrays)
    np.testing.assert_allclose(np.asarray(mi.interpret(prog, **arrays)), want, rtol=1e-5, atol=1e-5)
    for mesh in MESHES:
        exe = mi.compile(prog, layout=rules, mesh=mesh, strict=True)
        got = exe(**arrays)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
        split = {d: rules[d] for d in out_names if d in rules}
        assert split, "each case splits an output dim"
        spec = tuple(got.sharding.spec) + (None,) * (len(out_names) - len(got.sharding.spec))
        for d, axis in split.items():
            assert spec[out_names.index(d)] == axis, (mesh, got.sharding.spec)
        summed_axes = {rules[d] for d in rules if d not in out_names}  # a split summed dim: its sum crosses devices
        crossing = {a for c in exe.compile_report.collectives for a in c.axes}
        assert summed_axes <= crossing, (mesh, exe.compile_report.collectives)


def test_order_is_first_appearance_across_operands():
    with mi.Program("order") as prog:
        x = prog.argument("x", [dim("h"), dim("d"), dim("b")])
        w = prog.argument("w", [dim("f"), dim("d"), dim("l")])
        assert mi.einsum(x, w).names == ("h", "b", "f", "l")
        assert mi.einsum(w, x).names == ("f", "l", "h", "b")
        assert mi.einsum(x, x).names == ()  # every name shared: a full contraction to a scalar
        assert mi.einsum(x, w, reduced=[]).names == ("h", "d", "b", "f", "l")


# -- bad inputs: located MeshIRErrors naming the values -------------------------------------

def _raised(call) -> BaseException:
    with pytest.raises(mi.MeshIRError) as info:
        call()
    return info.value


def test_a_name_with_two_sizes_names_the_dim_both_sizes_and_operands():
    with mi.Program("two_sizes") as prog:
        x = prog.argument("x", [dim("b"), mi.Dim("d", 4)])
        w = prog.argument("w", [mi.Dim("d", 6), dim("f")])
        line = inspect.currentframe().f_lineno + 1
        error = _raised(lambda: mi.einsum(x, w))
    check_located(error, __file__, line, ("'d'", "size 4 in operand #0", "size 6 in operand #1",
                                          "!mtf.tensor<b=8, d=4, f32>", "!mtf.tensor<d=6, f=8, f32>"),
                  kind=mi.MeshIRValueError)
    with mi.Program("two_sizes_with_output") as prog:
        x = prog.argument("x", [mi.Dim("d", 4)])
        w = prog.argument("w", [mi.Dim("d", 6)])
        line = inspect.currentframe().f_lineno + 1
        error = _raised(lambda: mi.einsum(x, w, output=[]))
    check_located(error, __file__, line, ("'d'", "size 4", "size 6"), kind=mi.MeshIRValueError)


def test_a_reduced_name_no_operand_has():
    with mi.Program("reduced_unknown") as prog:
        x = prog.argument("x", [dim("b"), dim("d")])
        w = prog.argument("w", [dim("d"), dim("f")])
        line = inspect.currentframe().f_lineno + 1
        error = _raised(lambda: mi.einsum(x, w, reduced=["q"]))
        check_located(error, __file__, line, ("'q'", "b=8, d=4, f=8"), kind=mi.MeshIRValueError)
        line = inspect.currentframe().f_lineno + 1
        error = _raised(lambda: mi.einsum(x, w, reduced=[mi.Dim("q", 2)]))
        check_located(error, __file__, line, ("'q'", "appears in no operand", "b=8, d=4, f=8"),
                      kind=mi.MeshIRValueError)


def test_output_and_reduced_together():
    with mi.Program("both") as prog:
        x = prog.argument("x", [dim("b"), dim("d")])
        w = prog.argument("w", [dim("d"), dim("f")])
        line = inspect.currentframe().f_lineno + 1
        error = _raised(lambda: mi.einsum(x, w, output=["b", "f"], reduced=["d"]))
        check_located(error, __file__, line, ("output=['b', 'f']", "reduced=['d']", "not both"),
                      kind=mi.MeshIRTypeError)
