"""Ops tutorials use beyond the core: `//` and `%`, scatter, index_fill, masked_select, `new_*`.

Values and gradients against PyTorch are in test_torch_parity.py (CASES) and the gradient checks
in test_ops.py (TABLE); here: dtypes, in-place forms, and the errors, each the kind PyTorch raises.
"""
import numpy as np
import pytest

import minitensor as mt


def test_integer_tensors_stay_integer():
    a, b = mt.tensor([7, -7]), mt.tensor([2, 2])
    for out in (a // b, a % b, mt.fmod(a, b), a // 2, a % 2, 9 // a, mt.div(a, b, rounding_mode="trunc")):
        assert out.dtype == mt.int64
    assert (a // 2).tolist() == [3, -4] and (a % 2).tolist() == [1, 1] and mt.fmod(a, b).tolist() == [1, -1]
    assert (a // 2.5).dtype == mt.float32 and (a.to(mt.int32) // b).dtype == mt.int64
    assert (mt.tensor([5], dtype=mt.int32) % 3).dtype == mt.int32


def test_remainder_has_the_divisors_sign_fmod_the_dividends():
    x = mt.tensor([5.0, -5.0, 5.0, -5.0])
    d = mt.tensor([3.0, 3.0, -3.0, -3.0])
    assert (x % d).tolist() == [2.0, 1.0, -1.0, -2.0]
    assert mt.fmod(x, d).tolist() == [2.0, -2.0, 2.0, -2.0]
    assert (x // d).tolist() == [1.0, -2.0, -2.0, 1.0]


def test_integer_division_by_zero_is_an_error_float_gives_inf_and_nan():
    with pytest.raises(RuntimeError, match="floor_divide.*ZeroDivisionError"):
        mt.tensor([1, 2]) // 0
    with pytest.raises(RuntimeError, match="remainder.*ZeroDivisionError"):
        mt.tensor([1, 2]) % mt.tensor([1, 0])
    out = mt.tensor([1.0, -1.0, 0.0]) // 0.0
    assert out[0].item() == np.inf and out[1].item() == -np.inf and np.isnan(out[2].item())


def test_rounded_division_has_zero_gradient():
    a = mt.tensor([5.5, -3.2], requires_grad=True)
    b = mt.tensor([2.0, -1.5], requires_grad=True)
    out = mt.div(a, b, rounding_mode="floor") + a // b
    assert out.requires_grad
    ga, gb = mt.autograd.grad(out.sum(), [a, b])
    assert ga.tolist() == [0.0, 0.0] and gb.tolist() == [0.0, 0.0]


def test_in_place_division_forms():
    x = mt.tensor([7, 8, -9])
    x //= 2
    assert x.tolist() == [3, 4, -5]
    x %= 3
    assert x.tolist() == [0, 1, 1]
    y = mt.tensor([7.0, -7.0])
    y.div_(2, rounding_mode="trunc")
    assert y.tolist() == [3.0, -3.0]
    assert mt.tensor([5.0]).remainder_(-3).tolist() == [-1.0] and mt.tensor([5.0]).fmod_(-3).tolist() == [2.0]
    with pytest.raises(RuntimeError, match="can't be cast"):
        mt.tensor([7]).__imod__(2.5)  # a float result into an int tensor, refused as by PyTorch


def test_in_place_scatter_and_index_fill_are_recorded():
    x = mt.randn(3, 4, requires_grad=True)
    src = mt.randn(1, 4, requires_grad=True)
    y = x * 1
    y.scatter_(0, mt.tensor([[2, 0, 1, 2]]), src)
    y.index_fill_(1, mt.tensor([3]), 0.0)
    gx, gs = mt.autograd.grad((y * mt.arange(12.0).reshape(3, 4)).sum(), [x, src])
    w = np.arange(12.0).reshape(3, 4)
    keep = np.ones((3, 4))
    keep[[2, 0, 1, 2], [0, 1, 2, 3]] = 0
    keep[:, 3] = 0
    assert np.allclose(gx.numpy(), w * keep)
    assert np.allclose(gs.numpy(), [[w[2, 0], w[0, 1], w[1, 2], 0.0]])


def test_scatter_with_reduce_refuses_a_gradient():
    x = mt.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="scatter.*reduce.*not implemented"):
        x.scatter(0, mt.tensor([0, 0]), mt.ones(2), reduce="add")
    with mt.no_grad():
        assert x.scatter(0, mt.tensor([0, 0]), mt.ones(2), reduce="add").tolist() == [2.0, 0.0, 0.0]


def test_new_factories_take_the_tensors_dtype():
    i = mt.tensor([1, 2], dtype=mt.int32)
    assert i.new_tensor([1.5, 2.5]).tolist() == [1, 2] and i.new_tensor([1.5]).dtype == mt.int32
    assert i.new_zeros(2, 3).shape == (2, 3) and i.new_zeros((2, 3)).dtype == mt.int32
    assert i.new_ones([2]).tolist() == [1, 1] and i.new_full((2,), 3.7).tolist() == [3, 3]
    assert i.new_empty(2, 1).shape == (2, 1) and i.new_full((1,), 3.7, dtype=mt.float64).dtype == mt.float64
    f = mt.ones(2, requires_grad=True)
    t = f.new_tensor(f)
    assert t.dtype == mt.float32 and not t.requires_grad and t.grad_fn is None
    assert f.new_zeros(2, requires_grad=True).requires_grad


TORCH_AND_MT_ERRORS = {
    "scatter_src_dtype": lambda lib: lib.zeros(3, 4).scatter(0, lib.tensor([[0]]), lib.ones(1, 1, dtype=lib.float64)),
    "scatter_index_dims": lambda lib: lib.zeros(3, 4).scatter(0, lib.tensor([0, 1]), lib.ones(3, 4)),
    "scatter_index_range": lambda lib: lib.zeros(3, 4).scatter(0, lib.tensor([[5]]), lib.ones(3, 4)),
    "scatter_index_negative": lambda lib: lib.zeros(3, 4).scatter(0, lib.tensor([[-1]]), lib.ones(3, 4)),
    "scatter_index_too_big": lambda lib: lib.zeros(3, 4).scatter(0, lib.zeros(4, 4, dtype=lib.long), lib.ones(3, 4)),
    "scatter_index_float": lambda lib: lib.zeros(3, 4).scatter(0, lib.zeros(1, 1), lib.ones(3, 4)),
    "scatter_bad_reduce": lambda lib: lib.zeros(3).scatter(0, lib.tensor([0]), lib.ones(1), reduce="mean"),
    "scatter_bad_dim": lambda lib: lib.zeros(3, 4).scatter(2, lib.tensor([[0]]), lib.ones(3, 4)),
    "scatter_add_number": lambda lib: lib.zeros(3).scatter_add(0, lib.tensor([0]), 2.0),
    "index_fill_range": lambda lib: lib.zeros(3, 4).index_fill(1, lib.tensor([4]), 1.0),
    "index_fill_int32": lambda lib: lib.zeros(3, 4).index_fill(1, lib.tensor([0], dtype=lib.int32), 1.0),
    "index_fill_2d": lambda lib: lib.zeros(3, 4).index_fill(1, lib.tensor([[0]]), 1.0),
    "index_fill_value_1d": lambda lib: lib.zeros(3, 4).index_fill(1, lib.tensor([0]), lib.ones(1)),
    "masked_select_int_mask": lambda lib: lib.masked_select(lib.zeros(3), lib.tensor([1, 0, 1])),
    "masked_select_shapes": lambda lib: lib.masked_select(lib.zeros(3), lib.tensor([True, False])),
    "masked_fill_shapes": lambda lib: lib.zeros(2).masked_fill(lib.ones(3, dtype=lib.bool), 1.0),
    "masked_fill_inplace_bigger_mask": lambda lib: lib.zeros(3).masked_fill_(lib.ones(2, 3, dtype=lib.bool), 1.0),
    "div_bad_rounding": lambda lib: lib.div(lib.ones(2), 2, rounding_mode="round"),
    "int_floor_divide_by_zero": lambda lib: lib.tensor([1]) // 0,
    "int_remainder_by_zero": lambda lib: lib.tensor([1]) % 0,
    "int_fmod_by_zero": lambda lib: lib.fmod(lib.tensor([1]), 0),
    "new_full_int_size": lambda lib: lib.ones(2).new_full(2, 1.0),
    "new_zeros_int_requires_grad": lambda lib: lib.ones(2, dtype=lib.long).new_zeros(2, requires_grad=True),
}


@pytest.mark.filterwarnings("ignore:The reduce argument")  # PyTorch deprecates reduce= with a src tensor
@pytest.mark.parametrize("name", list(TORCH_AND_MT_ERRORS))
def test_errors_of_the_kind_pytorch_raises(name):
    torch = pytest.importorskip("torch")
    call = TORCH_AND_MT_ERRORS[name]
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type):
        call(mt)
