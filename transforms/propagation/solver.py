"""The propagation strategy: strongest layout first, to a fixed point.

Every candidate layout for a (value, dim) carries a *strength* (priority, preference, -size
of the tensor it came from, order of its seed). Candidates are taken strongest first from one
queue, like Dijkstra's algorithm: a free dim takes the first candidate that fits it, then
passes it on through the factors and reshape groups of every op that uses it. So:

- a higher-priority statement always beats a lower one where both could reach a dim;
- between equal priorities a *preferred* statement wins (conflicts.py prefers the ones whose
  outcome costs less), then the layout stated on the larger tensor (Shardy's "aggressive"
  rule), then the one stated first in program order;
- the result does not depend on the order ops are visited: it is byte-identical run to run.

Where two statements of one priority meet — one takes a dim the other wanted, or an axis
the other's factor needed — the solver records the pair in `conflicts` (winner, loser), for
conflicts.py to try the other way round.

A candidate crossing an op to its operands is stopped when another factor of that op already
uses one of its axes (Mesh-TensorFlow: two dims of one op may not be split over one mesh
axis); it still reaches the op's results, which are resharded after the op.
"""
from __future__ import annotations

import heapq
import itertools

from .rule import OpRule
from meshir.dialect.layout_projection import legalize, merge_prefix, split_layout
from .program_values import FunctionValues
from .seeds import RENAMED_RULE, RULE, Seed

Key = tuple[int, str]
WEAKEST = (99, 0, 0, 0)


def _renamed(strength: tuple, source: Key, target: Key) -> tuple:
    """A rule's layout arriving under another name ranks below that name's own rule."""
    if source[1] != target[1] and strength[0] >= RULE:
        return (RENAMED_RULE,) + tuple(strength[1:])
    return strength


class Solver:
    """Holds the layout chosen for every (value id, dim) and how strong its source is."""

    def __init__(self, values: FunctionValues, rules: list[OpRule], mesh_shape: dict[str, int],
                 preferred: dict[Key, int] | None = None):
        self.values, self.rules, self.mesh = values, rules, mesh_shape
        #: (value id, dim) of a seed -> its preference (lower wins) among seeds of its priority.
        self.preferred = preferred or {}
        #: (winner, loser) seeds of equal priority that met, in the order they met.
        self.conflicts: dict[tuple[Seed, Seed], None] = {}
        self.fixed: dict[Key, tuple] = {}
        self.assigned: dict[Key, tuple] = {}
        self._spread_done: set[Key] = set()
        self._factors_of: dict[Key, list[tuple[int, int]]] = {}
        self._reshapes_of: dict[Key, list[tuple[int, int]]] = {}
        self._queue: list = []
        self._order = itertools.count()
        #: Each seed by the order in its strength: every layout propagated from it carries that
        #: order, so `source` can tell which statement decided a dim (for provenance).
        self._seeds: dict[int, Seed] = {}
        for r, rule in enumerate(rules):
            for f, members in enumerate(rule.factors):
                for m in members:
                    self._factors_of.setdefault(m, []).append((r, f))
            for g, group in enumerate(rule.reshapes):
                for d in group.operand_dims:
                    self._reshapes_of.setdefault((group.operand, d), []).append((r, g))
                for d in group.result_dims:
                    self._reshapes_of.setdefault((group.result, d), []).append((r, g))

    # -- queries ---------------------------------------------------------------------------
    def layout(self, key: Key) -> tuple[str, ...] | None:
        """The layout chosen for a dim, None while nobody has given it one."""
        got = self.fixed.get(key) or self.assigned.get(key)
        return got[0] if got else None

    def final(self, key: Key) -> tuple[str, ...]:
        """The layout a dim ends with: chosen, or replicated when nothing reached it."""
        got = self.layout(key)
        return () if got is None else got

    def strength(self, key: Key) -> tuple:
        got = self.fixed.get(key) or self.assigned.get(key)
        return got[1] if got else WEAKEST

    def source(self, key: Key) -> Seed | None:
        """The seed (rule, written layout or shard) a dim's layout came from; None when
        nothing reached the dim."""
        got = self.fixed.get(key) or self.assigned.get(key)
        return self._seeds.get(got[1][-1]) if got else None

    # -- solving ---------------------------------------------------------------------------
    def solve(self, fixed: list[Seed], candidates: list[Seed]) -> None:
        """Fix the written layouts, then propagate them and the candidates to a fixed point."""
        for seed in fixed:
            strength = self._seed_strength(seed)
            self.fixed[(seed.value, seed.dim)] = (seed.axes, strength)
            self._push(strength, (seed.value, seed.dim), seed.axes)
        for seed in candidates:
            self._push(self._seed_strength(seed), (seed.value, seed.dim), seed.axes)
        while self._queue:
            strength, _, key, axes = heapq.heappop(self._queue)
            if key in self.fixed:
                if key not in self._spread_done:
                    self._spread_done.add(key)
                    self._spread(key, self.fixed[key][0], strength)
                continue
            if key in self.assigned:
                if axes != self.assigned[key][0]:
                    # Also where `axes` extend the dim's split: its ops still compute in the
                    # stronger (shorter) layout, and preferring the finer one may cost less.
                    self._conflict(self.assigned[key][1], strength)
                    self._maybe_extend(key, axes)
                continue
            info = self.values.values[key[0]]
            used = self._used_axes(key)
            legal = legalize(axes, info.type.size(key[1]), used, self.mesh)
            if set(axes) & used:
                for d in info.type.names:  # another dim of this value holds one of its axes
                    if (d != key[1] and (key[0], d) not in self.fixed
                            and set(axes) & set(self.layout((key[0], d)) or ())):
                        self._conflict(self.strength((key[0], d)), strength)
            if axes and not legal:
                continue  # nothing of it fits this value: leave the dim to weaker candidates
            self.assigned[key] = (legal, strength)
            self._spread(key, legal, strength)

    def _maybe_extend(self, key: Key, axes) -> None:
        """A propagated split may grow when a later candidate extends it (its axes are a
        prefix of the candidate's): a reshape merge seen before all its parts were laid out
        gets the rest. A replicated pin (`@()`) never grows."""
        current, strength = self.assigned[key]
        if not current or len(axes) <= len(current) or tuple(axes[: len(current)]) != current:
            return
        info = self.values.values[key[0]]
        legal = legalize(axes, info.type.size(key[1]), self._used_axes(key), self.mesh)
        if len(legal) > len(current):
            self.assigned[key] = (legal, strength)
            self._spread(key, legal, strength)

    def _seed_strength(self, seed: Seed) -> tuple:
        order = next(self._order)
        self._seeds[order] = seed
        preference = self.preferred.get((seed.value, seed.dim), 0)
        return (seed.priority, preference, -self.values.values[seed.value].size, order)

    def _conflict(self, winner: tuple, loser: tuple) -> None:
        """Record that the statement of strength `winner` beat `loser`'s, when only the
        tie-breaks below priority decided it (a renamed rule arrives one priority down)."""
        if winner[0] == loser[0] and winner[-1] != loser[-1]:
            self.conflicts[(self._seeds[winner[-1]], self._seeds[loser[-1]])] = None

    def _push(self, strength, key: Key, axes) -> None:
        heapq.heappush(self._queue, (strength, next(self._order), key, tuple(axes)))

    def _used_axes(self, key: Key) -> set[str]:
        """Axes the value already spends on its other dims and on its pending partial."""
        info = self.values.values[key[0]]
        used = set(info.type.partial)
        for d in info.type.names:
            if d != key[1]:
                used.update(self.layout((key[0], d)) or ())
        return used

    def _spread(self, key: Key, axes, strength) -> None:
        for r, f in self._factors_of.get(key, ()):
            rule = self.rules[r]
            blocker = self._blocker(rule, f, axes, strength)
            blocked = blocker is not None
            if blocked:
                self._conflict(blocker, strength)
            for member in rule.factors[f]:
                if member == key or member in self.fixed:
                    continue
                # A blocked layout still reaches the op's results: the op computes without
                # it and the result is resharded after (often a cheap reduce_scatter).
                if not blocked or member[0] in rule.results:
                    self._push(_renamed(strength, key, member), member, axes)
        for r, g in self._reshapes_of.get(key, ()):
            self._project_reshape(self.rules[r].reshapes[g], key, strength)

    def _blocker(self, rule: OpRule, factor: int, axes, strength) -> tuple | None:
        """The strength of a layout another factor of the op holds one of these axes with,
        when stronger (fixed dims that are weaker have not been reached yet and do not
        count); None when nothing blocks them."""
        wanted = set(axes)
        for g, members in enumerate(rule.factors):
            if g == factor:
                continue
            for m in members:
                if self.strength(m) < strength and wanted & set(self.layout(m) or ()):
                    return self.strength(m)
        return None

    def _project_reshape(self, group, key: Key, strength) -> None:
        """Carry the layouts of one side of a reshape group to the other side."""
        from_operand = key[0] == group.operand and key[1] in group.operand_dims
        src, src_dims = (group.operand, group.operand_dims) if from_operand else (group.result, group.result_dims)
        dst, dst_dims = (group.result, group.result_dims) if from_operand else (group.operand, group.operand_dims)
        src_type, dst_type = self.values.values[src].type, self.values.values[dst].type
        merged = merge_prefix([src_type.size(d) for d in src_dims], [self.final((src, d)) for d in src_dims], self.mesh)
        if not merged:
            return
        for d, axes in zip(dst_dims, split_layout(merged, [dst_type.size(d) for d in dst_dims], self.mesh)):
            if axes and (dst, d) not in self.fixed:
                self._push(_renamed(strength, key, (dst, d)), (dst, d), axes)
