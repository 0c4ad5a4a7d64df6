"""`ops._util.finite_max`, the row max that softmax, logsumexp, cross-entropy and attention subtract,
and `row_max`, its fast way for short rows (the max of a transposed copy).

`row_max` must give exactly numpy's max on any layout, non-finite maxima included; `finite_max`
the same with a non-finite max (a row of -inf, a NaN) replaced by 0.
"""
import numpy as np
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from minitensor.ops._util import finite_max, row_max


def _reference(x, axis):
    with np.errstate(invalid="ignore"):
        m = np.max(x, axis=axis, keepdims=True)
    return np.where(np.isfinite(m), m, 0).astype(x.dtype)


special = st.sampled_from([-np.inf, np.inf, np.nan])


@given(x=hnp.arrays(st.sampled_from([np.float32, np.float64]),
                    hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=40),
                    elements=st.floats(-1e3, 1e3, width=32) | special),
       transpose=st.booleans())
def test_equals_numpys_max_with_non_finite_maxima_as_zero(x, transpose):
    if transpose:  # a non-contiguous view, as a transposed tensor gives
        x = np.swapaxes(x, 0, -1)
    got = finite_max(x, -1)
    np.testing.assert_array_equal(got, _reference(x, -1))
    assert got.dtype == x.dtype and got.shape == x.shape[:-1] + (1,)


def test_short_rows_take_the_fast_way_and_agree():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4, 16, 16)).astype(np.float32)  # attention scores at T = 16
    x[0, 0, 3] = -np.inf  # a fully masked row: its max becomes 0, not -inf
    x[1, 2, 5, 7] = np.nan
    np.testing.assert_array_equal(finite_max(x, -1), _reference(x, -1))
    np.testing.assert_array_equal(finite_max(x, 1), _reference(x, 1))  # another axis: numpy's way


def test_empty_input_gives_zeros_of_the_reduced_shape():
    assert finite_max(np.zeros((3, 0), np.float32), -1).shape == (3, 1)
    assert finite_max(np.zeros((0, 5), np.float32), -1).shape == (0, 1)


@given(x=hnp.arrays(st.sampled_from([np.float32, np.float64]),
                    hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=40),
                    elements=st.floats(-1e3, 1e3, width=32) | special),
       transpose=st.booleans())
def test_row_max_equals_numpys_max_as_it_is(x, transpose):
    if transpose:
        x = np.swapaxes(x, 0, -1)
    with np.errstate(invalid="ignore"):
        want = np.max(x, axis=-1, keepdims=True)
    np.testing.assert_array_equal(row_max(x), want)
