"""attention.masks: causal and padding masks, and how every mask kind is read."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import attention
import minitensor as mt
from attention.masks import prepare_mask


def test_causal_mask_is_lower_triangular_bool():
    m = attention.causal_mask(3)
    assert m.dtype == mt.bool
    assert m.tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    assert attention.causal_mask(2, 3).tolist() == [[True, False, False], [True, True, False]]


def test_padding_mask_shape_and_values():
    m = attention.padding_mask([2, 0, 3], 3)
    assert tuple(m.shape) == (3, 1, 1, 3) and m.dtype == mt.bool
    assert m[:, 0, 0].tolist() == [[True, True, False], [False, False, False], [True, True, True]]
    assert attention.padding_mask(mt.tensor([1]), 2)[0, 0, 0].tolist() == [True, False]


@pytest.mark.parametrize("lengths", [[4], [-1], [[1, 2]], [1.5]])
def test_padding_mask_rejects_bad_lengths(lengths):
    with pytest.raises(ValueError, match="padding_mask"):
        attention.padding_mask(lengths, 3)


@given(st.sampled_from([(3, 4), (2, 1, 1, 4), (2, 5, 3, 4), (1, 4), (4,)]))
def test_mask_shapes_that_broadcast_to_the_scores_are_accepted(shape):
    scores = (2, 5, 3, 4)
    m = prepare_mask(mt.from_numpy(np.ones(shape, bool)), False, scores, np.float64)
    assert np.broadcast_shapes(m.allowed.shape, scores) == scores


@given(st.sampled_from([(3, 5), (3, 2, 1, 4), (2, 1, 1, 1, 4), (5, 4, 4)]))
def test_mask_that_does_not_broadcast_names_both_shapes(shape):
    with pytest.raises(RuntimeError) as e:
        prepare_mask(mt.from_numpy(np.ones(shape, bool)), False, (2, 5, 3, 4), np.float64)
    assert str(shape) in str(e.value) and "(2, 5, 3, 4)" in str(e.value)


def test_float_mask_splits_into_allowed_and_bias():
    fm = mt.tensor([[0.0, -math.inf], [2.0, -1e9]], dtype=mt.float64)
    m = prepare_mask(fm, False, (2, 2), np.float32)
    assert m.allowed.tolist() == [[True, False], [True, True]]   # -1e9 is a number, not a mask
    assert m.bias.dtype == mt.float32                            # cast to the scores' dtype
    assert m.bias.tolist() == [[0.0, 0.0], [2.0, -1e9]]


def test_rows_and_columns_with_nothing_allowed_are_found():
    mask = mt.tensor([[True, False, False], [False, False, False]])
    m = prepare_mask(mask, False, (2, 3), np.float64)
    assert m.row_any[:, 0].tolist() == [True, False]
    assert m.col_any[:, 0].tolist() == [True, False, False]
    m = prepare_mask(None, True, (3, 3), np.float64)           # causal: every query sees a key, every key a query
    assert m.row_any is None and m.col_any is None
    assert prepare_mask(None, False, (3, 3), np.float64).row_any is None


def test_string_mask_is_a_type_error():
    with pytest.raises(TypeError, match="mask"):
        prepare_mask(np.array([["a"]]), False, (1, 1), np.float64)
