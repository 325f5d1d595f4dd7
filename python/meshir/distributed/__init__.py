"""One MeshIR program over several processes (hosts), on jax.distributed (docs/multi-host.md).

    import meshir as mi
    mi.distributed.initialize()          # first: coordinator, processes, id from the environment
    exe = mi.compile(prog, layout=...)   # every process compiles the same program (checked)
    out = exe(tokens=mi.process_local(my_rows, along="batch"), **state)

`launch_local` starts such a program as several processes on this machine.
"""
from meshir.lowering.runtime import progress  # noqa: F401  (the call count the watchdog reads, kept by the runtime)

from .launch import launch_local, report_failures
from .setup import Setup, initialize
from .topology import describe, local_slices, processes_along_axes

__all__ = ["Setup", "describe", "initialize", "launch_local", "local_slices", "processes_along_axes", "report_failures"]
