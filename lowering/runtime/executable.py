"""`Executable`: a StableHLO module compiled once by PJRT for a mesh, called like a function.

Construction checks the module against the signature, compiles for the mesh's devices and
checks the compiled layouts; calls bind and place the arguments (fast_path.py for a
structure seen before, arguments.py's full checks otherwise), run, and hand each result's
per-device buffers to jax's result handlers, which make one jax.Array with the result's
NamedSharding. A call whose arguments needed nothing but moving to the devices is handed to
jax.jit's C++ dispatch, which repeats it without Python for arguments of the same signature.
Everything that could make devices wait on each other (a missing argument, a buffer on the
wrong device, a donated buffer passed twice) is settled before PJRT runs anything. docs/runtime.md states the contract.
"""
from __future__ import annotations

import jax

from meshir import _jax_private as jp
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.interpreter.inputs import bind_arguments
from meshir.dialect.mesh import Mesh
from meshir.dialect.modes import EXPLICIT
from meshir.dialect.signature import FunctionSignature

from . import progress
from .arguments import place_arguments, wide_types, x64_scope
from .compiled import CompiledProgram
from .devices import SharedAvals, jax_mesh
from .donation import check_donated_buffers
from .fast_path import FastPath, HostArrayNotExact, shard_host_array
from .in_jax import TracedCall
from .pjrt import compile_for_devices


class Executable(CompiledProgram):
    """A compiled MeshIR program.

    `stablehlo_module`: text, `ir.Module` or module op, entry `@main` (or the signature's
    function, or the only function); `mode`: "explicit" (per-device StableHLO in
    `sdy.manual_computation`) or "gspmd" (global StableHLO partitioned by XLA's Shardy);
    `report`: the compile pipeline's report, shown by `report()`; `platform`: a jax backend
    name (default: jax's default backend); `donate`: arguments whose buffers the results may
    reuse — argument names, or True for every argument with a result of the same name, type
    and layout (a training step's parameters and optimizer state). A call consumes the
    donated arguments: a jax.Array passed for one is deleted afterwards (as with jax.jit's
    `donate_argnums`). `donated` maps each donated argument name to its result's name.
    """

    @reports_at_call_site
    def __init__(self, stablehlo_module, mesh: Mesh, signature: FunctionSignature, mode: str = EXPLICIT,
                 report=None, platform: str | None = None, donate=None):
        super().__init__(stablehlo_module, mesh, signature, jax_mesh(mesh, platform), compile_for_devices,
                         mode=mode, report=report, donate=donate)
        self._loaded = self._compiled
        # PJRT refuses a deleted or twice-donated buffer itself on one CPU device (tried on jax
        # 0.10.2 to 0.12), so the fast path leaves those checks to it; elsewhere they stay.
        self._pjrt_refuses_bad_buffers = len(self.devices) == 1 and self.devices[0].platform == "cpu"
        self._wide = wide_types((*signature.arg_types, *signature.result_types))
        with x64_scope(self._wide):
            avals = SharedAvals()
            self._result_handlers = jp.result_handlers(
                list(map(avals.of, signature.result_types, self.out_shardings)), self.out_shardings)
            self._fast = FastPath(signature, self.in_shardings,
                                  list(map(avals.of, signature.arg_types, self.in_shardings)))
        self._cpp = jp.cpp_dispatcher(signature.function, self._cache_miss, shard_host_array)
        self._traced = TracedCall(self)

    @reports_at_call_site
    def __call__(self, *args, **kwargs):
        """Run on arguments by position or name (NumPy, Python numbers/lists, jax.Arrays,
        `mi.process_local` parts).

        Returns a jax.Array with the result's NamedSharding, or a named tuple of them for
        several results (`out.loss`; positional use unchanged).
        The contract (fast path, checked path, donation) is docs/runtime.md's.
        """
        values = self._fast.bind(args, kwargs)
        if values is None:
            values = bind_arguments(self.signature, args, kwargs)
        with x64_scope(self._wide):
            pjrt_checks = self._pjrt_refuses_bad_buffers
            if (self._cpp is not None and not jp.jit_disabled()
                    and self._fast.dispatchable(values, bool(self._donated_indices), pjrt_checks)):
                progress.called(self.signature.function)  # the arguments are settled: it runs
                try:
                    return self._cpp(*values)
                except HostArrayNotExact:
                    return self._run(values, counted=True)
                except (ValueError, RuntimeError) as e:
                    if not pjrt_checks or isinstance(e, MeshIRError):
                        raise
                    self._placed(values)  # PJRT refused a deleted or twice-donated buffer: say which
                    raise
            return self._run(values)

    def _run(self, values, counted: bool = False):
        """One call in Python: place the arguments, run, make the results. (Counted for the
        watchdog of a program over processes once its arguments are placed, so a call
        refused here is not one the other processes wait for.)"""
        if any(isinstance(v, jax.core.Tracer) for v in values):
            return self._traced(values)  # inside jax.jit, grad...: embedded in jax's program (in_jax.py)
        placed = self._placed(values)
        if not counted:
            progress.called(self.signature.function)
        return self.signature.results(jp.execute(self._loaded, placed, self._result_handlers))

    def _cache_miss(self, *values):
        """jax's C++ dispatch calling back for a signature it has no entry for: run in Python,
        and let it repeat the call alone when the arguments needed no conversion."""
        repeatable = self._fast.repeatable(values)  # before the run deletes donated arrays
        results = self._run(values, counted=True)
        return results, jp.fastpath_data(self._loaded, results, self.in_shardings) if repeatable else None, False

    def _placed(self, values) -> list:
        """The bound arguments checked and on the devices: all a call does before PJRT runs."""
        placed = self._fast.place(values)
        if placed is None:
            placed = place_arguments(self.signature, self.in_shardings, values)
        if self._donated_indices and len(set(map(id, placed))) < len(placed):
            check_donated_buffers(self.signature, placed, self._donated_indices)
        return placed

    def __repr__(self) -> str:
        return f"<meshir Executable @{self.signature.function} on {self.mesh}, {self.mode} mode>"
