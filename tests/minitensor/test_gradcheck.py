r"""The gradient checker itself: it must catch wrong backwards and say where they are.

A checker that passes everything is worse than none, so each kind of bug a learner writes gets a
deliberately wrong `Function` here, used *inside* a larger function, and the error must name that
op's node, the input, the worst element and both values.
"""
import re

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import Function, GradcheckError, gradcheck, gradgradcheck


class ForgetfulMul(Function):
    r"""out = a * b;  its VJP forgets the factor a in gb (the bug under test)."""

    @staticmethod
    def forward(ctx, a, b):
        return a.numpy(force=True) * b.numpy(force=True)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return g * b, g  # right: g * b, g * a


class GoodMul(Function):
    r"""out = a * b;  VJP: ga = g * b, gb = g * a."""

    @staticmethod
    def forward(ctx, a, b):
        return a.numpy(force=True) * b.numpy(force=True)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.inputs
        return g * b, g * a


class NumpySquare(Function):
    r"""out = x^2;  VJP 2 g x computed on .numpy(force=True) with numpy: right values, but no graph for create_graph."""

    @staticmethod
    def forward(ctx, x):
        return x.numpy(force=True) ** 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.inputs
        return mt.tensor(2 * g.numpy(force=True) * x.numpy(force=True))


class TensorSquare(Function):
    r"""out = x^2;  VJP 2 g x written with Tensor ops."""

    @staticmethod
    def forward(ctx, x):
        return x.numpy(force=True) ** 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.inputs
        return 2 * g * x


class HalfSlopeSquare(Function):
    r"""out = x^2;  VJP g * x written with Tensor ops: differentiable, and wrong by a factor 2."""

    @staticmethod
    def forward(ctx, x):
        return x.numpy(force=True) ** 2

    @staticmethod
    def backward(ctx, g):
        return g * ctx.inputs[0]


def _x():
    return mt.tensor([[0.5, -1.2, 2.0], [0.3, 1.1, -0.4]], dtype=mt.float64, requires_grad=True)


def _y():
    return mt.tensor([1.5, 2.0, -0.7], dtype=mt.float64, requires_grad=True)


def composite(mul):
    """A small network with the op in the middle: softmax(exp(x) * y) @ w, summed over rows."""
    w = mt.tensor([[1.0, -2.0], [0.5, 0.25], [-1.0, 3.0]], dtype=mt.float64)
    return lambda x, y: (F.softmax(mul.apply(x.exp(), y.expand(2, 3)), dim=-1) @ w).sum(dim=0)


def test_wrong_backward_inside_a_composite_is_named_with_input_element_and_values():
    with pytest.raises(GradcheckError) as info:
        gradcheck(composite(ForgetfulMul), (_x(), _y()))
    msg = str(info.value)
    assert "ForgetfulMulBackward" in msg, msg  # the op, not just the whole function
    assert "input 1" in msg and "(3,)" in msg, msg  # which input, with its shape
    worst = re.search(r"element \((\d+),\), analytic (\S+) vs numeric (\S+)", msg)
    assert worst is not None, msg
    assert float(worst.group(2)) != pytest.approx(float(worst.group(3)), rel=1e-3)
    assert "argument 1" in msg, msg  # the blamed op's own input whose gradient is wrong


def test_reported_values_are_the_real_analytic_and_numeric_gradients():
    x, y = _x(), _y()
    with pytest.raises(GradcheckError) as info:
        gradcheck(composite(ForgetfulMul), (x, y))
    j, analytic, numeric = re.search(r"element \((\d+),\), analytic (\S+) vs numeric (\S+)", str(info.value)).groups()
    # recompute both with the same random upstream weights that gradcheck drew (seed 0)
    fn = composite(ForgetfulMul)
    u = np.random.default_rng(0).standard_normal(2)
    yy = mt.tensor(y.numpy(force=True), requires_grad=True)
    fn(mt.tensor(x.numpy(force=True)), yy).backward(mt.tensor(u))
    assert yy.grad.numpy(force=True)[int(j)] == pytest.approx(float(analytic), rel=1e-5)
    right = mt.tensor(y.numpy(force=True), requires_grad=True)
    composite(GoodMul)(mt.tensor(x.numpy(force=True)), right).backward(mt.tensor(u))
    assert right.grad.numpy(force=True)[int(j)] == pytest.approx(float(numeric), rel=1e-4)


def test_correct_composite_passes():
    assert gradcheck(composite(GoodMul), (_x(), _y())) is True


def test_raise_exception_false_returns_false():
    assert gradcheck(composite(ForgetfulMul), (_x(), _y()), raise_exception=False) is False
    assert gradcheck(composite(GoodMul), (_x(), _y()), raise_exception=False) is True


def test_float32_inputs_are_rejected_with_a_clear_message():
    x = mt.tensor([1.0, 2.0], requires_grad=True)  # default float32
    with pytest.raises(GradcheckError, match=r"input 0 is minitensor\.float32.*float64.*\.double\(\)"):
        gradcheck(lambda t: t * 2, (x,))


def test_no_input_requiring_grad_is_an_error_not_a_pass():
    with pytest.raises(GradcheckError, match="no input requires grad"):
        gradcheck(lambda t: t * 2, (mt.tensor([1.0], dtype=mt.float64),))


def test_sum_reduction_would_hide_a_softmax_bug_but_random_weights_do_not():
    class SoftmaxWithMeanInsteadOfDot(Function):
        r"""out = softmax(x);  wrong VJP: out * (g - mean(g)) instead of out * (g - sum(g * out))."""

        @staticmethod
        def forward(ctx, x):
            e = np.exp(x.numpy(force=True) - x.numpy(force=True).max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)

        @staticmethod
        def backward(ctx, g):
            return ctx.output * (g - g.mean(dim=-1, keepdim=True))

    x = mt.tensor([[0.1, 2.0, -1.0]], dtype=mt.float64, requires_grad=True)
    # softmax sums to 1, so d(sum)/dx = 0; with an all-ones upstream gradient the bug gives 0 too
    SoftmaxWithMeanInsteadOfDot.apply(x).sum().backward()
    assert np.allclose(x.grad.numpy(force=True), 0.0)
    # gradcheck weights the outputs randomly, and then the bug shows
    assert gradcheck(SoftmaxWithMeanInsteadOfDot.apply, (x,), raise_exception=False) is False
    assert gradcheck(lambda t: F.softmax(t, dim=-1), (x,)) is True


def test_gradgradcheck_catches_a_backward_computed_on_data():
    x = _y()
    assert gradcheck(lambda t: NumpySquare.apply(t) * 3, (x,)) is True  # first order is right
    with pytest.raises(GradcheckError) as info:
        gradgradcheck(lambda t: NumpySquare.apply(t) * 3, (x,))
    msg = str(info.value)
    assert "NumpySquareBackward" in msg and "no graph" in msg, msg
    assert "input 0" in msg and re.search(r"analytic \S+ vs numeric \S+", msg), msg


def test_gradgradcheck_catches_a_differentiable_but_wrong_backward():
    x = _y()
    with pytest.raises(GradcheckError) as info:
        gradgradcheck(lambda t: HalfSlopeSquare.apply(t).sin(), (x,))
    assert "HalfSlopeSquareBackward" in str(info.value)


def test_gradgradcheck_passes_a_correct_tensor_op_backward():
    assert gradgradcheck(lambda t: TensorSquare.apply(t).sin(), (_y(),)) is True
    assert gradgradcheck(lambda t: NumpySquare.apply(t), (_y(),), raise_exception=False) is False


def test_gradcheck_does_not_change_the_inputs():
    x, y = _x(), _y()
    x0, y0 = x.numpy(force=True).copy(), y.numpy(force=True).copy()
    gradcheck(composite(GoodMul), (x, y))
    assert np.array_equal(x.numpy(force=True), x0) and np.array_equal(y.numpy(force=True), y0)
    assert x.grad is None and y.grad is None


def test_broadcast_view_inputs_are_copied_before_perturbing():
    # perturbing one element of a broadcast view would move a whole column at once
    base = mt.tensor([1.0, 2.0, 3.0], dtype=mt.float64)
    view = mt.Tensor._make(np.broadcast_to(base.numpy(force=True), (2, 3))).requires_grad_()
    assert gradcheck(lambda t: (t * t).sum(dim=0), (view,))
    assert np.array_equal(base.numpy(force=True), [1.0, 2.0, 3.0])


def test_transposed_inputs_are_perturbed_in_place_of_a_copy():
    # a non-contiguous input once gave numeric gradients of 0 (its flattened copy was perturbed)
    w = mt.tensor(np.arange(6.0).reshape(3, 2) / 5, dtype=mt.float64).T.detach().requires_grad_()
    assert not w.numpy(force=True).flags["C_CONTIGUOUS"]
    assert gradcheck(lambda t: t.exp() @ t.T, (w,))


def test_multiple_outputs_are_all_checked():
    class WrongSecondOutputUse(Function):
        @staticmethod
        def forward(ctx, x):
            return x.numpy(force=True) * 3

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = _y()
    assert gradcheck(lambda t: (t.exp(), t * 2), (x,))
    assert not gradcheck(lambda t: (t.exp(), WrongSecondOutputUse.apply(t)), (x,), raise_exception=False)


def test_an_integer_argument_needs_no_gradient():
    x = _x()
    idx = mt.tensor([2, 0, 0])
    assert gradcheck(lambda t, i: t[:, i] * 2, (x, idx))


def test_a_large_constant_in_the_output_does_not_swamp_the_finite_differences():
    # a -1e9 attention mask in the output once made the numeric gradient wrong by ~0.1:
    # summing 1e9 with changes of 1e-6 loses them in float64, so outputs are subtracted first
    x = mt.tensor([[0.0, 0.3], [0.2, -0.1]], dtype=mt.float64, requires_grad=True)
    mask = mt.tensor([[True, False], [False, True]])
    assert gradcheck(lambda t: t.masked_fill(mask, -1e9) * 2, (x,))
    assert gradcheck(lambda t: mt.cat([t, mt.full((2, 2), 1e12, dtype=mt.float64)]), (x,))


def test_outputs_that_are_views_of_the_input_are_checked_correctly():
    x = _x()
    assert gradcheck(lambda t: (t.reshape(3, 2), t[0], t.T), (x,))
