"""Trained examples/transformer_lm.py checkpoints, compared on the same text: the whole held-out
text of each corpus.

    python benchmarks/lm_heldout.py runs/small runs/small-large runs/medium

The script's own validation loss reads 4 batches of evenly spaced windows, whose characters
depend on the model's batch and length. Here every checkpoint's model predicts every held-out
character of each corpus once (consecutive windows of its length, `data.heldout_batches`), so
models of different sizes are compared on the same characters; a character's context is the
part of its window before it (longer windows: more context, part of a model's size). The small
corpus's held-out text is part of the large corpus's (the large corpus starts with the small
one), so it is held out from a model trained on either.

Prints a Markdown table: checkpoint, parameters, training corpus, steps, and the mean loss in
nats per character over each corpus's held-out text.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import harness  # noqa: E402
import meshir as mi  # noqa: E402
from lm import data, model  # noqa: E402


def heldout_loss(exe, params: dict, corpus: data.Corpus, cfg: model.Config) -> tuple[float, int]:
    """Mean loss over the corpus's held-out text, and how many characters it predicted."""
    batches = data.heldout_batches(corpus, cfg.batch, cfg.length)
    losses = [float(exe(tokens=x, targets=y, **params))  # one result: the loss
              for x, y in harness.progress(batches, "held-out batches", unit="batch")]
    return float(np.mean(losses)), len(batches) * cfg.batch * cfg.length


def evaluate(directory: str, corpora: dict[str, data.Corpus], layout: str = "2d") -> dict:
    """One checkpoint's row: its size, training corpus and held-out losses."""
    arrays, meta = mi.Checkpoints(directory).restore()  # the latest step, as NumPy arrays
    params = arrays["param"]
    cfg = model.Config(**meta["config"])
    mesh, rules = model.layout(layout)
    exe = mi.compile(model.build(cfg, mesh), layout=rules)
    trained_on = [name for name, c in corpora.items() if c.digest == meta["corpus"]]
    row = {"checkpoint": directory, "parameters": sum(int(v.size) for v in params.values()),
           "config": meta["config"], "corpus": trained_on[0] if trained_on else f"other ({meta['corpus']})",
           "steps": meta["step"], "val_loss_during_training": meta["val_loss"][-1][1] if meta["val_loss"] else None}
    for name, corpus in corpora.items():
        row[f"heldout_{name}"], row[f"chars_{name}"] = heldout_loss(exe, params, corpus, cfg)
    return row


def table(rows: list[dict], corpora: dict[str, data.Corpus]) -> str:
    names = list(corpora)
    head = ["checkpoint", "parameters", "layers x d_model, batch x length", "trained on", "steps"]
    head += [f"held-out {n} ({len(corpora[n].validation):,} chars)" for n in names]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        c = r["config"]
        cells = [f"`{r['checkpoint']}`", f"{r['parameters']:,}", f"{c['layers']} x {c['d_model']}, "
                 f"{c['batch']} x {c['length']}", r["corpus"], str(r["steps"])]
        cells += [f"{r[f'heldout_{n}']:.3f}" for n in names]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoints", nargs="+", metavar="DIR", help="--checkpoint directories of transformer_lm.py")
    p.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    args = p.parse_args(argv)
    corpora = {name: data.load_corpus(name) for name in data.CORPORA}
    rows = [evaluate(d, corpora) for d in args.checkpoints]
    print(table(rows, corpora))
    print("\nnats per character over every held-out character of each corpus "
          "(but the last < batch x length), each predicted once")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
