"""minitensor's dtypes and reprs against PyTorch's (issue 29 point 6): `str`/`repr` of every dtype and its
PyTorch fields, `x.type()`, and the reprs whose suffixes (requires_grad, grad_fn, a dtype) wrap long rows."""
import numpy as np
import pytest

import minitensor as mt
from minitensor import _dtype
from minitensor.run import torch_is_minitensor

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

NAMES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32", "uint64",
         "bool", "bfloat16"]


def test_every_dtype_prints_and_answers_as_pytorchs():
    for name in NAMES:
        m, t = getattr(mt, name), getattr(torch, name)
        with torch_is_minitensor():
            shown = (str(m), repr(m), f"{m}")
            typename = mt.zeros(1, dtype=m).type() if name != "bfloat16" or _dtype.has_bfloat16 else None
        assert shown == (str(t), repr(t), f"{t}"), name
        fields = [(m.itemsize, t.itemsize), (m.is_floating_point, t.is_floating_point), (m.abbr, t.abbr),
                  (m.is_signed, t.is_signed), (m.is_complex, t.is_complex),
                  (m.to_real().name, str(t.to_real()).split(".")[1])]
        assert all(a == b for a, b in fields), (name, fields)
        if typename is not None:
            assert typename == torch.zeros(1, dtype=t).type(), name
    assert isinstance(mt.int8, mt.dtype) and isinstance(torch.int8, torch.dtype)
    for lib in (mt, torch):
        with pytest.raises(TypeError):
            lib.dtype()


def _vals(n):
    return np.random.default_rng(n).standard_normal(n).round(6).astype(np.float32)


# long rows whose suffixes PyTorch moves to a line of their own; the shapes and dtypes test_torch_printing.py
# leaves out
CASES = {
    "float64 row, requires_grad": lambda L: L.tensor(_vals(30), dtype=L.float64, requires_grad=True),
    "float64 row, grad_fn": lambda L: L.tensor(_vals(30), dtype=L.float64, requires_grad=True) * 2,
    "2-d rows, requires_grad": lambda L: L.tensor(_vals(40).reshape(2, 20), requires_grad=True),
    "2-d, grad_fn": lambda L: L.tensor(_vals(30).reshape(5, 6), requires_grad=True) * 2,
    "summarized, requires_grad": lambda L: L.tensor(_vals(2000).reshape(40, 50), requires_grad=True),
    "summarized float64, grad_fn": lambda L: L.tensor(_vals(1200), dtype=L.float64, requires_grad=True) * 3,
    "int32 row": lambda L: L.arange(50, dtype=L.int32) * 1000,
    "int16 row": lambda L: L.arange(70, dtype=L.int16),
    "summarized bools": lambda L: L.tensor(np.arange(2000) % 3 == 0),
    "0-d, grad_fn": lambda L: (L.tensor(2.0, requires_grad=True) * 2).sum(),
    "exactly the threshold": lambda L: L.arange(1000.0),
    "past the threshold": lambda L: L.arange(1001.0),
}


@pytest.mark.parametrize("name", list(CASES))
def test_long_reprs_with_suffixes_match_pytorch(name):
    expected = repr(CASES[name](torch))
    with torch_is_minitensor():
        got = repr(CASES[name](mt))
    assert got == expected
