"""The VJP programs jax's autodiff runs through a MeshIR executable (lowering/runtime/in_jax.py):
MeshIR's own gradient of the program, compiled as the program was."""
from __future__ import annotations

from meshir.api.compilation.compile import compile
from meshir.api.training.grad import grad


def vjp_compiler(program, rules, mode: str, cost_model, function: str | None):
    """`(result name, argument names, mesh) -> Executable` of `mi.grad(program, ...,
    cotangent=True)` under the program's layout rules, mode and cost model."""

    def compile_vjp(result: str, wrt: list[str], mesh):
        gradient = grad(program, wrt=wrt, result=result, function=function, cotangent=True)
        return compile(gradient, layout=rules, mesh=mesh, mode=mode, cost_model=cost_model)

    return compile_vjp
