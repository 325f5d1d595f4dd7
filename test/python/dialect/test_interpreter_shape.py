"""Reference interpreter: broadcast, reshape, rename, transpose, slice, concat, pad, shift."""
from __future__ import annotations

import numpy as np
import pytest

RNG = np.random.default_rng(2)


def test_broadcast_adds_names_and_reorders(run_mtf_op):
    x = RNG.standard_normal((2, 3)).astype(np.float32)  # [b, d]
    got = run_mtf_op("mtf.broadcast", ["b=2, d=3, f32"], "d=3, c=4, b=2, f32", x)
    assert got.shape == (3, 4, 2)
    for c in range(4):
        np.testing.assert_array_equal(got[:, c, :], x.T)


def test_broadcast_a_scalar(run_mtf_op):
    got = run_mtf_op("mtf.broadcast", ["i32"], "a=2, b=2, i32", np.int32(7))
    np.testing.assert_array_equal(got, np.full((2, 2), 7))


def test_reshape_merges_names(run_mtf_op):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = run_mtf_op("mtf.reshape", ["a=2, b=3, c=4, f32"], "ab=6, c=4, f32", x)
    np.testing.assert_array_equal(got, x.reshape(6, 4))


def test_reshape_splits_names(run_mtf_op):
    x = np.arange(12, dtype=np.int32)
    got = run_mtf_op("mtf.reshape", ["n=12, i32"], "p=3, q=2, r=2, i32", x)
    np.testing.assert_array_equal(got, x.reshape(3, 2, 2))


def test_rename_keeps_the_data(run_mtf_op):
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    got = run_mtf_op("mtf.rename", ["a=2, b=3, f32"], "p=2, b=3, f32", x)
    np.testing.assert_array_equal(got, x)


def test_transpose_reorders_by_name(run_mtf_op):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)  # [a, b, c]
    got = run_mtf_op("mtf.transpose", ["a=2, b=3, c=4, f32"], "c=4, a=2, b=3, f32", x)
    np.testing.assert_array_equal(got, np.moveaxis(x, 2, 0))


def test_slice_takes_a_window(run_mtf_op):
    x = np.arange(2 * 6 * 3, dtype=np.float32).reshape(2, 6, 3)
    got = run_mtf_op("mtf.slice", ["a=2, s=6, c=3, f32"], "a=2, s=3, c=3, f32", x, attrs='dim = "s", start = 2')
    np.testing.assert_array_equal(got, x[:, 2:5, :])


def test_concat_three_operands(run_mtf_op):
    xs = [RNG.standard_normal((2, n)).astype(np.float32) for n in (1, 3, 2)]
    types = [f"a=2, s={n}, f32" for n in (1, 3, 2)]
    got = run_mtf_op("mtf.concat", types, "a=2, s=6, f32", *xs, attrs='dim = "s"')
    np.testing.assert_array_equal(got, np.hstack(xs))


def test_pad_with_value_and_default(run_mtf_op):
    x = np.arange(6, dtype=np.float32).reshape(3, 2)  # [s, c]
    attrs = 'dim = "s", low = 1, high = 2, value = -1.5'
    got = run_mtf_op("mtf.pad", ["s=3, c=2, f32"], "s=6, c=2, f32", x, attrs=attrs)
    expected = np.vstack([np.full((1, 2), -1.5), x, np.full((2, 2), -1.5)])
    np.testing.assert_array_equal(got, expected)
    attrs = 'dim = "c", low = 0, high = 2'  # value defaults to 0
    got = run_mtf_op("mtf.pad", ["s=3, c=2, i32"], "s=3, c=4, i32", x.astype(np.int32), attrs=attrs)
    np.testing.assert_array_equal(got, np.hstack([x, np.zeros((3, 2))]))


def _shift_reference(x, offset, fill, wrap):
    n = len(x)
    out = []
    for i in range(n):
        j = i - offset
        if wrap:
            out.append(x[j % n])
        else:
            out.append(x[j] if 0 <= j < n else fill)
    return np.array(out, dtype=x.dtype)


@pytest.mark.parametrize("offset", [0, 1, 2, -1, -3, 5, 7, -9])
@pytest.mark.parametrize("wrap", [False, True])
def test_shift_along_a_dim(run_mtf_op, offset, wrap):
    x = np.arange(1, 6, dtype=np.float32)
    attrs = f'dim = "s", offset = {offset}, wrap = {str(wrap).lower()}, fill = 9.0'
    got = run_mtf_op("mtf.shift", ["s=5, f32"], "s=5, f32", x, attrs=attrs)
    np.testing.assert_array_equal(got, _shift_reference(x, offset, 9.0, wrap))


def test_shift_default_fill_and_other_dims(run_mtf_op):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)  # [b, s]
    got = run_mtf_op("mtf.shift", ["b=3, s=4, i32"], "b=3, s=4, i32", x, attrs='dim = "s", offset = 1')
    np.testing.assert_array_equal(got, np.stack([_shift_reference(row, 1, 0, False) for row in x]))
