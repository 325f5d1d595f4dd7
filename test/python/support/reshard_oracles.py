"""Two oracles for the reshard planner (a test helper, not a test file).

- `brute_force_bytes`: the fewest bytes per device over every sequence of at most `depth`
  collectives (never bringing in a mesh axis neither side uses, as MeshIR's plans), written from the collectives' definitions here and sharing no code with the
  planner (transforms/collectives/reshard_plan.py) nor the dialect: layouts are tuples of
  axis tuples, each collective's layout change and its ring bytes are restated below, and
  the minimum over all sequences is taken level by level (the cheapest way to each layout
  with k collectives, for k up to `depth`).
- `shardy_bytes`: Shardy's own plan for the same pair (`sdy-reshard-to-collectives`, run
  through jaxlib on an `sdy.reshard`), priced with the same ring formulas; None when its plan
  uses sub-axes (`"x":(1)2`), which `!mtf.tensor` cannot express.

`random_pairs` makes the seeded (source, target) pairs both the property tests and
benchmarks/reshard_plans.py run.
"""
from __future__ import annotations

import itertools
import math
import random
import re

Layout = tuple[tuple[str, ...], ...]
#: The meshes of the random pairs: 1-, 2- and 3-D.
MESHES = [{"x": 8}, {"x": 4, "y": 2}, {"x": 2, "y": 2}, {"x": 2, "y": 2, "z": 2}]
ITEMSIZE = 4  # f32


def _shard_elements(sizes, layout: Layout, mesh) -> int | None:
    total = 1
    for size, axes in zip(sizes, layout):
        split = math.prod(mesh[a] for a in axes)
        if size % split:
            return None
        total *= size // split
    return total


def _moves(sizes, layout: Layout, pending: tuple[str, ...], keep: tuple[str, ...], mesh, involved):
    """(bytes per device, new layout, new pending) of every collective from a state; slices
    bring in only `involved` axes (those the source or target uses, as MeshIR's plans do)."""
    shard = _shard_elements(sizes, layout, mesh) * ITEMSIZE
    used = {a for axes in layout for a in axes} | set(pending)
    free = [a for a in mesh if a not in used and a in involved]
    done = [a for a in pending if a not in keep]
    group = lambda axes: math.prod(mesh[a] for a in axes)  # noqa: E731
    ranks = range(len(layout))

    def put(i, axes):
        return tuple(axes if j == i else layout[j] for j in ranks)

    for k in range(1, len(done) + 1):
        for chosen in itertools.combinations(done, k):  # all_reduce
            n = group(chosen)
            yield 2 * (n - 1) * shard // n, layout, tuple(a for a in pending if a not in chosen)
        for chosen in itertools.permutations(done, k):  # reduce_scatter onto a dim
            n = group(chosen)
            for i in ranks:
                yield (n - 1) * shard // n, put(i, layout[i] + chosen), tuple(a for a in pending if a not in chosen)
    for i in ranks:  # all_gather of the k minor-most axes
        for k in range(1, len(layout[i]) + 1):
            yield (group(layout[i][-k:]) - 1) * shard, put(i, layout[i][:-k]), pending
    for k in range(1, len(free) + 1):  # all_slice: free
        for chosen in itertools.permutations(free, k):
            for i in ranks:
                yield 0, put(i, layout[i] + chosen), pending
    for i in ranks:  # all_to_all of the k minor-most axes of dim i onto dim j
        for k in range(1, len(layout[i]) + 1):
            moved, n = layout[i][-k:], group(layout[i][-k:])
            for j in ranks:
                if j != i:
                    new = tuple(layout[i][:-k] if m == i else layout[j] + moved if m == j else layout[m] for m in ranks)
                    yield (n - 1) * shard // n, new, pending
    pool = [a for axes in layout for a in axes]  # collective_permute: same split factor per dim
    for order in itertools.permutations(pool):
        for cuts in itertools.product(range(len(pool) + 1), repeat=len(layout) - 1):
            if list(cuts) != sorted(cuts):
                continue
            bounds = (0, *cuts, len(pool))
            new = tuple(tuple(order[bounds[m]:bounds[m + 1]]) for m in ranks)
            if new != layout and all(group(new[m]) == group(layout[m]) for m in ranks):
                yield shard, new, pending


def brute_force_bytes(sizes, source: Layout, target: Layout, mesh, source_pending=(), target_pending=(),
                      depth: int = 4) -> int | None:
    """The fewest bytes per device from (source, pending) to (target, pending) over every
    sequence of at most `depth` collectives; None when none reaches it."""
    start, goal = (source, tuple(source_pending)), (target, tuple(target_pending))
    involved = {a for axes in source + target for a in axes} | set(source_pending) | set(target_pending)
    best = {start: 0}
    level = {start: 0}
    for _ in range(depth):
        following: dict = {}
        for (layout, pending), cost in level.items():
            for sent, new_layout, new_pending in _moves(sizes, layout, pending, tuple(target_pending), mesh, involved):
                if _shard_elements(sizes, new_layout, mesh) is None:
                    continue
                state = (new_layout, new_pending)
                if cost + sent < following.get(state, math.inf):
                    following[state] = cost + sent
        for state, cost in following.items():
            best[state] = min(best.get(state, math.inf), cost)
        level = following
    return best.get(goal)


# -- Shardy's plan ---------------------------------------------------------------------------
_SHARDING = re.compile(r"<@mesh, \[(.*?)\]>")


def _dims_text(layout: Layout) -> str:
    return ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in layout)


def _parse_dims(text: str) -> Layout:
    return tuple(tuple(re.findall(r'"(\w+)"', part)) for part in re.findall(r"\{[^}]*\}", text))


def shardy_plan(sizes, source: Layout, target: Layout, mesh) -> str:
    """The function after `sdy-reshard-to-collectives` on `sdy.reshard` source -> target."""
    from meshir._jax_private import ir, passmanager
    from meshir.dialect import get_context

    shape = "tensor<" + "".join(f"{s}x" for s in sizes) + "f32>"
    axes = ", ".join(f'"{a}"={n}' for a, n in mesh.items())
    text = (f"sdy.mesh @mesh = <[{axes}]>\n"
            f"func.func @main(%arg0: {shape} {{sdy.sharding = #sdy.sharding<@mesh, [{_dims_text(source)}]>}}) "
            f"-> {shape} {{\n"
            f"  %0 = sdy.reshard %arg0 <@mesh, [{_dims_text(target)}]> : {shape}\n"
            f"  return %0 : {shape}\n}}\n")
    with get_context():
        module = ir.Module.parse(text)
        passmanager.PassManager.parse("builtin.module(func.func(sdy-reshard-to-collectives))").run(module.operation)
        return str(module)


def shardy_bytes(sizes, source: Layout, target: Layout, mesh) -> tuple[int, int] | None:
    """(bytes per device, collectives) of Shardy's plan; None when it needs sub-axes."""
    text = shardy_plan(sizes, source, target, mesh)
    if ":(" in text:
        return None
    current, total, count = source, 0, 0
    for line in text.splitlines():
        match = re.search(r"sdy\.(all_gather|all_slice|all_to_all|collective_permute)\b(.*)", line)
        if not match:
            continue
        kind, rest = match.groups()
        result = _parse_dims(_SHARDING.search(rest.split("out_sharding=")[1]).group(1))
        shard = _shard_elements(sizes, current, mesh) * ITEMSIZE
        if kind == "all_gather":
            n = math.prod(mesh[a] for a in _moved_axes(current, result))
            total += (n - 1) * shard
        elif kind == "all_to_all":
            for axes_text in re.findall(r"\{([^}]*)\}: \d+->\d+", rest):
                n = math.prod(mesh[a] for a in re.findall(r'"(\w+)"', axes_text))
                total += (n - 1) * shard // n
        elif kind == "collective_permute":
            total += shard
        count += 1
        current = result
    assert current == target, (current, target, text)
    return total, count


def _moved_axes(before: Layout, after: Layout) -> list[str]:
    return [a for axes in before for a in axes if a not in {x for ax in after for x in ax}]


# -- random pairs (the property tests and benchmarks/reshard_plans.py) --------------------------
def random_pair(rng: random.Random, with_partial: bool):
    """A mesh of 1 to 3 axes, 1 to 3 dims of 8 to 32, two random layouts; with
    `with_partial`, pending axes on the source, some kept by the target."""
    mesh = rng.choice(MESHES)
    rank = rng.randint(1, 3)
    sizes = tuple(rng.choice([8, 16, 32]) for _ in range(rank))

    def layout(exclude=()):
        axes = [a for a in mesh if a not in exclude]
        rng.shuffle(axes)
        dims = [()] * rank
        for a in axes:
            if rng.random() < 0.7:
                i = rng.randrange(rank)
                dims[i] = dims[i] + (a,)
        return tuple(dims)

    pending = tuple(a for a in mesh if with_partial and rng.random() < 0.4)
    source = layout(exclude=pending)
    keep = tuple(a for a in pending if rng.random() < 0.3)
    target = layout(exclude=keep)
    return mesh, sizes, source, target, pending, keep


def random_pairs(count: int, seed: int, with_partial: bool):
    """`count` random pairs (mesh, sizes, source, target, pending, kept pending), seeded."""
    rng = random.Random(seed)
    return [random_pair(rng, with_partial) for _ in range(count)]
