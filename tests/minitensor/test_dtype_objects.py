"""minitensor's dtype objects (`minitensor.dtype`, issue 29 point 6): they print as PyTorch's under the
runner and as `minitensor.<name>` otherwise, and work wherever numpy's dtype does (numpy calls, ==, hashes,
dict keys, pickles, checkpoints), while minitensor's own code keeps numpy's dtypes."""
import io
import pickle

import numpy as np
import pytest

import minitensor as mt
from minitensor import _dtype
from minitensor.run import torch_is_minitensor

NAMES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64",
         "bool"] + (["bfloat16"] if _dtype.has_bfloat16 else [])
DTYPES = [getattr(mt, n) for n in NAMES]


def test_dtypes_print_with_the_library_name_they_are_reached_by():
    x = mt.tensor([1.0, 2.0], dtype=mt.float64)
    assert str(x.dtype) == repr(x.dtype) == f"{x.dtype}" == "minitensor.float64"
    assert repr(x) == "tensor([1., 2.], dtype=minitensor.float64)"
    with torch_is_minitensor():
        import torch  # (minitensor, under the runner's mapping)

        assert str(x.dtype) == repr(x.dtype) == f"{x.dtype}" == "torch.float64" and str(torch.int8) == "torch.int8"
        assert repr(x) == "tensor([1., 2.], dtype=torch.float64)" and x.type() == "torch.DoubleTensor"
        assert repr(torch.dtype) == "<class 'minitensor.dtype'>" and torch.get_default_dtype() is torch.float32
    assert str(mt.int8) == "minitensor.int8" and mt.zeros(1).type() == "minitensor.FloatTensor"


@pytest.mark.parametrize("name", NAMES)
def test_a_dtype_works_where_numpys_does(name):
    d, np_d = getattr(mt, name), _dtype.as_dtype(name)
    assert isinstance(d, mt.dtype) and d.dtype is np_d and d.name == name and d.itemsize == np_d.itemsize
    assert np.zeros(2, dtype=d).dtype == np_d and np.arange(3).astype(d).dtype == np_d and np.dtype(d) == np_d
    assert d == np_d and np_d == d and d == np_d.type and np_d.type == d and not d != np_d and d == name
    assert d != (mt.int8 if name != "int8" else mt.uint8) and d != "nonsense" and d != 3 and d != None  # noqa: E711
    assert hash(d) == hash(np_d) and {np_d: 1}[d] == 1 and {d: 2}[np_d] == 2 and d in (np_d,) and np_d in (d,)
    t = mt.zeros(2, dtype=d)
    assert t.dtype is d and t._array.dtype is np_d and mt.zeros(2, dtype=np_d).dtype is d
    assert mt.tensor([1, 0], dtype=np_d.type).dtype is d and t.to(d) is t
    assert d.kind == _dtype.kind(np_d) and d.to_real() is d and not d.is_complex
    assert d.is_floating_point == name.startswith(("float", "bfloat")) == t.is_floating_point()
    assert d.is_signed == name.startswith(("float", "bfloat", "int"))
    assert pickle.loads(pickle.dumps(d)) is d and pickle.loads(pickle.dumps(t)).dtype is d
    info = mt.finfo(d) if d.is_floating_point else mt.iinfo(d) if name != "bool" else None
    assert info is None or info.bits == 8 * d.itemsize


def test_only_the_modules_dtypes_exist_and_internals_stay_numpys():
    with pytest.raises(TypeError, match="cannot create 'minitensor.dtype' instances"):
        mt.dtype()
    assert mt.float is mt.float32 and mt.double is mt.float64 and mt.long is mt.int64 and mt.half is mt.float16
    assert mt.get_default_dtype() is mt.float32 and _dtype.get_default_dtype() is np.dtype("float32")
    mt.set_default_dtype(mt.float64)
    try:
        assert mt.get_default_dtype() is mt.float64 and mt.tensor(1.5).dtype is mt.float64
    finally:
        mt.set_default_dtype(mt.float32)
    # promotion's cached table answers numpy's dtype, even when a minitensor dtype filled the entry
    for a, b in [(mt.int16, mt.uint16), (mt.int8, mt.float16), (mt.uint32, mt.int16)]:
        assert isinstance(_dtype.promote_types(a, b), np.dtype) and isinstance(_dtype.promote_types(a.dtype, b.dtype),
                                                                               np.dtype)
    assert isinstance(_dtype.as_dtype(mt.int8), np.dtype) and mt.promote_types(mt.int8, mt.float32) == mt.float32


def test_checkpoints_round_trip_every_dtype():
    tensors = {n: mt.tensor([1, 0], dtype=getattr(mt, n)) for n in NAMES}
    obj = {"tensors": tensors, "dtypes": list(DTYPES), "numpy": [d.dtype for d in DTYPES]}
    for weights_only in (True, False):
        buf = io.BytesIO()
        mt.save(obj, buf)
        buf.seek(0)
        back = mt.load(buf, weights_only=weights_only)
        assert all(back["tensors"][n].dtype is getattr(mt, n) and back["tensors"][n].tolist() == tensors[n].tolist()
                   for n in NAMES)
        assert all(a is b for a, b in zip(back["dtypes"], DTYPES))  # a minitensor dtype comes back as itself,
        assert all(isinstance(a, np.dtype) and a == b for a, b in zip(back["numpy"], DTYPES))  # numpy's as numpy's
    # a plain pickle names the dtype `minitensor.<name>`; the restricted loader allows it, as torch's its dtypes
    from minitensor.serialization import _allowed_global

    assert b"minitensor" in pickle.dumps(mt.float64) and _allowed_global("minitensor", "float64") is mt.float64
    keyed = {d: d.name for d in DTYPES}
    assert pickle.loads(pickle.dumps(keyed)) == keyed == {d.dtype: d.name for d in DTYPES}


def test_promotion_answers_in_minitensor_dtypes():
    """promote_types and result_type answer with the dtype objects users see, printed as theirs."""
    got = [mt.promote_types(mt.int32, mt.float16), mt.result_type(mt.tensor([1, 2]), 1.0)]
    assert got == [mt.float16, mt.float32]
    assert all(type(d) is type(mt.float32) for d in got)
    assert str(got[1]) == str(mt.float32)
