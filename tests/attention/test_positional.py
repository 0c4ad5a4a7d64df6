"""attention.positional: sinusoidal (fixed, non-persistent buffer) and learned positional encodings."""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import minitensor as mt
from attention import LearnedPositionalEncoding, SinusoidalPositionalEncoding
from attention.positional import sinusoidal_table
from minitensor.autograd import gradcheck
from minitensor.testing import assert_close


@given(st.integers(1, 12), st.integers(1, 9))
def test_sinusoidal_table_follows_the_formula(max_len, d_model):
    pe = sinusoidal_table(max_len, d_model)
    assert pe.shape == (max_len, d_model)
    for t in range(max_len):
        for j in range(d_model):
            angle = t / 10000 ** ((j - j % 2) / d_model)
            assert math.isclose(pe[t, j], math.sin(angle) if j % 2 == 0 else math.cos(angle), abs_tol=1e-12)


def test_sinusoidal_buffer_is_non_persistent_and_follows_dtype():
    enc = SinusoidalPositionalEncoding(6, max_len=10)
    assert list(enc.state_dict()) == [] and [n for n, _ in enc.named_buffers()] == ["pe"]
    assert tuple(enc.pe.shape) == (10, 6) and enc.pe.dtype == mt.float32
    assert enc(mt.zeros(2, 4, 6)).dtype == mt.float32
    x = mt.randn(2, 4, 6, dtype=mt.float64, requires_grad=True)
    out = enc(x)
    assert out.dtype == mt.float64
    assert_close(out, x.numpy(force=True) + sinusoidal_table(10, 6)[:4], rtol=1e-6, atol=1e-7)  # the float32 table
    enc.double()
    assert_close(enc(x), x.numpy(force=True) + sinusoidal_table(10, 6)[:4])
    assert gradcheck(lambda x: enc(x), (x,))
    enc.load_state_dict({})  # a checkpoint need not (and does not) carry the table


def test_learned_encoding_parameters_and_gradients():
    mt.manual_seed(0)
    enc = LearnedPositionalEncoding(8, 3).double()
    assert list(enc.state_dict()) == ["weight"] and tuple(enc.weight.shape) == (8, 3)
    x = mt.randn(2, 5, 3, dtype=mt.float64, requires_grad=True)
    out = enc(x)
    assert_close(out, x.numpy(force=True) + enc.weight.numpy(force=True)[:5])
    out.backward(mt.ones(2, 5, 3, dtype=mt.float64))
    assert (enc.weight.grad.numpy(force=True)[:5] == 2).all() and (enc.weight.grad.numpy(force=True)[5:] == 0).all()
    rng = np.random.default_rng(0)
    u = rng.standard_normal((2, 5, 3))
    loss = lambda: float((enc(x).numpy(force=True) * u).sum())  # noqa: E731
    analytic = mt.autograd.grad(enc(x), (enc.weight,), grad_outputs=mt.tensor(u))[0].numpy(force=True)
    flat = enc.weight.numpy(force=True).reshape(-1)
    for j in range(flat.size):                      # central differences, element by element
        orig = flat[j]
        flat[j] = orig + 1e-6
        plus = loss()
        flat[j] = orig - 1e-6
        minus = loss()
        flat[j] = orig
        assert abs((plus - minus) / 2e-6 - analytic.reshape(-1)[j]) < 1e-7
    big = LearnedPositionalEncoding(1000, 16)
    assert 0.015 < float(big.weight.numpy(force=True).std()) < 0.025


@pytest.mark.parametrize("cls, args", [(SinusoidalPositionalEncoding, (4, 3)), (LearnedPositionalEncoding, (3, 4))])
def test_too_long_or_wrong_width_names_the_shape(cls, args):
    enc = cls(*args)
    with pytest.raises(RuntimeError, match=r"length 5 exceeds max_len=3.*\(1, 5, 4\)"):
        enc(mt.zeros(1, 5, 4))
    with pytest.raises(RuntimeError, match=r"\(\.\.\., T, 4\).*\(1, 2, 5\)"):
        enc(mt.zeros(1, 2, 5))
