"""`mi.jit`: a Python function on named arrays, traced into an `mtf` program on its first
call per signature, compiled, cached; TF Eager's staged half, in jax.jit's words.

    @mi.jit(static_argnames=("rate",))
    def step(params, x, rate):
        ...
    out = step(params, x, 0.1)           # traces, compiles, runs; mi.Arrays out
    step.lower(params, x, 0.1).module    # the mtf program; .stablehlo_text(): what runs

Arguments are `mi.Array`s (any pytree of them), arrays whose dims `dims=` gives, and static
values (`static_argnames`, and any other hashable leaf: Python numbers become constants of
the program). Each array is an argument named by its path (`params['w1']` -> `params_w1`).
The signature a compiled program is cached by: mesh and devices, each array's type and
layout, the static values, and the layout rules (`layout=`, else `mi.default_layout`'s). A
traced function called while another is being traced runs inline (one program).
"""
from __future__ import annotations

import functools
import inspect

from meshir.dialect import MeshIRTypeError, MeshIRValueError
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.signature import WrapsProgram

from meshir.api import _checks as checks
from meshir.api.programs._locations import located_error
from meshir.api.eager.array import Array, array
from meshir.api.eager.context import ambient
from meshir.api.eager.staging import LRU, StaticValue, common_mesh, flatten, run_on_arrays, stage
from meshir.api.programs.program import active_program
from meshir.api.compilation.compile import compile


class Traced:
    """A function traced by `mi.jit`: call it like the function; `.lower(...)` stages it."""

    def __init__(self, fn, mesh, layout, static_argnames, donate_argnames, dims):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._signature = inspect.signature(fn)
        params = self._signature.parameters
        for what, names in (("static_argnames", static_argnames), ("donate_argnames", donate_argnames),
                            ("dims", tuple(dims))):
            for n in names:
                if n not in params:
                    raise located_error(f"mi.jit({fn.__name__}): {what} names '{n}', which is not a parameter "
                                        f"(parameters: {', '.join(params)})", MeshIRValueError)
        self.mesh = mesh
        self.layout = layout
        self.static_argnames = tuple(static_argnames)
        self.donate_argnames = tuple(donate_argnames)
        self.dims = dict(dims)
        self._cache = LRU()

    def traced_gradient(self, transform) -> "TracedGradient":
        """`mi.grad` of this function: `transform` (program -> GradientProgram) applied to its
        program for each signature it is called with (training/grad.py calls this)."""
        return TracedGradient(self, transform)

    @reports_at_call_site
    def __call__(self, *args, **kwargs):
        if active_program() is not None:  # inside another trace: one program
            return self.fn(*args, **kwargs)
        staged, flat = self._staged(args, kwargs)
        return staged.run(list(flat.arrays))

    @reports_at_call_site
    def lower(self, *args, **kwargs) -> "Lowered":
        """The program for these arguments' signature, compiled (from the cache when it is there)."""
        staged, _ = self._staged(args, kwargs)
        return Lowered(staged)

    def _staged(self, args, kwargs):
        context = ambient()
        mesh = self.mesh
        given = next((a.mesh for a in (*args, *kwargs.values()) if isinstance(a, Array)), None)
        arguments = self._bound(args, kwargs, mesh or given or context.mesh)
        flat = flatten(tuple(arguments.values()), names_from=tuple(arguments))
        if self.mesh is not None:
            for name, a in zip(flat.names, flat.arrays):
                if a.mesh != self.mesh:
                    raise located_error(f"{self.__name__} was traced for mesh {self.mesh} (mi.jit(mesh=...)), but "
                                        f"argument '{name}' is on {a.mesh}", MeshIRValueError)
        mesh = common_mesh(flat.arrays, mesh or context.mesh, f"{self.__name__}")
        rules = self.layout if self.layout is not None else context.rules
        key = flat.key(mesh, rules.rules)
        staged = self._cache.get(key)
        if staged is None:
            donate = [n for n, root in zip(flat.names, flat.roots) if root in self.donate_argnames]
            staged = stage(self._call, flat, mesh, self.__name__, rules, donate)
            self._cache.put(key, staged)
        return staged, flat

    def _bound(self, args, kwargs, mesh) -> dict:
        """The arguments by parameter name: static ones kept whole, arrays given `dims=` made
        mi.Arrays."""
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise located_error(f"{self.__name__}: {e}", MeshIRTypeError) from None
        bound.apply_defaults()
        out = {}
        for name, value in bound.arguments.items():
            if name in self.static_argnames:
                try:
                    hash(value)
                except TypeError:
                    raise located_error(f"{self.__name__}: static argument '{name}' is {type(value).__name__}, which "
                                        "is not hashable (a static argument is part of the signature the compiled "
                                        "program is cached by: pass a tuple, or a frozen dataclass)",
                                        MeshIRTypeError) from None
                value = StaticValue(value)
            elif name in self.dims and not isinstance(value, Array):
                value = array(value, self.dims[name], mesh=mesh)
            out[name] = value
        return out

    def _call(self, values: tuple):
        """The function on the rebuilt arguments (Tensors for arrays), in parameter order."""
        names = [n for n in self._signature.parameters][:len(values)]
        bound = inspect.BoundArguments(self._signature, dict(zip(names, values)))
        return self.fn(*bound.args, **bound.kwargs)

    def cache_info(self):
        """`(hits, misses, maxsize, currsize)` as `functools.lru_cache`'s: calls (and `lower`s)
        that found their signature compiled, those that traced and compiled it, the cache's
        bound, and the signatures it holds now. A call inside another trace runs inline and
        counts in neither."""
        return self._cache.info()

    def cache_clear(self) -> None:
        """Forgets every compiled signature (the next call traces again) and zeroes the counts."""
        self._cache.clear()

    def __repr__(self) -> str:
        return f"<mi.jit of {self.__name__}, {len(self._cache)} compiled signature(s)>"


class Lowered(WrapsProgram):
    """One signature of a traced function: its `program` (`module`: the mtf IR), and the
    `executable` that runs it (`stablehlo_text()`, `report()`). `mi.train_step`,
    `mi.value_and_grad` and `mi.compile` take it as a program."""

    def __init__(self, staged):
        self.program = staged.program
        self.executable = staged.executable

    @property
    def mesh(self):
        return self.executable.mesh

    def as_text(self) -> str:
        """The mtf program."""
        return str(self.program.module)

    def stablehlo_text(self) -> str:
        return self.executable.stablehlo_text()


@reports_at_call_site
def jit(fn=None, *, mesh=None, layout=None, static_argnames=(), donate_argnames=(), dims=None):
    """Trace `fn` into an mtf program on its first call per signature, compile, cache (see
    the module docstring). `mesh`, `layout` (rules: a dict, Mesh-TF text or mi.LayoutRules)
    default to the enclosing `mi.default_layout`'s at each call; `dims`: `{parameter: dims}`
    for parameters passed as plain arrays. As a decorator with or without arguments."""
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    if isinstance(donate_argnames, str):
        donate_argnames = (donate_argnames,)
    mesh = checks.mesh(mesh, "mi.jit mesh")
    rules = checks.layout_rules(layout, "mi.jit layout") if layout is not None else None

    def wrap(f):
        if not callable(f):
            raise located_error(f"mi.jit takes a function, got {type(f).__name__} {f!r:.60}", MeshIRTypeError)
        return Traced(f, mesh, rules, static_argnames, donate_argnames, dims or {})

    return wrap if fn is None else wrap(fn)


class TracedGradient:
    """`mi.grad` / `mi.value_and_grad` of a traced function: called like it, it lowers the
    function for the arguments' signature, differentiates that program (`mtf-autodiff`),
    compiles the gradient like the function (same mesh and rules) and runs it; the results
    are the gradient program's (`value` first for value_and_grad, then `grad_<argument>`
    for each `wrt`, named by the arguments' names), as mi.Arrays in a named tuple."""

    def __init__(self, traced: Traced, transform):
        functools.update_wrapper(self, traced.fn)
        self.traced = traced
        self._transform = transform  # program -> GradientProgram
        self._cache = LRU()

    @reports_at_call_site
    def __call__(self, *args, **kwargs):
        staged, flat = self.traced._staged(args, kwargs)
        entry = self._cache.get(id(staged))
        if entry is None:  # the staged program is kept in the entry, so its id stays unique
            rules = staged.executable.compile_report.rules
            entry = (compile(self._transform(staged.program), layout=rules or None, mesh=staged.mesh), staged)
            self._cache.put(id(staged), entry)
        exe = entry[0]
        return exe.signature.results(run_on_arrays(exe, flat.arrays, staged.mesh))

    def cache_info(self):
        """`(hits, misses, maxsize, currsize)` of the compiled gradient programs, one per
        signature of the traced function (whose own `cache_info()` counts its lowering)."""
        return self._cache.info()

    def cache_clear(self) -> None:
        self._cache.clear()
