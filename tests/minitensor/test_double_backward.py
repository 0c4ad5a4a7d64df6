r"""Second derivatives: every backward is written with Tensor ops, so `create_graph=True` records it.

`gradgradcheck(fn, inputs)` differentiates the vector-Jacobian product v^T J(x) (with a random v)
by finite differences, with respect to x and to v. It fails when a backward is right to first
order but not differentiable (computed on `.numpy(force=True)`, or with a derivative missing a term).
"""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import grad, gradgradcheck
from minitensor.testing import assert_close


def _inputs(seed, *shapes, low=-2.0, high=2.0):
    rng = np.random.default_rng(seed)
    return tuple(mt.tensor(rng.uniform(low, high, s), dtype=mt.float64, requires_grad=True) for s in shapes)


def _distinct(seed, shape):
    """Values a spaced grid apart in random order: no ties for max-like ops, even under perturbation."""
    n = int(np.prod(shape))
    vals = np.random.default_rng(seed).permutation(n) * 0.37 - 0.2 * n
    return mt.tensor(vals.reshape(shape), dtype=mt.float64, requires_grad=True)


BROADCAST_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2,))]

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b,
}


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("name", list(BINARY))
def test_arithmetic(name, shapes):
    a, b = _inputs(1, *shapes, low=0.5, high=2.0)  # positive: division and powers stay smooth
    assert gradgradcheck(BINARY[name], (a, b))


@pytest.mark.parametrize("fn", [lambda x: x * x * x, lambda x: 1.0 / x, lambda x: x ** 2.5, lambda x: 3.0 ** x,
                                lambda x: -x], ids=["cube", "reciprocal", "pow_scalar", "scalar_pow", "neg"])
def test_arithmetic_with_scalars(fn):
    (x,) = _inputs(2, (2, 3), low=0.5, high=2.0)
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 2)),
                                    ((2, 1, 2, 3), (3, 3, 2))], ids=str)
def test_matmul(shapes):
    a, b = _inputs(3, *shapes)
    assert gradgradcheck(lambda x, y: x @ y, (a, b))


@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax], ids=["softmax", "log_softmax"])
def test_softmax_family(fn, dim):
    (x,) = _inputs(4, (2, 3))
    assert gradgradcheck(lambda t: fn(t, dim=dim), (x,))


REDUCTIONS = {
    "sum": lambda x: x.sum(dim=1),
    "sum_all": lambda x: x.sum(),
    "mean": lambda x: x.mean(dim=0, keepdim=True),
    "var": lambda x: x.var(dim=1),
    "var_correction0": lambda x: x.var(correction=0),
    "std": lambda x: x.std(dim=0),
    "amax": lambda x: x.amax(dim=1),
    "amin_all": lambda x: x.amin(),
    "max_dim": lambda x: x.max(dim=0).values,
    "logsumexp": lambda x: x.logsumexp(dim=-1),
    "prod": lambda x: x.prod(dim=1),
    "prod_all": lambda x: x.prod(),
    "norm": lambda x: x.norm(dim=1),
    "cumsum": lambda x: x.cumsum(0),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reductions(name):
    x = _distinct(5, (2, 3))
    assert gradgradcheck(REDUCTIONS[name], (x,))


@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(affine):
    x, w, b = _inputs(6, (2, 4), (4,), (4,))
    if affine:
        assert gradgradcheck(lambda x, w, b: F.layer_norm(x, (4,), w, b), (x, w, b))
    else:
        assert gradgradcheck(lambda x: F.layer_norm(x, (4,)), (x,))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    (x,) = _inputs(7, (2, 3))
    assert gradgradcheck(lambda t: F.gelu(t, approximate=approximate), (x,))


UNARY = {
    "exp": mt.exp, "log": lambda x: (x.abs() + 0.5).log(), "sqrt": lambda x: (x * x + 1).sqrt(),
    "rsqrt": lambda x: (x * x + 1).rsqrt(), "sin": mt.sin, "cos": mt.cos, "tanh": mt.tanh,
    "sigmoid": mt.sigmoid, "erf": mt.erf,
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_math(name):
    (x,) = _inputs(8, (2, 3))
    assert gradgradcheck(UNARY[name], (x,))


INDEXING = {
    "int_and_slice": lambda x: x[1, 1:],
    "none_ellipsis": lambda x: x[None, ..., 0],
    "repeated_int_list": lambda x: x[[0, 2, 0, 0]],
    "int_tensor_pair": lambda x: x[mt.tensor([0, 2, 2]), mt.tensor([1, 1, 0])],
    "bool_mask": lambda x: x[mt.tensor([[True, False], [False, False], [True, True]])],
    "gather": lambda x: x.gather(1, mt.tensor([[0, 0], [1, 0], [1, 1]])),
    "where": lambda x: mt.where(x > 0, x * x, -x),
    "masked_fill": lambda x: x.masked_fill(mt.tensor([True, False]), -1.0) * x,
    "cat_split": lambda x: mt.cat([x, x * x], dim=1).split(3, dim=1)[1],
}


@pytest.mark.parametrize("name", list(INDEXING))
def test_indexing(name):
    x = _distinct(9, (3, 2))
    assert gradgradcheck(INDEXING[name], (x,))


def test_hessian_vector_product_of_a_cubic_matches_the_analytic_hessian():
    # f(x) = 1/2 x^T A x + sum(c * x^3), so H(x) = (A + A^T)/2 + diag(6 c x)
    rng = np.random.default_rng(10)
    A, c = rng.standard_normal((4, 4)), rng.standard_normal(4)
    x0, v0 = rng.standard_normal(4), rng.standard_normal(4)
    x = mt.tensor(x0, requires_grad=True)
    f = 0.5 * (x @ (mt.tensor(A) @ x)) + (mt.tensor(c) * x ** 3).sum()
    (g,) = grad(f, x, create_graph=True)
    assert g.requires_grad, "create_graph=True must return a gradient that can be differentiated"
    assert_close(g, 0.5 * (A + A.T) @ x0 + 3 * c * x0 ** 2)
    (hv,) = grad(g @ mt.tensor(v0), x)
    hessian = 0.5 * (A + A.T) + np.diag(6 * c * x0)
    assert_close(hv, hessian @ v0)


def test_full_hessian_of_a_quadratic_form_row_by_row():
    rng = np.random.default_rng(11)
    A = rng.standard_normal((3, 3))
    x = mt.tensor(rng.standard_normal(3), requires_grad=True)
    (g,) = grad(0.5 * (x @ (mt.tensor(A) @ x)), x, create_graph=True)
    rows = [grad(g[i], x, retain_graph=True)[0].numpy(force=True) for i in range(3)]
    assert_close(np.stack(rows), 0.5 * (A + A.T))


def test_gradient_penalty_reaches_the_weights():
    # d/dw ||d(sum tanh(x w))/dx||^2: the penalty's gradient goes through a backward pass
    rng = np.random.default_rng(12)
    x0, w0 = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))

    def penalty(x, w):
        (gx,) = grad(mt.tanh(x @ w).sum(), x, create_graph=True)
        return (gx * gx).sum()

    x = mt.tensor(x0, requires_grad=True)
    w = mt.tensor(w0, requires_grad=True)
    penalty(x, w).backward()
    eps = 1e-6
    numeric = np.zeros_like(w0)
    for i in np.ndindex(*w0.shape):
        plus, minus = w0.copy(), w0.copy()
        plus[i] += eps
        minus[i] -= eps
        numeric[i] = (penalty(mt.tensor(x0, requires_grad=True), mt.tensor(plus)).item()
                      - penalty(mt.tensor(x0, requires_grad=True), mt.tensor(minus)).item()) / (2 * eps)
    assert_close(w.grad, numeric, rtol=1e-5, atol=1e-7)


def test_second_derivative_through_backward_of_backward():
    x = mt.tensor(0.7, dtype=mt.float64, requires_grad=True)
    y = mt.sin(x) * x
    (d1,) = grad(y, x, create_graph=True)
    (d2,) = grad(d1, x, create_graph=True)
    (d3,) = grad(d2, x)
    s, c = np.sin(0.7), np.cos(0.7)
    assert_close(d1, c * 0.7 + s)
    assert_close(d2, -s * 0.7 + 2 * c)
    assert_close(d3, -c * 0.7 - 3 * s)
