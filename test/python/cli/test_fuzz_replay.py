"""meshir-opt under the fuzzer (test/fuzz): every committed repro is now diagnosed, and a short
fixed-seed campaign finds no crash, hang, traceback or internal error. Deterministic: the
cases depend only on the seed, the lit inputs and the corpus."""
import glob
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "test", "fuzz"))

from campaign import Campaign  # noqa: E402
from corpus import CORPUS, read_repro  # noqa: E402
from executor import Worker  # noqa: E402
from outcomes import BUGS  # noqa: E402

REPROS = sorted(glob.glob(os.path.join(CORPUS, "*.mlir")))


@pytest.fixture(scope="module")
def worker():
    w = Worker(ROOT)
    yield w
    w.close()


def test_corpus_is_not_empty():
    assert len(REPROS) >= 5


@pytest.mark.parametrize("path", REPROS, ids=os.path.basename)
def test_corpus_repro_is_diagnosed(worker, path):
    args, text = read_repro(path)
    result = worker.run(args, text)
    assert result.outcome not in BUGS, f"meshir-opt {' '.join(args)} < {path}: {result.outcome}\n{result['stderr'][-3000:]}"


def _campaign_finds_nothing(seed: int, execs: int) -> None:
    campaign = Campaign(ROOT, seed, corpus_dir=None, log=lambda line: None)
    try:
        campaign.run(execs=execs)
    finally:
        campaign.close()
    found = [f"{f['outcome']} {f['signature']}: meshir-opt {' '.join(f['args'])} on\n{f['text'][:2000]}"
             for f in campaign.findings.values()]
    assert not found, "\n\n".join(found)
    assert campaign.counts["ok"] + campaign.counts["diagnosed"] == execs


def test_short_fixed_seed_campaign_finds_no_bug():
    _campaign_finds_nothing(seed=0, execs=2500)


@pytest.mark.slow
def test_long_fixed_seed_campaign_finds_no_bug():
    _campaign_finds_nothing(seed=1, execs=100_000)
