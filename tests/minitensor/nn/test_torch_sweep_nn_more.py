r"""A differential sweep against PyTorch of the rest of nn.functional's losses and shape helpers:
binary_cross_entropy_with_logits (weight, pos_weight, every reduction), l1_loss, cosine_similarity
(dim, eps, broadcasting, zero vectors), normalize (p, dim, eps, zero vectors), one_hot
(num_classes=-1, class values out of range, int64 result) and pad (constant mode with a value,
negative widths that crop, and PyTorch's errors; the modes minitensor lacks raise
NotImplementedError). Forward and gradient, float32 and float64, strided inputs, empty and 0-d
shapes, +-inf and NaN.

The harness is the `torch_sweep` fixture (tests/minitensor/conftest.py): the same random upstream
weight on both sides, PyTorch's dtypes and values, errors where PyTorch raises. Skipped where
PyTorch is not installed.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor

# a differential sweep against PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")

SEEDS = st.integers(0, 2 ** 16)
FEW = settings(deadline=None, max_examples=30)
DTYPES = ["float32", "float64"]
VALUES = st.one_of(*[st.floats(-3, 3, width=32)] * 9, st.sampled_from([math.inf, -math.inf, math.nan, 0.0, -0.0, 1e30]))
LOSS_REDUCTIONS = ["mean", "sum", "none"]


def _F(lib):
    return lib.nn.functional


def _constant(sw, op):
    """An operand PyTorch differentiates nothing into (a class weight): seen through detach()."""
    return sw.Operand(leaf=op.leaf, view=lambda t: op.view(t).detach(), layout=f"detached {op.layout}", shape=op.shape)


@pytest.mark.parametrize("reduction", LOSS_REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_binary_cross_entropy_with_logits_matches_pytorch(torch_sweep, dtype, reduction, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1))[0]
    with_weight, with_pos_weight = data.draw(st.booleans()), data.draw(st.booleans())
    # with pos_weight, the target's gradient at an infinite logit is inf - inf or 0 * inf in either
    # library's formula, and each rounds it its own way (PyTorch: inf, minitensor: NaN): finite logits
    finite = st.one_of(*[st.floats(-3, 3, width=32)] * 9, st.sampled_from([0.0, -0.0, 1e30]))
    x = data.draw(sw.tensors(shape, (dtype,), values=finite if with_pos_weight else VALUES))
    # targets in [0, 1] (soft labels too), sometimes of another shape or dtype: PyTorch's errors
    target_shape = shape if data.draw(st.integers(0, 7)) else data.draw(sw.broadcast_shapes(1))[0]
    target_dtypes = (dtype,) if data.draw(st.integers(0, 7)) else ("float32", "float64", "int64")
    t = data.draw(sw.tensors(target_shape, target_dtypes,
                             values=lambda d: st.floats(0, 1, width=32) if d.kind == "f" else st.integers(0, 1)))
    ops, names = [x, t], []
    if with_weight:
        w_shape = data.draw(st.sampled_from([shape, shape[-1:], (), (3,)]))
        ops.append(_constant(sw, data.draw(sw.tensors(w_shape, (dtype,), values=st.floats(0, 2, width=32)))))
        names.append("weight")
    if with_pos_weight:
        p_shape = data.draw(st.sampled_from([shape[-1:], (), (3,)]))
        ops.append(_constant(sw, data.draw(sw.tensors(p_shape, (dtype,), values=st.floats(0, 4, width=32)))))
        names.append("pos_weight")

    def fn(lib, x, t, *rest):
        return _F(lib).binary_cross_entropy_with_logits(x, t, reduction=reduction, **dict(zip(names, rest)))
    sw.check("binary_cross_entropy_with_logits", fn, ops, data.draw(SEEDS))


@pytest.mark.parametrize("reduction", LOSS_REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_l1_loss_matches_pytorch(torch_sweep, dtype, reduction, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1))[0]
    x = data.draw(sw.tensors(shape, (dtype,), values=VALUES))
    y = data.draw(sw.tensors(shape, (dtype,) if data.draw(st.integers(0, 5)) else sw.DTYPES,
                             values=lambda d: VALUES if d.kind == "f" else None))
    sw.check("l1_loss", lambda lib, a, b: _F(lib).l1_loss(a, b, reduction=reduction), [x, y], data.draw(SEEDS))


# zero vectors and ones much shorter than eps: where the norms are clamped
SMALL = st.one_of(VALUES, st.sampled_from([0.0, 1e-10, -1e-9]))


@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_cosine_similarity_matches_pytorch(torch_sweep, dtype, data):
    sw = torch_sweep
    s1, s2 = data.draw(sw.broadcast_shapes(2, min_dims=1))
    ndim = max(len(s1), len(s2))
    dim = data.draw(st.integers(-ndim, ndim - 1))
    eps = data.draw(st.sampled_from([1e-8, 1e-3, 0.5]))
    values = SMALL if data.draw(st.booleans()) else st.sampled_from([0.0, 1e-10])  # whole zero vectors too
    x1, x2 = (data.draw(sw.tensors(s, (dtype,), values=values)) for s in (s1, s2))
    sw.check("cosine_similarity", lambda lib, a, b: _F(lib).cosine_similarity(a, b, dim=dim, eps=eps), [x1, x2],
             data.draw(SEEDS), tol=lambda d: (1e-4, 1e-5) if d == np.float32 else (1e-9, 1e-11))


@pytest.mark.parametrize("dtype", DTYPES)
@FEW
@given(data=st.data())
def test_normalize_matches_pytorch(torch_sweep, dtype, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1, min_dims=1))[0]
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    p = data.draw(st.sampled_from([2.0, 1.0, 3.0, math.inf]))
    eps = data.draw(st.sampled_from([1e-12, 1e-3, 0.5]))
    tiny = not data.draw(st.booleans())
    values = st.sampled_from([0.0, -0.0, 1e-10]) if tiny else SMALL
    x = data.draw(sw.tensors(shape, (dtype,), values=values))
    # The gradient is the difference of two terms of size 1/||x|| that cancel (exactly, for one
    # element), so where ||x|| is small next to 1 each library's rounding of those terms (thousands
    # in float32 for 1e-10-long vectors over a smaller eps) is all that is left; and p = 3 cubes
    # the entries (the cube of 1e-13 underflows in float32: PyTorch's 0/0 is NaN). The forward
    # only there; the p-norm's own gradient is swept in test_torch_sweep.py
    cancels = (tiny and eps < 1e-10) or p == 3.0
    sw.check("normalize", lambda lib, a: _F(lib).normalize(a, p=p, dim=dim, eps=eps), [x], data.draw(SEEDS),
             grads=not cancels, tol=lambda d: (1e-4, 1e-5) if d == np.float32 else (1e-9, 1e-11))


@FEW
@given(data=st.data())
def test_one_hot_matches_pytorch(torch_sweep, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1))[0]
    dtypes = ("int64",) if data.draw(st.integers(0, 5)) else sw.DTYPES
    index = data.draw(sw.tensors(shape, dtypes, values=lambda d: st.integers(-1 if d.kind == "i" else 0, 4)
                                 if d.kind in "iu" else None))
    num_classes = data.draw(st.sampled_from([-1, -1, 0, 3, 5, 6]))
    sw.check("one_hot", lambda lib, i: _F(lib).one_hot(i, num_classes), [index], 0)


@pytest.mark.parametrize("dtype", DTYPES + ["int64", "bool"])
@FEW
@given(data=st.data())
def test_pad_matches_pytorch(torch_sweep, dtype, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1, max_side=4))[0]
    n = data.draw(st.integers(0, len(shape) + (1 if data.draw(st.integers(0, 5)) == 0 else 0)))
    pad = [data.draw(st.integers(-3, 2)) for _ in range(2 * n)]
    if pad and data.draw(st.integers(0, 7)) == 0:
        pad = pad[:-1]  # an odd length: PyTorch's error
    value = data.draw(st.sampled_from([None, 0, 1.5, -2, math.inf, math.nan, True]))
    x = data.draw(sw.tensors(shape, (dtype,), values=VALUES if dtype.startswith("float") else None))
    sw.check(f"pad {pad} value={value}", lambda lib, a: _F(lib).pad(a, tuple(pad), value=value), [x],
             data.draw(SEEDS))


@pytest.mark.parametrize("mode", ["nonsense"])
def test_pad_modes_minitensor_lacks_raise_not_implemented(mode):
    """An unknown mode raises NotImplementedError naming the mode, as in PyTorch ('reflect', 'replicate'
    and 'circular' are compared with PyTorch in tests/minitensor/nn/test_torch_nn_modules.py)."""
    x = np.arange(6.0).reshape(1, 2, 3)
    with pytest.raises(NotImplementedError):
        torch.nn.functional.pad(torch.tensor(x), (1, 1), mode=mode)
    with pytest.raises(NotImplementedError, match=f"pad: .*{mode}"):
        minitensor.nn.functional.pad(minitensor.tensor(x), (1, 1), mode=mode)


# ---- the defects this sweep found, each pinned down as one case ---------------------------------

def _t(values, dtype="float32", constant=False):
    """A contiguous leaf holding `values` (seen through detach() when `constant`), as Operand arguments."""
    return dict(leaf=np.array(values, dtype=dtype), view=(lambda t: t.detach()) if constant else (lambda t: t),
                layout="contiguous")


def _bce(**kw):
    return lambda lib, x, t, *w: _F(lib).binary_cross_entropy_with_logits(x, t, *w, **kw)


FOUND = [  # (what, fn(lib, *operands), operands)
    ("bce with logits: weight", _bce(), [_t([1.0, -2.0]), _t([1.0, 0.5]), _t([1.0, 2.0], constant=True)]),
    ("bce with logits: pos_weight", lambda lib, x, t, p: _F(lib).binary_cross_entropy_with_logits(x, t, pos_weight=p),
     [_t([[1.0, -2.0]]), _t([[1.0, 0.5]]), _t([3.0, 2.0], constant=True)]),
    ("bce with logits: a weight larger than the input", _bce(), [_t(0.0), _t(0.0), _t([0.0] * 3, constant=True)]),
    ("bce with logits: a target of another shape", _bce(), [_t([[1.0], [2.0]]), _t([0.0, 1.0])]),
    ("bce with logits: an int64 target", _bce(), [_t([1.0]), _t([1], "int64")]),
    ("bce with logits: an int64 input", _bce(), [_t([1], "int64"), _t([1.0])]),
    ("bce with logits: the result has the target's dtype", _bce(reduction="none"), [_t([1.0], "float64"), _t([0.5])]),
    ("bce with logits: +inf logit of a soft target", _bce(reduction="none"),
     [_t([np.inf, -np.inf], "float64"), _t([0.5, 0.5], "float64")]),
    ("cosine_similarity broadcasts before choosing dim", lambda lib, a, b: _F(lib).cosine_similarity(a, b),
     [_t([[1.0, 0.0], [0.0, 1.0]]), _t([1.0, 1.0])]),
    ("cosine_similarity of float32 1e30 vectors", lambda lib, a, b: _F(lib).cosine_similarity(a, b, dim=0),
     [_t([1e30]), _t([1e30])]),
    ("cosine_similarity where a norm overflows", lambda lib, a, b: _F(lib).cosine_similarity(a, b, dim=0),
     [_t([0.0, 0.0]), _t([1e30, 1e30])]),
    ("cosine_similarity's gradient below eps", lambda lib, a, b: _F(lib).cosine_similarity(a, b, dim=0, eps=1e-3),
     [_t([1e-5, 2e-5], "float64"), _t([1.0, -3.0], "float64")]),
    ("pad with negative widths crops", lambda lib, a: _F(lib).pad(a, (-1, 1, 2, -1), value=9.0),
     [_t(np.arange(6.0).reshape(2, 3))]),
    ("pad cropping more than the dim holds", lambda lib, a: _F(lib).pad(a, (1, -2)), [_t([1.0])]),
    ("pad of a 0-d tensor", lambda lib, a: _F(lib).pad(a, ()), [_t(1.0)]),
    ("pad with value None is 0", lambda lib, a: _F(lib).pad(a, (1, 1), value=None), [_t([1.0])]),
    ("pad with a float width", lambda lib, a: _F(lib).pad(a, (1.5, 1)), [_t([1.0])]),
    ("pad int8 with 300", lambda lib, a: _F(lib).pad(a, (1, 1), value=300), [_t([1], "int8")]),
    ("pad float32 with 1e300", lambda lib, a: _F(lib).pad(a, (1, 1), value=1e300), [_t([1.0])]),
    ("pad that only crops checks no value", lambda lib, a: _F(lib).pad(a, (-1, 0), value=math.inf),
     [_t([1, 2], "int64")]),
    ("pad by nothing checks no value", lambda lib, a: _F(lib).pad(a, (), value=math.inf), [_t(0, "int64")]),
    ("pad by nothing of an empty tensor", lambda lib, a: _F(lib).pad(a, (), value=math.inf), [_t([], "int64")]),
    ("one_hot of an empty tensor, 0 classes", lambda lib, a: _F(lib).one_hot(a, 0), [_t([], "int64")]),
    ("one_hot of int32", lambda lib, i: _F(lib).one_hot(i), [_t([1, 2], "int32")]),
    ("one_hot of an empty tensor with num_classes=-1", lambda lib, i: _F(lib).one_hot(i), [_t([], "int64")]),
]


@pytest.mark.parametrize("what, fn, ops", FOUND, ids=[case[0] for case in FOUND])
def test_defects_the_sweep_found(torch_sweep, what, fn, ops):
    torch_sweep.check(what, fn, [torch_sweep.Operand(**op) for op in ops], seed=0)
