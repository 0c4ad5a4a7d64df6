"""out=, size=, the new factories and the runtime's small functions against PyTorch: values, dtypes
and error types."""
import warnings

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow


def both(fn):
    """fn(library) for minitensor and torch."""
    return fn(mt), fn(torch)


def same(a, b, atol=1e-6):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
    np.testing.assert_allclose(a.numpy(force=True).astype(np.float64), b.detach().numpy().astype(np.float64),
                               atol=atol)


OUT_CASES = {
    "add": lambda L, o: L.add(L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0]), alpha=2, out=o),
    "sub": lambda L, o: L.sub(L.tensor([1, 2]), 1, out=o),
    "div": lambda L, o: L.div(L.tensor([1, 2]), 4, out=o),
    "exp": lambda L, o: L.exp(L.tensor([0.0, 1.0]), out=o),
    "clamp": lambda L, o: L.clamp(L.tensor([-1.0, 2.0]), 0, 1, out=o),
    "eq": lambda L, o: L.eq(L.tensor([1, 2]), 1, out=o),
    "cat": lambda L, o: L.cat([L.ones(1), L.zeros(2)], out=o),
    "stack": lambda L, o: L.stack([L.ones(2), L.zeros(2)], out=o),
    "mean": lambda L, o: L.mean(L.arange(6.0).reshape(2, 3), 1, out=o),
    "sum": lambda L, o: L.sum(L.arange(6.0).reshape(2, 3), 0, out=o),
    "mm": lambda L, o: L.mm(L.ones(2, 3), L.ones(3, 2), out=o),
    "where": lambda L, o: L.where(L.tensor([True, False]), L.ones(2), L.zeros(2), out=o),
    "softmax": lambda L, o: L.softmax(L.tensor([1.0, 2.0]), 0, out=o),
}


# PyTorch's kernels for these demand out's dtype be the result's (float64 for a float32 result is an
# error there); minitensor casts within a category for every op (docs/notes/misc_differences.md)
EXACT_DTYPE_IN_PYTORCH = {"clamp", "mm", "where", "softmax"}


@pytest.mark.parametrize("name", OUT_CASES)
@pytest.mark.parametrize("out_dtype", ["float32", "float64"])
def test_out_matches_pytorch(name, out_dtype):
    if out_dtype == "float64" and name in EXACT_DTYPE_IN_PYTORCH:
        with pytest.raises(RuntimeError):
            OUT_CASES[name](torch, torch.empty(0, dtype=torch.float64))
        return
    outs = []
    for L in (mt, torch):
        o = L.empty(0, dtype=getattr(L, out_dtype))
        r = OUT_CASES[name](L, o)
        assert r is o
        outs.append(o)
    same(*outs)


def test_out_resize_warning_and_errors_match_pytorch():
    for L in (mt, torch):
        with pytest.warns(UserWarning, match="resized since it had shape"):
            L.add(L.ones(3), 1, out=L.zeros(2))
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
            L.add(L.ones(3), 1.5, out=L.zeros(3, dtype=L.long))
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            L.mul(L.ones(3, requires_grad=True), 2, out=L.zeros(3))
        v, i = L.empty(0), L.empty(0, dtype=L.long)
        L.max(L.tensor([[1.0, 3.0], [4.0, 2.0]]), 1, out=(v, i))
        assert v.tolist() == [3.0, 4.0] and i.tolist() == [1, 0]


@pytest.mark.parametrize("make", [
    lambda L: L.zeros(size=(2, 3)), lambda L: L.ones(size=(2,)), lambda L: L.empty(size=(1, 2)).zero_(),
    lambda L: L.full(size=(2,), fill_value=7), lambda L: L.scalar_tensor(3), lambda L: L.scalar_tensor(2, dtype=L.long),
    lambda L: L.logspace(0, 2, 3), lambda L: L.logspace(0, 3, 4, base=2), lambda L: L.logspace(0, 3, 4, dtype=L.int64),
    lambda L: L.range(0, 1, 0.25), lambda L: L.range(1, 4), lambda L: L.range(5, 1, -2),
    lambda L: L.asarray([1, 2]), lambda L: L.asarray(np.ones(2)), lambda L: L.asarray([1.5], dtype=L.float64),
    lambda L: L.frombuffer(bytearray(np.arange(4, dtype=np.int16).tobytes()), dtype=L.int16, offset=2, count=2),
    lambda L: L.empty_strided((2, 3), (3, 1)).zero_(),
    lambda L: L.hann_window(5), lambda L: L.hann_window(5, periodic=False), lambda L: L.hamming_window(6),
    lambda L: L.hamming_window(6, False, alpha=0.5, beta=0.5), lambda L: L.blackman_window(7),
    lambda L: L.bartlett_window(5), lambda L: L.bartlett_window(6, periodic=False), lambda L: L.kaiser_window(8),
    lambda L: L.kaiser_window(5, False, beta=4.0), lambda L: L.hann_window(1), lambda L: L.hann_window(0),
    lambda L: L.hann_window(4, dtype=L.float64),
    lambda L: L.tensor([L.tensor(1.0), L.tensor(2.0)]), lambda L: L.tensor([L.tensor([1]), L.tensor([2])]),
    lambda L: L.tensor([[L.tensor(1.0), 2.0]]), lambda L: L.tensor([L.tensor(1, dtype=L.int8)] * 2),
])
def test_factories_match_pytorch(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (range's deprecation, in both)
        a, b = both(make)
    same(a, b, atol=1e-6)


def test_random_factories_match_pytorch_in_shape_and_dtype():
    for make in (lambda L: L.rand(size=(2, 3)), lambda L: L.randn(size=(4,)), lambda L: L.randint(5, size=(3,)),
                 lambda L: L.randint(1, 5, size=(3,)), lambda L: L.randint_like(L.zeros(2, dtype=L.int32), 4),
                 lambda L: L.randint_like(L.zeros(3), 2, 9)):
        a, b = both(make)
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([L.ones(2), L.ones(2)]),
    lambda L: L.zeros(2, size=(2,)),
    lambda L: L.is_nonzero(L.ones(2)),
    lambda L: L.is_nonzero(L.ones(0)),
    lambda L: L.finfo(L.int32),
    lambda L: L.iinfo(L.float32),
    lambda L: L.set_num_threads(0),
    lambda L: L.hann_window(-1),
    lambda L: L.cuda.get_device_name(),
    lambda L: L.cuda.synchronize(),
])
def test_errors_match_pytorch(call):
    try:
        call(torch)
    except Exception as e:
        expected = type(e)
    else:
        pytest.fail("PyTorch raised nothing")
    with pytest.raises(expected):
        call(mt)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16"])
def test_finfo_matches_pytorch(dtype):
    a, b = mt.finfo(getattr(mt, dtype)), torch.finfo(getattr(torch, dtype))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(a, field) == getattr(b, field), field
    assert repr(a) == repr(b)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"])
def test_iinfo_matches_pytorch(dtype):
    a, b = mt.iinfo(getattr(mt, dtype)), torch.iinfo(getattr(torch, dtype))
    assert (a.bits, a.min, a.max, a.dtype) == (b.bits, b.min, b.max, b.dtype) and repr(a) == repr(b)


DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("b", DTYPES)
def test_promote_types_and_can_cast_match_pytorch(a, b):
    assert str(mt.promote_types(getattr(mt, a), getattr(mt, b))).split(".")[-1] == str(
        torch.promote_types(getattr(torch, a), getattr(torch, b))).split(".")[-1]
    assert mt.can_cast(getattr(mt, a), getattr(mt, b)) == torch.can_cast(getattr(torch, a), getattr(torch, b))


@pytest.mark.parametrize("operands", [
    lambda L: (L.tensor([1, 2]), 1.0), lambda L: (2, L.tensor([1], dtype=L.int8)), lambda L: (1, 2),
    lambda L: (1, 2.0), lambda L: (True, 2), lambda L: (L.tensor(1.0, dtype=L.float64), L.tensor([1], dtype=L.int32)),
    lambda L: (L.tensor([1.0], dtype=L.float16), L.tensor(2.0)),
])
def test_result_type_matches_pytorch(operands):
    assert str(mt.result_type(*operands(mt))).split(".")[-1] == str(torch.result_type(*operands(torch))).split(".")[-1]


def test_predicates_and_names_match_pytorch():
    for L_x in ((mt, mt.ones(2)), (torch, torch.ones(2))):
        L, x = L_x
        assert L.is_floating_point(x) and not L.is_complex(x) and L.is_same_size(x, L.zeros(2))
        assert not L.is_storage(x) and L.is_nonzero(L.tensor([3]))
    for make in (lambda L: L.ones(1), lambda L: L.ones(1, dtype=L.long), lambda L: L.ones(1, dtype=L.float64),
                 lambda L: 3, lambda L: "s"):
        assert mt.typename(make(mt)).replace("minitensor", "torch") == torch.typename(make(torch))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch deprecates the has_* flags)
        for flag in ("has_cuda", "has_mps", "has_lapack", "has_cudnn", "has_spectral"):
            assert getattr(mt, flag) == getattr(torch, flag), flag
    assert mt.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    assert str(mt.get_default_device()) == str(torch.get_default_device())
    assert mt.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert mt.cuda.max_memory_allocated() == torch.cuda.max_memory_allocated() == 0
    assert mt.cuda.is_initialized() == torch.cuda.is_initialized()
    assert mt.backends.mps.is_built() == torch.backends.mps.is_built()
    assert mt.backends.cudnn.version() == torch.backends.cudnn.version()


def test_manual_seed_returns_the_default_generator_as_pytorch():
    assert mt.manual_seed(3) is mt.default_generator
    assert torch.manual_seed(3) is torch.default_generator
    assert mt.initial_seed() == torch.initial_seed() == 3
    mt.manual_seed(0)
    torch.manual_seed(0)
