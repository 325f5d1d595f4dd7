"""Hand-written explicit-mode StableHLO modules for the runtime tests.

The target form of `mtf-lower-to-stablehlo` (what jax 0.10.2 emits for a `shard_map`): an
entry `@main` over global tensors with `sdy.sharding`s, whose body is one
`sdy.manual_computation` over all mesh axes working on local shards. Built from `mtf` types,
so a test states layouts the way MeshIR does and gets the FunctionSignature to match.
"""
from __future__ import annotations

import itertools

from meshir.dialect import Mesh, TensorType
from meshir.dialect.signature import FunctionSignature


def tensor(shape, elem: str) -> str:
    return "tensor<" + "".join(f"{n}x" for n in shape) + elem + ">"


def sharding(t: TensorType) -> str:
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in (d.axes or ())) + "}" for d in t.dims)
    return f"<@mesh, [{dims}]>"


def replica_groups(mesh: Mesh, axes) -> str:
    """Devices differing only in `axes`, ordered by those axes' coordinates (docs/partitioning.md)."""
    names, sizes = mesh.axis_names, [s for _, s in mesh.axes]
    groups: dict[tuple, list[int]] = {}
    for p, coords in enumerate(itertools.product(*[range(s) for s in sizes])):
        key = tuple(c for n, c in zip(names, coords) if n not in axes)
        groups.setdefault(key, []).append(p)  # row-major p: already in group order
    rows = list(groups.values())
    return f"dense<{[list(r) for r in rows]}> : tensor<{len(rows)}x{len(rows[0])}xi64>"


def all_reduce(result: str, operand: str, local: str, elem: str, groups: str, channel: int) -> str:
    return (
        f'    {result} = "stablehlo.all_reduce"({operand}) <{{channel_handle = #stablehlo.channel_handle<handle = '
        f"{channel}, type = 1>, replica_groups = {groups}, use_global_device_ids}}> ({{\n"
        f"    ^bb0(%p: tensor<{elem}>, %q: tensor<{elem}>):\n"
        f"      %s = stablehlo.add %p, %q : tensor<{elem}>\n"
        f"      stablehlo.return %s : tensor<{elem}>\n"
        f"    }}) : ({local}) -> {local}\n"
    )


def all_gather(result: str, operand: str, dim: int, local_in: str, local_out: str, groups: str, channel: int) -> str:
    return (
        f'    {result} = "stablehlo.all_gather"({operand}) <{{all_gather_dim = {dim} : i64, channel_handle = '
        f"#stablehlo.channel_handle<handle = {channel}, type = 1>, replica_groups = {groups}, "
        f"use_global_device_ids}}> : ({local_in}) -> {local_out}\n"
    )


def manual_module(mesh: Mesh, args, results, body: str, returned, name: str = "main") -> str:
    """A module whose `@name` takes `args` and returns `results` (TensorTypes) with their
    layouts; inside the manual computation the local arguments are `%a0, %a1, ...`, `body`
    computes, and `returned` names the local values to return."""
    local = lambda t: tensor(t.local_shape(mesh.shape), t.element_type)  # noqa: E731
    glob = lambda t: tensor(t.shape, t.element_type)  # noqa: E731
    params = ", ".join(f"%g{i}: {glob(t)} {{sdy.sharding = #sdy.sharding{sharding(t)}}}" for i, t in enumerate(args))
    outs = ", ".join(f"{glob(t)} {{sdy.sharding = #sdy.sharding{sharding(t)}}}" for t in results)
    manual_axes = ", ".join(f'"{a}"' for a in mesh.axis_names)
    return (
        f"module @m attributes {{mhlo.num_partitions = {mesh.size} : i32, mhlo.num_replicas = 1 : i32}} {{\n"
        f"  {mesh.to_mlir_text()}\n"
        f"  func.func public @{name}({params}) -> ({outs}) {{\n"
        f"  %r:{len(results)} = sdy.manual_computation({', '.join(f'%g{i}' for i in range(len(args)))})"
        f" in_shardings=[{', '.join(sharding(t) for t in args)}] out_shardings=[{', '.join(sharding(t) for t in results)}]"
        f" manual_axes={{{manual_axes}}} ({', '.join(f'%a{i}: {local(t)}' for i, t in enumerate(args))}) {{\n"
        f"{body}"
        f"    sdy.return {', '.join(returned)} : {', '.join(local(t) for t in results)}\n"
        f"  }} : ({', '.join(glob(t) for t in args)}) -> ({', '.join(glob(t) for t in results)})\n"
        f"  return {', '.join(f'%r#{i}' for i in range(len(results)))} : {', '.join(glob(t) for t in results)}\n"
        "  }\n}\n"
    )


def signature(args: dict, results: dict, function: str = "f") -> FunctionSignature:
    """A FunctionSignature from `{name: "!mtf.tensor<...>"}` dicts."""
    parse = TensorType.parse
    return FunctionSignature(function, tuple(args), tuple(parse(t) for t in args.values()),
                     tuple(results), tuple(parse(t) for t in results.values()))


def axes_text(axes) -> str:
    """`` (replicated), `@x` or `@(x,y)`."""
    return "@()" if not axes else f"@{axes[0]}" if len(axes) == 1 else "@(" + ",".join(axes) + ")"


def matmul_add(mesh: Mesh, reduce_axis: str, m: int = 8, k: int = 8, n: int = 4):
    """y = x @ w + b: rows of x and b split over the other axes, k split over `reduce_axis`
    (local matmul, all_reduce over that axis, local add). Returns (text, signature)."""
    rows = axes_text([a for a in mesh.axis_names if a != reduce_axis])
    sig = signature(
        {"x": f"!mtf.tensor<m={m}{rows}, k={k}@{reduce_axis}, f32>",
         "w": f"!mtf.tensor<k={k}@{reduce_axis}, n={n}@(), f32>",
         "b": f"!mtf.tensor<m={m}{rows}, n={n}@(), f32>"},
        {"y": f"!mtf.tensor<m={m}{rows}, n={n}@(), f32>"},
    )
    x, w, y = sig.arg_types[0], sig.arg_types[1], sig.result_types[0]
    lx, lw, ly = (tensor(t.local_shape(mesh.shape), "f32") for t in (x, w, y))
    body = (
        f"    %0 = stablehlo.dot_general %a0, %a1, contracting_dims = [1] x [0] : ({lx}, {lw}) -> {ly}\n"
        + all_reduce("%1", "%0", ly, "f32", replica_groups(mesh, [reduce_axis]), 1)
        + f"    %2 = stablehlo.add %1, %a2 : {ly}\n"
    )
    return manual_module(mesh, sig.arg_types, sig.result_types, body, ["%2"]), sig


def gather_rows(mesh: Mesh, m: int = 16, n: int = 3):
    """y = all_gather(x) over the mesh's minor-most axis: rows split over all axes become
    split over the others. Returns (text, signature)."""
    axes = mesh.axis_names
    sig = signature({"x": f"!mtf.tensor<m={m}{axes_text(axes)}, n={n}@(), f32>"},
                    {"y": f"!mtf.tensor<m={m}{axes_text(axes[:-1])}, n={n}@(), f32>"})
    lx, ly = (tensor(t.local_shape(mesh.shape), "f32") for t in (sig.arg_types[0], sig.result_types[0]))
    body = all_gather("%0", "%a0", 0, lx, ly, replica_groups(mesh, [axes[-1]]), 1)
    return manual_module(mesh, sig.arg_types, sig.result_types, body, ["%0"]), sig


def elementwise(mesh: Mesh, elem: str, op: str = "add", n: int = 8):
    """z = op(a, b) on `n` elements of type `elem`, split over the mesh's first axis."""
    axis = axes_text(mesh.axis_names[:1])
    t = f"!mtf.tensor<i={n}{axis}, {elem}>"
    sig = signature({"a": t, "b": t}, {"z": t})
    local = tensor(sig.arg_types[0].local_shape(mesh.shape), elem)
    body = f"    %0 = stablehlo.{op} %a0, %a1 : {local}\n"
    return manual_module(mesh, sig.arg_types, sig.result_types, body, ["%0"]), sig
