"""torch.linspace gives PyTorch's values to the last bit, in every dtype: a tutorial's data made with linspace
(and a sum of it that cancels to exactly 0) must be the same numbers on both libraries."""
import math

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

RANGES = [(-1, 1, n) for n in (2, 3, 5, 6, 7, 12, 33)] + [
    (-math.pi, math.pi, 2000), (0, 0.3, 4), (1, -1, 7), (-7.25, 9.5, 101), (0.1, 0.7, 11), (-50, 37, 29),
    (3, 3, 4), (0, 2.0 ** 40, 9), (0, 1, 1), (0, 1, 0)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16"])
def test_linspace_is_pytorchs_to_the_last_bit(dtype):
    if dtype == "bfloat16" and not mt._dtype.has_bfloat16:
        pytest.skip("bfloat16 needs ml_dtypes")
    for start, end, steps in RANGES:
        if max(abs(start), abs(end)) > 2 ** 15 and dtype in ("int16", "int32", "float16"):
            continue  # (beyond the dtype: PyTorch refuses the value)
        ours = mt.linspace(start, end, steps, dtype=getattr(mt, dtype))
        theirs = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
        assert str(ours.dtype).split(".")[-1] == dtype
        np.testing.assert_array_equal(ours.double().numpy(), theirs.double().numpy(), err_msg=str((start, end, steps)))


def test_a_symmetric_range_cancels_as_in_pytorch():
    for lib in (mt, torch):
        x = lib.linspace(-1, 1, 6, dtype=lib.float64).view(2, 3)
        assert x.sum(0)[1].item() == 0.0 and (x + x.flip(0).flip(1)).abs().max().item() == 0.0
