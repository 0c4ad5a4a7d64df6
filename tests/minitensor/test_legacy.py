"""The typed tensor classes (`LongTensor`, `FloatTensor` ...) build tensors of their dtype, and
`isinstance` checks the dtype, as PyTorch's legacy constructors do."""
import numpy as np
import pytest

import minitensor as mt

TYPED = {"FloatTensor": mt.float32, "DoubleTensor": mt.float64, "LongTensor": mt.int64, "IntTensor": mt.int32,
         "BoolTensor": mt.bool, "ByteTensor": mt.uint8, "HalfTensor": mt.float16, "ShortTensor": mt.int16,
         "CharTensor": mt.int8}


@pytest.mark.parametrize("name", list(TYPED))
def test_data_and_size_give_that_dtype(name):
    cls, dtype = getattr(mt, name), TYPED[name]
    t = cls([1, 0, 1])
    assert type(t) is mt.Tensor and t.dtype == dtype and t.tolist() == np.array([1, 0, 1], dtype).tolist()
    z = cls(2, 3)
    assert z.shape == (2, 3) and z.dtype == dtype
    assert cls(mt.Size([2, 1])).shape == (2, 1)
    assert cls().shape == (0,) and cls().dtype == dtype


@pytest.mark.parametrize("name", list(TYPED))
def test_isinstance_checks_the_dtype(name):
    cls, dtype = getattr(mt, name), TYPED[name]
    for other in {mt.float32, mt.float64, mt.int64, mt.bool}:
        assert isinstance(mt.zeros(2, dtype=other), cls) == (other == dtype)
    assert not isinstance(3, cls) and not isinstance(np.zeros(2, dtype), cls)


def test_a_parameter_is_a_float_tensor():
    assert isinstance(mt.nn.Parameter(mt.ones(2)), mt.FloatTensor)


def test_float_data_is_truncated_into_integer_classes():
    assert mt.LongTensor([1.7, -2.6]).tolist() == [1, -2]
    assert mt.FloatTensor((2, 3)).tolist() == [2.0, 3.0]  # a tuple is data, not a size


def test_a_tensor_of_the_same_dtype_is_returned_and_another_dtype_refused():
    x = mt.ones(2, requires_grad=True)
    assert mt.FloatTensor(x) is x
    with pytest.raises(TypeError, match=r"LongTensor.*int64.*float32"):
        mt.LongTensor(x)


def test_bad_arguments():
    with pytest.raises(RuntimeError, match="negative"):
        mt.FloatTensor(-1)
    with pytest.raises(TypeError, match="sequence"):
        mt.FloatTensor(2.5)
    with pytest.raises(TypeError):
        mt.FloatTensor([1.0], requires_grad=True)


def test_type_converts_to_and_names_the_typed_classes():
    x = mt.tensor([1.5, 2.5])
    assert x.type(mt.LongTensor).dtype == mt.int64
    assert x.type("torch.IntTensor").dtype == mt.int32
    assert x.double().type() == "minitensor.DoubleTensor"
    assert mt.zeros(2, dtype=mt.uint8).type() == "minitensor.ByteTensor"


def test_same_as_torch():
    torch = pytest.importorskip("torch")
    for name in TYPED:
        m, t = getattr(mt, name), getattr(torch, name)
        for data in ([1.7, 2.6, 0.0], [[1, 2], [3, 4]], [True, False]):
            a, b = m(data), t(data)
            assert a.dtype == getattr(mt, str(b.dtype).replace("torch.", "")) and a.tolist() == b.tolist()
        assert tuple(m(2, 3).shape) == tuple(t(2, 3).shape)
        assert m.dtype == getattr(mt, str(t.dtype).replace("torch.", ""))
        assert _type_name(m) == _type_name(t)
        for dtype in ("float32", "float64", "int64", "int32", "bool", "uint8"):
            assert isinstance(mt.zeros(2, dtype=getattr(mt, dtype)), m) == isinstance(
                torch.zeros(2, dtype=getattr(torch, dtype)), t)


def _type_name(cls):
    """What `.type()` says of a tensor built by cls, without the library's name."""
    return cls([1]).type().split(".")[-1]
