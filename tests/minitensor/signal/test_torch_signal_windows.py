"""torch.signal.windows against PyTorch: every window's values for small M, both `sym`, float32/float64 and the
default dtype, the parameters of each (std, tau, center, beta, alpha, a), requires_grad, keyword-only arguments,
and PyTorch's errors; and that the windows the older torch.*_window functions also give are the same values.
The windows are constants (PyTorch's graph ends in an internal leaf), so there is no gradient to compare.
Skipped where PyTorch is not installed."""
import numpy as np
import pytest

import minitensor as mt
from minitensor import run as runner
from minitensor.signal import windows as W

torch = pytest.importorskip("torch")
T = torch.signal.windows

CASES = [  # (function, keyword arguments)
    ("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {}), ("exponential", {"tau": 2.5}),
    ("gaussian", {}), ("gaussian", {"std": 0.4}), ("general_cosine", {"a": [0.46, 0.23, 0.31]}),
    ("general_cosine", {"a": (1.0,)}), ("general_hamming", {}), ("general_hamming", {"alpha": 0.61}),
    ("hamming", {}), ("hann", {}), ("kaiser", {}), ("kaiser", {"beta": 0.0}), ("kaiser", {"beta": 3.7}),
    ("nuttall", {}),
]
DTYPES = {"float32": (mt.float32, torch.float32), "float64": (mt.float64, torch.float64), None: (None, None)}


def _same(m, t, exact_dtype=True):
    assert str(m.dtype).split(".")[1] == str(t.dtype).split(".")[1]
    assert tuple(m.shape) == tuple(t.shape)
    torch.testing.assert_close(torch.from_numpy(m.detach().numpy().copy()), t.detach())


@pytest.mark.parametrize("name, kw", CASES, ids=[f"{c[0]}{c[1] or ''}" for c in CASES])
@pytest.mark.parametrize("M", [0, 1, 2, 3, 8, 11])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", None])
def test_values_match_pytorch(name, kw, M, sym, dtype):
    md, td = DTYPES[dtype]
    _same(getattr(W, name)(M, sym=sym, dtype=md, **kw), getattr(T, name)(M, sym=sym, dtype=td, **kw))


@pytest.mark.parametrize("M", [1, 2, 7, 10])
@pytest.mark.parametrize("center", [0.0, 2.5, -1.0, 9.0])
def test_exponential_with_a_center(M, center):
    _same(W.exponential(M, center=center, sym=False, tau=1.5, dtype=mt.float64),
          T.exponential(M, center=center, sym=False, tau=1.5, dtype=torch.float64))


def test_default_dtype_is_followed():
    mt.set_default_dtype(mt.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for name, kw in CASES:
            _same(getattr(W, name)(5, **kw), getattr(T, name)(5, **kw))
    finally:
        mt.set_default_dtype(mt.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name, kw", CASES, ids=[f"{c[0]}{c[1] or ''}" for c in CASES])
@pytest.mark.parametrize("M", [0, 1, 6])
def test_requires_grad(name, kw, M):
    m = getattr(W, name)(M, requires_grad=True, dtype=mt.float64, **kw)
    t = getattr(T, name)(M, requires_grad=True, dtype=torch.float64, **kw)
    assert m.requires_grad == t.requires_grad is True
    weight = np.random.default_rng(M).normal(size=M)
    (m * mt.tensor(weight)).sum().backward()  # the window takes part in a graph as a constant that wants a gradient
    (t * torch.tensor(weight)).sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), weight)


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value).replace("minitensor.", "torch.")


ERRORS = [  # (function, M, keyword arguments for both libraries, or per library when a dict of two)
    ("hann", -1, {}), ("hamming", -3, {}), ("general_hamming", -1, {}), ("nuttall", -1, {}), ("blackman", -2, {}),
    ("bartlett", -1, {}), ("cosine", -1, {}), ("gaussian", -1, {}), ("exponential", -1, {}), ("kaiser", -1, {}),
    ("general_cosine", -1, {"a": [1.0]}),
    ("hann", 4, {"dtype": ("int64",)}), ("kaiser", 4, {"dtype": ("float16",)}),
    ("gaussian", 4, {"dtype": ("bfloat16",)}), ("general_cosine", 4, {"a": [1.0], "dtype": ("int32",)}),
    ("cosine", 4, {"layout": None}), ("bartlett", -1, {"layout": None}), ("exponential", 4, {"dtype": ("int64",)}),
    ("gaussian", 4, {"std": 0.0}), ("gaussian", 4, {"std": -1.0}), ("gaussian", 0, {"std": -1.0}),
    ("exponential", 4, {"tau": 0.0}), ("exponential", 4, {"center": 1.0}),
    ("exponential", 4, {"center": 1.0, "tau": -1.0}), ("kaiser", 4, {"beta": -0.5}), ("kaiser", 1, {"beta": -0.5}),
    ("general_cosine", 4, {"a": []}), ("general_cosine", 4, {"a": 0.5}), ("general_cosine", 4, {}),
    ("hann", 4, {"periodic": True}),
]


@pytest.mark.parametrize("name, M, kw", ERRORS, ids=[f"{e[0]}{e[1]}{list(e[2])}" for e in ERRORS])
def test_errors_match_pytorch(name, M, kw):
    def call(lib, fn):
        args = {k: (getattr(lib, v[0]) if isinstance(v, tuple) else v) for k, v in kw.items()}
        return lambda: fn(M, **args)

    assert _error(call(mt, getattr(W, name))) == _error(call(torch, getattr(T, name)))


@pytest.mark.parametrize("name", ["hann", "kaiser", "general_cosine"])
def test_arguments_after_M_are_keyword_only(name):
    for fn in (getattr(W, name), getattr(T, name)):
        with pytest.raises(TypeError):
            fn(5, False)


def test_edge_windows_skip_the_coefficients_as_pytorch():
    # M = 0 or 1 returns before the coefficients are looked at
    _same(W.general_cosine(1, a=[]), T.general_cosine(1, a=[]))
    _same(W.general_cosine(0, a=3), T.general_cosine(0, a=3))


@pytest.mark.parametrize("M", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("sym", [True, False])
def test_the_older_window_functions_give_the_same_windows(M, sym):
    pairs = [(W.hann(M, sym=sym), mt.hann_window(M, periodic=not sym)),
             (W.hamming(M, sym=sym), mt.hamming_window(M, periodic=not sym)),
             (W.general_hamming(M, alpha=0.6, sym=sym), mt.hamming_window(M, not sym, 0.6, 0.4)),
             (W.blackman(M, sym=sym), mt.blackman_window(M, periodic=not sym)),
             (W.bartlett(M, sym=sym), mt.bartlett_window(M, periodic=not sym)),
             (W.kaiser(M, beta=5.0, sym=sym), mt.kaiser_window(M, periodic=not sym, beta=5.0))]
    for new, old in pairs:
        np.testing.assert_array_equal(new.numpy(), old.numpy())


def test_namespace_and_runner():
    assert W.__all__ == T.__all__
    assert mt.signal.windows is W
    with runner.torch_is_minitensor():
        import torch as shadow  # noqa: F811  (minitensor, under the runner)
        from torch.signal.windows import nuttall

        assert nuttall is W.nuttall and shadow.signal.windows.hann is W.hann
        with pytest.raises(ValueError, match="expects float32 or float64 dtypes, got: torch.int64"):
            shadow.signal.windows.hann(3, dtype=shadow.int64)
