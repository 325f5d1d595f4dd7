"""`mi.compile` runs one recorded pipeline of registered passes (issue 51): `exe.pipeline` is
`meshir-opt --pass-pipeline` text, every pass in it is listed by `meshir-opt --help`, and the
pass manager running that text on the program's module gives the same StableHLO as compile."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import meshir as mi
from meshir.dialect import get_context
from meshir.lowering.runtime.entry import prepare_entry
from meshir.transforms import build_pass_manager

batch, d_model, d_ff = mi.Dim("batch", 8), mi.Dim("d_model", 4), mi.Dim("d_ff", 8)


def _loss_program(mesh):
    with mi.Program("ffn", mesh) as prog:
        x = prog.argument("x", [batch, d_model])
        w1 = prog.argument("w1", [d_model, d_ff])
        w2 = prog.argument("w2", [d_ff, d_model])

        def block(x, w1, w2):
            return mi.einsum(mi.relu(mi.einsum(x, w1, output=[batch, d_ff])), w2, output=[batch, d_model])

        y = mi.remat(block)(x, w1, w2)  # a call that stays a call until mtf-inline
        prog.result(mi.reduce_sum(y * y, []), name="loss")
    return prog


def _programs():
    mesh = mi.Mesh({"x": 4, "y": 2})
    prog = _loss_program(mesh)
    return {
        "forward": (prog, {"batch": "x", "d_ff": "y"}),
        "ZeRO step": (mi.train_step(prog, mi.Adam(1e-3), params=["w1", "w2"], shard_update=True), {"batch": "x"}),
        "ZeRO-3 step": (mi.train_step(prog, mi.SGD(0.1), params=["w1", "w2"], shard_update=True, shard_params=True),
                        {"batch": "x", "d_ff": "y"}),
    }


@pytest.fixture(scope="module")
def help_text():
    """What `meshir-opt --help` prints (in a fresh process: the CLI starts without jax's API)."""
    done = subprocess.run([sys.executable, "-c", "import sys; from meshir.cli.opt import main; sys.exit(main(['--help']))"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("case", ["forward", "ZeRO step", "ZeRO-3 step"])
def test_the_recorded_pipeline_starts_with_mtf_inline_and_every_pass_is_in_help(case, help_text):
    program, layout = _programs()[case]
    exe = mi.compile(program, layout=layout)
    names = re.findall(r"(?:\(|,)(mtf-[a-z-]+)", exe.pipeline)
    assert names[0] == "mtf-inline", exe.pipeline
    assert names[-1] == "mtf-lower-to-stablehlo", exe.pipeline
    assert ("mtf-shard-update" in names) == (case != "forward"), exe.pipeline
    listed = set(re.findall(r"^\s+--(mtf-[a-z-]+)", help_text, re.MULTILINE))
    assert set(names) <= listed, sorted(set(names) - listed)


@pytest.mark.parametrize("case", ["forward", "ZeRO step", "ZeRO-3 step"])
def test_the_pass_manager_on_the_recorded_pipeline_gives_compiles_stablehlo(case):
    program, layout = _programs()[case]
    exe = mi.compile(program, layout=layout)
    with get_context():
        module = program.module.operation.clone()
    build_pass_manager(exe.pipeline).apply(module)
    assert prepare_entry(module, exe.signature, exe.mesh).text == exe.stablehlo_text()


def test_the_step_built_by_the_pipeline_runs_as_compiled():
    """The ZeRO-3 step (whose gathers mtf-gather-params-at-uses placed) against the plain step
    without any sharding of the update: one SGD step, equal results (NumPy inputs)."""
    programs = _programs()
    zero3, layout = programs["ZeRO-3 step"]
    plain = mi.train_step(_loss_program(mi.Mesh({"x": 4, "y": 2})), mi.SGD(0.1), params=["w1", "w2"])
    rng = np.random.default_rng(0)
    args = {"x": rng.normal(size=(8, 4)).astype(np.float32), "w1": rng.normal(size=(4, 8)).astype(np.float32),
            "w2": rng.normal(size=(8, 4)).astype(np.float32)}
    args.update(mi.init_optimizer_state(zero3), step=np.float32(0))
    got = dict(zip(zero3.program.result_names, mi.compile(zero3, layout=layout)(**args)))
    want = dict(zip(plain.program.result_names, mi.compile(plain, layout=layout)(**args)))
    for name in ("loss", "w1", "w2"):
        np.testing.assert_allclose(np.asarray(got[name]), np.asarray(want[name]), rtol=1e-5, atol=1e-6)


def test_shard_update_off_gives_the_step_without_weight_update_sharding():
    """`mtf-shard-update{off=true}` (what layout="auto" runs when it chose no update sharding)
    drops the markers: the module is the step built without shard_update."""
    mesh = mi.Mesh({"x": 4, "y": 2})
    zero = mi.train_step(_loss_program(mesh), mi.Adam(1e-3), params=["w1", "w2"], shard_update=True)
    plain = mi.train_step(_loss_program(mesh), mi.Adam(1e-3), params=["w1", "w2"])
    modules = []
    for step, pipeline in ((zero, "builtin.module(mtf-inline,mtf-shard-update{off=true})"),
                           (plain, "builtin.module(mtf-inline)")):
        with get_context():
            module = step.program.module.operation.clone()
        build_pass_manager(pipeline).apply(module)
        modules.append(re.sub(r"loc\([^)]*\)", "", str(module)))
    assert "mtf.shard_update" in str(zero.program.module) and "param_layout" in str(zero.program.module)
    assert modules[0] == modules[1]
