"""`mi.distributed.initialize`: one program over several processes, through jax.distributed.

A thin layer over `jax.distributed.initialize` (JAX's multi-controller model: one process
per host, each running the same program, PJRT's collectives between them). What it adds:

- the arguments may come from the environment: `JAX_COORDINATOR_ADDRESS` (as jax reads
  it), `MESHIR_NUM_PROCESSES`, `MESHIR_PROCESS_ID`, `MESHIR_LOCAL_DEVICES` (set by
  `mi.distributed.launch_local`); what is still missing jax detects from the cluster
  (SLURM, Open MPI, Kubernetes, Cloud TPU), as `jax.distributed.initialize` does;
- CPU meshes: gloo collectives between processes, and `local_devices` CPU devices per
  process (default: the count already configured, MeshIR's 8 or the user's own
  `jax_num_cpu_devices`, which wins: asking for another is an error);
- bounded waits with messages naming the process: a coordinator port in use, processes that
  do not all arrive within `timeout`, and afterwards the watchdog (`watchdog.py`);
- `mi.compile` then checks that every process compiles the same program (`agreement.py`).
"""
from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass

import jax

from meshir import _jax_private as jp
from meshir.dialect.call_site import reports_at_call_site
from meshir.dialect.diagnostics import MeshIRError, MeshIRTypeError, MeshIRValueError
from meshir.lowering.runtime import devices as runtime_devices

from . import watchdog


@dataclass(frozen=True)
class Setup:
    """This process's place in the program: `mi.distributed.initialize`'s result."""
    process_id: int
    num_processes: int
    coordinator_address: str
    local_devices: int
    timeout: float
    heartbeat_timeout: float


#: The setup of this process, None before `initialize` (or in a one-process program).
current: Setup | None = None
_watchdog = None


@reports_at_call_site
def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, *, local_devices: int | None = None,
               timeout: float = 300.0, heartbeat_timeout: float = 60.0) -> Setup:
    """Join the program over several processes; call it first, before any jax computation.

    `coordinator_address`: "host:port" of process 0, which serves the coordination service.
    `num_processes`, `process_id`: this program's size and this process's index. Each is
    read from the environment when not given (module docstring). `local_devices`: CPU
    devices in this process (CPU meshes only). `timeout`: seconds to wait for every process
    to arrive (here, at each `mi.compile`, and at each call: the watchdog). `heartbeat_timeout`:
    seconds of silence after which a process counts as dead. Returns the `Setup`.
    """
    global current, _watchdog
    if current is not None:
        raise MeshIRError(f"mi.distributed.initialize was already called in this process (process "
                          f"{current.process_id} of {current.num_processes})")
    coordinator_address = coordinator_address or os.environ.get("JAX_COORDINATOR_ADDRESS")
    num_processes = _count(num_processes, "MESHIR_NUM_PROCESSES", "num_processes")
    process_id = _count(process_id, "MESHIR_PROCESS_ID", "process_id")
    local_devices = _count(local_devices, "MESHIR_LOCAL_DEVICES", "local_devices")
    timeout = _seconds(timeout, "timeout")
    heartbeat_timeout = _seconds(heartbeat_timeout, "heartbeat_timeout")
    if num_processes is not None and num_processes < 1:
        raise MeshIRValueError(f"num_processes={num_processes}: a program has at least one process")
    if None not in (num_processes, process_id) and not 0 <= process_id < num_processes:
        raise MeshIRValueError(f"process_id={process_id} is not one of the {num_processes} processes 0..{num_processes - 1}")
    if jp.distributed_initialized():
        raise MeshIRError("jax.distributed.initialize already ran in this process: call mi.distributed.initialize "
                          "instead of it (MeshIR's checks need its settings), not after it")
    if jp.backend_started():
        raise MeshIRError("jax's backend already started in this process (jax.devices(), an array or a compiled "
                          "program came first): call mi.distributed.initialize first, at the top of the program")
    local_devices = _configure_cpu(local_devices)
    if process_id == 0 and coordinator_address:
        _check_port_free(coordinator_address)
    where = f"process {process_id if process_id is not None else '?'} of {num_processes or '?'}"
    alarm = threading.Timer(timeout, _never_arrived, (where, coordinator_address, process_id, num_processes, timeout))
    alarm.daemon = True
    alarm.start()
    try:
        jax.distributed.initialize(coordinator_address, num_processes, process_id,
                                   initialization_timeout=int(timeout) + 30,
                                   heartbeat_timeout_seconds=int(2 * heartbeat_timeout) + 10,
                                   shutdown_timeout_seconds=int(timeout) + 30)
    except jax.errors.JaxRuntimeError as e:
        raise MeshIRError(f"{where}: jax.distributed could not start at {coordinator_address}: "
                          f"{str(e).splitlines()[0]}") from None
    except (ValueError, TypeError, RuntimeError) as e:
        raise MeshIRError(f"{where}: jax.distributed.initialize: {e} (give coordinator_address, "
                          f"num_processes and process_id, or set JAX_COORDINATOR_ADDRESS, "
                          f"MESHIR_NUM_PROCESSES and MESHIR_PROCESS_ID)") from None
    finally:
        alarm.cancel()
    process_id, num_processes = jax.process_index(), jax.process_count()
    current = Setup(process_id, num_processes, coordinator_address or "", jax.local_device_count(),
                    timeout, heartbeat_timeout)
    if num_processes > 1:
        _watchdog = watchdog.start(process_id, num_processes, timeout, heartbeat_timeout)
    return current


def _count(value, variable: str, name: str) -> int | None:
    """`value`, else the integer in environment `variable`, else None; MeshIRError if not an int."""
    source = name
    if value is None and os.environ.get(variable, "").strip():
        value, source = os.environ[variable].strip(), f"${variable}"
        try:
            value = int(value)
        except ValueError:
            raise MeshIRValueError(f"{source}={value!r} is not an integer") from None
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise MeshIRTypeError(f"{source} must be an int, got {value!r} ({type(value).__name__})")
    if value is not None and value < 0:
        raise MeshIRValueError(f"{source}={value} is negative")
    return value


def _seconds(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise MeshIRValueError(f"{name} must be a positive number of seconds, got {value!r}")
    return float(value)


def _configure_cpu(local_devices: int | None) -> int | None:
    """Gloo collectives and `local_devices` CPU devices per process, unless the user's own
    `jax_num_cpu_devices` says another count (then an error naming both)."""
    if local_devices == 0:
        raise MeshIRValueError("local_devices=0: each process needs at least one device")
    users = runtime_devices.users_cpu_devices()
    if local_devices is not None:
        if users is not None and users != local_devices:
            raise MeshIRValueError(f"local_devices={local_devices}, but this process configured "
                                   f"jax_num_cpu_devices={users} itself (XLA_FLAGS or jax.config): give one of them")
        jax.config.update("jax_num_cpu_devices", local_devices)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    return local_devices


def _check_port_free(address: str) -> None:
    """MeshIRError when process 0 cannot serve on `address`'s port (another program has it)."""
    host, _, port = address.rpartition(":")
    try:
        port_number = int(port)
    except ValueError:
        raise MeshIRValueError(f"coordinator_address={address!r} is not host:port") from None
    with socket.socket(socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET) as s:
        try:
            s.bind(("", port_number))
        except OSError as e:
            raise MeshIRError(f"process 0: the coordinator port {port_number} ({address}) is already in use on "
                              f"this host ({e.strerror}): choose another port") from None


def _never_arrived(where: str, address: str | None, process_id: int | None, num_processes: int | None,
                   timeout: float) -> None:
    """The alarm: not every process arrived within `timeout`; name who is missing, and exit."""
    if process_id == 0:
        others = "process 1" if num_processes == 2 else f"some of processes 1..{(num_processes or 2) - 1}"
        missing = f"{others} never connected to this coordinator ({address})"
    elif address and not _reachable(address):
        missing = f"process 0, the coordinator at {address}, is not there (never started, or exited)"
    else:
        missing = (f"process 0, the coordinator at {address}, is up, but not all {num_processes} processes "
                   f"arrived: one of the others never connected")
    watchdog.fail(f"{where}: waited {timeout:g} s in mi.distributed.initialize: {missing} "
                  f"(mi.distributed.initialize(timeout=...))")


def _reachable(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=2):
            return True
    except (OSError, ValueError):
        return False
