r"""Hypothesis strategies for testing ops built on minitensor (public API; needs `hypothesis`).

    from hypothesis import given
    from minitensor.autograd import gradcheck
    from minitensor.testing import strategies as mst

    @given(mst.tensors(mst.shapes(), requires_grad=True, away_from_zero=0.1))
    def test_my_relu_gradient(x):
        assert gradcheck(my_relu, (x,))

What each strategy draws:

- `shapes(min_dims, max_dims, min_side, max_side)`: one shape, 0-d and size-1 dims included.
- `arrays_for(shape, dtype, min_value, max_value, away_from_zero, unique)`: numpy arrays whose
  values suit finite differences: bounded, optionally away from a kink at 0 (relu, abs) and
  optionally all distinct and well separated (max, min, sort: a tie or a near-tie flips under a
  perturbation of 1e-6 and the numeric gradient becomes meaningless).
- `tensors(...)`: the same as minitensor Tensors, optionally with `requires_grad=True`.
- `broadcastable_shapes(num_shapes, ...)`: shapes that broadcast together, with their result
  shape (`.input_shapes`, `.result_shape`), to test a binary op's gradient `unbroadcast`.
- `matmul_shapes(...)`: shape pairs valid for `matmul` with numpy's rules: 1-D on either side,
  and batch dims that broadcast.
- `attention_inputs(...)`: float64 query, key, value of shape (B, H, T, d) and an optional bool
  mask (True = may attend) shaped (Tq, Tk), (B, 1, 1, Tk) or (B, H, Tq, Tk).

Keep sizes small: a float64 gradient check evaluates the function twice per input element.
"""
from functools import lru_cache
from typing import NamedTuple, Optional

import numpy as np

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as e:  # an optional dependency: say how to get it
    raise ImportError(
        "minitensor.testing.strategies needs the hypothesis package: pip install hypothesis "
        "(or pip install -e '.[test]' in a checkout)"
    ) from e

from ..tensor import Tensor

__all__ = [
    "shapes", "arrays_for", "tensors", "broadcastable_shapes", "matmul_shapes", "attention_inputs",
    "AttentionInputs",
]


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=4):
    """A shape tuple with `min_dims`..`max_dims` dims of sides `min_side`..`max_side`."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def _grid(n, min_value, max_value, away_from_zero):
    """At least `n` evenly spaced values in [min_value, max_value], none closer to 0 than `away_from_zero`."""
    count = max(4 * n, 8)
    while True:
        vals = np.linspace(min_value, max_value, count + 1)
        if away_from_zero:
            vals = vals[np.abs(vals) >= away_from_zero]
        if len(vals) >= n or count > 1_000_000:
            return vals
        count *= 2


def arrays_for(shape, dtype=np.float64, min_value=-3.0, max_value=3.0, away_from_zero=None, unique=False):
    """numpy arrays of `shape` (a tuple or a strategy of tuples) and `dtype`.

    Floats lie in [min_value, max_value], never NaN or inf. `away_from_zero=d` keeps |x| >= d,
    for ops with a kink at 0. `unique=True` draws distinct values at least
    (max_value - min_value) / (4 n) apart, so no tie and no near-tie (for max, min, sort, topk).
    Integer dtypes draw from [int(min_value), int(max_value)]; bool draws True/False.
    """
    if isinstance(shape, list):
        shape = tuple(shape)
    args = (shape, np.dtype(dtype), min_value, max_value, away_from_zero, unique)
    try:
        return _arrays_for(*args)
    except TypeError:  # an unhashable argument (a numpy bound, say): built afresh, uncached
        return _arrays_for.__wrapped__(*args)


# Hypothesis checks a strategy's arguments when it is first drawn from, which costs more than the
# draw itself: the op table asks for the same few shapes and bounds thousands of times, so one
# strategy object per distinct request is built and kept (strategies are immutable).
@lru_cache(maxsize=4096)
def _arrays_for(shape, dtype, min_value, max_value, away_from_zero, unique):
    if dtype.kind == "f" and away_from_zero is not None and not (
            min_value <= -away_from_zero or max_value >= away_from_zero):
        raise ValueError(f"arrays_for: no value in [{min_value}, {max_value}] is at least {away_from_zero} from 0")
    if isinstance(shape, tuple):
        return _array_of_shape(shape, dtype, min_value, max_value, away_from_zero, unique)
    return shape.flatmap(lambda shp: _array_of_shape(shp, dtype, min_value, max_value, away_from_zero, unique))


@lru_cache(maxsize=4096)
def _array_of_shape(shp, dtype, min_value, max_value, away_from_zero, unique):
    n = int(np.prod(shp, dtype=np.int64))
    if dtype.kind == "b":
        return hnp.arrays(dtype, shp, elements=st.booleans())
    if dtype.kind in "iu":
        lo, hi = int(np.ceil(min_value)), int(np.floor(max_value))
        if unique and hi - lo + 1 < n:
            raise ValueError(f"arrays_for: can't draw {n} distinct integers from [{lo}, {hi}]")
        return hnp.arrays(dtype, shp, elements=st.integers(lo, hi), unique=unique)
    if unique:
        grid = _grid(n, min_value, max_value, away_from_zero)
        picks = hnp.arrays(np.int64, shp, elements=st.integers(0, len(grid) - 1), unique=True)
        return picks.map(lambda p: np.asarray(grid[p], dtype=dtype))  # grid[0-d array] is a numpy scalar
    if away_from_zero:
        parts = []
        if min_value <= -away_from_zero:
            parts.append(st.floats(min_value, -away_from_zero))
        if max_value >= away_from_zero:
            parts.append(st.floats(away_from_zero, max_value))
        elements = st.one_of(*parts)
    else:
        elements = st.floats(min_value, max_value, allow_nan=False, allow_infinity=False)
    # drawn as float64 and then rounded: every float32 value is a float64 value, not the reverse
    return hnp.arrays(np.float64, shp, elements=elements).map(lambda a: a.astype(dtype))


def tensors(shape=None, dtype=np.float64, requires_grad=False, **array_kwargs):
    """minitensor Tensors drawn by `arrays_for` (shape defaults to `shapes()`).

    Each draw is a fresh leaf tensor that owns its memory, so a test may mutate it or call
    backward on it freely.
    """
    shape = shapes() if shape is None else shape

    def make(arr):
        t = Tensor._make(np.array(arr, copy=True))
        return t.requires_grad_(True) if requires_grad else t

    return arrays_for(shape, dtype, **array_kwargs).map(make)


def broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=4):
    """`num_shapes` shapes that broadcast together: an object with `.input_shapes` and `.result_shape`.

    Size-1 dims and missing leading dims appear on either side, so the adjoint of broadcasting
    (summing the gradient back to each input's shape) is exercised.
    """
    return hnp.mutually_broadcastable_shapes(num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims,
                                             min_side=min_side, max_side=max_side)


def matmul_shapes(max_batch_dims=2, min_side=1, max_side=4):
    """Shapes `(a_shape, b_shape)` that `a @ b` accepts, with its result shape.

    Drawn from numpy's gufunc signature of matmul, `(m?,n),(n,p?)->(m?,p?)`: `m` or `p` missing
    means a 1-D operand (a row vector on the left, a column on the right, removed from the
    result); up to `max_batch_dims` leading batch dims broadcast against each other.
    """
    return hnp.mutually_broadcastable_shapes(signature="(m?,n),(n,p?)->(m?,p?)", max_dims=max_batch_dims,
                                             min_side=min_side, max_side=max_side)


class AttentionInputs(NamedTuple):
    """Query (B, H, Tq, d), key (B, H, Tk, d), value (B, H, Tk, dv), float64; mask bool or None."""

    query: Tensor
    key: Tensor
    value: Tensor
    mask: Optional[Tensor]


MASK_KINDS = ("none", "2d", "padding", "full")


def attention_inputs(batch=(1, 2), heads=(1, 2), q_len=(1, 4), k_len=(1, 4), head_dim=(1, 4), value_dim=None,
                     mask_kinds=MASK_KINDS, fully_masked_rows=True, min_value=-2.0, max_value=2.0):
    """Draw `AttentionInputs(query, key, value, mask)` for testing an attention function.

    batch, heads, q_len, k_len, head_dim, value_dim: (min, max) ranges of B, H, Tq, Tk, d and dv
    (value_dim defaults to head_dim's range, drawn separately).
    mask_kinds: which masks to draw from: "none" (mask is None), "2d" (Tq, Tk), "padding"
    (B, 1, 1, Tk) and "full" (B, H, Tq, Tk). True means the query may attend to that key.
    fully_masked_rows: when False, every query row keeps at least one allowed key (the first
    masked-out row position is switched back on), for code that does not handle empty rows.
    """
    value_dim = head_dim if value_dim is None else value_dim
    unknown = set(mask_kinds) - set(MASK_KINDS)
    if unknown or not mask_kinds:
        raise ValueError(f"attention_inputs: mask_kinds must be drawn from {MASK_KINDS}, got {tuple(mask_kinds)}")

    @st.composite
    def draw_inputs(draw):
        b, h = draw(st.integers(*batch)), draw(st.integers(*heads))
        tq, tk = draw(st.integers(*q_len)), draw(st.integers(*k_len))
        d, dv = draw(st.integers(*head_dim)), draw(st.integers(*value_dim))
        q, k, v = (draw(tensors(s, np.float64, min_value=min_value, max_value=max_value))
                   for s in ((b, h, tq, d), (b, h, tk, d), (b, h, tk, dv)))
        kind = draw(st.sampled_from(tuple(mask_kinds)))
        mask_shape = {"none": None, "2d": (tq, tk), "padding": (b, 1, 1, tk), "full": (b, h, tq, tk)}[kind]
        mask = None
        if mask_shape is not None:
            m = draw(hnp.arrays(np.bool_, mask_shape, elements=st.booleans()))
            if not fully_masked_rows:
                empty = ~m.any(axis=-1, keepdims=True)
                m = m | (empty & (np.arange(tk) == 0))
            mask = Tensor._make(m)
        return AttentionInputs(q, k, v, mask)

    return draw_inputs()
