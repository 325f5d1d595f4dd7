"""A two-layer MLP on a 4x2 mesh of 8 CPU devices: build it, print its IR, compile it with
Mesh-TensorFlow layout rules (batch:x, d_ff:y), run it on the devices and check the result
against NumPy and the reference interpreter.

    python examples/mlp.py            # the README's first command runs this
    python examples/mlp.py --layout batch:x      # data parallel
    python examples/mlp.py --tpu v5e:2x4         # XLA:TPU compiles it for 8 TPU v5e chips; nothing runs
"""
from __future__ import annotations

import argparse
import os

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import meshir as mi


def build_mlp(mesh: mi.Mesh, batch: int, d_model: int, d_ff: int) -> mi.Program:
    """y = softmax(relu(x @ w1 + b1) @ w2); layouts are chosen at compile time."""
    b, m, f = mi.Dim("batch", batch), mi.Dim("d_model", d_model), mi.Dim("d_ff", d_ff)
    with mi.Program("mlp", mesh) as prog:
        x = prog.argument("x", [b, m])
        w1 = prog.argument("w1", [m, f])
        b1 = prog.argument("b1", [f])
        w2 = prog.argument("w2", [f, m])
        hidden = mi.relu(mi.einsum(x, w1, output=[b, f]) + b1)
        prog.result(mi.softmax(mi.einsum(hidden, w2, output=[b, m]), m), name="y")
    return prog


def numpy_mlp(x, w1, b1, w2):
    """The same computation in plain NumPy: the independent check."""
    h = np.maximum(x @ w1 + b1, 0.0)
    z = h @ w2
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--d-model", type=int, default=32)
    parser.add_argument("--d-ff", type=int, default=64)
    parser.add_argument("--layout", default="batch:x,d_ff:y",
                        help="layout rules, e.g. 'batch:x,d_ff:y' or 'batch:x;d_ff:y' (2-D), 'batch:(x,y)' (data parallel)")
    parser.add_argument("--tpu", metavar="TOPOLOGY",
                        help="compile for a TPU topology of 8 devices (e.g. v5e:2x4; the tpu extra) and print XLA:TPU's "
                             "memory and cost instead of running")
    args = parser.parse_args(argv)

    mesh = mi.tpu_mesh(args.tpu, {"x": 4, "y": 2}) if args.tpu else mi.Mesh({"x": 4, "y": 2})
    prog = build_mlp(mesh, args.batch, args.d_model, args.d_ff)
    if args.tpu:
        exe = mi.compile(prog, layout=mi.LayoutRules.parse(args.layout))
        print(exe.report())
        return 0
    print(prog.module)
    exe = mi.compile(prog, layout=mi.LayoutRules.parse(args.layout))
    import jax

    print(f"compiled for {len(exe.devices)} {jax.devices()[0].platform.upper()} devices "
          f"(jax {jax.__version__}) with layout rules {args.layout}")

    rng = np.random.default_rng(0)
    inputs = {
        "x": rng.standard_normal((args.batch, args.d_model), dtype=np.float32),
        "w1": rng.standard_normal((args.d_model, args.d_ff), dtype=np.float32) / np.sqrt(args.d_model),
        "b1": rng.standard_normal((args.d_ff,), dtype=np.float32),
        "w2": rng.standard_normal((args.d_ff, args.d_model), dtype=np.float32) / np.sqrt(args.d_ff),
    }
    y = exe(**inputs)
    print(exe.report())
    expected = numpy_mlp(**inputs)
    error = float(np.max(np.abs(np.asarray(y) - expected)))
    interpreted = float(np.max(np.abs(np.asarray(y) - mi.interpret(prog, **inputs))))
    print(f"y: {y.shape}, sharding {y.sharding.spec}; max |y - numpy| = {error:.2e}, "
          f"max |y - interpreter| = {interpreted:.2e}")
    return 0 if error < 1e-5 and interpreted < 1e-5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
