"""`broadcast_view` and `fits_broadcast`, the cheap stand-ins for np.broadcast_to and the
np.broadcast_shapes check that expand, sum_to_size and the reductions' first-order VJPs use."""
import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
from minitensor.ops._util import broadcast_view, fits_broadcast


@given(data=st.data())
def test_broadcast_view_is_np_broadcast_to(data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=1, max_dims=4, max_side=4))
    shape, target = shapes.input_shapes[0], shapes.result_shape
    a = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-3, 3, width=32)))
    if data.draw(st.booleans()) and a.ndim:  # a strided view: the np.broadcast_to fallback
        a = np.concatenate([a, a], axis=-1)[..., ::2]
    got, want = broadcast_view(a, target), np.broadcast_to(a, target)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert not got.flags.writeable  # a write would land on every copy
    a[...] = 7.0  # a view, not a copy
    assert (got == 7.0).all()


def test_broadcast_view_of_one_element_and_of_nothing():
    assert broadcast_view(np.array(2.0), (3, 2)).tolist() == [[2.0, 2.0]] * 3
    assert broadcast_view(np.zeros((1, 0)), (4, 0)).shape == (4, 0)
    with pytest.raises(ValueError, match="read-only"):
        broadcast_view(np.ones(3), (2, 3))[0, 0] = 5.0


@given(shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3),
       target=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3))
def test_fits_broadcast_is_numpys_rule(shape, target):
    try:
        want = np.broadcast_shapes(shape, target) == target
    except ValueError:
        want = False
    assert fits_broadcast(shape, target) == want


def test_sum_and_mean_first_order_gradients_are_read_only_views_of_the_right_values():
    x = mt.randn(2, 3, 4, requires_grad=True)
    for reduce, scale in ((lambda t: t.sum(dim=(0, 2)), 1.0), (lambda t: t.mean(dim=1, keepdim=True), 1 / 3)):
        g = mt.randn(*reduce(x).shape)
        reduce(x).backward(g)
        want = np.broadcast_to(g.numpy(force=True).reshape((1, 3, 1) if scale == 1.0 else (2, 1, 4)), (2, 3, 4)) * scale
        np.testing.assert_allclose(x.grad.numpy(force=True), want, rtol=1e-6)
        x.grad = None
