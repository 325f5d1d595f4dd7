"""The LM's options for large configurations (examples/lm/model.py): `key_size` (d_k other
than d_model / heads) and `seq_parallel` (Megatron's sequence parallelism: `length` split
between layers, by constraints), which must compute what the plain model computes."""
from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import meshir as mi

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples"))

from lm import model

CFG = model.Config(layers=2, d_model=32, heads=4, key_size=16, d_ff=64, length=16, batch=8, vocab=64)


def test_key_size_sets_d_k_apart_from_d_model():
    CFG.check()
    assert CFG.d_k == 16 and model.Config().d_k == model.Config().d_model // model.Config().heads
    dims = model.param_dims(CFG)
    assert [d.size for d in dims["l0_wq"]] == [32, 4, 16]
    assert [d.size for d in dims["l0_wo"]] == [4, 16, 32]
    assert "key_size" not in model.Config().to_dict()  # checkpoints of configs without it read as before
    assert CFG.to_dict()["key_size"] == 16
    with pytest.raises(ValueError, match="key_size"):
        model.Config(key_size=0).check()
    model.Config(d_model=30, heads=4, key_size=8).check()  # d_model need not divide by heads


def _step(stacked: bool, remat: bool, seq_parallel):
    mesh, rules = model.layout("2d")
    params = model.init_params(CFG)
    rng = np.random.default_rng(0)
    data = {"tokens": rng.integers(0, CFG.vocab, (CFG.batch, CFG.length)).astype(np.int32),
            "targets": rng.integers(0, CFG.vocab, (CFG.batch, CFG.length)).astype(np.int32)}
    step = model.train_step(CFG, mesh, remat=remat, stacked=stacked, seq_parallel=seq_parallel)
    exe = mi.compile(step, layout=rules)
    p = model.stack_params(CFG, params) if stacked else params
    out = exe(**data, **p, **mi.init_optimizer_state(step), step=np.float32(1))
    return step, dict(zip(step.program.result_names, (np.asarray(v) for v in out)))


@pytest.mark.parametrize("stacked, remat", [(False, False), (True, True)])
def test_sequence_parallel_computes_what_the_plain_model_computes(stacked, remat):
    _, plain = _step(stacked, remat, None)
    step, split = _step(stacked, remat, "y")
    assert "mtf.shard" in str(step.program.module)
    np.testing.assert_allclose(split["loss"], plain["loss"], rtol=1e-5)
    for name, value in plain.items():
        np.testing.assert_allclose(split[name], value, rtol=1e-4, atol=1e-6, err_msg=name)
