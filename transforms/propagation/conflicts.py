"""Conflicts resolved by cost: where two statements of one priority meet, the outcome whose
collectives cost less wins.

The solver settles a conflict between equal priorities by the larger tensor, then program
order (solver.py): a rule of thumb that ignores what each side costs downstream. Here every
conflict it records is tried the other way round: the loser is *preferred* (ranked above every
statement of its priority not preferred before it), the function is solved again, and the new
outcome is kept when it costs less (`outcome_cost`). Greedy and deterministic: conflicts are
tried in the order the solver met them, those of a kept outcome after them, at most
MAX_TRIALS solves per function beyond the first. A priority is never crossed: a user's
constraint still beats any written layout, which beats any rule, whatever they cost.

The cost of an outcome is what collective insertion will spend on it, from the one cost model
(transforms/analysis/cost_model.py, the planner's objective: bytes per device by default):
- every reshard propagation leaves (an operand an op sees in another layout than it has, a
  result kept in another layout than its op computes), priced by the reshard planner, once
  per value and layout (canonicalization merges equal collectives), for the ops whose
  results are used (it erases the others);
- every pending sum an op leaves (a contraction, reduction or lookup over a split name),
  priced as the planner's completion of it into the result's layout (an upper bound: a lazy
  all-reduce may later merge sums or turn one into a reduce_scatter);
on equal cost, the work of one device (points of each op's iteration space it computes, so a
computation left replicated costs more), then fewer collectives.
"""
from __future__ import annotations

import math

from meshir.dialect.diagnostics import MeshIRError
from meshir.dialect.local_semantics import result_partial
from meshir.dialect.ops import YieldOp
from meshir.dialect.tensor_type import TensorType

from ..collectives.reshard_plan import plan_cost, plan_reshard
from ..analysis.cost_model import BYTES, Cost, CostModel, group_size
from .rule import OpRule
from .program_values import FunctionValues
from .reshards import final_type, laid_out_ops, op_layouts, seen_as
from .seeds import Seed
from .solver import Solver

#: Re-solves per function, at most: enough for every conflict of a hand-annotated program;
#: a program laid out by rules alone has few (one rule per name).
MAX_TRIALS = 32


def solve_by_cost(values: FunctionValues, rules: list[OpRule], mesh_shape: dict[str, int], fixed: list[Seed],
                  candidates: list[Seed], model: CostModel = BYTES, max_trials: int | None = None) -> Solver:
    """The solver of the cheapest outcome found by trying each conflict the other way round
    (at most `max_trials` times, MAX_TRIALS by default)."""
    max_trials = MAX_TRIALS if max_trials is None else max_trials

    def solve(preferred: dict) -> Solver:
        solver = Solver(values, rules, mesh_shape, preferred)
        solver.solve(fixed, candidates)
        return solver

    best = solve({})
    if not best.conflicts:
        return best
    best_cost = outcome_cost(values, rules, best, mesh_shape, model)
    queue, tried, trials = list(best.conflicts), set(), 0
    while queue and trials < max_trials:
        _, loser = queue.pop(0)
        key = (loser.value, loser.dim)
        if key in best.preferred or key in tried:
            continue
        tried.add(key)
        trial = solve({**best.preferred, key: -(len(best.preferred) + 1)})
        trials += 1
        cost = outcome_cost(values, rules, trial, mesh_shape, model)
        if cost < best_cost:  # a new outcome: its conflicts, tried or not, may now pay
            best, best_cost, queue, tried = trial, cost, list(trial.conflicts), set()
    return best


def outcome_cost(values: FunctionValues, rules: list[OpRule], solver: Solver, mesh_shape: dict[str, int],
                 model: CostModel = BYTES) -> tuple:
    """(the model's objective, work per device, collectives) of the solver's outcome."""
    finals: dict[int, TensorType] = {}

    def final(vid: int) -> TensorType:
        if vid not in finals:
            finals[vid] = final_type(values, solver, vid)
        return finals[vid]

    total, work, moved = Cost(), 0, set()
    for rule in _live(laid_out_ops(rules), values):
        wanted = op_layouts(rule, values, solver, mesh_shape)
        seen = [seen_as(final(v), v, wanted) for v in rule.operands]
        for vid, t in zip(rule.operands, seen):
            if (vid, t) not in moved:  # ops seeing one value alike share its reshard (CSE)
                moved.add((vid, t))
                total = total + _reshard_cost(final(vid), t, mesh_shape, model)
        work += _points(rule, values, wanted, mesh_shape)
        for vid in rule.results:
            computed = seen_as(final(vid), vid, wanted)
            if rule.by_name:
                axes, reduction = result_partial(rule.op, seen, computed)
                if axes:
                    computed = computed.with_partial(axes, reduction)
            total = total + _reshard_cost(computed, final(vid), mesh_shape, model)
    key = model.key(total)
    return (key[0], work) + key[1:]


def _live(rules: list[OpRule], values: FunctionValues) -> list[OpRule]:
    """The ops whose results reach the function's results: canonicalization erases the
    others after collective insertion, with the collectives they needed."""
    live = set()
    for op in reversed(values.ops):
        if isinstance(op, YieldOp) or op.operation.name == "func.return" or \
                any(values.id_of(r) in live for r in op.operation.results):
            live.update(values.id_of(v) for v in op.operation.operands)
    return [r for r in rules if any(v in live for v in r.results)]


def _reshard_cost(have: TensorType, need: TensorType, mesh_shape, model: CostModel) -> Cost:
    if have == need:
        return Cost()
    try:
        return plan_cost(plan_reshard(have, need, mesh_shape, model), mesh_shape, model)
    except MeshIRError:  # e.g. a pending sum the user wrote: collective insertion reports it
        return Cost(math.inf, 0, math.inf)


def _points(rule: OpRule, values: FunctionValues, wanted: dict, mesh_shape) -> int:
    """Points of the op's iteration space one device computes: each factor (a name the
    operands and results share, contracted ones included) once, as the op splits it; an op
    without factors (a reshape) computes its results' shards."""
    if not rule.factors:
        return sum(math.prod(seen_as(values.values[v].type, v, wanted).local_shape(mesh_shape)) for v in rule.results)
    points = 1
    for members in rule.factors:
        vid, dim = members[0]
        points *= values.values[vid].type.size(dim) // group_size(wanted.get(members[0], ()), mesh_shape)
    return points
