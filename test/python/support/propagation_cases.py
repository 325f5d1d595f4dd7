"""Shardy's propagation tests where annotations conflict or propagation has a choice,
translated for both sides (`propagation_programs.py` says how). The case data shared by
benchmarks/propagation_conflicts.py and test_propagation_conflicts_vs_shardy.py.

Source files are in openxla/shardy, shardy/dialect/sdy/transforms/propagation/test/. Each
case keeps Shardy's function name, mesh axes and shapes; dims get names (dot_general's
contracting dims share one, its batching dims another). Translation notes common to all:
an open dim with axes (`{"a", ?}`) on an argument is written closed in mtf (`@a`); a
`stablehlo.dot` is written as the equal dot_general.
"""
from __future__ import annotations

from propagation_programs import Case, T, add, broadcast, concat, dot, rename, shard

AB = {"a": 2, "b": 2}
ABC = {"a": 2, "b": 2, "c": 2}
ABCD = {"a": 2, "b": 2, "c": 2, "d": 2}

AGGRESSIVE = "aggressive_propagation.mlir"
OP_PRIORITY = "op_priority_propagation.mlir"
BASIC = "basic_propagation.mlir"
USER_PRIORITY = "user_priority_propagation.mlir"
NO_PRIORITIES = "user priorities (p0, p1) dropped on both sides: mtf has none"

CASES = [
    # -- aggressive_propagation.mlir -------------------------------------------------------
    Case("no_conflict", AGGRESSIVE, AB,
         {"x": T("i=8 j=8", "a", "b"), "y": T("i=8 j=8"), "w": T("j=8 k=16")},
         (add("s", "x", "y"), dot("d", "s", "w", "i k")), (("d", None),),
         "the control: nothing conflicts"),
    Case("fake_conflict_between_two_non_contracting_dims", AGGRESSIVE, AB,
         {"x": T("i=256 k=512", "a,?", "?"), "w": T("j=128 k=512")},
         (dot("d", "x", "w", "i j", result=("?", "a,?")),), (("d", ("?", "a,?")),)),
    Case("fake_conflict_between_contracting_and_non_contracting_dims", AGGRESSIVE, ABC,
         {"x": T("i=256 k=512", "a", "b,c"), "w": T("j=128 k=512", "c,b", "a")},
         (dot("d", "x", "w", "i j"),), (("d", None),)),
    Case("fake_conflict_closed_dims", AGGRESSIVE, ABC,
         {"x": T("i=8 j=8", "a,?", "b"), "y": T("i=8 j=8", "", "b,c,?")},
         (add("s", "x", "y"),), (("s", None),)),
    Case("real_conflict_within_a_factor", AGGRESSIVE, ABC,
         {"x": T("i=8 j=8", "a,?", ""), "y": T("i=8 j=8", "b,?", "")},
         (add("s", "x", "y"),), (("s", None),)),
    Case("real_and_fake_conflicts", AGGRESSIVE, ABC,
         {"x": T("i=8 j=8", "a,?", "?"), "y": T("i=8 j=8", "b,?", "a,?")},
         (add("s", "x", "y"),), (("s", None),)),
    Case("real_conflict_across_factors_same_tensors_size", AGGRESSIVE, ABC,
         {"x": T("i=8 j=8", "a", "?"), "y": T("i=8 j=8", "?", "a")},
         (add("s", "x", "y"),), (("s", None),)),
    Case("real_conflict_across_factors_diff_tensors_size", AGGRESSIVE, ABC,
         {"x": T("i=8 k=4", "a,b", "?"), "w": T("k=4 j=16", "?", "a,c")},
         (dot("d", "x", "w", "i j"),), (("d", None),)),
    Case("partial_conflict_across_factors", AGGRESSIVE, ABC,
         {"x": T("b=4 i=16 k=8", "a", "b", ""), "w": T("b=4 k=8 j=32")},
         (dot("d", "x", "w", "b i j", result=("a,b", "", "")),), (("d", None),),
         "every dim doubled (2x8x4, 2x4x16 in Shardy's test): a batch dim of 2 over a,b is an uneven split"),
    Case("multiple_conflicts_across_factors", AGGRESSIVE, ABCD,
         {"x": T("b=2 i=8 k=4", "?", "a,b", "?"), "w": T("b=2 k=4 j=16", "?", "d,c", "b,a")},
         (dot("d", "x", "w", "b i j", result=("d", "?", "?")),), (("d", None),)),
    Case("avoid_sideways_propagation_if_result_is_closed_empty", AGGRESSIVE, AB,
         {"x": T("i=8", "a"), "y": T("i=8", "?")},
         (add("s", "x", "y", result=("",)),), (("s", None),)),
    Case("allow_sideways_propagation_if_result_is_open_empty", AGGRESSIVE, AB,
         {"x": T("i=8", "a,b"), "y": T("i=8", "?")},
         (add("s", "x", "y", result=("?",)),), (("s", None),),
         "the open empty result sharding constrains nothing: no written layout"),
    Case("allow_partial_sideways_propagation_if_conflicting_with_result", AGGRESSIVE, AB,
         {"x": T("i=8", "a,b"), "y": T("i=8", "?")},
         (add("s", "x", "y", result=("a",)),), (("s", None),)),
    Case("allow_sideways_propagation_if_result_fully_matches", AGGRESSIVE, AB,
         {"x": T("i=8", "a,b"), "y": T("i=8", "?")},
         (add("s", "x", "y", result=("a,b",)),), (("s", None),)),
    # -- op_priority_propagation.mlir ------------------------------------------------------
    Case("element_wise_over_dot_general", OP_PRIORITY, AB,
         {"x": T("i=8 k=8", "a,?", "?"), "w": T("k=8 j=8")},
         (dot("d", "x", "w", "i j"), add("s1", "d", "d"), add("s2", "s1", "s1")), (("s2", ("?", "a,?")),)),
    Case("element_wise_over_dot_general_flipped_op_order", OP_PRIORITY, AB,
         {"x": T("i=8 k=8", "a,?", "?"), "w": T("k=8 j=8")},
         (add("s1", "x", "x"), add("s2", "w", "w"), dot("d", "s1", "s2", "i j")), (("d", ("?", "a,?")),)),
    Case("sharding_constraint_propagated", OP_PRIORITY, AB,
         {"x": T("i=8 k=8", "a,?", "?"), "w": T("k=8 j=8")},
         (dot("d", "x", "w", "i j"), add("s1", "d", "d"), add("s2", "s1", "s1"), shard("c", "s2", "?", "a,?")),
         (("c", None),)),
    Case("chained_dot_generals", OP_PRIORITY, AB,
         {"x": T("i=8 k=8", "a,?", "?"), "w": T("k=8 j=8")},
         (dot("d0", "x", "w", "i j"), rename("r", "d0", "j l"), dot("d1", "d0", "r", "i l"),
          add("s1", "d1", "d1"), add("s2", "s1", "s1")), (("s2", ("?", "a,?")),),
         "d0 contracted with itself: its second use is an mtf.rename to (j, l)"),
    Case("unknown_op", OP_PRIORITY, AB,
         {"x": T("b=4 c=1 f=256", "a,?", "?", "?"), "y": T("b=4 c=1 f=256"), "z": T("b=4 c=1 f=256")},
         (concat("cat", ["x", "y", "z"], "c"),), (("cat", None),)),
    Case("pass_through_factor_higher_priority_than_reduction_factor", OP_PRIORITY, AB,
         {"x": T("i=32 k=1024"), "w": T("k=1024 j=16", "a,?", "b,?")},
         (dot("d", "x", "w", "i j"),), (("d", ("a,?", "b,?")),)),
    Case("broadcast_forward_higher_priority_than_backwards", OP_PRIORITY, AB,
         {"x": T("i=32", "a")},
         (broadcast("b1", "x", "i=32 j=16"), broadcast("b2", "b1", "i=32 j=16 k=8")), (("b2", ("", "a", "")),)),
    # -- basic_propagation.mlir ------------------------------------------------------------
    Case("closed_dim", BASIC, AB,
         {"x": T("i=8 k=8", "a", ""), "w": T("k=8 j=16", "", "b")},
         (dot("d", "x", "w", "i j", result=("", "?")),), (("d", None),)),
    Case("multi_axes", BASIC, AB,
         {"x": T("i=8 j=8", "b,a", ""), "y": T("i=8 j=8", "b,?", ""), "w": T("j=8 k=16")},
         (add("s", "x", "y"), dot("d", "s", "w", "i k")), (("d", None),)),
    Case("multi_axes_conflict", BASIC, ABC,
         {"x": T("i=8 j=8", "b,a", ""), "y": T("i=8 j=8", "b,c", ""), "z": T("i=8 j=8", "a,b", "")},
         (add("s0", "x", "y"), add("s1", "x", "z")), (("s0", None), ("s1", None))),
    Case("multi_axes_some_axes_incompatible", BASIC, AB,
         {"x": T("i=8 j=8", "a,b", ""), "y": T("i=8 j=8")},
         (add("s", "x", "y", result=("?", "b,?")),), (("s", None),)),
    # -- user_priority_propagation.mlir (priorities dropped) -------------------------------
    Case("different_priorities_from_args", USER_PRIORITY, ABC,
         {"x": T("i=8 j=8", "a", "?"), "y": T("i=8 j=8"), "w": T("j=8 k=16", "?", "a")},
         (add("s", "x", "y"), dot("d", "s", "w", "i k")), (("d", None),), NO_PRIORITIES),
    Case("different_priorities_from_ops", USER_PRIORITY, ABC,
         {"x": T("i=8 j=8"), "y": T("i=8 j=8"), "w": T("j=8 k=16")},
         (add("s0", "x", "x", result=("?", "a")), add("s1", "s0", "y"), dot("d", "s1", "w", "i k", result=("a", "?"))),
         (("d", None),), NO_PRIORITIES),
    Case("different_sharding_constraint_priorities", USER_PRIORITY, ABC,
         {"x": T("i=8 j=8"), "y": T("i=8 j=8")},
         (shard("c0", "x", "a", "?"), shard("c1", "y", "?", "a"), add("s0", "c1", "c1"), add("s1", "c0", "s0")),
         (("s1", None),), NO_PRIORITIES),
    Case("user_based_and_op_based", USER_PRIORITY, ABC,
         {"x": T("i=8 j=8", "a,?", "?"), "w": T("j=8 k=8", "a,?", "b,?")},
         (add("s0", "x", "x"), dot("d", "s0", "w", "i k"), add("s1", "d", "d"), add("s2", "s1", "s1")),
         (("s2", ("b,?", "?")),), NO_PRIORITIES),
]

#: Shardy's cases in those files left out: (file, function, why).
SKIPPED = [
    (AGGRESSIVE, "empty_mesh_replaced_closed_dim_respected", "an empty mesh (mtf has one mesh per function)"),
    (AGGRESSIVE, "avoid_sideways_propagation_if_result_is_closed_sub_axis", "a sub-axis (\"a\":(1)2)"),
    (AGGRESSIVE, "allow_sideways_propagation_if_no_conflicting_with_one_of_multiple_results",
     "a custom_call with two results"),
    (OP_PRIORITY, "data_flow_edge", "optimization_barrier and sdy.data_flow_edge"),
    (OP_PRIORITY, "manual_computation", "sdy.manual_computation"),
]
