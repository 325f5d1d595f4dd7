"""MeshIR inside JAX on a GPU: the checks of test/python/interop on the GPU backend, where
jax.export records the platform "cuda" and jax.jit embeds the program in a CUDA computation.

    python benchmarks/interop_gpu.py --out DIR    # writes DIR/interop_gpu.md and .json

On every GPU of the default backend (one on the lent H200), a one-device mesh and, when there
are several GPUs, a mesh over all of them: the MLP of test/python/support/interop_programs.py
compiled, called inside jax.jit, differentiated with jax.grad (MeshIR's VJP program),
exported in the three formats and loaded back; each result against NumPy in float64. It
also times one jitted call and one gradient against the same model in plain JAX. A check
that fails is recorded as failed (the script exits 1), not skipped.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "test" / "python" / "support"))


def checks(mesh_axes: dict) -> list[dict]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import meshir as mi
    from interop_programs import inputs, mlp

    rows = []
    args = inputs()
    x64 = {k: v.astype(np.float64) for k, v in args.items()}
    want = np.tanh(x64["x"] @ x64["w1"]) @ x64["w2"]
    want_grad = None

    def row(name, fn):
        began = time.perf_counter()
        try:
            detail = fn()
            rows.append({"mesh": mesh_axes, "check": name, "ok": True, "detail": detail,
                         "seconds": time.perf_counter() - began})
        except Exception as e:  # recorded, the script fails at the end
            rows.append({"mesh": mesh_axes, "check": name, "ok": False, "detail": f"{type(e).__name__}: {e}",
                         "trace": traceback.format_exc(), "seconds": time.perf_counter() - began})

    rules = {"batch": "x"} if "x" in mesh_axes else {}
    exe = mi.compile(mlp(mesh_axes), layout=rules)

    def close(got, expected, what):
        err = float(np.max(np.abs(np.asarray(got, np.float64) - expected)))
        if err > 1e-3 * max(1.0, float(np.max(np.abs(expected)))):
            raise AssertionError(f"{what}: max error {err}")
        return f"max abs error {err:.2e}"

    row("platform", lambda: f"{exe.devices[0].platform} ({exe.devices[0].device_kind}), {len(exe.devices)} device(s)")
    row("direct call", lambda: close(exe(**args), want, "direct"))
    jitted = jax.jit(lambda x, w1, w2: exe(x, w1, w2))
    row("inside jax.jit", lambda: close(jitted(*args.values()), want, "jit"))

    def loss(w1, x, w2):
        return jnp.sum(exe(x, w1, w2) ** 2)

    def loss_jax(w1, x, w2):
        return jnp.sum((jnp.tanh(x @ w1) @ w2) ** 2)

    with jax.enable_x64(True):
        want_grad = np.asarray(jax.grad(loss_jax)(x64["w1"], x64["x"], x64["w2"]))
    grad = jax.jit(jax.grad(loss))
    row("jax.grad inside jax.jit (MeshIR's VJP)", lambda: close(grad(args["w1"], args["x"], args["w2"]), want_grad, "grad"))
    exported = {}
    for fmt in ("mlir", "bytecode", "jax"):
        row(f"export {fmt} and mi.load", lambda fmt=fmt: close(mi.load(exported.setdefault(fmt, mi.export(exe, format=fmt)))(
            **args), want, fmt))
    row("jax.export.deserialize(...).call in jax.jit", lambda: close(jax.jit(
        jax.export.deserialize(bytearray(exported["jax"])).call)(*[jax.device_put(args[n], s) for n, s in zip(
            exe.argument_names, exe.in_shardings)])[0], want, "jax format"))
    row("exported platform", lambda: ", ".join(jax.export.deserialize(bytearray(exported["jax"])).platforms))

    def timing():
        """Arguments placed as the program lays them out, so jax's jit runs on the same devices."""
        jax_jit = jax.jit(lambda x, w1, w2: jnp.tanh(x @ w1) @ w2)
        jax_grad = jax.jit(jax.grad(loss_jax))
        p = {n: jax.device_put(args[n], s) for n, s in zip(exe.argument_names, exe.in_shardings)}
        times = {}
        for name, call in (("meshir in jit", lambda: jitted(*p.values())), ("jax", lambda: jax_jit(*p.values())),
                           ("meshir grad", lambda: grad(p["w1"], p["x"], p["w2"])),
                           ("jax grad", lambda: jax_grad(p["w1"], p["x"], p["w2"]))):
            jax.block_until_ready(call())
            samples = []
            for _ in range(50):
                began = time.perf_counter()
                jax.block_until_ready(call())
                samples.append(time.perf_counter() - began)
            times[name] = sorted(samples)[len(samples) // 2]
        return ", ".join(f"{k} {v * 1e6:.0f} µs" for k, v in times.items())

    row("median call time (tiny MLP: dispatch, not compute)", timing)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    import jax

    import meshir as mi

    gpus = jax.devices()
    rows = checks({"x": 1})
    if len(gpus) > 1:
        rows += checks({"x": len(gpus)})
    meta = {"jax": jax.__version__, "meshir": mi.__version__, "devices": [str(d) for d in gpus],
            "device_kind": gpus[0].device_kind}
    lines = ["# MeshIR inside JAX on the GPU", "", f"`python benchmarks/interop_gpu.py`, jax {meta['jax']}, "
             f"{len(gpus)} × {meta['device_kind']}.", "", "| mesh | check | ok | detail |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['mesh']} | {r['check']} | {'yes' if r['ok'] else '**no**'} | {r['detail']} |")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "interop_gpu.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    (args.out / "interop_gpu.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
