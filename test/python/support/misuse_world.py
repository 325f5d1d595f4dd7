"""What the API misuse suite (test_api_misuse.py) misuses: a small world of meshes, programs,
executables and training steps, the hostile values it feeds the API, and the check that an
error is a MeshIRError located at the offending call and naming the offending value."""
from __future__ import annotations

import ast
import math
import re
import types

import jax
import numpy as np
from hypothesis import strategies as st

import meshir as mi

B, D, N = mi.Dim("b", 8), mi.Dim("d", 4), mi.Dim("n", 2)


class World:
    """Objects to misuse. `prog` is a finished loss program x[b,d], w[d,n], ids[b]:i32 ->
    loss (scalar f32); `x`, `w`, `ids` its (finished) argument Tensors; `exe` it compiled;
    `step_exe` a donating SGD training step of it; `two_functions` a module of two public
    functions @f and @g (a -> a, on b=8)."""

    def __init__(self):
        self.mesh = mi.Mesh({"x": 4, "y": 2})
        with mi.Program("loss", self.mesh) as prog:
            self.x, self.w = prog.argument("x", [B, D]), prog.argument("w", [D, N])
            self.ids = prog.argument("ids", [B], dtype="i32")
            y = mi.einsum(self.x, self.w, output=[B, N]) + mi.reduce_sum(mi.cast(self.ids, "f32"))
            prog.result(mi.mean(y * y), name="loss")
        self.prog = prog
        self.exe = mi.compile(prog, layout={"b": "x"})
        rng = np.random.default_rng(0)
        self.good = {"x": rng.standard_normal((8, 4)).astype(np.float32),
                     "w": rng.standard_normal((4, 2)).astype(np.float32), "ids": np.arange(8, dtype=np.int32)}
        self.step = mi.train_step(prog, mi.SGD(0.1, momentum=0.9), params=["w"])
        self.step_exe = mi.compile(self.step, layout={"b": "x"}, donate=True)
        t = "!mtf.tensor<b=8, f32>"
        self.two_functions, _ = mi.parse_module(
            f"func.func @f(%a: {t}) -> {t} {{ func.return %a : {t} }}\n"
            f"func.func @g(%a: {t}) -> {t} {{ func.return %a : {t} }}", "two.mlir")

    def inside(self, fn):
        """Call fn(prog, t) inside an open Program on the mesh; `t` has Tensors x[b,d], y[b,d]
        f32, ids[b] i32, m[b] i1, s (scalar f32) and r[b=4] (a `b` of another size)."""
        with mi.Program("t", self.mesh) as prog:
            t = types.SimpleNamespace(
                x=prog.argument("x", [B, D]), y=prog.argument("y", [B, D]), ids=prog.argument("ids", [B], dtype="i32"),
                m=prog.argument("m", [B], dtype="i1"), s=prog.argument("s", []), r=prog.argument("r", [("b", 4)]))
            return fn(prog, t)

    def deleted(self) -> jax.Array:
        """A jax.Array of x's shape whose buffer is gone."""
        a = jax.device_put(self.good["x"])
        a.delete()
        return a

    def step_inputs(self) -> dict:
        """Inputs of the donating training step, placed as it wants them: a call hands PJRT
        these buffers themselves."""
        exe = self.step_exe
        values = {**self.good, "step": np.float32(1), **mi.init_optimizer_state(self.step)}
        return {n: jax.device_put(values[n], s) for n, s in zip(exe.signature.arg_names, exe.in_shardings)}

    def donated_inputs(self) -> dict:
        """Inputs of the training step whose `w` and state were donated by a call that ran
        (handing PJRT those deleted buffers crashed the process)."""
        inputs = self.step_inputs()
        self.step_exe(**inputs)
        assert inputs["w"].is_deleted()
        return inputs


# -- the check ---------------------------------------------------------------------------------

_HEAD = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: ")


#: Expressions that call into the API: calls, and operators on Tensors (`x + 1`, `x[0]`, `x > 0`).
_CALLS = (ast.Call, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Subscript)


def call_columns(path: str, line: int) -> set[int]:
    """1-based columns where a call or an operator expression starts on `line` of `path`."""
    tree = _parsed(path)
    return {n.col_offset + 1 for n in ast.walk(tree) if isinstance(n, _CALLS) and n.lineno == line}


_TREES: dict[str, ast.AST] = {}


def _parsed(path: str) -> ast.AST:
    if path not in _TREES:
        with open(path) as f:
            _TREES[path] = ast.parse(f.read())
    return _TREES[path]


def check_located(error: BaseException, path: str, line: int, fragments=(), kind: type | None = None) -> str:
    """Assert `error` is a MeshIRError (of `kind` too, when given) whose first line starts with
    `path:line:col: error:` where col starts a call on that line, and whose message holds
    every fragment. Returns the message."""
    assert isinstance(error, mi.MeshIRError), f"raw {type(error).__name__}: {error}"
    if kind is not None:
        assert isinstance(error, kind), f"{type(error).__name__} is not a {kind.__name__}: {error}"
    message = str(error)
    head = _HEAD.match(message)
    assert head, f"not located: {message!r}"
    assert (head["file"], int(head["line"])) == (path, line), f"located at {head[0]!r}, not {path}:{line}: {message!r}"
    assert int(head["col"]) in call_columns(path, line), f"column {head['col']} starts no call on line {line}"
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


def names_value(message: str, value) -> bool:
    """Whether the message names `value`: its repr, its text or (for objects with unstable
    reprs) its type; for a non-empty container, naming one of its items will do."""
    forms = {repr(value)[:30], str(value)[:30], type(value).__name__}
    if isinstance(value, float) and math.isnan(value):
        forms.add("nan")
    if isinstance(value, np.ndarray):  # an array is named by its shape or dtype too
        forms |= {str(value.shape), value.dtype.name}
    if any(f and f in message for f in forms):
        return True
    if isinstance(value, (list, tuple, dict, set, range, np.ndarray)):
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)[:8]
        return any(names_value(message, item) for item in items)
    return False


# -- hostile values ----------------------------------------------------------------------------

ODD_TEXT = ["", " ", "x=4,y", "f8", "float128", "💥", "a b", "\x00", "batch\n", "../x", "1x", "é", "None"]
ODD_OBJECTS = [object(), b"bytes", np.array([1.0, 2.0]), np.float32("nan"), np.int64(-1), np.dtype("complex64"),
               float, print, 1j, range(3), {1, 2}, Ellipsis, types.SimpleNamespace(name=3)]


def hostile_values():
    """Values no API slot should take silently or crash on: None, bools, zero, negatives,
    huge and non-finite numbers, odd text, containers of the wrong things, arbitrary objects."""
    return st.one_of(
        st.none(), st.booleans(), st.integers(-3, 0), st.sampled_from([2**31, 2**63, 2**70, -(2**70), 10**400]),
        st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(ODD_TEXT), st.text(max_size=4),
        st.lists(st.integers(-2, 2), max_size=3), st.dictionaries(st.sampled_from(ODD_TEXT), st.integers(-1, 3), max_size=2),
        st.tuples(st.sampled_from(ODD_TEXT), st.floats()), st.sampled_from(ODD_OBJECTS),
    )


def is_empty(v) -> bool:
    """An empty list or tuple (no dims, no axes, nothing to donate)."""
    return isinstance(v, (list, tuple)) and not v


def is_one_of(v, *options: str) -> bool:
    """`v` is one of these strings (never compares arrays elementwise)."""
    return isinstance(v, str) and v in options


def is_identifier(v) -> bool:
    return isinstance(v, str) and v.isascii() and v.isidentifier()


def is_count(v, minimum: int = 1) -> bool:
    """A Python/NumPy integer (not a bool) of at least `minimum` that fits int64."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and minimum <= v < 2**63


def is_mesh_spec(v) -> bool:
    """A well-formed mesh description: {axis: size}, (axis, size) pairs or "" (no axes)."""
    if isinstance(v, dict):
        v = list(v.items())
    return (isinstance(v, str) and not v.strip()) or (isinstance(v, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 and is_identifier(p[0]) and is_count(p[1]) for p in v))


def is_no_layout(v) -> bool:
    """None, {} or blank rules text: no layout at all."""
    return v is None or (isinstance(v, dict) and not v) or (isinstance(v, str) and not v.strip())


def is_real(v, low=-math.inf, high=math.inf) -> bool:
    """A real number (not a bool) with a finite float value in [low, high)."""
    if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, (bool, np.bool_)):
        return False
    try:
        return math.isfinite(float(v)) and low <= v < high
    except OverflowError:  # an int beyond any float
        return False
