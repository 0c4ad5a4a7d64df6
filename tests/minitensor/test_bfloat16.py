"""bfloat16 without PyTorch: PyTorch's promotion rules, a model's round trip through save/load, and the
refusal that names the extra when ml_dtypes is missing (the placeholder dtype is made here, so that
refusal is tested whether or not ml_dtypes is installed)."""
import io

import numpy as np
import pytest

import minitensor as mt
from minitensor import _dtype


def test_refusal_without_ml_dtypes_names_the_extra():
    placeholder = _dtype.StoragelessDType("bfloat16", 2)
    for make in (lambda: mt.zeros(2, dtype=placeholder), lambda: mt.ones(2).to(placeholder),
                 lambda: mt.tensor([1.0], dtype=placeholder)):
        with pytest.raises(TypeError, match=r"no bfloat16 tensors.*pip install ml_dtypes.*\[bfloat16\]"):
            make()
    assert repr(placeholder) == "minitensor.bfloat16" and placeholder.is_floating_point


needs_ml_dtypes = pytest.mark.skipif(not _dtype.has_bfloat16, reason="bfloat16 needs the optional package ml_dtypes")


@needs_ml_dtypes
@pytest.mark.parametrize("other,want", [
    (mt.ones(2, dtype=mt.float16), mt.float32), (mt.ones(2), mt.float32), (mt.ones(2, dtype=mt.float64), mt.float64),
    (mt.ones(2, dtype=mt.int64), mt.bfloat16), (mt.ones(2, dtype=mt.bool), mt.bfloat16), (2, mt.bfloat16),
    (2.5, mt.bfloat16), (mt.tensor(2.5, dtype=mt.float64), mt.bfloat16),
])
def test_promotion_as_pytorch(other, want):
    x = mt.ones(2, dtype=mt.bfloat16)
    assert (x + other).dtype == want and (other * x).dtype == want


@needs_ml_dtypes
def test_bfloat16_is_a_numpy_dtype_and_a_float():
    x = mt.tensor([1.0, 2.0]).bfloat16()
    assert x.dtype == mt.bfloat16 == np.dtype("bfloat16") and x.is_floating_point()
    assert np.asarray(x).dtype == mt.bfloat16 and np.zeros(2).astype(mt.bfloat16).dtype == mt.bfloat16
    assert mt.tensor(np.ones(2, dtype=mt.bfloat16)).dtype == mt.bfloat16
    assert x.float().dtype == mt.float32 and mt.bfloat16 in (mt.finfo(mt.bfloat16).dtype, "bfloat16")
    with pytest.raises(RuntimeError, match="overflow"):
        mt.full((1,), 1e39, dtype=mt.bfloat16)


@needs_ml_dtypes
def test_sum_accumulates_in_float32():
    # 0.1 is below half of bfloat16's spacing at 32: a running bfloat16 sum would stop there
    x = mt.full((1000,), 0.1, dtype=mt.bfloat16)
    assert x.sum().dtype == mt.bfloat16 and abs(x.sum().item() - 100) < 1


@needs_ml_dtypes
def test_save_and_load_keep_bfloat16():
    lin = mt.nn.Linear(3, 2).bfloat16()
    for obj in (lin.state_dict(), lin):
        buf = io.BytesIO()
        mt.save(obj, buf)
        buf.seek(0)
        back = mt.load(buf, weights_only=False)
        state = back if isinstance(back, dict) else back.state_dict()
        assert state["weight"].dtype == mt.bfloat16
        assert np.array_equal(np.asarray(state["weight"]).view(np.uint16), np.asarray(lin.weight).view(np.uint16))
