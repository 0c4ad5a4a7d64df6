r"""`minitensor.testing`: assert_close's tolerances and messages, and what the strategies draw."""
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
from minitensor.testing import assert_close, default_tolerances, strategies as mst

# ---- assert_close -------------------------------------------------------------------------------

def test_default_tolerances_are_pytorchs():
    assert default_tolerances(np.float16) == (1e-3, 1e-5)
    assert default_tolerances(np.float32) == (1.3e-6, 1e-5)
    assert default_tolerances(np.float64) == (1e-7, 1e-7)
    assert default_tolerances(np.int64) == (0.0, 0.0) and default_tolerances(np.bool_) == (0.0, 0.0)
    assert default_tolerances(np.float32, np.float64) == (1.3e-6, 1e-5)  # the looser of the two


@pytest.mark.parametrize("dtype, inside, outside", [
    (np.float32, 1.0 + 1e-5, 1.0 + 3e-5),  # atol 1e-5 + rtol 1.3e-6 * 1
    (np.float64, 1.0 + 1.5e-7, 1.0 + 3e-7),  # atol 1e-7 + rtol 1e-7 * 1
    (np.float16, 1.0 + 9e-4, 1.0 + 2e-3),
])
def test_per_dtype_default_tolerance_is_applied(dtype, inside, outside):
    expected = np.array([1.0], dtype=dtype)
    assert_close(np.array([inside], dtype=dtype), expected)
    with pytest.raises(AssertionError):
        assert_close(np.array([outside], dtype=dtype), expected)


def test_integers_and_bools_must_match_exactly():
    assert_close(mt.tensor([1, 2]), [1, 2])
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        assert_close(mt.tensor([1, 2]), [1, 3])
    with pytest.raises(AssertionError):
        assert_close(mt.tensor([True]), [False])
    big = np.array([2 ** 62 + 1], dtype=np.int64)
    with pytest.raises(AssertionError):  # not compared through float64, which can't tell these apart
        assert_close(big, big - 1)


def test_accepts_tensors_arrays_numbers_and_nested_lists():
    assert_close(mt.tensor([[1.0, 2.0]]), [[1.0, 2.0]])
    assert_close([[1, 2]], np.array([[1, 2]]))
    assert_close(mt.tensor(2.5), 2.5)
    assert_close(3, 3.0)
    assert_close(mt.tensor([1.0], dtype=mt.float64), mt.tensor([1.0], dtype=mt.float64))
    assert_close([mt.tensor(1.0), mt.tensor(2.0)], [1.0, 2.0])


def test_mismatch_message_gives_count_worst_differences_and_indices():
    actual = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=mt.float64)
    expected = np.array([[1.0, 2.5, 3.0], [4.0, 5.0, 4.0]])
    with pytest.raises(AssertionError) as info:
        assert_close(actual, expected)
    msg = str(info.value)
    assert "Mismatched elements: 2 / 6 (33.3%)" in msg
    assert re.search(r"Greatest absolute difference: 2 at index \(1, 2\)", msg), msg
    assert re.search(r"Greatest relative difference: 0\.5 at index \(1, 2\)", msg), msg
    assert "up to 1e-07 allowed" in msg


def test_relative_and_absolute_worst_can_be_different_elements():
    with pytest.raises(AssertionError) as info:
        assert_close(np.array([100.0, 0.002]), np.array([101.0, 0.001]))
    msg = str(info.value)
    assert re.search(r"absolute difference: 1 at index \(0,\)", msg), msg
    assert re.search(r"relative difference: 1 at index \(1,\)", msg), msg


def test_shape_and_dtype_mismatches_are_reported_first():
    with pytest.raises(AssertionError, match=r"shapes differ: actual \(2,\) vs expected \(3,\)"):
        assert_close(mt.ones(2), np.ones(3, np.float32))
    with pytest.raises(AssertionError, match=r"dtypes differ: actual float32 vs expected float64"):
        assert_close(mt.ones(2), np.ones(2))
    assert_close(mt.ones(2), np.ones(2), check_dtype=False)


def test_nan_handling():
    with pytest.raises(AssertionError, match="NaN"):
        assert_close(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    assert_close(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), equal_nan=True)
    with pytest.raises(AssertionError, match="NaN on one side only"):
        assert_close(np.array([np.nan]), np.array([1.0]), equal_nan=True)


def test_infinities_match_only_themselves():
    assert_close(np.array([np.inf, -np.inf]), np.array([np.inf, -np.inf]))
    with pytest.raises(AssertionError):
        assert_close(np.array([np.inf]), np.array([-np.inf]))
    with pytest.raises(AssertionError):
        assert_close(np.array([np.inf]), np.array([1e308]), rtol=1.0, atol=1.0)


def test_explicit_tolerances_and_msg():
    assert_close(np.array([1.0]), np.array([1.1]), rtol=0.0, atol=0.2)
    with pytest.raises(ValueError, match="both rtol and atol"):
        assert_close(np.array([1.0]), np.array([1.0]), rtol=1e-3)
    with pytest.raises(AssertionError, match=r"^my context\n"):
        assert_close(np.array([1.0]), np.array([2.0]), msg="my context")
    with pytest.raises(AssertionError, match=r"^CUSTOM"):
        assert_close(np.array([1.0]), np.array([2.0]), msg=lambda m: "CUSTOM " + m)


def test_unsupported_types_are_a_type_error():
    with pytest.raises(TypeError, match="can't compare actual of type dict"):
        assert_close({"a": 1}, [1])
    with pytest.raises(TypeError, match="ragged"):
        assert_close([[1, 2], [3]], [[1, 2], [3]])


# ---- strategies ---------------------------------------------------------------------------------

@given(mst.arrays_for(mst.shapes(), away_from_zero=0.1, min_value=-2.0, max_value=2.0))
def test_arrays_for_respects_the_domain(arr):
    assert isinstance(arr, np.ndarray) and arr.dtype == np.float64 and arr.ndim <= 3
    assert np.all(np.abs(arr) >= 0.1) and np.all(np.abs(arr) <= 2.0)


@given(mst.arrays_for(mst.shapes(1), unique=True))
def test_unique_values_are_distinct_and_well_separated(arr):
    flat = np.sort(arr.reshape(-1))
    if flat.size > 1:
        assert np.diff(flat).min() > 1e-3  # far beyond a finite-difference step


@given(mst.arrays_for((3, 2), dtype=np.float32, min_value=1e-3, max_value=3.0))
def test_float32_arrays(arr):
    assert arr.dtype == np.float32 and arr.shape == (3, 2) and (arr >= np.float32(1e-3)).all()


@given(mst.arrays_for((5,), dtype=np.int64, min_value=0, max_value=4, unique=True))
def test_unique_integers(arr):
    assert sorted(arr.tolist()) == [0, 1, 2, 3, 4]


@given(mst.tensors((2, 3), requires_grad=True))
def test_tensors_are_fresh_float64_leaves(t):
    assert isinstance(t, mt.Tensor) and t.dtype == mt.float64 and t.requires_grad and t.is_leaf
    assert t.numpy(force=True).flags["OWNDATA"] or t.numpy(force=True).base is None


@given(mst.broadcastable_shapes(num_shapes=3))
def test_broadcastable_shapes_broadcast(shapes):
    assert len(shapes.input_shapes) == 3
    assert np.broadcast_shapes(*shapes.input_shapes) == shapes.result_shape
    assert all(len(s) <= 3 and all(1 <= n <= 4 for n in s) for s in shapes.input_shapes)


@given(mst.matmul_shapes())
def test_matmul_shapes_are_valid_for_matmul(shapes):
    a, b = shapes.input_shapes
    assert len(a) >= 1 and len(b) >= 1
    assert np.matmul(np.zeros(a), np.zeros(b)).shape == shapes.result_shape


def test_matmul_shapes_include_1d_and_batched_operands():
    seen = set()

    @settings(max_examples=25)  # a coverage check: as many draws as the ci profile, whatever the profile
    @given(mst.matmul_shapes())
    def collect(shapes):
        a, b = shapes.input_shapes
        seen.add((len(a) == 1, len(b) == 1, max(len(a), len(b)) > 2))

    collect()
    assert (True, False, False) in seen or (False, True, False) in seen
    assert any(batched for _, _, batched in seen)


@given(mst.attention_inputs())
def test_attention_inputs_shapes_and_mask_layouts(inp):
    b, h, tq, d = inp.query.shape
    tk = inp.key.shape[2]
    assert inp.key.shape == (b, h, tk, d) and inp.value.shape[:3] == (b, h, tk)
    assert all(t.dtype == mt.float64 for t in (inp.query, inp.key, inp.value))
    if inp.mask is not None:
        assert inp.mask.dtype == mt.bool
        assert inp.mask.shape in ((tq, tk), (b, 1, 1, tk), (b, h, tq, tk))
        assert np.broadcast_shapes(inp.mask.shape, (b, h, tq, tk)) == (b, h, tq, tk)


@given(mst.attention_inputs(mask_kinds=("full",), fully_masked_rows=False))
def test_attention_inputs_without_fully_masked_rows(inp):
    assert inp.mask is not None and inp.mask.numpy(force=True).any(axis=-1).all()


def test_attention_inputs_rejects_unknown_mask_kinds():
    with pytest.raises(ValueError, match="mask_kinds"):
        mst.attention_inputs(mask_kinds=("causal",))


def test_arrays_for_rejects_an_empty_domain():
    with pytest.raises(ValueError, match="at least 0.5 from 0"):
        mst.arrays_for((2,), min_value=-0.1, max_value=0.1, away_from_zero=0.5).example()


@given(st.data())
def test_strategies_compose_with_gradcheck(data):
    # the intended use: draw inputs, check a gradient
    x = data.draw(mst.tensors(mst.shapes(1, 2), requires_grad=True, away_from_zero=0.1))
    assert mt.autograd.gradcheck(lambda t: t.relu() * t.abs(), (x,))
