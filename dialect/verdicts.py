"""Memoized per-op checks: the verifier and the partitioned-form check run before the first
pass and after each, and ask the same question of the same op again and again (a pass
leaves most ops as they were; a model's layers repeat one another's ops).

An op without regions is checked from what it states: its name, operand and result types
and attributes. MLIR uniques types and attributes per context, so two ops with equal keys
state the same thing, and a check that reads nothing else (not the ops around it, not its
location) gives both the same verdict.
"""
from __future__ import annotations

from typing import Callable

from .walk import named_attributes

_UNKNOWN = object()


class Verdicts:
    """`check(op)` -> a problem (str) or None, answered once per distinct op."""

    def __init__(self, check: Callable, limit: int = 65536, reads_only_itself: Callable = lambda op: True):
        """`reads_only_itself(op)`: False for an op whose verdict depends on more than it
        states (its parent, say); such an op is checked every time."""
        self._check = check
        self._reads_only_itself = reads_only_itself
        self._memo: dict = {}
        self._limit = limit

    def __call__(self, op, *context):
        """The verdict of `check(op, *context)`; `context` (hashable) is part of the key."""
        key = op_key(op, context) if self._reads_only_itself(op) else None
        if key is None:
            return self._check(op, *context)
        verdict = self._memo.get(key, _UNKNOWN)
        if verdict is _UNKNOWN:
            verdict = self._check(op, *context)
            if len(self._memo) >= self._limit:
                self._memo.clear()
            self._memo[key] = verdict
        return verdict


def op_key(op, context=()):
    """What an op without regions states (None for an op with regions, whose checks read them)."""
    operation = op.operation
    if len(operation.regions):
        return None
    return (operation.name, context, tuple(v.type for v in operation.operands),
            tuple(r.type for r in operation.results), named_attributes(operation))
