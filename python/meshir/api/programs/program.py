"""`Program`: build one `mtf` function (and its mesh) from Python.

    with mi.Program("ffn", mesh, layout={"batch": "x"}) as prog:
        x = prog.argument("x", [batch, d_model])
        prog.result(mi.relu(x), name="y")
    print(prog.module)
"""
from __future__ import annotations

import threading

from meshir._jax_private import func, ir
from meshir.dialect.attribute_names import LAYOUT_RULES, MESH
from meshir.dialect import Mesh, MeshIRTypeError, MeshIRValueError, TensorType, check_module, get_context
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.mesh import declare_mesh
from meshir.dialect.signature import NAME_ATTR, entry_function, signature
from meshir.dialect.tensor_type import TypeContentError
from meshir.transforms import Pipeline
from meshir.transforms.passes.inline_calls import InlineCallsPass

from meshir.api import _checks as checks
from meshir.api.programs import precision as policies
from meshir.api.programs._bodies import local_value
from meshir.api.programs.dims import as_dims
from meshir.api.programs._locations import call_site_location, located_error
from meshir.api.programs.tensor import Tensor

_current = threading.local()
_MISSING = object()  # an argument of Program.call not given (None is a value, and refused as one)


def current_program() -> "Program":
    """The innermost Program whose `with` block is active."""
    stack = getattr(_current, "stack", [])
    if not stack:
        raise located_error("no active Program: build ops inside `with Program(...):`")
    return stack[-1]


def active_program() -> "Program | None":
    """The innermost Program whose `with` block is active, or None (eager ops run then)."""
    stack = getattr(_current, "stack", None)
    return stack[-1] if stack else None


def program_of(operands, fallback=None) -> "Program":
    """The Program the operands belong to (all must share one): else `fallback`, else the
    innermost active one."""
    programs = {id(t.program): t.program for t in operands if isinstance(t, Tensor)}
    if len(programs) > 1:
        names = ", ".join(f"{t!r} of program '{t.program.name}'" for t in operands if isinstance(t, Tensor))
        raise located_error(f"operands come from different Programs: {names}", MeshIRValueError)
    if programs:
        return next(iter(programs.values()))
    if fallback is not None:
        return fallback
    return current_program()


def layout_rules_attr(layout: dict, mesh: Mesh | None, strict: bool = False) -> ir.DictAttr:
    """`{dim: axes}` as the `mtf.layout_rules` attribute, checking the axes exist (axes the
    mesh lacks are dropped with a warning unless `strict`: `checks.rules`)."""
    entries = {}
    for dim, axes in checks.rules(layout, [mesh], strict=strict).items():
        entries[dim] = ir.ArrayAttr.get([ir.StringAttr.get(a) for a in axes])
    return ir.DictAttr.get(entries)


class Program:
    """One function of named-dimension tensors on a mesh, built op by op from Python."""

    def __init__(self, name: str = "main", mesh: Mesh | dict | None = None, layout: dict | None = None,
                 precision=None, strict: bool = False):
        """`precision`: an mi.Precision, the program's default mixed-precision policy (used by
        mi.compile, mi.value_and_grad and mi.train_step unless they are given another).
        `layout`: Mesh-TensorFlow layout rules; a rule's mesh axes the mesh lacks are ignored
        with one mi.MeshIRWarning (as Mesh-TensorFlow did), or with `strict=True` an error."""
        self.name = checks.identifier(name, "program name")
        self.precision = policies.check(precision, "precision of mi.Program")
        self.mesh = checks.mesh(mesh, "Program mesh")
        self.context = get_context()
        self._arg_names: list[str] = []
        self._result_names: list[str] = []
        self._results: list[Tensor] = []
        self._callees: list[str] = []
        self.calls_inlined = False  # True once finish() inlined the calls (their results are gone)
        self._bodies: list = []  # loop bodies being traced, outermost first (bodies.py)
        self._finished = False
        with self.context, call_site_location():
            self._module = ir.Module.create()
            with ir.InsertionPoint(self._module.body):
                if self.mesh is not None:
                    declare_mesh(self.mesh)
                self.function = func.FuncOp(name, ([], []))
            self.block = self.function.add_entry_block()
            if self.mesh is not None:
                self.function.attributes[MESH] = ir.FlatSymbolRefAttr.get(self.mesh.name)
            rules = layout_rules_attr(layout, self.mesh, strict)
            if len(rules):
                self.function.attributes[LAYOUT_RULES] = rules
            policies.set_default(self._module, self.precision)

    # -- context manager -------------------------------------------------------------------
    def __enter__(self) -> "Program":
        self._check_open()
        _current.__dict__.setdefault("stack", []).append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        _current.stack.pop()
        if exc_type is None and not self._finished:
            self.finish()
        return False

    def _check_open(self):
        if self._finished:
            raise located_error(f"program '{self.name}' is finished; build a new Program to add ops")

    # -- signature -------------------------------------------------------------------------
    def argument(self, name: str, dims, dtype: str = "f32", layout: dict | None = None) -> Tensor:
        """A new argument: `name`, its dims (Dims or (name, size) pairs), element type and an
        optional layout `{dim: axes}` stated by the user (highest priority after mtf.shard)."""
        self._check_open()
        checks.identifier(name, "argument name")
        if name in self._arg_names:
            raise located_error(f"argument '{name}' is declared twice in program '{self.name}'")
        dims = as_dims(dims, what=f"argument '{name}'")
        dtype = checks.element_type(dtype, f"argument '{name}'")
        layout = checks.layout(layout, f"layout of argument '{name}'", allow_free=True)
        try:
            t = TensorType.make([(d.name, d.size) for d in dims], dtype)
        except TypeContentError as e:
            raise located_error(f"argument '{name}': {e}", MeshIRValueError) from None
        t = self._checked_type(t, layout, f"argument '{name}'")
        with self.context:
            value = self.block.add_argument(t.to_mlir(), call_site_location())
        self._arg_names.append(name)
        return Tensor(self, value)

    def _checked_type(self, t: TensorType, layout: dict | None, what: str) -> TensorType:
        if layout:
            for dim in layout:
                if not t.has(dim):
                    raise located_error(f"layout of {what} names '{dim}', which is not one of its dims {list(t.names)}")
            try:
                t = t.with_layout(layout)
            except ValueError as e:
                raise located_error(f"layout of {what}: {e}") from None
            if self.mesh is None:
                raise located_error(f"{what} has a layout but the program has no mesh")
            for axis in t.used_axes_list():
                if axis not in self.mesh.shape:
                    raise located_error(f"layout of {what} names unknown mesh axis '{axis}' (mesh {self.mesh})")
            try:
                t.local_shape(self.mesh.shape)
            except ValueError as e:
                raise located_error(f"layout of {what}: {e} on mesh {self.mesh}") from None
        return t

    def result(self, value: Tensor, name: str | None = None) -> None:
        """Mark `value` as a result of the program (named `name`, default `result<i>`)."""
        self._check_open()
        if not isinstance(value, Tensor) or value.program is not self:
            raise located_error(f"result of program '{self.name}' must be a value built in it, got {value!r}")
        name = checks.optional_identifier(name, "result name") or f"result{len(self._results)}"
        if name in self._result_names:
            raise located_error(f"result '{name}' is declared twice in program '{self.name}'")
        self._results.append(value)
        self._result_names.append(name)

    @reports_at_call_site
    def call(self, callee, *args, **kwargs) -> tuple[Tensor, ...]:
        """Call another program's entry function (a Program, a gradient program or a module)
        on Tensors of this one, by position or argument name; returns its results. The
        callee is copied into this module and inlined when the program finishes (the calls
        of mi.remat and mi.custom_gradient stay, for mtf-autodiff)."""
        self._check_open()
        source = checks.module_of(callee, "the program to call")
        fn = entry_function(source, None if hasattr(callee, "operation") else getattr(callee, "name", None))
        sig = signature(fn)
        bound = list(args) + [_MISSING] * (len(sig.arg_names) - len(args))
        for name, value in kwargs.items():
            if name not in sig.arg_names:
                raise located_error(f"@{sig.function} has no argument '{name}' (arguments: {', '.join(sig.arg_names)})",
                                    MeshIRTypeError)
            if bound[sig.arg_names.index(name)] is not _MISSING:
                raise located_error(f"call of @{sig.function}: argument '{name}' is given twice (by position and by name)",
                                    MeshIRTypeError)
            bound[sig.arg_names.index(name)] = value
        missing = [n for n, v in zip(sig.arg_names, bound) if v is _MISSING]
        if missing or len(args) > len(sig.arg_names):
            raise located_error(f"call of @{sig.function}: missing arguments {missing}" if missing
                                else f"call of @{sig.function}: {len(args)} arguments for {len(sig.arg_names)}")
        for name, value, t in zip(sig.arg_names, bound, sig.arg_types):
            if not isinstance(value, Tensor) or value.program is not self or value.type.without_layout() != t.without_layout():
                raise located_error(f"call of @{sig.function}: argument '{name}' must be a {t.without_layout()} "
                                    f"of this program, got {value!r}")
        with self.context, call_site_location():
            symbol = f"{sig.function}_{len(self._callees)}"
            copy = fn.operation.clone(ip=ir.InsertionPoint(self.function))
            copy.attributes["sym_name"] = ir.StringAttr.get(symbol)
            copy.attributes["sym_visibility"] = ir.StringAttr.get("private")
            call = func.CallOp([t.to_mlir() for t in sig.result_types], ir.FlatSymbolRefAttr.get(symbol),
                               [local_value(self, v.value) for v in bound], ip=ir.InsertionPoint(self.block))
        self._callees.append(symbol)
        return tuple(Tensor(self, r, from_call=True) for r in call.results)

    def finish(self) -> None:
        """Add the return, set the signature and verify. Called by the `with` block's end."""
        self._check_open()
        with self.context, ir.Location.unknown():
            func.ReturnOp([r.value for r in self._results], ip=ir.InsertionPoint(self.block))
            arg_types = [a.type for a in self.block.arguments]
            self.function.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(arg_types, [r.value.type for r in self._results])
            )
            self.function.attributes["arg_attrs"] = _name_attrs(self._arg_names)
            self.function.attributes["res_attrs"] = _name_attrs(self._result_names)
            if self._callees:
                self.calls_inlined = True  # before: the call results die in inline_calls
                self._finished = True
                # Through the pass manager, which verifies the inlined module (mi.train_step).
                Pipeline([InlineCallsPass(keep_marked=True)]).apply(self._module.operation, verify_input=False)
                return
        self._finished = True
        check_module(self._module)

    # -- views -----------------------------------------------------------------------------
    @property
    def module(self) -> ir.Module:
        """The MLIR module (finishes the program first if needed)."""
        if not self._finished:
            self.finish()
        return self._module

    @property
    def arguments(self) -> list[Tensor]:
        return [Tensor(self, v) for v in self.block.arguments]

    @property
    def argument_names(self) -> tuple[str, ...]:
        return tuple(self._arg_names)

    @property
    def result_names(self) -> tuple[str, ...]:
        return tuple(self._result_names)

    def __str__(self) -> str:
        return str(self.module)

    def __repr__(self) -> str:
        return f"Program({self.name!r}, args={self._arg_names}, results={self._result_names})"


def _name_attrs(names: list[str]) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.DictAttr.get({NAME_ATTR: ir.StringAttr.get(n)}) for n in names])
