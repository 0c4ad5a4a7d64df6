r"""Numerics at the edges: huge logits, overflow thresholds, ties, constant rows, dtype promotion.

float64 `exp` overflows past 709.78 and float32 past 88.72; a softmax that exponentiates the raw
logits turns those into inf / inf = NaN. Stable formulas subtract the row maximum first, and at
logits of +-1e4 give results that are exact, not merely finite.
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.testing import assert_close

FLOATS = [mt.float32, mt.float64]
OVERFLOW = {mt.float32: 88.72, mt.float64: 709.78}  # log of the largest finite value


def leaf(values, dtype):
    return mt.tensor(values, dtype=dtype, requires_grad=True)


# ---- softmax family at huge logits --------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_softmax_at_plus_minus_1e4_is_exact_with_exact_gradient(dtype):
    x = leaf([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]], dtype)
    p = F.softmax(x, dim=-1)
    assert p.dtype == dtype
    assert_close(p, [[1.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]])
    g = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    p.backward(mt.tensor(g, dtype=dtype))
    # p (g - <g, p>): a saturated row has zero gradient; the uniform row gives (g - mean g) / 3
    assert_close(x.grad, [[0.0, 0.0, 0.0], [-1 / 3, 0.0, 1 / 3]])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_log_softmax_at_plus_minus_1e4_is_exact_with_exact_gradient(dtype):
    x = leaf([[1e4, -1e4, 0.0]], dtype)
    lp = F.log_softmax(x, dim=-1)
    assert_close(lp, [[0.0, -2e4, -1e4]])  # log(softmax) would give -inf for the two small ones
    lp.backward(mt.tensor([[1.0, 2.0, 3.0]], dtype=dtype))
    assert_close(x.grad, [[1.0 - 6.0, 2.0, 3.0]])  # g - softmax * sum(g)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_logits_past_the_exp_overflow_threshold_do_not_leak_nan(dtype):
    big = 1.1 * OVERFLOW[dtype]
    assert np.isinf(mt.tensor([big], dtype=dtype).exp().numpy(force=True)).all()  # the threshold is real
    x = leaf([[big, big - 1.0, -big], [big, big, big]], dtype)
    p = F.softmax(x, dim=-1)
    e = math.e
    assert_close(p, [[e / (e + 1), 1 / (e + 1), 0.0], [1 / 3, 1 / 3, 1 / 3]],
                 rtol=1e-6 if dtype == mt.float64 else 1e-5, atol=1e-7)
    p.backward(mt.ones(2, 3, dtype=dtype))
    assert np.isfinite(x.grad.numpy(force=True)).all()
    assert np.isfinite(F.log_softmax(x, dim=-1).numpy(force=True)).all()
    assert_close(x.logsumexp(dim=-1)[1], big + math.log(3), rtol=1e-6, atol=0.0)


def test_softmax_of_minus_inf_entries_is_zero_there():
    x = leaf([[0.0, -math.inf, 1.0]], mt.float64)
    p = F.softmax(x, dim=-1)
    assert_close(p, [[1 / (1 + math.e), 0.0, math.e / (1 + math.e)]])
    p.backward(mt.tensor([[1.0, 5.0, 2.0]], dtype=mt.float64))
    assert np.isfinite(x.grad.numpy(force=True)).all() and x.grad.numpy(force=True)[0, 1] == 0.0


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_sigmoid_at_plus_minus_1e4(dtype):
    x = leaf([1e4, -1e4, 0.0], dtype)
    s = x.sigmoid()
    assert_close(s, [1.0, 0.0, 0.5])
    s.backward(mt.ones(3, dtype=dtype))
    assert_close(x.grad, [0.0, 0.0, 0.25])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cross_entropy_at_huge_logits(dtype):
    x = leaf([[1e4, -1e4, 0.0], [0.0, 1e4, 5e3]], dtype)
    loss = F.cross_entropy(x, mt.tensor([1, 1]))
    assert loss.dtype == dtype
    assert_close(loss, (2e4 + 0.0) / 2)  # row 0 misses by 2e4, row 1 is certain
    loss.backward()
    assert_close(x.grad, [[0.5, -0.5, 0.0], [0.0, 0.0, 0.0]])  # (softmax - one_hot) / N


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cross_entropy_with_label_smoothing_at_huge_logits_is_finite(dtype):
    x = leaf([[1e4, -1e4, 0.0]], dtype)
    loss = F.cross_entropy(x, mt.tensor([0]), label_smoothing=0.1)
    assert_close(loss, 0.1 / 3 * (0 + 2e4 + 1e4))
    loss.backward()
    assert np.isfinite(x.grad.numpy(force=True)).all()


# ---- ties ---------------------------------------------------------------------------------------

TIED = [[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0]]


def test_amax_ties_split_the_gradient_evenly_with_and_without_dim():
    x = leaf(TIED, mt.float64)
    x.amax(dim=1).backward(mt.tensor([1.0, 3.0], dtype=mt.float64))
    assert_close(x.grad, [[0.0, 0.5, 0.5, 0.0], [1.0, 1.0, 1.0, 0.0]])
    x.grad = None
    x.amax().backward()  # the global max 5 appears three times
    assert_close(x.grad, [[0, 0, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0]])


def test_amin_ties_split_the_gradient_evenly():
    x = leaf([[2.0, 1.0, 1.0], [0.0, 4.0, 0.0]], mt.float64)
    x.amin(dim=-1, keepdim=True).backward(mt.ones(2, 1, dtype=mt.float64))
    assert_close(x.grad, [[0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])
    x.grad = None
    x.amin().backward()
    assert_close(x.grad, [[0.0, 0.0, 0.0], [0.5, 0.0, 0.5]])


def test_max_and_min_ties_split_the_gradient_evenly():
    # with dim, as everywhere: PyTorch's max(dim) would give it all to the returned index instead
    x = leaf(TIED, mt.float64)
    x.max(dim=1).values.sum().backward()
    assert_close(x.grad, [[0.0, 0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3, 0.0]])
    x.grad = None
    x.max().backward()
    assert_close(x.grad, [[0, 0, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0]])
    x.grad = None
    mt.min(x, dim=0).values.sum().backward()
    assert_close(x.grad, [[1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    x.grad = None
    x.min().backward()
    assert_close(x.grad, [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


def test_maximum_and_minimum_ties_split_between_the_operands():
    a, b = leaf([1.0, 2.0, 3.0], mt.float64), leaf([1.0, 0.0, 3.0], mt.float64)
    mt.maximum(a, b).sum().backward()
    assert_close(a.grad, [0.5, 1.0, 0.5])
    assert_close(b.grad, [0.5, 0.0, 0.5])


def test_max_and_min_with_dim_return_named_values_and_indices():
    x = mt.tensor([[3.0, 7.0, 7.0], [9.0, 1.0, 4.0]])
    result = x.max(dim=1)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert type(result).__name__ == "max" and type(x.min(dim=0)).__name__ == "min"
    assert_close(values, [7.0, 9.0])
    assert indices.tolist() == [1, 0]  # the first of tied maxima
    assert indices.dtype == mt.int64
    low = mt.min(x, dim=0, keepdim=True)
    assert low.values.shape == (1, 3) and low.indices.tolist() == [[0, 1, 1]]


# ---- layer norm ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_layer_norm_of_a_constant_row_is_finite_with_finite_grads(dtype):
    x = leaf([[3.0, 3.0, 3.0, 3.0], [1e4 + 1, 1e4 + 2, 1e4 + 3, 1e4 + 4]], dtype)
    w, b = leaf([1.0, 2.0, 0.5, -1.0], dtype), leaf([0.1, 0.2, 0.3, 0.4], dtype)
    y = F.layer_norm(x, (4,), w, b)
    assert_close(y[0], b.detach())  # (x - mu) = 0 exactly, so the output is the bias
    z = np.array([-1.5, -0.5, 0.5, 1.5]) / math.sqrt(1.25 + 1e-5)
    assert_close(y[1], z * w.numpy(force=True) + b.numpy(force=True), rtol=1e-4 if dtype == mt.float32 else 1e-7,
                 atol=1e-4, check_dtype=False)
    y.backward(mt.tensor([[1.0, -2.0, 0.5, 3.0], [0.3, 0.1, -0.2, 0.7]], dtype=dtype))
    for t in (x, w, b):
        assert t.grad.dtype == dtype and np.isfinite(t.grad.numpy(force=True)).all()


def test_layer_norm_of_offset_float32_data_never_takes_sqrt_of_a_negative():
    rng = np.random.default_rng(0)
    x = mt.tensor(1e4 + rng.standard_normal((64, 8)) * 1e-3, dtype=mt.float32, requires_grad=True)
    y = F.layer_norm(x, (8,))
    y.backward(mt.ones(64, 8))
    assert np.isfinite(y.numpy(force=True)).all() and np.isfinite(x.grad.numpy(force=True)).all()
    assert (x.var(dim=1, correction=0).numpy(force=True) >= 0).all()


# ---- where, masks and inf -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_where_with_inf_in_the_unselected_branch_gives_no_nan_gradient(dtype):
    a = leaf([1.0, math.inf, 2.0, -math.inf], dtype)
    b = leaf([math.inf, 5.0, -math.inf, 6.0], dtype)
    cond = mt.tensor([True, False, True, False])
    out = mt.where(cond, a, b)
    assert_close(out, [1.0, 5.0, 2.0, 6.0])
    out.backward(mt.tensor([1.0, 2.0, 3.0, 4.0], dtype=dtype))
    assert_close(a.grad, [1.0, 0.0, 3.0, 0.0])  # selected, not multiplied by a 0/1 mask (0 * inf)
    assert_close(b.grad, [0.0, 2.0, 0.0, 4.0])


def test_masked_fill_with_minus_1e9_gives_a_uniform_row_not_nan():
    scores = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], mt.float32)
    mask = mt.tensor([[1, 1, 0], [0, 0, 0]])
    p = F.softmax(scores.masked_fill(mask == 0, -1e9), dim=-1)
    assert_close(p[1], [1 / 3, 1 / 3, 1 / 3])  # the classic tutorial behaviour for a fully masked row
    assert p[0, 2].item() == 0.0
    p.backward(mt.ones(2, 3))
    assert np.isfinite(scores.grad.numpy(force=True)).all()


def test_sqrt_at_zero_has_an_infinite_slope_and_norm_uses_the_zero_subgradient():
    x = leaf([0.0, 4.0], mt.float64)
    x.sqrt().sum().backward()
    assert x.grad.numpy(force=True)[0] == math.inf and x.grad.numpy(force=True)[1] == 0.25
    z = leaf([0.0, 0.0, 0.0], mt.float64)
    z.norm().backward()
    assert_close(z.grad, [0.0, 0.0, 0.0])


# ---- dtype promotion: Python and numpy scalars are weak ----------------------------------------

@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_the_exponents_gradient_at_a_zero_or_negative_base_follows_pytorch(dtype):
    # d(a ** x)/dx = a ** x * log(a), with log(a) taken as 0 where a == 0 and x >= 0; elsewhere log 0
    # is -inf and log of a negative base NaN (a number base once raised from math.log instead)
    x = mt.tensor([-1.0, 0.0, 2.0], dtype=dtype, requires_grad=True)
    for base, want in ((2.0, 2.0 ** np.array([-1.0, 0.0, 2.0]) * math.log(2.0)),
                       (-3.0, [np.nan] * 3), (0.0, [-np.inf, 0.0, 0.0])):
        (base ** x).backward(mt.ones(3, dtype=dtype))
        np.testing.assert_allclose(x.grad.numpy(force=True), want, rtol=1e-6)
        assert x.grad.dtype == dtype
        x.grad = None
    base = mt.tensor([0.0, 0.0, -2.0], dtype=dtype)  # the same as a tensor
    exponent = mt.tensor([-1.0, 2.0, 0.5], dtype=dtype, requires_grad=True)
    (base ** exponent).backward(mt.ones(3, dtype=dtype))
    np.testing.assert_array_equal(exponent.grad.numpy(force=True), [-np.inf, 0.0, np.nan])


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_the_bases_gradient_for_a_zero_exponent_is_0_even_at_a_zero_base(dtype):
    # d(x ** 0)/dx = 0 everywhere, as in PyTorch; the formula b * x ** (b - 1) is 0 * inf = NaN at x = 0
    x = mt.tensor([0.0, 3.0, 2.0], dtype=dtype, requires_grad=True)
    for exponent, want in ((0, [0.0, 0.0, 0.0]), (0.0, [0.0, 0.0, 0.0]),
                           (mt.tensor([0.0, 2.0, 0.0], dtype=dtype), [0.0, 6.0, 0.0]),
                           (2.0, [0.0, 6.0, 4.0])):  # other exponents are untouched
        (x ** exponent).backward(mt.ones(3, dtype=dtype))
        np.testing.assert_array_equal(x.grad.numpy(force=True), want)
        x.grad = None


def test_erf_of_infinite_nan_and_huge_inputs():
    # the table lookup once cast inf, NaN and |x| > ~1e16 to an out-of-range index (IndexError)
    x = mt.tensor([np.inf, -np.inf, np.nan, 1e20, -1e300, 6.0, -0.5], dtype=mt.float64)
    want = [1.0, -1.0, np.nan, 1.0, -1.0, math.erf(6.0), math.erf(-0.5)]
    np.testing.assert_allclose(mt.erf(x).numpy(force=True), want, rtol=1e-14)
    x32 = mt.tensor([np.inf, -np.inf, np.nan, 1e20, -1e20], dtype=mt.float32)
    np.testing.assert_array_equal(mt.erf(x32).numpy(force=True), np.float32([1.0, -1.0, np.nan, 1.0, -1.0]))


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_at_infinite_nan_and_huge_inputs_gives_pytorchs_limits_without_warnings(dtype, approximate):
    # PyTorch 2.13's values; numpy would warn about the overflow and inf * 0 on the way
    values, out_want, grad_want = [np.inf, -np.inf, np.nan], [np.inf, np.nan, np.nan], [np.nan] * 3
    if approximate == "none":  # (tanh's x^3 overflows at 1e20 in float32, to a NaN slope in PyTorch too)
        values, out_want, grad_want = values + [1e20, -1e20], out_want + [1e20, 0.0], grad_want + [1.0, 0.0]
    x = mt.tensor(values, dtype=dtype, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = F.gelu(x, approximate=approximate)
        out.backward(mt.ones(len(values), dtype=dtype))
    np.testing.assert_allclose(out.numpy(force=True), out_want, rtol=1e-6)
    np.testing.assert_array_equal(x.grad.numpy(force=True), grad_want)


def test_bce_with_logits_has_the_gradient_sigmoid_minus_target_also_at_a_zero_logit():
    # loss = softplus(x) - x t, dloss/dx = sigmoid(x) - t; the max(x,0) + log(1 + e^-|x|) form gave
    # 1 - t at x = 0 exactly (its kinks' subgradients), twice the true -1/2 for t = 1: zero-initialised
    # logits would start with doubled gradients
    x = mt.tensor([0.0, 0.0, 2.0, -3.0, 50.0, -50.0], dtype=mt.float64, requires_grad=True)
    t = mt.tensor([1.0, 0.0, 1.0, 0.0, 0.0, 1.0], dtype=mt.float64)
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    softplus = [math.log1p(math.exp(v)) if v < 30 else v + math.log1p(math.exp(-v)) for v in x.numpy(force=True)]
    np.testing.assert_allclose(loss.numpy(force=True), np.array(softplus) - x.numpy(force=True) * t.numpy(force=True),
                               rtol=1e-12)
    loss.backward(mt.ones(6, dtype=mt.float64))
    np.testing.assert_allclose(x.grad.numpy(force=True), 1 / (1 + np.exp(-x.numpy(force=True))) - t.numpy(force=True),
                               rtol=1e-12, atol=1e-15)
    z = mt.zeros(3, dtype=mt.float64, requires_grad=True)  # the mean over 3 zero logits
    F.binary_cross_entropy_with_logits(z, mt.ones(3, dtype=mt.float64)).backward()
    np.testing.assert_allclose(z.grad.numpy(force=True), [-0.5 / 3] * 3, rtol=1e-12)
    w, target = mt.randn(4, 3, dtype=mt.float64, requires_grad=True), mt.rand(4, 3, dtype=mt.float64)
    assert mt.autograd.gradcheck(lambda a: F.binary_cross_entropy_with_logits(a, target, reduction="none"), (w,))


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
def test_std_of_a_constant_row_has_gradient_0_as_in_pytorch(dtype):
    # sqrt's slope at var = 0 is infinite and the deviations are 0: the product was NaN
    x = mt.tensor([[3.0, 3.0, 3.0], [1.0, 2.0, 3.0]], dtype=dtype, requires_grad=True)
    for correction, spread in ((1, 1.0), (0, math.sqrt(2 / 3))):
        s = x.std(dim=-1, correction=correction)
        np.testing.assert_allclose(s.numpy(force=True), [0.0, spread], rtol=1e-6)
        s.backward(mt.tensor([0.5, 2.0], dtype=dtype))
        deviations = np.array([-1.0, 0.0, 1.0]) / (3 - correction) / spread  # d std / dx = (x - mean) / ((n - c) std)
        np.testing.assert_allclose(x.grad.numpy(force=True), [[0.0] * 3, 2.0 * deviations], rtol=1e-6)
        x.grad = None


def test_cosine_similarity_clamps_each_norm_on_its_own():
    # PyTorch's definition: x1 . x2 / (max(|x1|, eps) max(|x2|, eps)). Clamping the product of the
    # norms instead gave 0.01 for a vector of length 1e-5 with itself
    x1 = mt.tensor([[1e-5, 0.0], [3.0, 4.0], [0.0, 0.0]], dtype=mt.float64)
    x2 = mt.tensor([[1e-5, 0.0], [1e-9, 0.0], [1.0, 1.0]], dtype=mt.float64)
    np.testing.assert_allclose(F.cosine_similarity(x1, x2).numpy(force=True), [1.0, 3e-9 / (5 * 1e-8), 0.0], rtol=1e-12)
    a, b = (mt.randn(3, 4, dtype=mt.float64, requires_grad=True) for _ in range(2))
    assert mt.autograd.gradcheck(lambda a, b: F.cosine_similarity(a, b, dim=1), (a, b))


@given(data=st.data())
def test_mean_is_numpys_mean_bit_for_bit(data):
    # mean sums with np.add.reduce and divides, as ndarray.mean does inside its Python code
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    a = data.draw(hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, max_side=6),
                             elements=st.floats(-1e6, 1e6, width=32)))
    dim = data.draw(st.none() | st.integers(0, a.ndim - 1)) if a.ndim else None
    keepdim = data.draw(st.booleans())
    got = mt.tensor(a).mean(dim=dim, keepdim=keepdim).numpy(force=True)
    want = np.asarray(a.mean(axis=dim, keepdims=keepdim))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_python_float_times_float32_stays_float32():
    x = mt.ones(3)
    assert (x * 2.5).dtype == mt.float32
    assert (2.5 * x).dtype == mt.float32
    assert (x / 3.0).dtype == mt.float32 and (x ** 2).dtype == mt.float32 and (1 - x).dtype == mt.float32


def test_numpy_scalars_are_weak_too():
    # the classic attention line: scores / np.sqrt(d_k) keeps float32 (as in PyTorch)
    x = mt.ones(2, 3)
    assert (x / np.sqrt(64)).dtype == mt.float32
    assert (x / math.sqrt(64)).dtype == mt.float32
    assert (np.float64(2.0) * x).dtype == mt.float32
    assert_close(x / np.sqrt(64), np.full((2, 3), 0.125, np.float32))


def test_int_tensor_times_a_float_is_the_default_float_dtype():
    i = mt.tensor([1, 2, 3])
    assert i.dtype == mt.int64
    assert (i * 2.5).dtype == mt.float32
    assert (i * 2).dtype == mt.int64
    assert (i / 2).dtype == mt.float32
    assert_close(i / 2, [0.5, 1.0, 1.5])  # true division, never truncated
    old = mt.get_default_dtype()
    try:
        mt.set_default_dtype(mt.float64)
        assert (i * 2.5).dtype == mt.float64
    finally:
        mt.set_default_dtype(old)
    assert mt.get_default_dtype() == mt.float32


def test_int64_plus_float32_tensor_is_float32():
    i, f = mt.tensor([1, 2]), mt.tensor([0.5, 0.25])
    assert (i + f).dtype == mt.float32 and (f + i).dtype == mt.float32
    assert_close(i + f, [1.5, 2.25])


def test_float32_with_float64_tensor_promotes_but_a_0d_float64_does_not():
    f32, f64 = mt.ones(2), mt.ones(2, dtype=mt.float64)
    assert (f32 + f64).dtype == mt.float64
    assert (f32 * mt.tensor(2.0, dtype=mt.float64)).dtype == mt.float32  # a 0-d tensor acts like a scalar


def test_where_of_two_python_floats_is_the_default_dtype():
    cond = mt.tensor([True, False])
    assert mt.where(cond, 1.0, 0.0).dtype == mt.float32
    assert mt.where(cond, 1, 0).dtype == mt.int64
    assert mt.where(cond, mt.ones(2, dtype=mt.float64), 0.0).dtype == mt.float64


def test_gradient_dtype_follows_the_input_not_the_result():
    f32 = mt.ones(2, requires_grad=True)
    f64 = mt.ones(2, dtype=mt.float64, requires_grad=True)
    (f32 * f64).sum().backward()
    assert f32.grad.dtype == mt.float32 and f64.grad.dtype == mt.float64


# ---- small whole-number powers are products, as in PyTorch -------------------------------------

SPECIAL = np.array([0.0, -0.0, 1e-30, -3.5, 7.25, 1e20, -1e20, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("exponent", [2, 3, -1, -2, 2.0, 3.0, -1.0, -2.0])
def test_small_whole_powers_are_the_products_bit_for_bit(dtype, exponent):
    x = np.concatenate([np.random.default_rng(1).standard_normal(200) * 3, SPECIAL]).astype(dtype)
    k = int(exponent)
    with np.errstate(all="ignore"):
        product = x * x if abs(k) == 2 else x * x * x if abs(k) == 3 else x
        want = product if k > 0 else 1 / product
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0 ** -1 = inf and overflow are results, as in PyTorch, not warnings
        got = (mt.tensor(x) ** exponent).numpy()
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("exponent", [2, 3, -1, -2, 3.0, 0.5, 4.0])
def test_powers_and_their_gradients_match_pytorch(dtype, exponent):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(300) * 2).astype(dtype)
    w = rng.standard_normal(300).astype(dtype)
    xm = mt.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    (mt.pow(xm, exponent) * mt.tensor(w)).sum().backward()
    (torch.pow(xt, exponent) * torch.tensor(w)).sum().backward()
    exact = float(exponent).is_integer() and abs(exponent) <= 3 and exponent != 4.0
    tol = dict(rtol=0, atol=0) if exact else dict(rtol=4 * np.finfo(dtype).eps)
    np.testing.assert_allclose(mt.pow(xm, exponent).numpy(force=True), torch.pow(xt, exponent).detach().numpy(), **tol)
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=8 * np.finfo(dtype).eps, atol=0)
