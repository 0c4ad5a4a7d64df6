"""Initialisation: shapes, bounds and standard deviations against PyTorch's gain and fan formulas."""
import math

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor.nn import init

OUT, IN = 400, 300  # 120 000 draws: a sample std is within ~0.5 % of the true one


def assert_uniform(arr, bound):
    assert np.abs(arr).max() <= bound
    assert np.abs(arr).max() > 0.99 * bound  # the whole range is used, not a narrower one
    assert abs(arr.mean()) < 0.02 * bound
    assert arr.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)  # std of U(-b, b)


def assert_normal(arr, std, mean=0.0):
    assert arr.mean() == pytest.approx(mean, abs=0.02 * std)
    assert arr.std() == pytest.approx(std, rel=0.02)


def fresh(*shape, dtype=mt.float32):
    return mt.zeros(*shape, dtype=dtype)


@pytest.mark.parametrize(
    "nonlinearity, param, gain",
    [("linear", None, 1.0), ("sigmoid", None, 1.0), ("conv2d", None, 1.0), ("tanh", None, 5 / 3),
     ("relu", None, math.sqrt(2)), ("leaky_relu", None, math.sqrt(2 / (1 + 0.01 ** 2))),
     ("leaky_relu", 0.2, math.sqrt(2 / 1.04)), ("selu", None, 0.75)],
)
def test_calculate_gain(nonlinearity, param, gain):
    assert init.calculate_gain(nonlinearity, param) == pytest.approx(gain, rel=1e-12)


def test_calculate_gain_rejects_unknown():
    with pytest.raises(ValueError, match="swish"):
        init.calculate_gain("swish")


def test_xavier_uniform_and_normal():
    t = fresh(OUT, IN)
    assert init.xavier_uniform_(t, gain=2.0) is t and t.shape == (OUT, IN)
    assert_uniform(t.numpy(force=True), 2.0 * math.sqrt(6 / (IN + OUT)))
    init.xavier_normal_(t, gain=0.5)
    assert_normal(t.numpy(force=True), 0.5 * math.sqrt(2 / (IN + OUT)))


def test_kaiming_uniform_and_normal_modes_and_gains():
    t = fresh(OUT, IN)
    init.kaiming_uniform_(t)  # a=0, fan_in, leaky_relu: gain sqrt(2)
    assert_uniform(t.numpy(force=True), math.sqrt(3) * math.sqrt(2) / math.sqrt(IN))
    init.kaiming_uniform_(t, a=math.sqrt(5))  # Linear's default: bound 1/sqrt(fan_in)
    assert_uniform(t.numpy(force=True), 1 / math.sqrt(IN))
    init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert_normal(t.numpy(force=True), math.sqrt(2) / math.sqrt(OUT))
    init.kaiming_normal_(t, nonlinearity="tanh")
    assert_normal(t.numpy(force=True), (5 / 3) / math.sqrt(IN))
    with pytest.raises(ValueError, match="fan_avg"):
        init.kaiming_normal_(t, mode="fan_avg")


def test_fans_include_the_receptive_field():
    t = fresh(64, 32, 3, 3)  # (out, in, kh, kw): fan_in = 32 * 9, fan_out = 64 * 9
    init.kaiming_normal_(t)
    assert_normal(t.numpy(force=True), math.sqrt(2) / math.sqrt(32 * 9))
    init.xavier_uniform_(t)
    assert_uniform(t.numpy(force=True), math.sqrt(6 / (32 * 9 + 64 * 9)))


def test_fan_needs_two_dims():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(fresh(5))


def test_normal_uniform_constant_zeros_ones():
    t = fresh(OUT, IN)
    init.normal_(t, mean=3.0, std=0.5)
    assert_normal(t.numpy(force=True), 0.5, mean=3.0)
    init.uniform_(t, -2.0, 4.0)
    assert t.numpy(force=True).min() >= -2.0 and t.numpy(force=True).max() < 4.0
    assert (t.numpy(force=True).mean() == pytest.approx(1.0, abs=0.02)
            and t.numpy(force=True).std() == pytest.approx(6 / math.sqrt(12), rel=0.02))
    assert (init.constant_(t, 0.25).numpy(force=True) == 0.25).all()
    assert not init.zeros_(t).numpy(force=True).any()
    assert (init.ones_(t).numpy(force=True) == 1).all()


def test_init_keeps_dtype_and_bumps_version_and_follows_the_seed():
    t = fresh(3, 4)
    v = t._version
    init.xavier_normal_(t)
    assert t.dtype == mt.float32 and t._version > v
    d = init.normal_(fresh(3, 4, dtype=mt.float64))
    assert d.dtype == mt.float64
    mt.manual_seed(7)
    a = init.kaiming_uniform_(fresh(3, 4)).numpy(force=True).copy()
    mt.manual_seed(7)
    np.testing.assert_array_equal(init.kaiming_uniform_(fresh(3, 4)).numpy(force=True), a)
    g = mt.Generator().manual_seed(3)
    b = init.normal_(fresh(5), generator=g).numpy(force=True).copy()
    np.testing.assert_array_equal(init.normal_(fresh(5), generator=mt.Generator().manual_seed(3)).numpy(force=True), b)


def test_zero_element_tensors_are_left_alone():
    lin = nn.Linear(0, 3)
    assert lin.weight.shape == (3, 0) and not lin.bias.numpy(force=True).any()


# ---- each layer's default initialisation --------------------------------------------------------
def test_linear_default_init():
    lin = nn.Linear(IN, OUT)
    assert lin.weight.shape == (OUT, IN) and lin.bias.shape == (OUT,)
    assert_uniform(lin.weight.numpy(force=True), 1 / math.sqrt(IN))
    b = nn.Linear(IN, 20000).bias.numpy(force=True)  # enough bias draws to measure
    assert_uniform(b, 1 / math.sqrt(IN))


def test_embedding_default_init_is_standard_normal():
    emb = nn.Embedding(OUT, IN)
    assert emb.weight.shape == (OUT, IN)
    assert_normal(emb.weight.numpy(force=True), 1.0)


def test_layer_norm_default_init():
    ln = nn.LayerNorm((2, 3))
    assert ln.weight.shape == ln.bias.shape == (2, 3)
    assert (ln.weight.numpy(force=True) == 1).all() and not ln.bias.numpy(force=True).any()


def test_reset_parameters_redraws():
    lin = nn.Linear(4, 4)
    before = lin.weight.numpy(force=True).copy()
    lin.reset_parameters()
    assert not np.array_equal(before, lin.weight.numpy(force=True))


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.init.normal_(lib.zeros(2, dtype=lib.int64)),
    lambda lib: lib.nn.init.uniform_(lib.zeros(2, dtype=lib.bool)),
    lambda lib: lib.nn.init.uniform_(lib.zeros(2), 3.0, 2.0),
    lambda lib: lib.nn.init.normal_(lib.zeros(2), 0.0, -1.0),
], ids=["normal_ of int64", "uniform_ of bool", "uniform_ from 3 to 2", "normal_ with std -1"])
def test_init_refuses_what_the_tensor_methods_refuse_and_changes_nothing(call):
    """An integer tensor took truncated draws silently and a bad range raised numpy's ValueError."""
    with pytest.raises(RuntimeError, match="normal_|uniform_"):  # (NotImplementedError is a RuntimeError)
        call(mt)
    x = mt.zeros(2, dtype=mt.int64)
    with pytest.raises(NotImplementedError, match="normal_"):
        init.normal_(x)
    assert x.tolist() == [0, 0] and x._version == 0
    with pytest.raises(RuntimeError):  # PyTorch refuses the same calls
        call(pytest.importorskip("torch"))
