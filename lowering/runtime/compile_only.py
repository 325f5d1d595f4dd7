"""`CompileOnlyExecutable`: a program compiled for devices that cannot run it here.

The devices of a TPU topology (tpu.py) are compiled for by their own client: XLA:TPU
partitions, schedules and allocates as it would on the chips, so the executable's memory and
cost analyses and its compiled HLO are the TPU's; calling it is a MeshIRError naming the
topology."""
from __future__ import annotations

import jax
import numpy as np

from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.mesh import Mesh
from meshir.dialect.modes import EXPLICIT
from meshir.dialect.signature import FunctionSignature

from .compiled import CompiledProgram
from .pjrt import compile_without_running
from .tpu import topology_of


class CompileOnlyExecutable(CompiledProgram):
    """A MeshIR program compiled by XLA for a TPU topology's devices (`mesh.devices`), not run."""

    @reports_at_call_site
    def __init__(self, stablehlo_module, mesh: Mesh, signature: FunctionSignature, mode: str = EXPLICIT,
                 report=None, donate=None):
        devices = list(mesh.devices)
        self.topology = topology_of(devices)
        grid = np.array(devices, dtype=object).reshape(tuple(s for _, s in mesh.axes))
        jax_mesh = jax.sharding.Mesh(grid, mesh.axis_names, axis_types=(jax.sharding.AxisType.Auto,) * len(mesh.axes))
        super().__init__(stablehlo_module, mesh, signature, jax_mesh,
                         lambda computation, devices: compile_without_running(computation, devices, self.topology),
                         mode=mode, report=report, donate=donate)

    def as_text(self) -> str:
        """The compiled HLO (per device), as jax's `Compiled.as_text()`."""
        return self.compiled_hlo_text()

    @reports_at_call_site
    def __call__(self, *args, **kwargs):
        raise MeshIRError(
            f"@{self.signature.function} was compiled for TPU topology {self.topology!r} "
            f"({len(self.devices)} {self.devices[0].device_kind} devices), which cannot run here: a compile-only "
            "executable gives its memory and cost (exe.compile_report.xla_memory, .xla_cost) and its compiled "
            "HLO (exe.as_text()); to run, compile on a mesh of this machine's devices")

    def __repr__(self) -> str:
        return (f"<meshir CompileOnlyExecutable @{self.signature.function} for {self.topology!r} on {self.mesh}, "
                f"{self.mode} mode>")
