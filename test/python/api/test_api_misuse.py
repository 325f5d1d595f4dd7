"""API misuse suite: every error a user can cause through the Python API is a MeshIRError
(a MeshIRTypeError / MeshIRValueError / MeshIRKeyError where Python expects the builtin)
whose message starts with this file's `path:line:col` of the offending call and names the
offending value; never a raw TypeError, AttributeError, jax error or a crash.

An explicit table of misuses (one line each: the line is where the error must point), then
hypothesis feeding hostile values (None, NaN, huge and negative numbers, odd text, wrong
containers, arbitrary objects) into argument slots across the API, derandomized.
"""
from __future__ import annotations

from dataclasses import dataclass

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import meshir as mi
from misuse_world import (B, D, World, check_located, hostile_values, is_count, is_empty, is_identifier, is_mesh_spec,
                          is_no_layout, is_one_of, is_real, names_value)

E_TYPE, E_VALUE, E_KEY = TypeError, ValueError, KeyError


@dataclass(frozen=True)
class Misuse:
    id: str
    call: object  # world -> anything; must raise
    fragments: tuple
    kind: type | None = None


def M(id, call, *fragments, kind=None):
    return Misuse(id, call, fragments, kind)


G = {"x": np.zeros((8, 4), np.float32), "w": np.zeros((4, 2), np.float32), "ids": np.zeros(8, np.int32)}

MISUSES = [
    # -- meshes ------------------------------------------------------------------------------
    M("mesh-text-missing-size", lambda w: mi.Mesh("x=4,y"), "'y'", kind=E_VALUE),
    M("mesh-text-word-size", lambda w: mi.Mesh("x=four"), "x=four", kind=E_VALUE),
    M("mesh-size-zero", lambda w: mi.Mesh({"x": 0}), "size 0", kind=E_VALUE),
    M("mesh-size-negative", lambda w: mi.Mesh({"x": -2}), "-2", kind=E_VALUE),
    M("mesh-size-float", lambda w: mi.Mesh({"x": 2.5}), "2.5"),
    M("mesh-size-bool", lambda w: mi.Mesh({"x": True}), "True"),
    M("mesh-size-none", lambda w: mi.Mesh({"x": None}), "None"),
    M("mesh-axis-not-identifier", lambda w: mi.Mesh({"1x": 2}), "'1x'"),
    M("mesh-axis-int", lambda w: mi.Mesh({3: 2}), "3"),
    M("mesh-axis-twice", lambda w: mi.Mesh([("x", 2), ("x", 2)]), "repeat", "'x'"),
    M("mesh-pair-short", lambda w: mi.Mesh([("x",)]), "('x',)"),
    M("mesh-int", lambda w: mi.Mesh(42), "int 42", kind=E_TYPE),
    M("mesh-none", lambda w: mi.Mesh(None), "None", kind=E_TYPE),
    M("mesh-beyond-int64", lambda w: mi.Mesh({"x": 2**70}), str(2**70), kind=E_VALUE),
    M("mesh-name-space", lambda w: mi.Mesh({"x": 2}, name="my mesh"), "'my mesh'"),
    M("mesh-name-none", lambda w: mi.Mesh({"x": 2}, name=None), "None"),
    # -- dims --------------------------------------------------------------------------------
    M("dim-size-zero", lambda w: mi.Dim("b", 0), "'b'", "size 0", kind=E_VALUE),
    M("dim-size-negative", lambda w: mi.Dim("b", -1), "-1", kind=E_VALUE),
    M("dim-size-float", lambda w: mi.Dim("b", 2.0), "2.0", kind=E_TYPE),
    M("dim-size-text", lambda w: mi.Dim("b", "8"), "'8'", kind=E_TYPE),
    M("dim-size-none", lambda w: mi.Dim("b", None), "None", kind=E_TYPE),
    M("dim-size-nan", lambda w: mi.Dim("b", float("nan")), "nan", kind=E_TYPE),
    M("dim-size-bool", lambda w: mi.Dim("b", True), "True", kind=E_TYPE),
    M("dim-size-huge", lambda w: mi.Dim("b", 2**70), str(2**70), kind=E_VALUE),
    M("dim-name-space", lambda w: mi.Dim("bad name", 4), "'bad name'", kind=E_VALUE),
    M("dim-name-empty", lambda w: mi.Dim("", 4), "''", kind=E_VALUE),
    M("dim-name-newline", lambda w: mi.Dim("batch\n", 4), r"'batch\n'", kind=E_VALUE),
    M("mesh-axis-newline", lambda w: mi.Mesh({"x\n": 2}), r"'x\n'", kind=E_VALUE),
    M("dim-name-none", lambda w: mi.Dim(None, 4), "None", kind=E_TYPE),
    # -- programs ----------------------------------------------------------------------------
    M("program-name-space", lambda w: mi.Program("my prog"), "'my prog'", kind=E_VALUE),
    M("program-name-none", lambda w: mi.Program(None), "None", kind=E_TYPE),
    M("program-mesh-int", lambda w: mi.Program("p", mesh=42), "int 42", kind=E_TYPE),
    M("program-mesh-text", lambda w: mi.Program("p", mesh="x=4,y"), "'y'", kind=E_VALUE),
    M("program-layout-int", lambda w: mi.Program("p", w.mesh, layout={"b": 3}), "'b'", "int 3", kind=E_TYPE),
    M("program-layout-list", lambda w: mi.Program("p", w.mesh, layout=["b"]), "list ['b']", kind=E_TYPE),
    M("program-layout-unknown-axis", lambda w: mi.Program("p", w.mesh, layout={"b": "z"}, strict=True), "'z'"),
    M("program-layout-none-key", lambda w: mi.Program("p", w.mesh, layout={None: "x"}), "None", kind=E_TYPE),
    M("program-layout-int-axis", lambda w: mi.Program("p", w.mesh, layout={"b": ("x", 1)}), "int 1", kind=E_TYPE),
    M("program-layout-no-mesh", lambda w: mi.Program("p", layout={"b": "x"}), "'x'"),
    M("argument-name-space", lambda w: w.inside(lambda p, t: p.argument("a b", [B])), "'a b'", kind=E_VALUE),
    M("argument-name-none", lambda w: w.inside(lambda p, t: p.argument(None, [B])), "None", kind=E_TYPE),
    M("argument-dims-int", lambda w: w.inside(lambda p, t: p.argument("z", 3)), "int 3", kind=E_TYPE),
    M("argument-dims-int-item", lambda w: w.inside(lambda p, t: p.argument("z", [3])), "int 3", kind=E_TYPE),
    M("argument-dims-size-zero", lambda w: w.inside(lambda p, t: p.argument("z", [("b", 0)])), "size 0"),
    M("argument-dims-twice", lambda w: w.inside(lambda p, t: p.argument("z", [B, B])), "'b' appears twice"),
    M("argument-dims-name-only", lambda w: w.inside(lambda p, t: p.argument("z", ["b"])), "'b'"),
    M("argument-dtype-unknown", lambda w: w.inside(lambda p, t: p.argument("z", [B], dtype="f8")), "'f8'", kind=E_VALUE),
    M("argument-dtype-int8", lambda w: w.inside(lambda p, t: p.argument("z", [B], dtype="int8")), "'int8'", kind=E_VALUE),
    M("argument-dtype-complex", lambda w: w.inside(lambda p, t: p.argument("z", [B], dtype=np.complex64)), "complex64"),
    M("argument-dtype-none", lambda w: w.inside(lambda p, t: p.argument("z", [B], dtype=None)), "None", kind=E_TYPE),
    M("argument-dtype-python-float", lambda w: w.inside(lambda p, t: p.argument("z", [B], dtype=float)), "float"),
    M("argument-layout-int", lambda w: w.inside(lambda p, t: p.argument("z", [B], layout={"b": 3})), "int 3"),
    M("argument-layout-unknown-dim", lambda w: w.inside(lambda p, t: p.argument("z", [B], layout={"q": "x"})), "'q'"),
    M("argument-layout-unknown-axis", lambda w: w.inside(lambda p, t: p.argument("z", [B], layout={"b": "z"})), "'z'"),
    M("argument-layout-indivisible", lambda w: w.inside(lambda p, t: p.argument("z", [("b", 6)], layout={"b": "x"})), "'b'"),
    M("argument-layout-text", lambda w: w.inside(lambda p, t: p.argument("z", [B], layout="x")), "'x'", kind=E_VALUE),
    M("argument-beyond-int64", lambda w: w.inside(lambda p, t: p.argument("z", [("a", 2**40), ("c", 2**40)])), "int64"),
    M("argument-twice", lambda w: w.inside(lambda p, t: p.argument("x", [B])), "'x'", "twice"),
    M("result-none", lambda w: w.inside(lambda p, t: p.result(None)), "None"),
    M("result-number", lambda w: w.inside(lambda p, t: p.result(3.0)), "3.0"),
    M("result-name-space", lambda w: w.inside(lambda p, t: p.result(t.x, name="a b")), "'a b'"),
    M("result-name-int", lambda w: w.inside(lambda p, t: p.result(t.x, name=3)), "int 3", kind=E_TYPE),
    M("result-of-other-program", lambda w: w.inside(lambda p, t: p.result(w.x)), "Tensor(", "'t'"),
    M("result-twice", lambda w: w.inside(lambda p, t: (p.result(t.x, name="r"), p.result(t.y, name="r"))), "'r'"),
    M("finished-argument", lambda w: w.prog.argument("z", [B]), "'loss'", "finished"),
    M("finished-result", lambda w: w.prog.result(w.x), "'loss'", "finished"),
    M("finished-op", lambda w: mi.exp(w.x), "'loss'", "finished"),
    M("finished-call", lambda w: w.prog.call(w.prog, w.x, w.w, w.ids), "'loss'", "finished"),
    M("operands-of-two-programs", lambda w: w.inside(lambda p, t: t.x + w.x), "'t'", "'loss'"),
    M("op-without-program", lambda w: mi.constant(1.0, [B]), "no active Program"),
    M("op-of-none-without-program", lambda w: mi.exp(None), "None", kind=E_TYPE),
    M("program-reentered", lambda w: w.prog.__enter__(), "'loss'", "finished"),
    M("program-finished-twice", lambda w: w.prog.finish(), "'loss'", "finished"),
    M("call-ambiguous-module", lambda w: w.inside(lambda p, t: p.call(w.two_functions, t.x)), "@f, @g"),
    M("call-not-a-program", lambda w: w.inside(lambda p, t: p.call(42, t.x)), "int 42", kind=E_TYPE),
    M("call-missing-argument", lambda w: w.inside(lambda p, t: p.call(w.prog, t.x)), "'w'", "'ids'"),
    M("call-too-many", lambda w: w.inside(lambda p, t: p.call(w.prog, t.x, t.x, t.ids, t.x)), "4 arguments"),
    M("call-unknown-name", lambda w: w.inside(lambda p, t: p.call(w.prog, t.x, t.x, t.ids, q=t.x)), "'q'"),
    M("call-wrong-type", lambda w: w.inside(lambda p, t: p.call(w.prog, t.ids, t.x, t.ids)), "'x'"),
    M("call-number", lambda w: w.inside(lambda p, t: p.call(w.prog, 3.0, t.x, t.ids)), "3.0"),
    # -- Tensor protocols --------------------------------------------------------------------
    M("tensor-bool", lambda w: w.inside(lambda p, t: bool(t.x)), "truth value", kind=E_TYPE),
    M("tensor-if", lambda w: w.inside(lambda p, t: 1 if t.x > 0 else 0), "truth value", kind=E_TYPE),
    M("tensor-dim-missing", lambda w: w.inside(lambda p, t: t.x.dim("zz")), "'zz'", "b, d", kind=E_KEY),
    M("tensor-dim-int", lambda w: w.inside(lambda p, t: t.x.dim(3)), "3", kind=E_KEY),
    M("tensor-iter", lambda w: w.inside(lambda p, t: list(t.x)), "not iterable", kind=E_TYPE),
    M("tensor-len", lambda w: w.inside(lambda p, t: len(t.x)), "len()", kind=E_TYPE),
    M("tensor-index", lambda w: w.inside(lambda p, t: t.x[0]), "with 0", kind=E_TYPE),
    M("tensor-matmul", lambda w: w.inside(lambda p, t: t.x @ t.y), "mi.einsum", kind=E_TYPE),
    M("tensor-float", lambda w: w.inside(lambda p, t: float(t.s)), "no Python value", kind=E_TYPE),
    M("tensor-numpy", lambda w: w.inside(lambda p, t: np.asarray(t.x)), "NumPy array", kind=E_TYPE),
    M("tensor-plus-text", lambda w: w.inside(lambda p, t: t.x + "a"), "'a'", kind=E_TYPE),
    M("tensor-plus-none", lambda w: w.inside(lambda p, t: t.x + None), "None", kind=E_TYPE),
    M("tensor-plus-list", lambda w: w.inside(lambda p, t: t.x + [1, 2]), "[1, 2]", kind=E_TYPE),
    M("tensor-times-complex", lambda w: w.inside(lambda p, t: t.x * 1j), "1j", kind=E_TYPE),
    M("tensor-plus-array", lambda w: w.inside(lambda p, t: t.x + np.array([1.0])), "ndarray", kind=E_TYPE),
    M("int-tensor-plus-fraction", lambda w: w.inside(lambda p, t: t.ids + 0.5), "0.5", kind=E_VALUE),
    M("int-tensor-plus-huge", lambda w: w.inside(lambda p, t: t.ids + 2**40), str(2**40), kind=E_VALUE),
    M("float-tensor-plus-overflow", lambda w: w.inside(lambda p, t: t.x + 10**400), "too large", kind=E_VALUE),
    M("tensor-sizes-disagree", lambda w: w.inside(lambda p, t: t.x + t.r), "'b'", "8", "4"),
    # -- elementwise -------------------------------------------------------------------------
    M("exp-none", lambda w: w.inside(lambda p, t: mi.exp(None)), "None", kind=E_TYPE),
    M("exp-text", lambda w: w.inside(lambda p, t: mi.exp("x")), "'x'", kind=E_TYPE),
    M("add-numbers", lambda w: w.inside(lambda p, t: mi.add(1, 2)), "int 1", kind=E_TYPE),
    M("cast-unknown", lambda w: w.inside(lambda p, t: mi.cast(t.x, "f8")), "'f8'", kind=E_VALUE),
    M("cast-none", lambda w: w.inside(lambda p, t: mi.cast(t.x, None)), "None", kind=E_TYPE),
    M("cast-of-none", lambda w: w.inside(lambda p, t: mi.cast(None, "f32")), "None", kind=E_TYPE),
    M("select-none-condition", lambda w: w.inside(lambda p, t: mi.select(None, t.x, t.y)), "None", kind=E_TYPE),
    M("select-numbers", lambda w: w.inside(lambda p, t: mi.select(t.m, 1.0, 2.0)), "1.0", kind=E_TYPE),
    M("select-text", lambda w: w.inside(lambda p, t: mi.select(t.m, t.x, "a")), "'a'", kind=E_TYPE),
    M("maximum-none", lambda w: w.inside(lambda p, t: mi.maximum(t.x, None)), "None", kind=E_TYPE),
    # -- shape ops ---------------------------------------------------------------------------
    M("rename-to-existing", lambda w: w.inside(lambda p, t: mi.rename(t.x, "b", "d")), "'d'", "twice", kind=E_VALUE),
    M("rename-unknown", lambda w: w.inside(lambda p, t: mi.rename(t.x, "q", "z")), "'q'", kind=E_VALUE),
    M("rename-to-none", lambda w: w.inside(lambda p, t: mi.rename(t.x, "b", None)), "None", kind=E_TYPE),
    M("rename-to-space", lambda w: w.inside(lambda p, t: mi.rename(t.x, "b", "a b")), "'a b'", kind=E_VALUE),
    M("rename-mapping-int", lambda w: w.inside(lambda p, t: mi.rename(t.x, {"b": 3})), "int 3", kind=E_TYPE),
    M("rename-of-none", lambda w: w.inside(lambda p, t: mi.rename(None, "b", "c")), "None", kind=E_TYPE),
    M("rename-swap-collides", lambda w: w.inside(lambda p, t: mi.rename(t.x, {"b": "d"})), "'d'", kind=E_VALUE),
    M("reshape-wrong-count", lambda w: w.inside(lambda p, t: mi.reshape(t.x, [("e", 5)])), "result 5"),
    M("reshape-int", lambda w: w.inside(lambda p, t: mi.reshape(t.x, 3)), "int 3", kind=E_TYPE),
    M("broadcast-unknown", lambda w: w.inside(lambda p, t: mi.broadcast(t.x, ["zz"])), "'zz'"),
    M("transpose-missing-dim", lambda w: w.inside(lambda p, t: mi.transpose(t.x, ["b"])), "[b]"),
    M("transpose-none", lambda w: w.inside(lambda p, t: mi.transpose(t.x, None)), "None", kind=E_TYPE),
    M("slice-length-zero", lambda w: w.inside(lambda p, t: mi.slice(t.x, "b", 0, 0)), "0", kind=E_VALUE),
    M("slice-start-negative", lambda w: w.inside(lambda p, t: mi.slice(t.x, "b", -1, 2)), "-1", kind=E_VALUE),
    M("slice-past-end", lambda w: w.inside(lambda p, t: mi.slice(t.x, "b", 0, 9)), "9"),
    M("slice-start-float", lambda w: w.inside(lambda p, t: mi.slice(t.x, "b", 0.5, 2)), "0.5", kind=E_TYPE),
    M("slice-unknown-dim", lambda w: w.inside(lambda p, t: mi.slice(t.x, "q", 0, 2)), "'q'", kind=E_VALUE),
    M("slice-dim-none", lambda w: w.inside(lambda p, t: mi.slice(t.x, None, 0, 2)), "None", kind=E_TYPE),
    M("concat-tensor-not-list", lambda w: w.inside(lambda p, t: mi.concat(t.x, "b")), "Tensor", kind=E_TYPE),
    M("concat-empty", lambda w: w.inside(lambda p, t: mi.concat([], "b")), "at least one"),
    M("concat-none-item", lambda w: w.inside(lambda p, t: mi.concat([t.x, None], "b")), "None", kind=E_TYPE),
    M("concat-missing-dim", lambda w: w.inside(lambda p, t: mi.concat([t.x, t.ids], "d")), "'d'"),
    M("pad-negative", lambda w: w.inside(lambda p, t: mi.pad(t.x, "b", -1, 0)), "'mtf.pad' of 'b' (size ",
      "got low=-1, high=0", kind=E_VALUE),
    M("pad-negative-high", lambda w: w.inside(lambda p, t: mi.pad(t.x, "b", 2, -3)), "got low=2, high=-3",
      kind=E_VALUE),
    M("pad-value-text", lambda w: w.inside(lambda p, t: mi.pad(t.x, "b", 1, 1, value="zero")), "'zero'", kind=E_TYPE),
    M("shift-offset-float", lambda w: w.inside(lambda p, t: mi.shift(t.x, "b", 1.5)), "1.5", kind=E_TYPE),
    M("shift-wrap-text", lambda w: w.inside(lambda p, t: mi.shift(t.x, "b", 1, wrap="yes")), "'yes'", kind=E_TYPE),
    M("shift-offset-huge", lambda w: w.inside(lambda p, t: mi.shift(t.x, "b", 2**70)), str(2**70), kind=E_VALUE),
    # -- creation ----------------------------------------------------------------------------
    M("constant-text", lambda w: w.inside(lambda p, t: mi.constant("abc", [B])), "'abc'", kind=E_TYPE),
    M("constant-none", lambda w: w.inside(lambda p, t: mi.constant(None, [B])), "None", kind=E_TYPE),
    M("constant-shape", lambda w: w.inside(lambda p, t: mi.constant([1.0, 2.0], [B])), "(2,)", kind=E_VALUE),
    M("constant-fraction-int", lambda w: w.inside(lambda p, t: mi.constant(1.5, [B], dtype="i32")), "1.5", kind=E_VALUE),
    M("constant-huge-int", lambda w: w.inside(lambda p, t: mi.constant(2**40, [B], dtype="i32")), str(2**40)),
    M("constant-nan-int", lambda w: w.inside(lambda p, t: mi.constant(float("nan"), [B], dtype="i32")), "nan"),
    M("constant-dtype", lambda w: w.inside(lambda p, t: mi.constant(1.0, [B], dtype="f8")), "'f8'", kind=E_VALUE),
    M("constant-dims-int", lambda w: w.inside(lambda p, t: mi.constant(1.0, 8)), "int 8", kind=E_TYPE),
    M("iota-unknown-dim", lambda w: w.inside(lambda p, t: mi.iota([B], "q")), "'q'"),
    M("iota-dim-none", lambda w: w.inside(lambda p, t: mi.iota([B], None)), "None", kind=E_TYPE),
    M("uniform-seed-float", lambda w: w.inside(lambda p, t: mi.random_uniform([B], seed=1.5)), "1.5", kind=E_TYPE),
    M("uniform-seed-none", lambda w: w.inside(lambda p, t: mi.random_uniform([B], seed=None)), "None", kind=E_TYPE),
    M("uniform-minval-nan", lambda w: w.inside(lambda p, t: mi.random_uniform([B], 0, minval=float("nan"))), "nan"),
    M("normal-stddev-text", lambda w: w.inside(lambda p, t: mi.random_normal([B], 0, stddev="1")), "'1'", kind=E_TYPE),
    M("normal-seed-huge", lambda w: w.inside(lambda p, t: mi.random_normal([B], 2**64)), str(2**64), kind=E_VALUE),
    # -- contraction -------------------------------------------------------------------------
    M("einsum-none-operand", lambda w: w.inside(lambda p, t: mi.einsum(t.x, None, output=["b"])), "None", kind=E_TYPE),
    M("einsum-no-operands", lambda w: w.inside(lambda p, t: mi.einsum(output=["b"])), "at least one operand"),
    M("einsum-unknown-output", lambda w: w.inside(lambda p, t: mi.einsum(t.x, t.y, output=["q"])), "'q'"),
    M("einsum-output-int", lambda w: w.inside(lambda p, t: mi.einsum(t.x, t.y, output=3)), "int 3", kind=E_TYPE),
    M("einsum-output-and-reduced", lambda w: w.inside(lambda p, t: mi.einsum(t.x, t.y, output=["b"], reduced=["d"])),
      "['b']", "['d']", kind=E_TYPE),
    M("einsum-unknown-reduced", lambda w: w.inside(lambda p, t: mi.einsum(t.x, t.y, reduced=["q"])), "'q'", kind=E_VALUE),
    M("einsum-two-sizes", lambda w: w.inside(lambda p, t: mi.einsum(t.x, t.r)), "'b'", "size 8", "size 4", kind=E_VALUE),
    M("reduce-of-none", lambda w: w.inside(lambda p, t: mi.reduce_sum(None)), "None", kind=E_TYPE),
    M("reduce-unknown-dim", lambda w: w.inside(lambda p, t: mi.reduce_sum(t.x, over=["q"])), "'q'"),
    M("reduce-output-and-over", lambda w: w.inside(lambda p, t: mi.reduce_max(t.x, output=["b"], over=["d"])), "['d']"),
    M("reduce-over-int", lambda w: w.inside(lambda p, t: mi.reduce_min(t.x, over=5)), "int 5", kind=E_TYPE),
    # -- composites --------------------------------------------------------------------------
    M("softmax-unknown-dim", lambda w: w.inside(lambda p, t: mi.softmax(t.x, "q")), "'q'", kind=E_VALUE),
    M("softmax-int", lambda w: w.inside(lambda p, t: mi.softmax(t.ids, "b")), "i32", kind=E_TYPE),
    M("softmax-of-none", lambda w: w.inside(lambda p, t: mi.softmax(None, "b")), "None", kind=E_TYPE),
    M("log-softmax-dim-none", lambda w: w.inside(lambda p, t: mi.log_softmax(t.x, None)), "None", kind=E_TYPE),
    M("layer-norm-negative-epsilon", lambda w: w.inside(lambda p, t: mi.layer_norm(t.x, "d", epsilon=-1.0)), "-1.0"),
    M("layer-norm-scale-int", lambda w: w.inside(lambda p, t: mi.layer_norm(t.x, "d", scale=2)), "int 2", kind=E_TYPE),
    M("cross-entropy-none-targets", lambda w: w.inside(lambda p, t: mi.cross_entropy(t.x, None, "d")), "None"),
    M("cross-entropy-unknown-dim", lambda w: w.inside(lambda p, t: mi.cross_entropy(t.x, t.ids, "q")), "'q'"),
    M("dropout-rate-above-one", lambda w: w.inside(lambda p, t: mi.dropout(t.x, 1.5, 0)), "1.5", kind=E_VALUE),
    M("dropout-rate-nan", lambda w: w.inside(lambda p, t: mi.dropout(t.x, float("nan"), 0)), "nan", kind=E_VALUE),
    M("dropout-seed-text", lambda w: w.inside(lambda p, t: mi.dropout(t.x, 0.5, "seed")), "'seed'", kind=E_TYPE),
    M("mean-int", lambda w: w.inside(lambda p, t: mi.mean(t.ids)), "i32", kind=E_TYPE),
    M("gelu-text", lambda w: w.inside(lambda p, t: mi.gelu("x")), "'x'", kind=E_TYPE),
    # -- indexing ----------------------------------------------------------------------------
    M("one-hot-float-ids", lambda w: w.inside(lambda p, t: mi.one_hot(t.x, mi.Dim("k", 4))), "f32"),
    M("one-hot-depth-name", lambda w: w.inside(lambda p, t: mi.one_hot(t.ids, "k")), "'k'", kind=E_VALUE),
    M("one-hot-depth-existing", lambda w: w.inside(lambda p, t: mi.one_hot(t.ids, mi.Dim("b", 8))), "'b'"),
    M("one-hot-dtype", lambda w: w.inside(lambda p, t: mi.one_hot(t.ids, mi.Dim("k", 4), dtype="f8")), "'f8'"),
    M("gather-unknown-dim", lambda w: w.inside(lambda p, t: mi.gather(t.x, t.ids, "q")), "'q'", kind=E_VALUE),
    M("gather-none-ids", lambda w: w.inside(lambda p, t: mi.gather(t.x, None, "b")), "None", kind=E_TYPE),
    M("gather-float-ids", lambda w: w.inside(lambda p, t: mi.gather(t.y, t.s, "b")), "f32"),
    # -- layouts and collectives -------------------------------------------------------------
    M("shard-axis-int", lambda w: w.inside(lambda p, t: mi.shard(t.x, {"b": 3})), "int 3", kind=E_TYPE),
    M("shard-unknown-dim", lambda w: w.inside(lambda p, t: mi.shard(t.x, {"q": "x"})), "'q'"),
    M("shard-text", lambda w: w.inside(lambda p, t: mi.shard(t.x, "x")), "'x'", kind=E_VALUE),
    M("shard-unknown-axis", lambda w: w.inside(lambda p, t: mi.shard(t.x, {"b": "z"})), "'z'"),
    M("all-reduce-reduction", lambda w: w.inside(lambda p, t: mi.all_reduce(t.x, "x", reduction="mean")), "'mean'"),
    M("all-reduce-axes-int", lambda w: w.inside(lambda p, t: mi.all_reduce(t.x, 3)), "int 3", kind=E_TYPE),
    M("all-gather-unknown-dim", lambda w: w.inside(lambda p, t: mi.all_gather(t.x, "q", "x")), "'q'"),
    M("all-slice-axes-none", lambda w: w.inside(lambda p, t: mi.all_slice(t.x, "b", None)), "None", kind=E_TYPE),
    M("all-to-all-same-dim", lambda w: w.inside(lambda p, t: mi.all_to_all(t.x, "b", "b", "x")), "'b'"),
    M("reduce-scatter-reduction-none", lambda w: w.inside(lambda p, t: mi.reduce_scatter(t.x, "b", "x", None)), "None"),
    M("permute-list", lambda w: w.inside(lambda p, t: mi.collective_permute(t.x, ["b"])), "['b']", kind=E_TYPE),
    # -- compile -----------------------------------------------------------------------------
    M("compile-int", lambda w: mi.compile(42), "int 42", kind=E_TYPE),
    M("compile-none", lambda w: mi.compile(None), "None", kind=E_TYPE),
    M("compile-layout-int", lambda w: mi.compile(w.prog, layout={"b": 3}), "int 3", kind=E_TYPE),
    M("compile-rules-text-trailing-comma", lambda w: mi.compile(w.prog, layout="b:x,"), "'b:x,'", kind=E_VALUE),
    M("compile-rules-text-twice", lambda w: mi.compile(w.prog, layout="b:x,b:y"), "'b' twice", kind=E_VALUE),
    M("compile-rules-text-no-axis", lambda w: mi.compile(w.prog, layout="b:"), "'b:'", kind=E_VALUE),
    M("compile-rules-text-semicolons", lambda w: mi.compile(w.prog, layout="b:x;; d:y"), "'b:x;; d:y'", kind=E_VALUE),
    M("program-rules-text-unknown-axis", lambda w: mi.Program("p", w.mesh, layout="b:z", strict=True), "'z'", kind=E_VALUE),
    M("compile-mode", lambda w: mi.compile(w.prog, mode="fast"), "'fast'", kind=E_VALUE),
    M("compile-mode-none", lambda w: mi.compile(w.prog, mode=None), "None", kind=E_TYPE),
    M("compile-mesh-text", lambda w: mi.compile(w.prog, mesh="x=4,y"), "'y'", kind=E_VALUE),
    M("compile-mesh-int", lambda w: mi.compile(w.prog, mesh=42), "int 42", kind=E_TYPE),
    M("compile-mesh-differs", lambda w: mi.compile(w.prog, mesh={"x": 8}), '"x"=8'),
    M("compile-donate-int", lambda w: mi.compile(w.prog, donate=1), "int 1", kind=E_TYPE),
    M("compile-donate-unknown", lambda w: mi.compile(w.prog, donate=["nope"]), "'nope'", kind=E_VALUE),
    M("compile-donate-twice", lambda w: mi.compile(w.step, donate=["w", "w"]), "'w'", kind=E_VALUE),
    M("compile-donate-no-result", lambda w: mi.compile(w.prog, donate=["x"]), "'x'"),
    M("compile-function-unknown", lambda w: mi.compile(w.prog, function="nope"), "@nope"),
    M("compile-rule-unknown-axis", lambda w: mi.compile(w.prog, layout={"b": "z"}, strict=True), "'z'", '["x"=4, "y"=2]', kind=E_VALUE),
    M("compile-rule-axis-twice", lambda w: mi.compile(w.prog, layout={"d": ("x", "x")}), "(x,x)", kind=E_VALUE),
    M("compile-ambiguous-module", lambda w: mi.compile(w.two_functions, mesh={"x": 2}), "@f, @g"),
    M("compile-function-int", lambda w: mi.compile(w.prog, function=3), "int 3", kind=E_TYPE),
    # -- running -----------------------------------------------------------------------------
    M("exe-shape", lambda w: w.exe(**dict(G, x=np.zeros((8, 3)))), "'x'", "(8, 3)", kind=E_VALUE),
    M("exe-unknown-argument", lambda w: w.exe(**G, z=1), "'z'", kind=E_TYPE),
    M("exe-missing", lambda w: w.exe(), "'x', 'w', 'ids'", kind=E_TYPE),
    M("exe-too-many", lambda w: w.exe(1, 2, 3, 4), "4 positional", kind=E_TYPE),
    M("exe-twice", lambda w: w.exe(G["x"], **G), "'x'", "twice", kind=E_TYPE),
    M("exe-dtype", lambda w: w.exe(**dict(G, ids=G["ids"].astype(np.float32))), "'ids'", "float32", kind=E_TYPE),
    M("exe-text", lambda w: w.exe(**dict(G, x="text")), "'x'", "str", kind=E_TYPE),
    M("exe-none", lambda w: w.exe(**dict(G, x=None)), "'x'"),
    M("exe-int-overflow", lambda w: w.exe(**dict(G, ids=np.full(8, 2**40))), "'ids'", str(2**40), kind=E_VALUE),
    M("exe-deleted-array", lambda w: w.exe(**dict(G, x=w.deleted())), "'x'", "deleted", kind=E_VALUE),
    M("exe-donated-array-reused", lambda w: w.step_exe(**w.donated_inputs()), "'w'", "donated", kind=E_VALUE),
    M("exe-same-array-donated-twice", lambda w: w.step_exe(**dict(i := w.step_inputs(), w__velocity=i["w"])), "'w'", "'w__velocity'"),
    M("exe-tensor-input", lambda w: w.exe(**dict(G, x=w.x)), "'x'"),
    M("interpret-ambiguous-module", lambda w: mi.interpret(w.two_functions, np.zeros(8)), "@f, @g"),
    M("interpret-int", lambda w: mi.interpret(42), "int 42", kind=E_TYPE),
    M("interpret-shape", lambda w: mi.interpret(w.prog, **dict(G, x=np.ones(3))), "'x'", "(3,)", kind=E_VALUE),
    M("interpret-missing", lambda w: mi.interpret(w.prog), "'x'", kind=E_TYPE),
    M("interpret-function-unknown", lambda w: mi.interpret(w.prog, function="nope", **G), "@nope"),
    M("interpret-function-int", lambda w: mi.interpret(w.prog, function=3, **G), "int 3", kind=E_TYPE),
    M("interpret-deleted-array", lambda w: mi.interpret(w.prog, **dict(G, x=w.deleted())), "'x'", "deleted"),
    M("parse-module-int", lambda w: mi.parse_module(42), "int 42", kind=E_TYPE),
    M("parse-module-source-none", lambda w: mi.parse_module("module {}", None), "None", kind=E_TYPE),
    M("verify-module-none", lambda w: mi.verify_module(None), "None", kind=E_TYPE),
    M("check-module-text", lambda w: mi.check_module("module {}"), "'module {}'", kind=E_TYPE),
    # -- propagation, tables, pictures -------------------------------------------------------
    M("propagate-layout-int", lambda w: mi.propagate(w.prog, layout={"b": 3}), "int 3", kind=E_TYPE),
    M("propagate-rule-unknown-axis", lambda w: mi.propagate(w.prog, layout={"b": "z"}, strict=True), "'z'", kind=E_VALUE),
    M("visualize-rule-unknown-axis", lambda w: mi.visualize(w.prog, layout={"b": "z"}, show=False, strict=True), "'z'"),
    M("propagate-text", lambda w: mi.propagate("prog"), "'prog'", kind=E_TYPE),
    M("layout-table-none", lambda w: mi.layout_table(None), "None", kind=E_TYPE),
    M("visualize-none", lambda w: mi.visualize(None, show=False), "None", kind=E_TYPE),
    M("visualize-path-int", lambda w: mi.visualize(w.prog, path=3, show=False), "int 3", kind=E_TYPE),
    M("visualize-layout-list", lambda w: mi.visualize(w.prog, layout=["b"], show=False), "['b']", kind=E_TYPE),
    M("visualize-exe-layout", lambda w: mi.visualize(w.exe, layout={"b": "x"}, show=False), "{'b': ('x',)}"),
    M("visualize-missing-directory", lambda w: mi.visualize(w.prog, "/nonexistent/dir/a.png", show=False), "/nonexistent/dir"),
    M("visualize-every-value-text", lambda w: mi.visualize(w.prog, every_value="yes", show=False), "'yes'", kind=E_TYPE),
    M("visualize-unknown-format", lambda w: mi.visualize(w.prog, "layouts.unknownext", show=False), ".unknownext"),
    # -- gradients ---------------------------------------------------------------------------
    M("grad-int", lambda w: mi.grad(42), "int 42", kind=E_TYPE),
    M("grad-wrt-unknown", lambda w: mi.grad(w.prog, wrt=["nope"]), "'nope'"),
    M("grad-wrt-int", lambda w: mi.grad(w.prog, wrt=[3]), "int 3", kind=E_TYPE),
    M("grad-wrt-integer-argument", lambda w: mi.grad(w.prog, wrt=["ids"]), "'ids'"),
    M("grad-result-unknown", lambda w: mi.grad(w.prog, result="nope"), "'nope'"),
    M("grad-of-non-scalar", lambda w: mi.grad(w.two_functions, function="f"), "'result0'", "not a scalar"),
    M("grad-cotangent-text", lambda w: mi.grad(w.prog, cotangent="yes"), "'yes'", kind=E_TYPE),
    M("value-and-grad-function-int", lambda w: mi.value_and_grad(w.prog, function=3), "int 3", kind=E_TYPE),
    # -- training ----------------------------------------------------------------------------
    M("train-step-no-optimizer", lambda w: mi.train_step(w.prog, None), "None", kind=E_TYPE),
    M("train-step-optimizer-name", lambda w: mi.train_step(w.prog, "adam"), "'adam'", kind=E_TYPE),
    M("train-step-unknown-param", lambda w: mi.train_step(w.prog, mi.SGD(0.1), params=["nope"]), "'nope'"),
    M("train-step-param-int", lambda w: mi.train_step(w.prog, mi.SGD(0.1), params=[3]), "int 3", kind=E_TYPE),
    M("train-step-integer-param", lambda w: mi.train_step(w.prog, mi.SGD(0.1), params=["ids"]), "'ids'"),
    M("train-step-program-int", lambda w: mi.train_step(42, mi.SGD(0.1)), "int 42", kind=E_TYPE),
    M("train-step-name-space", lambda w: mi.train_step(w.prog, mi.SGD(0.1), name="a b"), "'a b'", kind=E_VALUE),
    M("sgd-rate-text", lambda w: mi.SGD(learning_rate="fast"), "'fast'", kind=E_TYPE),
    M("sgd-rate-nan", lambda w: mi.SGD(learning_rate=float("nan")), "nan", kind=E_VALUE),
    M("sgd-momentum-negative", lambda w: mi.SGD(momentum=-0.5), "-0.5", kind=E_VALUE),
    M("sgd-nesterov-text", lambda w: mi.SGD(nesterov="yes"), "'yes'", kind=E_TYPE),
    M("adam-beta1-above-one", lambda w: mi.Adam(beta1=1.5), "1.5", kind=E_VALUE),
    M("adam-epsilon-none", lambda w: mi.Adam(epsilon=None), "None", kind=E_TYPE),
    M("adamw-decay-negative", lambda w: mi.AdamW(weight_decay=-1.0), "-1.0", kind=E_VALUE),
    M("adafactor-min-size-zero", lambda w: mi.Adafactor(min_dim_size_to_factor=0), "0", kind=E_VALUE),
    M("adafactor-rate-text", lambda w: mi.Adafactor(learning_rate="x"), "'x'", kind=E_TYPE),
    M("init-state-of-program", lambda w: mi.init_optimizer_state(w.prog), "Program", kind=E_TYPE),
    M("init-state-of-none", lambda w: mi.init_optimizer_state(None), "None", kind=E_TYPE),
]


@pytest.fixture(scope="module")
def world():
    return World()


def test_the_table_is_large_and_its_ids_unique():
    assert len(MISUSES) >= 100
    assert len({m.id for m in MISUSES}) == len(MISUSES)


@pytest.mark.parametrize("misuse", MISUSES, ids=[m.id for m in MISUSES])
def test_misuse_is_a_located_meshir_error(world, misuse):
    with pytest.raises(BaseException) as info:
        misuse.call(world)
    check_located(info.value, __file__, misuse.call.__code__.co_firstlineno, misuse.fragments, misuse.kind)


def test_numpy_dtypes_and_their_names_are_accepted(world):
    """JAX users' spellings of element types map to MeshIR's names."""
    spellings = {"float32": "f32", np.float32: "f32", np.dtype("int32"): "i32", jnp.bfloat16: "bf16",
                 "bool": "i1", np.float64: "f64", "int64": "i64", np.float16: "f16", "bf16": "bf16"}
    for spelling, name in spellings.items():
        assert world.inside(lambda p, t: p.argument("z", [B], dtype=spelling).dtype) == name
        assert world.inside(lambda p, t: mi.cast(t.x, spelling).dtype) == name
    assert world.inside(lambda p, t: mi.constant(1, [D], dtype=np.int32).dtype) == "i32"


def test_text_forms_of_meshes_and_layout_rules(world):
    assert mi.Mesh("x=4, y=2") == mi.Mesh({"x": 4, "y": 2})
    assert mi.Mesh([("x", np.int64(2))]).shape == {"x": 2}
    as_text = mi.propagate(world.prog, layout="b:x, d:(y)")
    assert str(as_text) == str(mi.propagate(world.prog, layout={"b": "x", "d": ("y",)}))
    assert str(mi.propagate(world.prog, layout="b:x; d:y")) == str(as_text)  # Mesh-TensorFlow's form
    assert str(mi.propagate(world.prog, layout=mi.LayoutRules.parse("b:x;d:y"))) == str(as_text)


# -- hostile values in argument slots ----------------------------------------------------------
# (slot id, call taking (world, value), whether the value is a legitimate one for the slot)
SLOTS = [
    ("Mesh axes", lambda w, v: mi.Mesh(v), is_mesh_spec),
    ("Mesh name", lambda w, v: mi.Mesh({"x": 2}, name=v), is_identifier),
    ("Dim name", lambda w, v: mi.Dim(v, 4), is_identifier),
    ("Dim size", lambda w, v: mi.Dim("b", v), is_count),
    ("Program name", lambda w, v: mi.Program(v, w.mesh), is_identifier),
    ("Program mesh", lambda w, v: mi.Program("p", v), lambda v: v is None or is_mesh_spec(v)),
    ("Program layout", lambda w, v: mi.Program("p", w.mesh, layout=v), is_no_layout),
    ("argument name", lambda w, v: w.inside(lambda p, t: p.argument(v, [B])), lambda v: is_identifier(v) and not is_one_of(v, "x", "y", "ids", "m", "s", "r")),
    ("argument dims", lambda w, v: w.inside(lambda p, t: p.argument("z", v)), lambda v: is_empty(v)),
    ("argument dtype", lambda w, v: w.inside(lambda p, t: p.argument("z", [B], dtype=v)), lambda v: False),
    ("argument layout", lambda w, v: w.inside(lambda p, t: p.argument("z", [B], layout=v)), is_no_layout),
    ("result name", lambda w, v: w.inside(lambda p, t: p.result(t.x, name=v)), lambda v: v is None or is_one_of(v, "") or is_identifier(v)),
    ("operand", lambda w, v: w.inside(lambda p, t: mi.exp(v)), lambda v: False),
    ("other operand", lambda w, v: w.inside(lambda p, t: t.x * v), lambda v: is_real(v, -1e38, 1e38) or v is False or v is True or isinstance(v, (float, np.floating))),
    ("cast dtype", lambda w, v: w.inside(lambda p, t: mi.cast(t.x, v)), lambda v: False),
    ("constant value", lambda w, v: w.inside(lambda p, t: mi.constant(v, [D])), lambda v: is_real(v, -1e38, 1e38) or isinstance(v, (bool, float, np.floating)) or (isinstance(v, list) and len(v) == 4)),
    ("constant dims", lambda w, v: w.inside(lambda p, t: mi.constant(1.0, v)), lambda v: is_empty(v)),
    ("iota dim", lambda w, v: w.inside(lambda p, t: mi.iota([B], v)), lambda v: is_one_of(v, "b")),
    ("random seed", lambda w, v: w.inside(lambda p, t: mi.random_uniform([B], v)), lambda v: is_count(v, -(2**63))),
    ("random maxval", lambda w, v: w.inside(lambda p, t: mi.random_uniform([B], 0, maxval=v)), is_real),
    ("slice start", lambda w, v: w.inside(lambda p, t: mi.slice(t.x, "b", v, 1)), lambda v: is_count(v, 0) and v < 8),
    ("slice length", lambda w, v: w.inside(lambda p, t: mi.slice(t.x, "b", 0, v)), lambda v: is_count(v) and v <= 8),
    ("slice dim", lambda w, v: w.inside(lambda p, t: mi.slice(t.x, v, 0, 1)), lambda v: is_one_of(v, *("b", "d"))),
    ("pad low", lambda w, v: w.inside(lambda p, t: mi.pad(t.x, "b", v, 0)), lambda v: is_count(v, 0) and v < 2**40),
    ("shift offset", lambda w, v: w.inside(lambda p, t: mi.shift(t.x, "b", v)), lambda v: is_count(v, -(2**63))),
    ("shift wrap", lambda w, v: w.inside(lambda p, t: mi.shift(t.x, "b", 1, wrap=v)), lambda v: isinstance(v, bool)),
    ("rename new", lambda w, v: w.inside(lambda p, t: mi.rename(t.x, "b", v)), lambda v: is_identifier(v) and not is_one_of(v, "d")),
    ("reduce over", lambda w, v: w.inside(lambda p, t: mi.reduce_sum(t.x, over=v)), lambda v: v is None or is_empty(v) or is_one_of(v, *("b", "d"))),
    ("einsum output", lambda w, v: w.inside(lambda p, t: mi.einsum(t.x, t.y, output=v)), lambda v: v is None or is_empty(v) or is_one_of(v, *("b", "d"))),
    ("einsum reduced", lambda w, v: w.inside(lambda p, t: mi.einsum(t.x, t.y, reduced=v)), lambda v: v is None or is_empty(v) or is_one_of(v, *("b", "d"))),
    ("softmax dim", lambda w, v: w.inside(lambda p, t: mi.softmax(t.x, v)), lambda v: is_one_of(v, *("b", "d"))),
    ("dropout rate", lambda w, v: w.inside(lambda p, t: mi.dropout(t.x, v, 0)), lambda v: is_real(v, 0.0, 1.0)),
    ("layer_norm epsilon", lambda w, v: w.inside(lambda p, t: mi.layer_norm(t.x, "d", epsilon=v)), lambda v: is_real(v, 0.0)),
    ("one_hot depth", lambda w, v: w.inside(lambda p, t: mi.one_hot(t.ids, v)), lambda v: False),
    ("shard layout", lambda w, v: w.inside(lambda p, t: mi.shard(t.x, v)), lambda v: v is not None and is_no_layout(v)),
    ("all_reduce axes", lambda w, v: w.inside(lambda p, t: mi.all_reduce(t.x, v)), lambda v: is_empty(v) or is_one_of(v, *("x", "y"))),
    ("all_reduce reduction", lambda w, v: w.inside(lambda p, t: mi.all_reduce(t.x, "x", v)), lambda v: is_one_of(v, *("sum", "max", "min"))),
    ("compile program", lambda w, v: mi.compile(v), lambda v: False),
    ("compile layout", lambda w, v: mi.compile(w.prog, layout=v), is_no_layout),
    ("compile mode", lambda w, v: mi.compile(w.prog, mode=v), lambda v: is_one_of(v, *("explicit", "gspmd"))),
    ("compile mesh", lambda w, v: mi.compile(w.prog, mesh=v), lambda v: v is None or is_mesh_spec(v)),
    ("compile donate", lambda w, v: mi.compile(w.prog, donate=v), lambda v: v is None or isinstance(v, bool) or is_empty(v) or is_one_of(v, "")),
    ("executable input", lambda w, v: w.exe(**dict(G, x=v)), lambda v: False),
    ("interpret input", lambda w, v: mi.interpret(w.prog, **dict(G, ids=v)), lambda v: False),
    ("propagate layout", lambda w, v: mi.propagate(w.prog, layout=v), is_no_layout),
    ("grad wrt", lambda w, v: mi.grad(w.prog, wrt=v), lambda v: v is None or is_empty(v) or is_one_of(v, *("x", "w"))),
    ("train_step optimizer", lambda w, v: mi.train_step(w.prog, v), lambda v: False),
    ("train_step params", lambda w, v: mi.train_step(w.prog, mi.SGD(0.1), params=v), lambda v: v is None or is_one_of(v, *("x", "w")) or is_empty(v)),
    ("SGD learning_rate", lambda w, v: mi.SGD(learning_rate=v), lambda v: is_real(v, 0.0)),
    ("Adam beta2", lambda w, v: mi.Adam(beta2=v), lambda v: is_real(v, 0.0, 1.0)),
    # (a string with a dot could name an image format: skipped, so no file is written)
    ("visualize path", lambda w, v: mi.visualize(w.prog, path=v, show=False), lambda v: v is None or "." in str(v)),
    ("visualize every_value", lambda w, v: mi.visualize(w.prog, every_value=v, show=False), lambda v: isinstance(v, bool)),
    ("layout_table program", lambda w, v: mi.layout_table(v), lambda v: False),
    ("interpret function", lambda w, v: mi.interpret(w.prog, function=v, **G), lambda v: v is None),
    ("compile function", lambda w, v: mi.compile(w.prog, function=v), lambda v: v is None),
    ("value_and_grad result", lambda w, v: mi.value_and_grad(w.prog, result=v), lambda v: v is None),
    ("train_step name", lambda w, v: mi.train_step(w.prog, mi.SGD(0.1), name=v), is_identifier),
    ("Adafactor min_dim_size_to_factor", lambda w, v: mi.Adafactor(min_dim_size_to_factor=v), is_count),
    ("executable positional", lambda w, v: w.exe(G["x"], G["w"], v), lambda v: False),
    ("call argument", lambda w, v: w.inside(lambda p, t: p.call(w.prog, t.x, v, t.ids)), lambda v: False),
    ("transpose order", lambda w, v: w.inside(lambda p, t: mi.transpose(t.x, v)), lambda v: False),
    ("concat operands", lambda w, v: w.inside(lambda p, t: mi.concat(v, "b")), lambda v: False),
    ("gather dim", lambda w, v: w.inside(lambda p, t: mi.gather(t.x, t.ids, v)), lambda v: is_one_of(v, *("b", "d"))),
    ("one_hot dtype", lambda w, v: w.inside(lambda p, t: mi.one_hot(t.ids, mi.Dim("k", 3), dtype=v)), lambda v: False),
    ("iota dtype", lambda w, v: w.inside(lambda p, t: mi.iota([B], "b", dtype=v)), lambda v: False),
    ("select on_false", lambda w, v: w.inside(lambda p, t: mi.select(t.m, t.x, v)), lambda v: is_real(v, -1e38, 1e38) or isinstance(v, (bool, float, np.floating))),
    ("layer_norm scale", lambda w, v: w.inside(lambda p, t: mi.layer_norm(t.x, "d", scale=v)), lambda v: v is None),
    ("all_gather dim", lambda w, v: w.inside(lambda p, t: mi.all_gather(t.x, v, "x")), lambda v: False),
    ("reduce_scatter axes", lambda w, v: w.inside(lambda p, t: mi.reduce_scatter(t.x, "b", v)), lambda v: is_one_of(v, *("x", "y")) or is_empty(v)),
    ("collective_permute layout", lambda w, v: w.inside(lambda p, t: mi.collective_permute(t.x, v)), lambda v: v is not None and is_no_layout(v)),
    ("shift fill", lambda w, v: w.inside(lambda p, t: mi.shift(t.x, "b", 1, fill=v)), lambda v: is_real(v) or isinstance(v, (float, np.floating))),
    ("random_normal stddev", lambda w, v: w.inside(lambda p, t: mi.random_normal([B], 0, stddev=v)), is_real),
]


@pytest.mark.parametrize("slot", SLOTS, ids=[s[0] for s in SLOTS])
def test_hostile_values_in_argument_slots(world, slot):
    _, call, legitimate = slot

    @settings(max_examples=16, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(hostile_values())
    def run(value):
        if legitimate(value):
            return
        with pytest.raises(BaseException) as info:
            call(world, value)
        message = check_located(info.value, __file__, call.__code__.co_firstlineno)
        assert names_value(message, value), f"{message!r} does not name {value!r}"

    run()
