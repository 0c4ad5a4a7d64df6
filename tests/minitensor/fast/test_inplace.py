"""`fast.inplace.arithmetic_in_place` (`x += y` into x's memory) against the plain path (the out-of-place
op, then a copy into x): the same values and version counters, bit for bit, and the same refusals."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.fast import inplace as fast_inplace
from minitensor.ops import inplace as in_place_ops

SPECIALS = np.array([np.inf, -np.inf, np.nan, 1e38, -1e38, 0.0, -0.0, 3.0])


def _run(plugged, dtype, op, other_kind):
    """x after `op` with the speed layer's slot filled (plugged) or empty, and its version."""
    rng = np.random.default_rng(7)
    base = np.concatenate([rng.standard_normal(16), SPECIALS]).reshape(4, 6).astype(dtype)
    x = mt.tensor(base)
    other = {"tensor": mt.tensor(np.roll(base[::-1], 3)), "float": -0.1, "int": 3, "self": x,
             "overlap": None}[other_kind]
    target = x
    if other_kind == "overlap":  # the operand overlaps the written tensor (numpy buffers it)
        target, other = x[1:], x[:-1]
    saved = in_place_ops.fast_in_place
    in_place_ops.fast_in_place = fast_inplace.arithmetic_in_place if plugged else None
    try:
        with mt.no_grad():
            {"__iadd__": lambda: target.__iadd__(other), "add_": lambda: target.add_(other),
             "__isub__": lambda: target.__isub__(other), "sub_": lambda: target.sub_(other),
             "__imul__": lambda: target.__imul__(other), "mul_": lambda: target.mul_(other)}[op]()
    finally:
        in_place_ops.fast_in_place = saved
    return x.numpy().copy(), x._version


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["__iadd__", "add_", "__isub__", "sub_", "__imul__", "mul_"])
@pytest.mark.parametrize("other_kind", ["tensor", "float", "int", "self", "overlap"])
def test_writes_the_plain_paths_values_and_version_bit_for_bit(dtype, op, other_kind):
    fast_x, fast_version = _run(True, dtype, op, other_kind)
    plain_x, plain_version = _run(False, dtype, op, other_kind)
    assert fast_x.dtype == plain_x.dtype
    np.testing.assert_array_equal(fast_x.view(np.uint8), plain_x.view(np.uint8))  # the bits, NaNs included
    assert fast_version == plain_version == 1


def test_takes_only_its_own_cases_and_leaves_the_rest_untouched():
    x = mt.ones(2, 3)
    for op, args, kwargs in [("add_", (mt.ones(3),), {}),               # broadcast: the plain path's
                             ("add_", (mt.ones(2, 3),), {"alpha": 2}),   # alpha
                             ("div_", (2.0,), {}),                       # not its op
                             ("add_", (mt.ones(2, 3, dtype=mt.float64),), {}),  # another dtype
                             ("add_", (True,), {})]:                     # a bool
        assert fast_inplace.arithmetic_in_place(x, op, args, kwargs) is False
        assert x.tolist() == [[1.0] * 3] * 2 and x._version == 0
    assert fast_inplace.arithmetic_in_place(mt.ones(2, dtype=mt.int64), "add_", (1,), {}) is False


def test_the_slot_is_filled_by_the_speed_layer_and_leaves_recording_to_the_plain_path():
    from minitensor import fast
    if not fast.is_plugged_in():
        pytest.skip("the speed layer is switched off (MINITENSOR_PLAIN=1)")
    assert in_place_ops.fast_in_place is fast_inplace.arithmetic_in_place
    w = mt.ones(3, requires_grad=True)
    h = w * 2
    h += mt.ones(3)  # records: the plain path rewrites h's history
    h.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w += 1  # a leaf that requires grad, outside no_grad: refused before any slot is asked
