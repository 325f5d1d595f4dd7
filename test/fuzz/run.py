"""`python test/fuzz/run.py --minutes N [--seed S] [--tree DIR]`: a random fuzz campaign on
meshir-opt; prints executions per second and counts per outcome, and writes minimized repros
of new bugs to test/fuzz/corpus/ (replayed by test/python/cli/test_fuzz_replay.py)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from campaign import Campaign
from corpus import CORPUS

TREE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--minutes", type=float, default=1.0)
    p.add_argument("--execs", type=int, default=None, help="stop after this many executions instead")
    p.add_argument("--seed", type=int, default=int(time.time()))
    p.add_argument("--tree", default=TREE, help="the MeshIR checkout to fuzz (default: this one)")
    p.add_argument("--out", default=CORPUS, help="where minimized repros go (default: test/fuzz/corpus)")
    p.add_argument("--no-corpus-seeds", action="store_true", help="seed only from the tree's lit inputs")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds one case may take before it is a hang")
    p.add_argument("--report", help="write the findings as JSON here")
    opts = p.parse_args(argv)
    print(f"fuzzing {opts.tree} with seed {opts.seed}", flush=True)
    campaign = Campaign(opts.tree, opts.seed, corpus_dir=opts.out, with_corpus=not opts.no_corpus_seeds,
                        timeout=opts.timeout, log=lambda s: print(s, flush=True))
    try:
        campaign.run(seconds=None if opts.execs else opts.minutes * 60, execs=opts.execs)
    except KeyboardInterrupt:
        pass
    finally:
        campaign.close()
    print(campaign.status())
    print(f"worker restarts: {campaign.worker.restarts}")
    for f in campaign.findings.values():
        print(f"  {f['outcome']:<11} first at exec {f['exec']} ({f['seconds']}s), {f['hits']} hits: {f['signature']} -> {f['confirmed']}")
    if opts.report:
        with open(opts.report, "w") as out:
            json.dump({"status": campaign.status(), "counts": dict(campaign.counts), "execs": campaign.execs,
                       "findings": list(campaign.findings.values())}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
