"""The text of `Executable.report()`: where the program runs and how its inputs and outputs
are laid out, with PJRT's per-device memory figures and the compile pipeline's report."""
from __future__ import annotations

import math

from meshir.dialect.tensor_type import TensorType


def runtime_report(exe) -> str:
    sig = exe.signature
    platform = exe.devices[0].platform
    lines = [
        f"@{sig.function} on mesh {exe.mesh}: {exe.mesh.size} {platform} "
        f"device{'s' if exe.mesh.size != 1 else ''}, {exe.mode} mode",
    ]
    for title, names, types, shapes, shardings in (
        ("arguments", sig.arg_names, sig.arg_types, exe.arg_shard_shapes, exe.in_shardings),
        ("results", sig.result_names, sig.result_types, exe.result_shard_shapes, exe.out_shardings),
    ):
        lines.append(f"{title}:")
        rows = [("name", "type", "shard", "bytes/device", "PartitionSpec")]
        rows += [_row(n, t, s, sh) for n, t, s, sh in zip(names, types, shapes, shardings)]
        lines += _table(rows) if len(rows) > 1 else ["  none"]
    memory = exe.memory_analysis()
    if memory is not None:
        lines.append(
            f"PJRT memory per device: arguments {memory.argument_size_in_bytes} B, outputs "
            f"{memory.output_size_in_bytes} B, temporaries {memory.temp_size_in_bytes} B"
        )
    if exe.compile_report is not None:
        lines += ["", str(exe.compile_report)]
    return "\n".join(lines)


def _row(name: str, t: TensorType, shard: tuple[int, ...], sharding) -> tuple[str, ...]:
    nbytes = math.prod(shard) * t.dtype.itemsize
    return name, str(t), f"{list(shard)} {t.element_type}", str(nbytes), str(tuple(sharding.spec))


def _table(rows) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
