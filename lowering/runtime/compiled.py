"""`CompiledProgram`: what every compiled MeshIR program has, whether it runs or not.

A StableHLO module checked against its signature, the mesh's devices and shardings, the
compiled executable (XLA's per-device HLO, memory and cost analyses) and the compile report;
`Executable` (executable.py) adds calls, `CompileOnlyExecutable` (compile_only.py) refuses
them."""
from __future__ import annotations

import jax

from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.mesh import Mesh
from meshir.dialect.modes import EXPLICIT, check_mode
from meshir.dialect.signature import FunctionSignature, NamedBySignature

from .devices import SharedShardings, shard_shape
from .donation import donation_aliases
from .entry import prepare_entry
from .hlo_collectives import parse_collectives
from .pjrt import check_compiled_shardings
from .runtime_report import runtime_report


class CompiledProgram(NamedBySignature):
    """A MeshIR program compiled for the devices of `jax_mesh` (`compile(computation,
    devices)` makes `self._compiled` from the checked module's bytecode)."""

    def __init__(self, stablehlo_module, mesh: Mesh, signature: FunctionSignature, jax_mesh: jax.sharding.Mesh,
                 compile, mode: str = EXPLICIT, report=None, donate=None):
        check_mode(mode)
        self.mesh, self.signature, self.mode, self.compile_report = mesh, signature, mode, report
        self.arg_shard_shapes = tuple(shard_shape(mesh, t) for t in signature.arg_types)
        self.result_shard_shapes = tuple(shard_shape(mesh, t) for t in signature.result_types)
        self.jax_mesh = jax_mesh
        self.devices = list(jax_mesh.devices.flat)
        shardings = SharedShardings(jax_mesh)
        self.in_shardings = signature.by_argument_name(map(shardings.of, signature.arg_types))
        self.out_shardings = signature.by_result_name(map(shardings.of, signature.result_types))
        aliases = donation_aliases(signature, donate)
        self.donated = {signature.arg_names[a]: signature.result_names[r] for a, r in aliases.items()}
        self._donated_indices = sorted(aliases)
        self._entry = prepare_entry(stablehlo_module, signature, mesh, aliases)
        self._compiled = compile(self._entry.computation, self.devices)
        check_compiled_shardings(self._compiled, self.devices, signature, self.in_shardings, self.out_shardings)
        #: `(result name, argument names, mesh) -> Executable` of MeshIR's VJP program, which jax's
        #: autodiff of a traced call runs (set by mi.compile; None: not differentiable).
        self.differentiate = None

    def stablehlo_text(self) -> str:
        """The StableHLO module this executable runs, entry renamed `@main`. (For a one-device
        mesh PJRT gets it with `sdy.manual_computation` inlined, see single_device.py.)"""
        return self._entry.text

    def compiled_hlo_text(self) -> str:
        """The HLO after XLA's partitioning and optimisation (per device)."""
        return "\n".join(m.to_string() for m in self._compiled.hlo_modules())

    def compiled_collectives(self) -> list:
        """The collectives of the compiled HLO (hlo_collectives.py: kind, groups, bytes per
        device in MeshIR's ring convention), beside the compile report's own `collectives`."""
        return parse_collectives(self.compiled_hlo_text())

    def cost_analysis(self) -> dict | None:
        """XLA's cost analysis (flops, bytes accessed, ...) per device; None if the backend has none."""
        return _unless_unimplemented(self._compiled.cost_analysis)

    def memory_analysis(self):
        """XLA's CompiledMemoryStats (argument, output, temp bytes per device), or None."""
        return _unless_unimplemented(self._compiled.get_compiled_memory_stats)

    def report(self) -> str:
        """Mesh, devices, arguments and results with layouts and shard shapes, XLA's memory
        figures, then the compile pipeline's report when one was given."""
        return runtime_report(self)

    @reports_at_call_site
    def explain(self, show: bool = True):
        """Why each collective exists and the cheapest rule change that would remove it: the
        compile report's `explain()` (meshir/api/compilation/explain.py); prints the table unless
        `show=False`."""
        if self.compile_report is None:
            raise MeshIRError("explain: this Executable was not made by mi.compile and has no compile report")
        return self.compile_report.explain(show)


def _unless_unimplemented(query):
    try:
        return query()
    except jax.errors.JaxRuntimeError as e:
        if "UNIMPLEMENTED" in str(e):
            return None
        raise
