"""Reference interpreter: one_hot and gather (out-of-range ids give zeros)."""
from __future__ import annotations

import numpy as np
import pytest

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("elem, dtype", [("f32", np.float32), ("i32", np.int32), ("i1", np.bool_)])
def test_one_hot(run_mtf_op, elem, dtype):
    ids = np.array([[0, 2, 3], [-1, 1, 7]], np.int32)  # [b, s]; 3, -1 and 7 are out of range
    got = run_mtf_op("mtf.one_hot", ["b=2, s=3, i32"], f"b=2, s=3, k=3, {elem}", ids)
    assert got.dtype == np.dtype(dtype)
    expected = np.zeros((2, 3, 3), dtype)
    for b in range(2):
        for s in range(3):
            if 0 <= ids[b, s] < 3:
                expected[b, s, ids[b, s]] = 1
    np.testing.assert_array_equal(got, expected)


def test_one_hot_depth_first(run_mtf_op):
    ids = np.array([1, 0, 4], np.int64)  # [s]
    got = run_mtf_op("mtf.one_hot", ["s=3, i64"], "v=5, s=3, f32", ids)
    np.testing.assert_array_equal(got, np.eye(5, dtype=np.float32)[ids].T)


def test_gather_rows(run_mtf_op):
    table = RNG.standard_normal((5, 3)).astype(np.float32)  # [v, d]
    ids = np.array([[0, 4, 2], [1, 1, 3]], np.int32)  # [b, s]
    got = run_mtf_op("mtf.gather", ["v=5, d=3, f32", "b=2, s=3, i32"], "b=2, s=3, d=3, f32", table, ids,
                     attrs='dim = "v"')
    np.testing.assert_array_equal(got, table[ids])


def test_gather_out_of_range_ids_give_zeros(run_mtf_op):
    table = RNG.standard_normal((5, 3)).astype(np.float32) + 10  # no zero entries
    ids = np.array([-1, 2, 5, 100, 0], np.int32)  # [s]
    got = run_mtf_op("mtf.gather", ["v=5, d=3, f32", "s=5, i32"], "d=3, s=5, f32", table, ids, attrs='dim = "v"')
    expected = np.stack([table[i] if 0 <= i < 5 else np.zeros(3, np.float32) for i in ids], axis=1)
    np.testing.assert_array_equal(got, expected)


def test_gather_along_a_middle_dim_with_result_reordered(run_mtf_op):
    table = np.arange(2 * 4 * 3, dtype=np.int32).reshape(2, 4, 3)  # [e, v, d]
    ids = np.array([3, -2, 0], np.int64)  # [s]
    types = ["e=2, v=4, d=3, i32", "s=3, i64"]
    got = run_mtf_op("mtf.gather", types, "d=3, s=3, e=2, i32", table, ids, attrs='dim = "v"')
    expected = np.zeros((3, 3, 2), np.int32)
    for d in range(3):
        for s in range(3):
            for e in range(2):
                if 0 <= ids[s] < 4:
                    expected[d, s, e] = table[e, ids[s], d]
    np.testing.assert_array_equal(got, expected)
