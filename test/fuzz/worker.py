"""The in-process fuzz loop: runs meshir-opt's main on many inputs in one Python process.

Started by executor.py as `python worker.py TREE FD`: reads one JSON case per line on stdin
({"args": [...], "text": "..."}), runs `meshir.cli.opt.main(args)` with the text as stdin and
stdout/stderr captured, and answers one JSON line on file descriptor FD (native code may
write to 1 and 2). A native crash or hang kills only this process; the parent knows which
case was in flight and restarts it. The first line it answers describes the passes.
"""
from __future__ import annotations

import io
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tree_import
from outcomes import classify, signature


def _registry() -> dict:
    """Pass names and options of the tree under test (the fuzzer mutates pipelines with them)."""
    from meshir.transforms.infra.registry import PASSES, pass_options
    from meshir.transforms.infra.upstream import UPSTREAM_PASSES

    meshir = {}
    for name, cls in PASSES.items():
        meshir[name] = [{"name": o.name, "type": o.type_text, "default": str(o.default)} for o in pass_options(cls)]
    return {"meshir": meshir, "upstream": sorted(UPSTREAM_PASSES)}


def run_case(main, args: list[str], text: str) -> dict:
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(text), io.StringIO(), io.StringIO()
    escaped = None
    try:
        rc = main(list(args))
    except BaseException as e:
        rc, escaped = None, f"{type(e).__name__}: {e}"
        sys.stderr.write(traceback.format_exc())
    finally:
        out, err = sys.stdout.getvalue(), sys.stderr.getvalue()
        sys.stdin, sys.stdout, sys.stderr = saved
    outcome = classify(rc, err, escaped)  # on the whole stderr: long echoed lines must not hide the error
    return {"outcome": outcome, "signature": signature(outcome, err), "rc": rc, "stdout": out[-2000:], "stderr": err[-6000:]}


def main() -> None:
    tree, fd = sys.argv[1], int(sys.argv[2])
    os.environ["MESHIR_DEBUG"] = "1"  # internal errors carry their traceback: better signatures
    tree_import.install(tree)
    from meshir.cli.opt import main as opt_main

    answer = os.fdopen(fd, "w", buffering=1)
    answer.write(json.dumps(_registry()) + "\n")
    for line in sys.stdin:
        case = json.loads(line)
        answer.write(json.dumps(run_case(opt_main, case["args"], case["text"])) + "\n")


if __name__ == "__main__":
    main()
