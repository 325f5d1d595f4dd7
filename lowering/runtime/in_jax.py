"""An Executable called while jax traces (inside `jax.jit`, `jax.grad`, `jax.vjp`...).

The program goes into the traced computation as the `jax.export.Exported` of jax_export.py:
jax lowers it to a call of the module's functions inside the surrounding module, so XLA
compiles both as one program (no host callback, no second executable). The call is wrapped in
a `jax.jit` whose shardings are the program's on its own mesh, which (1) gives an eager
transformation (`jax.grad` outside jit) the program's devices, and (2) makes jax reshard what
the caller laid out otherwise, or refuse devices that differ from the program's.

Differentiation never traces MeshIR's ops: a `jax.custom_vjp` whose backward pass is MeshIR's
own VJP program, `mi.grad(program, result=r, wrt=..., cotangent=True)` compiled like the
program, one per result whose cotangent is not zero and per set of perturbed float
arguments (jax's symbolic zeros say which), cached. `jax.vmap` is refused: a MeshIR program has
no batch dim to map over (a `jax.custom_batching.custom_vmap` whose rule says so).
"""
from __future__ import annotations

import os

import jax
from jax.custom_derivatives import SymbolicZero

from meshir.dialect.diagnostics import MeshIRError, MeshIRValueError
from meshir.dialect.interpreter.inputs import check_kind_and_shape, convert_input

from meshir import _jax_private as jp
from meshir.dialect import call_site

from . import jax_export


# jax's messages about a traced call (devices that differ, say) name the user's line.
jp.hide_from_jax_locations(__file__, os.path.join(os.path.dirname(__file__), "executable.py"), call_site.__file__)


class TracedCall:
    """What `Executable.__call__` runs when an argument is a jax tracer."""

    def __init__(self, exe):
        self.exe = exe
        self._function = None
        self._vjps: dict[tuple[int, tuple[int, ...]], object] = {}

    def __call__(self, values):
        sig = self.exe.signature
        checked = [self._checked(i, v) for i, v in enumerate(values)]
        if self._function is None:
            self._function = self._build()
        return sig.results(list(self._function(*checked)))

    def _checked(self, i: int, value):
        """A tracer or jax.Array of the argument's global shape and dtype (jax converts
        nothing silently here), or anything else converted as a direct call would."""
        sig = self.exe.signature
        t, what = sig.arg_types[i], f"argument '{sig.arg_names[i]}' of @{sig.function}"
        if isinstance(value, jax.Array):  # tracers included
            check_kind_and_shape(value.dtype, value.shape, t, what)
            if value.dtype != t.dtype:
                raise MeshIRValueError(f"{what}: expected element type {t.element_type} ({t.dtype.name}) inside jax "
                                       f"transformations, got {value.dtype}; convert it with .astype first")
            return value
        return convert_input(value, t, what)

    def _build(self):
        exe = self.exe
        call = _refusing_vmap(jax_export.exported(exe).call, exe.signature.function)
        count = len(exe.signature.arg_names)

        @jax.custom_vjp
        def program(*args):
            return tuple(call(*args))

        def forward(*primals):
            values = tuple(p.value for p in primals)
            return program(*values), (values, tuple(p.perturbed for p in primals))

        def backward(residuals, cotangents):
            values, perturbed = residuals
            grads = [None] * count
            for r, ct in enumerate(cotangents):
                if isinstance(ct, SymbolicZero) or not exe.signature.result_types[r].is_float:
                    continue  # a zero, or an integer result's float0 cotangent
                wrt = tuple(i for i in range(count) if perturbed[i] and exe.signature.arg_types[i].is_float)
                if not wrt:
                    continue
                contributions = self._vjp(r, wrt)(*values, ct)  # the program's arguments, then `cotangent`
                if len(wrt) == 1:
                    contributions = (contributions,)
                for i, g in zip(wrt, contributions):
                    grads[i] = g if grads[i] is None else grads[i] + g
            return tuple(grads)

        program.defvjp(forward, backward, symbolic_zeros=True)
        return jax.jit(program, in_shardings=tuple(exe.in_shardings), out_shardings=tuple(exe.out_shardings))

    def _vjp(self, result: int, wrt: tuple[int, ...]):
        """MeshIR's VJP of `result` with respect to the arguments `wrt`, compiled once."""
        key = (result, wrt)
        if key not in self._vjps:
            exe, sig = self.exe, self.exe.signature
            if exe.differentiate is None:
                raise MeshIRError(
                    f"jax cannot differentiate @{sig.function}: this executable was loaded from an export and "
                    "has no MeshIR program to differentiate; compile the program with mi.compile to differentiate it")
            self._vjps[key] = exe.differentiate(sig.result_names[result], [sig.arg_names[i] for i in wrt], exe.mesh)
        return self._vjps[key]


def _refusing_vmap(function, name: str):
    """`function`, refusing `jax.vmap` with a MeshIRError that says what to do instead."""
    @jax.custom_batching.custom_vmap
    def unbatchable(*args):
        return function(*args)

    @unbatchable.def_vmap
    def _rule(axis_size, in_batched, *args):
        batched = [i for i, b in enumerate(in_batched) if b]
        raise MeshIRError(
            f"jax.vmap over the MeshIR program @{name} (batched argument #{batched[0] if batched else '?'}, "
            f"{axis_size} entries): MeshIR programs are not vmapped; give the program a batch dim instead "
            "(a named dim, laid out over a mesh axis like any other)")

    return unbatchable

