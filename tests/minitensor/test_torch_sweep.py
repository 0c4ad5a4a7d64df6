r"""A differential sweep against PyTorch: unary ops and reductions, forward and gradient, on random
shapes (0-d and empty included) and values that mix ordinary numbers with the edges: +-0, +-inf,
NaN, subnormals, 1e-30 and 1e30. Each output is reduced with a random upstream weight. float32 and
float64. Skipped where PyTorch is not installed.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitensor
import minitensor.nn.functional as mF

# a differential sweep against PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")
tF = torch.nn.functional

EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 1e30, 1e-40, 5e-324]


def _dim(x):
    return -1 if x.ndim else None


# name: fn(lib, F, x) -> tensor or tuple of tensors
OPS = {
    "abs": lambda lib, F, x: x.abs(),
    "neg": lambda lib, F, x: -x,
    "sign": lambda lib, F, x: x.sign() * x,
    "relu": lambda lib, F, x: F.relu(x),
    "exp": lambda lib, F, x: x.exp(),
    "log": lambda lib, F, x: x.log(),
    "log1p": lambda lib, F, x: x.log1p(),
    "sqrt": lambda lib, F, x: x.sqrt(),
    "rsqrt": lambda lib, F, x: x.rsqrt(),
    "sin": lambda lib, F, x: x.sin(),
    "cos": lambda lib, F, x: x.cos(),
    "tanh": lambda lib, F, x: x.tanh(),
    "sigmoid": lambda lib, F, x: x.sigmoid(),
    "erf": lambda lib, F, x: x.erf(),
    "square": lambda lib, F, x: x.square(),
    "reciprocal": lambda lib, F, x: x.reciprocal(),
    "pow0": lambda lib, F, x: x ** 0,
    "pow3": lambda lib, F, x: x ** 3,
    "div_self": lambda lib, F, x: x / x,
    "softmax": lambda lib, F, x: F.softmax(x, dim=-1 if x.ndim else 0),
    "log_softmax": lambda lib, F, x: F.log_softmax(x, dim=-1 if x.ndim else 0),
    "sum": lambda lib, F, x: x.sum(),
    "sum_dim": lambda lib, F, x: x.sum(dim=-1 if x.ndim else 0, keepdim=True),
    "mean": lambda lib, F, x: x.mean(),
    "mean_dim": lambda lib, F, x: x.mean(dim=0 if x.ndim else None),
    "var": lambda lib, F, x: x.var(),
    "std": lambda lib, F, x: x.std(),
    "std_dim": lambda lib, F, x: x.std(dim=-1 if x.ndim else None, correction=0),
    "norm": lambda lib, F, x: x.norm(),
    "norm1": lambda lib, F, x: x.norm(p=1),
    "norm3": lambda lib, F, x: x.norm(p=3),
    "logsumexp": lambda lib, F, x: x.logsumexp(dim=-1 if x.ndim else 0),
    "amax": lambda lib, F, x: x.amax(),
    "max": lambda lib, F, x: x.max(),
    "min": lambda lib, F, x: x.min(),
    "max_dim": lambda lib, F, x: x.max(dim=-1 if x.ndim else 0),
    "min_dim": lambda lib, F, x: x.min(dim=0, keepdim=True),
    "argmax": lambda lib, F, x: x.argmax(dim=-1 if x.ndim else 0, keepdim=True),
    "sort_desc": lambda lib, F, x: x.sort(dim=-1, descending=True),
    "sort": lambda lib, F, x: x.sort(dim=0),
    "topk": lambda lib, F, x: x.topk(min(2, x.shape[-1]) if x.ndim else 1),
    "cumsum": lambda lib, F, x: x.cumsum(dim=0),
}
# max(dim) and min(dim) split the gradient of tied maxima (a documented difference from PyTorch,
# which gives it all to one index): compared only where the reduced rows hold no repeated value
# (and topk's order of tied values is PyTorch's implementation detail). max(dim) of a row of an
# empty dim is another part's work (it raises here): those draws are left out for now
TIE_SENSITIVE = {"max_dim": -1, "min_dim": 0, "topk": -1}


# PyTorch's 2-norm returns |x| for one element but squares several (so norm([1e-40]) is 1e-40 and
# norm([3e-30, 4e-30]) is 0 in float32), and its p=3 gradient at a norm that underflows is 0/0:
# its own quirks, left out
NO_TINY = {"norm", "norm3"}
# std's gradient at float32 subnormals: PyTorch's g / (2 std) overflows to inf (std of [0, 1e-44])
# and rounds differently; left out, 1e-30 stays in
NO_SUBNORMAL = {"std", "std_dim"}


@st.composite
def arrays(draw, dtype, floor=0.0):
    """Values of `dtype` whose non-zero magnitudes are at least `floor`."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    edges = [e for e in EDGES if not 0 < abs(e) < floor]
    values = st.one_of(st.floats(-4, 4, width=32, allow_subnormal=not floor), st.sampled_from(edges))
    return draw(hnp.arrays(dtype, shape, elements=values))


def _np(t):
    return t.detach().numpy()


def _run(lib, F, fn, x, seed):
    leaf = lib.tensor(x.copy()).requires_grad_(True)
    try:
        outs = fn(lib, F, leaf)
    except (RuntimeError, IndexError, ValueError) as e:
        return type(e)
    outs = tuple(outs) if isinstance(outs, tuple) else (outs,)
    rng = np.random.default_rng(seed)
    roots = [o for o in outs if o.requires_grad]
    if roots:
        weights = [lib.tensor(rng.standard_normal(tuple(o.shape)).astype(x.dtype)) for o in roots]
        (torch.autograd.backward if lib is torch else minitensor.autograd.backward)(roots, weights)
    return [_np(o) for o in outs], None if leaf.grad is None else _np(leaf.grad)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")  # PyTorch's, for n <= correction
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPS))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_matches_pytorch(name, dtype, data):
    x = data.draw(arrays(dtype, 1e-20 if name in NO_TINY else 1.2e-38 if name in NO_SUBNORMAL else 0.0))
    assume(name not in NO_TINY or x.size != 1)  # one element: PyTorch's |x|, exact where squaring is not
    # var of one NaN (n - 1 = 0 degrees of freedom): PyTorch's gradient reads inf, of any other one
    # element NaN; both are 0/0, left out
    assume(name != "var" or x.size != 1 or not np.isnan(x).any())
    if name in TIE_SENSITIVE:
        assume(x.size or name == "topk")
    if name in TIE_SENSITIVE and x.size:
        axis = TIE_SENSITIVE[name]
        rows = np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis]) if x.ndim else x.reshape(1, 1)
        assume(all(len(set(r[~np.isnan(r)].tolist())) == np.count_nonzero(~np.isnan(r))
                   and np.isnan(r).sum() <= 1 for r in rows))  # NaNs tie with each other
    seed = data.draw(st.integers(0, 2 ** 16))
    got = _run(minitensor, mF, OPS[name], x, seed)
    want = _run(torch, tF, OPS[name], x, seed)
    if isinstance(want, type) or isinstance(got, type):
        assert isinstance(got, type) and isinstance(want, type), f"{name}: minitensor {got}, torch {want}"
        return
    rtol, atol = (2e-5, 1e-6) if dtype == np.float32 else (1e-10, 1e-12)
    for i, (a, b) in enumerate(zip(got[0], want[0])):
        assert a.shape == b.shape and a.dtype == b.dtype, (f"{name} output {i}: {a.shape} {a.dtype}, "
                                                           f"torch {b.shape} {b.dtype}")
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{name} output {i} of {x!r}")
    assert (got[1] is None) == (want[1] is None), f"{name}: gradient {got[1]}, torch {want[1]}"
    if got[1] is not None:
        np.testing.assert_allclose(got[1], want[1], rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"{name} gradient of {x!r}")
