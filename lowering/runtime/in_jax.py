"""An Executable called while jax traces (inside `jax.jit`, `jax.grad`, `jax.vjp`...).

The program goes into the traced computation as the `jax.export.Exported` of jax_export.py:
jax lowers it to a call of the module's functions inside the surrounding module, so XLA
compiles both as one program (no host callback, no second executable). The Exported reshards
what the caller laid out otherwise into the program's layouts. The call is wrapped in a
`jax.jit` whose out_shardings are the program's on its own mesh, which gives an eager
transformation (`jax.grad` outside jit) the program's devices and refuses arrays on others.

Differentiation never traces MeshIR's ops: a `jax.custom_vjp` whose backward pass is MeshIR's
own VJP program, `mi.grad(program, result=r, wrt=..., cotangent=True)` compiled like the
program, one per result whose cotangent is not zero and per set of perturbed float
arguments (jax's symbolic zeros say which), cached. Each cotangent carries its primal's
sharding type (on a jax mesh of Explicit axes, `f32[16,64@y]`), as jax requires; a loaded
export has no VJP program, refused in the user's call. `jax.vmap` is refused: a MeshIR program has
no batch dim to map over (a `jax.custom_batching.custom_vmap` whose rule says so).
"""
from __future__ import annotations

import os

import jax
from jax.custom_derivatives import SymbolicZero
from jax.sharding import AxisType, NamedSharding

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
        exe, sig = self.exe, self.exe.signature
        call = _refusing_vmap(jax_export.exported(exe).call, sig.function)
        count = len(sig.arg_names)

        @jax.custom_vjp
        def program(*args):
            return tuple(call(*args))

        def forward(*primals):
            values = tuple(p.value for p in primals)
            perturbed = tuple(p.perturbed and sig.arg_types[i].is_float for i, p in enumerate(primals))
            if exe.differentiate is None and any(perturbed):
                raise _not_differentiable(sig, perturbed)  # here, in the user's call, not in the backward pass
            return program(*values), (values, perturbed)

        def backward(residuals, cotangents):
            values, perturbed = residuals
            wrt = tuple(i for i in range(count) if perturbed[i])
            grads = [None] * count
            for r, ct in enumerate(cotangents):
                if isinstance(ct, SymbolicZero) or not sig.result_types[r].is_float or not wrt:
                    continue  # a zero, or an integer result's float0 cotangent
                contributions = self._vjp(r, wrt)(*values, ct)  # the program's arguments, then `cotangent`
                if len(wrt) == 1:
                    contributions = (contributions,)
                for i, g in zip(wrt, contributions):
                    grads[i] = g if grads[i] is None else grads[i] + g
            return tuple(None if g is None else _typed_like(g, v) for g, v in zip(grads, values))

        program.defvjp(forward, backward, symbolic_zeros=True)
        # No in_shardings: a jit's transpose types its cotangents by them, on MeshIR's Auto
        # mesh, where a caller's Explicit axes need the primals' own types (the custom VJP's
        # `_typed_like` gives those). The Exported reshards its arguments itself.
        return jax.jit(program, out_shardings=tuple(exe.out_shardings))

    def _vjp(self, result: int, wrt: tuple[int, ...]):
        """MeshIR's VJP of `result` with respect to the arguments `wrt`, compiled once."""
        key = (result, wrt)
        if key not in self._vjps:
            sig = self.exe.signature
            self._vjps[key] = self.exe.differentiate(sig.result_names[result], [sig.arg_names[i] for i in wrt],
                                                     self.exe.mesh)
        return self._vjps[key]


def _not_differentiable(sig, perturbed) -> MeshIRError:
    names = ", ".join(f"'{sig.arg_names[i]}'" for i, p in enumerate(perturbed) if p)
    return MeshIRError(
        f"jax cannot differentiate @{sig.function} with respect to {names}: this executable was loaded from an "
        "export and has no MeshIR program to differentiate; compile the program with mi.compile to differentiate it")


def _typed_like(cotangent, primal):
    """`cotangent` with `primal`'s sharding type, as jax requires of a custom VJP: on a mesh
    of Explicit axes the type names the split (`f32[16,64@y]`), and MeshIR's VJP program,
    whose results are typed on its own Auto-axes mesh, does not."""
    want = jax.typeof(primal).sharding
    if not any(t == AxisType.Explicit for t in want.mesh.axis_types) or jax.typeof(cotangent).sharding == want:
        return cotangent  # jax compares sharding types only on a mesh with an Explicit axis
    if not isinstance(primal, jax.core.Tracer):  # an eager reshard needs the devices: the concrete mesh
        want = NamedSharding(primal.sharding.mesh, want.spec)
    return jax.sharding.reshard(cotangent, want)


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

