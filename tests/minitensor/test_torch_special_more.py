r"""issue 29: torch.special's Bessel J, Y, K, Airy's Ai and orthogonal polynomials against PyTorch (values,
result dtypes, refused inputs, no gradient) and, for the Bessel functions, against mpmath at 20 digits (which
PyTorch installs): PyTorch's own float64 J0, J1, Y1 and Ai are off by up to 3e-6 in places, so the accuracy
claim of `minitensor/ops/_special.py` is checked against mpmath and the comparison with PyTorch is looser.
Skipped without PyTorch.
"""

import numpy as np
import pytest

import minitensor as mt
import minitensor.special  # noqa: F401  (mt.special)

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

GRID = np.concatenate([np.geomspace(1e-8, 1e4, 19), -np.geomspace(1e-8, 1e4, 10),  # (and each range's ends)
                       [1.9, 2.1, 5.5, 16.9, 17.1, 24.9, 25.1, -6.9, -7.1]])
EDGES = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 1e-300, 700.0, 800.0, -1e3])
BESSEL = {  # name: (mpmath reference, defined for x < 0)
    "bessel_j0": (lambda m, v: m.besselj(0, v), True),
    "bessel_j1": (lambda m, v: m.besselj(1, v), True),
    "bessel_y0": (lambda m, v: m.bessely(0, v), False),
    "bessel_y1": (lambda m, v: m.bessely(1, v), False),
    "modified_bessel_k0": (lambda m, v: m.besselk(0, v), False),
    "modified_bessel_k1": (lambda m, v: m.besselk(1, v), False),
    "scaled_modified_bessel_k0": (lambda m, v: m.besselk(0, v) * m.exp(v), False),
    "scaled_modified_bessel_k1": (lambda m, v: m.besselk(1, v) * m.exp(v), False),
    "airy_ai": (lambda m, v: m.airyai(v), True),
}
POLYNOMIALS = [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p",
]


@pytest.mark.parametrize("name", list(BESSEL))
def test_bessel_values_against_mpmath_and_torch(name):
    mpmath = pytest.importorskip("mpmath")
    reference, negative = BESSEL[name]
    x = GRID if negative else GRID[GRID > 0]
    got = getattr(mt.special, name)(mt.tensor(x, dtype=mt.float64)).numpy()
    with mpmath.workdps(20):
        exact = np.array([float(reference(mpmath, mpmath.mpf(float(v)))) for v in x])
    # 1e-9 relative (the phase (2/3) x^1.5 of Ai at x = -1e4 rounds to 4e-10), 3e-10 absolute near the zeros
    np.testing.assert_allclose(got, exact, rtol=1e-9, atol=3e-10)
    theirs = getattr(torch.special, name)(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, theirs, rtol=3e-5, atol=1e-6)
    edges = getattr(mt.special, name)(mt.tensor(EDGES, dtype=mt.float64)).numpy()
    np.testing.assert_allclose(edges, getattr(torch.special, name)(torch.tensor(EDGES)).numpy(), rtol=1e-6,
                               atol=1e-300, equal_nan=True)


@pytest.mark.parametrize("name", list(BESSEL) + POLYNOMIALS)
def test_dtypes_no_gradient_and_refusals(name):
    fn, theirs = getattr(mt.special, name), getattr(torch.special, name)
    args = (3,) if name in POLYNOMIALS else ()
    for values in ([1, 2], [True, False], [0.5, 1.5]):
        for dtype in ((None, "float64") if isinstance(values[0], float) else (None,)):
            a = mt.tensor(values, dtype=getattr(mt, dtype) if dtype else None)
            t = torch.tensor(values, dtype=getattr(torch, dtype) if dtype else None)
            assert str(fn(a, *args).dtype).split(".")[-1] == str(theirs(t, *args).dtype).split(".")[-1]
    x = mt.tensor([0.5, 1.5], dtype=mt.float64, requires_grad=True)
    out = fn(x, *args)
    assert not out.requires_grad and out.grad_fn is None
    assert theirs(torch.tensor([0.5], requires_grad=True), *args).requires_grad is False
    with pytest.raises(RuntimeError):  # nothing to differentiate, in either library
        out.sum().backward()
    with pytest.raises(NotImplementedError):
        fn(mt.tensor([1.0], dtype=mt.float16), *args)
    with pytest.raises(NotImplementedError):
        theirs(torch.tensor([1.0], dtype=torch.float16), *args)
    out_arg = mt.zeros(2, dtype=mt.float64)
    assert fn(x.detach(), *args, out=out_arg) is out_arg
    np.testing.assert_allclose(out_arg.numpy(), out.detach().numpy())


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials_against_torch(name):
    fn, theirs = getattr(mt.special, name), getattr(torch.special, name)
    x = np.array([-2.0, -1.0, -0.5, 0.0, 0.3, 0.5, 1.0, 1.5, 0.999, np.inf, -np.inf])
    n = np.array([-3, -1, 0, 1, 2, 3, 5, 7, 12, 25])
    xs, ns = np.meshgrid(x, n)
    got = fn(mt.tensor(xs), mt.tensor(ns)).numpy()
    np.testing.assert_allclose(got, theirs(torch.tensor(xs), torch.tensor(ns)).numpy(), rtol=1e-10, atol=1e-12,
                               equal_nan=True)
    degrees = [2.5, -0.5, np.nan, 1e20, -3.0, np.inf, 4.0]  # float degrees: truncated; beyond int64: 0
    for d in degrees:
        np.testing.assert_allclose(fn(mt.tensor([0.3, 1.7], dtype=mt.float64), d).numpy(),
                                   theirs(torch.tensor([0.3, 1.7], dtype=torch.float64), d).numpy(), rtol=1e-12)
    np.testing.assert_allclose(fn(0.3, mt.tensor(degrees[:2] + degrees[4:])).numpy(),
                               theirs(0.3, torch.tensor(degrees[:2] + degrees[4:])).numpy(), rtol=1e-5)
    cases = [((mt.ones(2, 1), mt.tensor([1, 2, 3])), (torch.ones(2, 1), torch.tensor([1, 2, 3]))),
             ((mt.ones(2), mt.tensor(2.0, dtype=mt.float64)), (torch.ones(2), torch.tensor(2.0, dtype=torch.float64))),
             ((mt.ones(()), mt.tensor([2.0], dtype=mt.float64)),
              (torch.ones(()), torch.tensor([2.0], dtype=torch.float64))),
             ((2.5, mt.tensor([3])), (2.5, torch.tensor([3])))]
    for ours, ref in cases:
        a, b = fn(*ours), theirs(*ref)
        assert a.shape == tuple(b.shape) and str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    with pytest.raises(TypeError):
        fn(0.5, 2)
    with pytest.raises(TypeError):
        theirs(0.5, 2)
