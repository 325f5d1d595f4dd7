"""Upstream MLIR and Shardy passes MeshIR pipelines are tested with.

Any pass registered in jaxlib's MLIR can appear in a pipeline (it is handed to MLIR as text);
this list is what `meshir-opt --help` shows and what did-you-mean suggests, since MLIR's
Python bindings cannot enumerate the registered passes. `test/python/cli/test_cli.py` checks that
every name here is registered.
"""
from __future__ import annotations

from .registry import PassInfo

_UPSTREAM = {
    "canonicalize": "Fold and simplify ops with their canonicalization patterns",
    "cse": "Eliminate common sub-expressions",
    "inline": "Inline function calls",
    "symbol-dce": "Remove symbols (e.g. private functions) nobody uses",
    "sccp": "Sparse conditional constant propagation",
    "strip-debuginfo": "Replace every location by an unknown one",
    "topological-sort": "Sort ops of graph regions topologically",
    "sdy-propagation-pipeline": "Shardy: import, sharding propagation and export, end to end",
    "sdy-import-pipeline": "Shardy: prepare a module for propagation",
    "sdy-export-pipeline": "Shardy: finalize shardings after propagation",
    "sdy-basic-propagate": "Shardy: propagate shardings without resolving conflicts",
    "sdy-aggressive-propagate": "Shardy: propagate shardings, resolving conflicts",
    "sdy-op-priority-propagate": "Shardy: aggressive propagation by op priorities",
    "sdy-user-priority-propagate": "Shardy: op-priority propagation by user priorities (p0, p1, ...)",
    "sdy-add-data-flow-edges": "Shardy: add data-flow edge ops for ops with regions",
    "sdy-lift-inlined-meshes": "Shardy: lift inlined meshes into sdy.mesh symbols",
    "sdy-close-shardings": "Shardy: close tensor shardings and drop replicated axes",
    "sdy-sharding-constraint-to-reshard": "Shardy: turn sharding constraints into reshards (on func.func)",
    "sdy-insert-explicit-reshards": "Shardy: make every op's shardings compatible (on func.func)",
    "sdy-reshard-to-collectives": "Shardy: turn reshards into Shardy collectives (on func.func)",
    "sdy-drop-sharding-rules": "Shardy: drop op sharding rules (on func.func)",
}

#: Upstream pass name -> what --help says about it.
UPSTREAM_PASSES: dict[str, PassInfo] = {name: PassInfo(name, summary) for name, summary in _UPSTREAM.items()}
