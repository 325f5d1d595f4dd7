"""Trip counts of compiled HLO loops that record none: XLA:TPU's compiled HLO keeps no
`known_trip_count`, so hlo_collectives reads the count from the loop itself (a counter
compared against a constant, stepped by 1 from a constant start). The oracle is the HLO's own
numbers; every other loop shape stays unknown, so its collectives count once and are listed."""
from __future__ import annotations

import pytest

from meshir.lowering.runtime import hlo_collectives as hlo

LOOP = """HloModule m, num_partitions=4
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%body (p: (s32[], f32[8])) -> (s32[], f32[8]) {
  %p = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %i.copy = s32[]{:T(256)} copy(%i)
  %one = s32[] constant(STEP)
  %next = s32[] add(%i.copy, %one)
  %x = f32[8]{0} get-tuple-element(%p), index=1
  %ar = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=%add
  ROOT %t = (s32[], f32[8]{0}) tuple(%next, %ar)
}
%cond (p: (s32[], f32[8])) -> pred[] {
  %p = (s32[], f32[8]{0}) parameter(0)
  %n = s32[] constant(LIMIT)
  %i = s32[] get-tuple-element(%p), index=0
  ROOT %c = pred[] compare(%i, %n), direction=DIRECTION
}
ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0)
  %z = s32[] constant(START)
  %z.copy = s32[] copy(%z)
  %t = (s32[], f32[8]{0}) tuple(%z.copy, %x)
  %w = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body
  ROOT %y = f32[8]{0} get-tuple-element(%w), index=1
}
"""


def loop(limit="7", start="0", step="1", direction="LT") -> str:
    return (LOOP.replace("LIMIT", limit).replace("START", start).replace("STEP", step)
            .replace("DIRECTION", direction))


@pytest.mark.parametrize("limit, start, trips", [("7", "0", 7), ("7", "2", 5), ("1", "0", 1), ("0", "0", 0),
                                                 ("3", "5", 0)])
def test_a_counted_loop_without_a_recorded_trip_count_is_read_from_its_condition(limit, start, trips):
    text = loop(limit, start)
    repeats = hlo.computation_repeats(text)
    assert repeats["body"] == trips and repeats["cond"] == trips and repeats["main"] == 1
    summary = hlo.summarize(hlo.parse_collectives(text), repeats)
    assert summary["bytes_per_device"] == trips * 48 and "unknown_repeats" not in summary  # 2 (n-1)/n · 32 B


OTHER_LOOPS = {
    "steps by 2": loop(step="2"),
    "counter <= N": loop(direction="LE"),
    "counter > N": loop(direction="GT"),
    "a limit that is no constant": loop().replace("%n = s32[] constant(7)", "%n = s32[] get-tuple-element(%p), index=0"),
    "a start that is no constant": loop().replace("%z = s32[] constant(0)", "%z = s32[] parameter(1)"),
}


@pytest.mark.parametrize("text", OTHER_LOOPS.values(), ids=OTHER_LOOPS.keys())
def test_any_other_loop_stays_unknown_and_counts_once(text):
    repeats = hlo.computation_repeats(text)
    assert repeats["body"] is None
    summary = hlo.summarize(hlo.parse_collectives(text), repeats)
    assert summary["bytes_per_device"] == 48 and summary["unknown_repeats"] == ["ar"]


def test_a_recorded_trip_count_wins_over_the_condition():
    text = loop("7").replace("condition=%cond, body=%body", 'condition=%cond, body=%body, '
                             'backend_config={"known_trip_count":{"n":"3"}}')
    repeats = hlo.computation_repeats(text)
    assert repeats["body"] == 3 and repeats["main"] == 1
    found = hlo.parse_collectives(text)
    assert hlo.summarize(found)["bytes_per_device"] == 48  # without repeats: once
    assert hlo.summarize(found, repeats)["bytes_per_device"] == 3 * 48
