"""Seed inputs: every lit input of the project, cut at `// -----` like --split-input-file does,
the committed corpus, and the pipelines the lit RUN lines use."""
from __future__ import annotations

import glob
import os
import re

from corpus import read_repro

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # test/
_SPLIT = re.compile(r"^[ \t]*// -----[ \t]*$", re.M)
_NOISE = re.compile(r"^\s*// *(RUN|CHECK|[A-Z]+(-[A-Z]+)*):.*$\n?", re.M)
_PIPELINE = re.compile(r"--pass-pipeline='([^']*)'")
_FLAG = re.compile(r"(?<=\s)(--mtf-[\w-]+(?:=\S+)?|--sdy-[\w-]+)")
#: Tiny inputs lit files do not contain on their own: empty input, empty module, a declaration.
BUILTIN_SEEDS = ["", "module {}\n", "func.func private @f(%a: tensor<8xf32>) -> tensor<8xf32>\n",
                 'sdy.mesh @mesh = <["x"=2]>\n']


def lit_files(root: str = ROOT) -> list[str]:
    files = glob.glob(os.path.join(root, "**", "*.mlir"), recursive=True)
    return sorted(f for f in files if f"{os.sep}Output{os.sep}" not in f and f"{os.sep}corpus{os.sep}" not in f)


def load_seeds(root: str = ROOT, with_corpus: bool = True) -> tuple[list[str], list[str]]:
    """(input texts, pipeline texts and pass flags) in a fixed order; `root` is the test/ folder
    of the tree under test (another tree's seeds must not contain this tree's regression tests)."""
    texts, pipelines = list(BUILTIN_SEEDS), []
    for path in lit_files(root):
        with open(path, encoding="utf-8") as f:
            whole = f.read()
        pipelines += _PIPELINE.findall(whole) + [f.replace("'", "") for f in _FLAG.findall(whole)]
        texts += [_NOISE.sub("", chunk) for chunk in _SPLIT.split(whole)]
    corpus = glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "*.mlir"))
    for path in sorted(corpus) if with_corpus else ():
        args, text = read_repro(path)
        texts.append(text)
        pipelines += [a.split("=", 1)[1] for a in args if a.startswith("--pass-pipeline=")]
    return [t for t in dict.fromkeys(texts)], list(dict.fromkeys(pipelines))
