r"""One op table drives the generic op tests.

Each `Op` row says: the registry name of the `Function` it exercises (or None for a composite of
other ops), the minitensor call, an independent numpy reference, how to draw its input shapes
and constant arguments (broadcasting, 0-d and size-1 dims included) and the input domain (away
from kinks, ties and poles, so central differences are meaningful).

Generic tests over the table:
- the forward equals the numpy reference (float64);
- float64 `gradcheck` on Hypothesis-drawn inputs, and the row's op really is in the graph;
- float32 in gives float32 out and float32 gradients, close to the float64 results;
- every op (Function subclass) minitensor defines has a row, so no differentiable op ships
  without a gradient check.
"""
import gc
import math
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
import minitensor.nn.functional as F
import minitensor.special  # noqa: F401  (mt.special)
from minitensor.autograd import Function, gradcheck, gradgradcheck
from minitensor.ops.indexing import IndexAdd, IndexPut
from minitensor.testing import assert_close, strategies as mst

# ---- drawing cases ------------------------------------------------------------------------------
# A case is (shapes of the float inputs, constant keyword arguments for fn and ref).

def _case(shape_strategy, kw=None):
    return st.tuples(shape_strategy, st.just(kw or {}))


def unary(min_dims=0, max_dims=3, **kw):
    return _case(mst.shapes(min_dims, max_dims).map(lambda s: (s,)), kw)


def binary(**kw):
    return _case(mst.broadcastable_shapes(2).map(lambda r: r.input_shapes), kw)


@st.composite
def reduce_case(draw, min_dims=0, multi=True, none=True, corrections=None):
    shape = draw(mst.shapes(min_dims))
    nd = len(shape)
    kinds = (["none"] if none else []) + ["int"] + (["tuple"] if multi and nd >= 2 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        dim = None
    elif kind == "int":
        dim = draw(st.integers(-max(nd, 1), max(nd, 1) - 1))  # a 0-d tensor takes dim 0 or -1
    else:
        dim = tuple(draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True)))
    kw = {"dim": dim, "keepdim": draw(st.booleans())}
    if corrections is not None:
        kw["correction"] = c = draw(st.sampled_from(corrections))
        assume(_count(shape, dim) - c > 0)  # n - correction <= 0 divides by zero
    return (shape,), kw


@st.composite
def dim_case(draw, min_dims=1, **extra):
    shape = draw(mst.shapes(min_dims))
    nd = max(len(shape), 1)
    return (shape,), {"dim": draw(st.integers(-nd, nd - 1)), **{k: draw(v) for k, v in extra.items()}}


def _count(shape, dim):
    if not shape:
        return 1
    if dim is None:
        return int(np.prod(shape))
    dims = dim if isinstance(dim, tuple) else (dim,)
    return int(np.prod([shape[d] for d in dims]))


def _axis(dim, ndim):
    """numpy's axis for a minitensor dim (a 0-d array has no axis 0)."""
    return None if ndim == 0 else dim


# ---- numpy references ---------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def np_gelu(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def np_softmax(x, dim):
    if x.ndim == 0:
        return np.ones_like(x)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def np_log_softmax(x, dim):
    if x.ndim == 0:
        return np.zeros_like(x)
    return x - np.log(np.exp(x).sum(axis=dim, keepdims=True))


def np_layer_norm(x, *wb, k, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    out = (x - mu) / np.sqrt(var + eps)
    if wb:
        out = out * wb[0] + wb[1]
    return out


def np_scatter_add(g, key, shape):
    out = np.zeros(shape)
    np.add.at(out, key, g)
    return out


def np_nll_rows(logp, target, weight, ignore_index):
    """Per-row -w[t] logp[t] (0 where ignored) and the per-row weight, for (N, C) log-probabilities."""
    n, c = logp.shape
    keep = target != ignore_index
    t = np.where(keep, target, 0)
    w = np.ones(c) if weight is None else weight
    wt = w[t] * keep
    return -logp[np.arange(n), t] * wt, wt


def np_cross_entropy(x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    single = x.ndim == 1
    if single:
        x, target = x[None], np.asarray(target).reshape(1)
    c = x.shape[1]
    rest = (x.shape[0],) + x.shape[2:]
    rows = np.moveaxis(x, 1, -1).reshape(-1, c)
    t = np.asarray(target).reshape(-1)
    logp = rows - rows.max(axis=1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(axis=1, keepdims=True))
    nll, wt = np_nll_rows(logp, t, weight, ignore_index)
    w = np.ones(c) if weight is None else weight
    smooth = -(logp * w).sum(axis=1) * (t != ignore_index)
    if reduction == "none":
        loss = (1 - label_smoothing) * nll + label_smoothing / c * smooth
        return loss.reshape(()) if single else loss.reshape(rest)
    if reduction == "sum":
        return (1 - label_smoothing) * nll.sum() + label_smoothing / c * smooth.sum()
    denom = wt.sum() if wt.sum() > 0 else 1.0  # minitensor's documented choice when every target is ignored
    return ((1 - label_smoothing) * nll.sum() + label_smoothing / c * smooth.sum()) / denom


def np_nll_loss(logp, target, weight=None, ignore_index=-100, reduction="mean"):
    nll, wt = np_nll_rows(logp, np.asarray(target), weight, ignore_index)
    if reduction == "none":
        return nll
    if reduction == "sum":
        return nll.sum()
    return nll.sum() / (wt.sum() if wt.sum() > 0 else 1.0)


def np_reduce(v, reduction):
    return {"none": v, "sum": v.sum(), "mean": v.mean()}[reduction]


# references for issue 29's special functions, written independently of minitensor/ops/_special.py:
# plain scalar series and math's functions element by element

_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_lgamma = np.vectorize(math.lgamma, otypes=[np.float64])


def _scalar(fn):
    return np.vectorize(fn, otypes=[np.float64])


@_scalar
def _np_erfinv(y):
    lo, hi = -6.0, 6.0  # bisection on erf: erf is increasing
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


def _zeta_scalar(s, q):
    """Hurwitz zeta by direct summation with the integral tail (enough for the table's draws)."""
    n = 2000
    return sum((q + k) ** -s for k in range(n)) + (q + n) ** (1 - s) / (s - 1) + 0.5 * (q + n) ** -s


_np_zeta = np.vectorize(_zeta_scalar, otypes=[np.float64])


def _np_polygamma(n, a):
    return (-1) ** (n + 1) * math.factorial(n) * _np_zeta(n + 1.0, a)


@_scalar
def _np_digamma(x):
    h = 1e-5  # the derivative of lgamma, by a 4th-order central difference
    f = math.lgamma
    return (-f(x + 2 * h) + 8 * f(x + h) - 8 * f(x - h) + f(x - 2 * h)) / (12 * h)


def _np_bessel(nu, a):
    @_scalar
    def series(x):
        return sum((x / 2) ** (2 * k + nu) / (math.factorial(k) * math.factorial(k + nu)) for k in range(60))
    return series(a)


@_scalar
def _np_igamma(a, x):
    """P(a, x) by its power series, summed long enough for the table's draws (x <= 3)."""
    term, total = 1 / a, 1 / a
    for n in range(1, 200):
        term *= x / (a + n)
        total += term
    return total * math.exp(a * math.log(x) - x - math.lgamma(a))


# ---- issue 29 (h-names29): cases and numpy references of torch.gradient, segment_reduce and ormqr --------
@st.composite
def gradient_case(draw):
    shape = tuple(draw(st.lists(st.integers(3, 4), min_size=1, max_size=2)))
    return (shape,), {"dim": draw(st.integers(-len(shape), len(shape) - 1)),
                      "edge_order": draw(st.sampled_from([1, 2]))}


@st.composite
def segment_case(draw):
    lengths = draw(st.lists(st.integers(1, 2), min_size=1, max_size=3))
    shape = (sum(lengths),) + tuple(draw(st.lists(st.integers(1, 2), max_size=1)))
    return (shape,), {"lengths": lengths, "reduce": draw(st.sampled_from(["sum", "mean", "max", "min", "prod"]))}


def np_segment_reduce(d, lengths, reduce):
    how = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}[reduce]
    starts = np.cumsum([0] + lengths[:-1])
    return np.stack([how(d[s:s + n], axis=0) for s, n in zip(starts, lengths)])


@st.composite
def ormqr_case(draw):
    m = draw(st.integers(1, 3))
    k, p = draw(st.integers(1, m)), draw(st.integers(1, 2))
    left = draw(st.booleans())
    return ((m, k), (k,), (m, p) if left else (p, m)), {"left": left, "transpose": draw(st.booleans())}


def np_ormqr(a, tau, c, left, transpose):
    m, k = a.shape
    q = np.eye(m)
    for i in range(k):  # Q = H_1 ... H_k, H_i = I - tau_i v_i v_i^T
        v = np.concatenate([np.zeros(i), [1.0], a[i + 1:, i]])
        q = q @ (np.eye(m) - tau[i] * np.outer(v, v))
    q = q.T if transpose else q
    return q @ c if left else c @ q


# ---- the table ----------------------------------------------------------------------------------

@dataclass
class Op:
    id: str
    name: Optional[str]  # the registry's Function name, None for a composite of other ops
    fn: Callable  # fn(*tensors, **kw) with minitensor
    ref: Callable  # ref(*float64 arrays, **kw) with numpy
    case: st.SearchStrategy  # draws (shapes of the float inputs, kw)
    domain: object = field(default_factory=dict)  # arrays_for kwargs: one dict, or one per input
    joint_unique: bool = False  # all inputs' values distinct from each other (no ties between a and b)
    valid: Optional[Callable] = None  # valid(*arrays, **kw): False for a draw too close to a kink
    f32_tol: tuple = (1e-4, 1e-5)  # (rtol, atol) of float32 against float64, values and gradients


POS = {"min_value": 1e-3, "max_value": 3.0}  # sqrt, log: x >= 1e-3
NONZERO = {"away_from_zero": 0.1}  # relu, abs: |x| > 0.1
UNIT = {"min_value": -0.9, "max_value": 0.9}  # asin, atanh, erfinv: inside (-1, 1)
UNIQUE = {"unique": True}  # max, min, sort: no ties, no near-ties
CLAMP_LO, CLAMP_HI = -0.6180, 0.7071  # bounds no draw hits exactly


def _far_from(values, points, gap=1e-3):
    return all(np.all(np.abs(values - p) > gap) for p in points)


@st.composite
def where_case(draw):
    cond_shape, a_shape, b_shape = draw(mst.broadcastable_shapes(3)).input_shapes
    return (a_shape, b_shape), {"cond": draw(hnp.arrays(np.bool_, cond_shape))}


@st.composite
def clamp_case(draw):
    lo, hi = draw(st.sampled_from([(CLAMP_LO, CLAMP_HI), (CLAMP_LO, None), (None, CLAMP_HI)]))
    return (draw(mst.shapes()),), {"lo": lo, "hi": hi}


@st.composite
def expand_case(draw):
    target = draw(mst.shapes(1))
    keep = draw(st.integers(0, len(target)))  # the input drops the leading dims ...
    shape = tuple(1 if draw(st.booleans()) else n for n in target[len(target) - keep:])  # ... and has 1s
    assume(shape != target)  # expand to its own shape records no node
    return (shape,), {"size": target}


@st.composite
def permute_case(draw):
    shape = draw(mst.shapes(2))
    dims = tuple(draw(st.permutations(range(len(shape)))))
    assume(dims != tuple(range(len(shape))))
    return (shape,), {"dims": dims}


@st.composite
def reshape_case(draw):
    shape = draw(mst.shapes())
    n = int(np.prod(shape))
    target = draw(st.sampled_from([(-1,), (n, 1), (1, -1), tuple(reversed(shape)) or (1,), (1,) + shape]))
    assume(target != shape and not (target == (-1,) and shape == (n,)))
    return (shape,), {"shape": target}


@st.composite
def repeat_case(draw):
    shape = draw(mst.shapes(0, 2, max_side=3))
    reps = tuple(draw(st.lists(st.integers(1, 2), min_size=len(shape), max_size=len(shape) + 1)))
    return (shape,), {"reps": reps}


@st.composite
def cat_case(draw, stack=False):
    base = draw(mst.shapes(0 if stack else 1, 2 if stack else 3))
    k = draw(st.integers(2, 3))
    nd = len(base) + (1 if stack else 0)
    dim = draw(st.integers(-nd, nd - 1))
    if stack:
        return (base,) * k, {"dim": dim}
    sizes = draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    d = dim % nd
    return tuple(base[:d] + (s,) + base[d + 1:] for s in sizes), {"dim": dim}


@st.composite
def pad_case(draw):
    shape = draw(mst.shapes(1))
    k = draw(st.integers(1, len(shape)))
    pad = tuple(draw(st.lists(st.integers(0, 2), min_size=2 * k, max_size=2 * k)))
    return (shape,), {"pad": pad, "value": draw(st.sampled_from([0.0, -1.5]))}


def _nontrivial(key):
    """x[...] and x[:] return x itself (no node), so they test nothing here."""
    return key not in (Ellipsis, (Ellipsis,), slice(None), (slice(None),))


@st.composite
def index_case(draw):
    shape = draw(mst.shapes(1))
    kind = draw(st.sampled_from(["basic", "int_arrays", "int_list", "bool_mask", "mixed"]))
    if kind == "basic":  # ints, slices (negative steps too), None, ...
        key = draw(hnp.basic_indices(shape, allow_newaxis=True).filter(_nontrivial))
    elif kind == "int_arrays":  # one integer array per dim, broadcast together; repeats accumulate
        key = draw(hnp.integer_array_indices(shape, result_shape=mst.shapes(1, 2)))
        key = tuple(mt.tensor(k) for k in key)
    elif kind == "int_list":  # a Python list with repeated and negative indices
        n = shape[0]
        key = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=5))
    elif kind == "bool_mask":
        lead = draw(st.integers(1, len(shape)))
        key = mt.tensor(draw(hnp.arrays(np.bool_, shape[:lead])))
    else:  # None, an int list and a slice together
        n = shape[0]
        idx = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
        key = (None, idx, slice(None, None, 2)) if len(shape) > 1 else (Ellipsis, idx)
    return (shape,), {"key": key}


def _np_key(key):
    items = key if isinstance(key, tuple) else (key,)
    out = tuple(k.numpy(force=True) if isinstance(k, mt.Tensor) else (np.asarray(k) if isinstance(k, list) else k)
                for k in items)
    return out if isinstance(key, tuple) else out[0]


@st.composite
def index_add_case(draw):
    """IndexAdd is the adjoint of indexing: scatter g (shaped like x[key]) into zeros(shape)."""
    shape = draw(mst.shapes(1))
    key = draw(hnp.integer_array_indices(shape, result_shape=mst.shapes(1, 2)))
    key = tuple(np.asarray(k) for k in key)
    return (np.empty(shape)[key].shape,), {"key": key, "shape": shape}


@st.composite
def index_put_case(draw):
    """`x[key] = v` (IndexPut) with a basic key, which writes each element once: v has x[key]'s shape."""
    shape = draw(mst.shapes(1))
    key = draw(hnp.basic_indices(shape, allow_newaxis=False).filter(_nontrivial))
    key = key if isinstance(key, tuple) else (key,)
    return (shape, np.empty(shape)[key].shape), {"key": key}


def np_index_put(x, v, key):
    out = x.copy()
    out[key] = v
    return out


@st.composite
def layer_norm_case(draw):
    shape = draw(mst.shapes(1))
    k = draw(st.integers(1, len(shape)))
    affine = draw(st.booleans())
    norm = shape[len(shape) - k:]
    return ((shape, norm, norm) if affine else (shape,)), {"k": k}


@st.composite
def linear_case(draw):
    lead = draw(mst.shapes(0, 2))
    n_in, n_out = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    bias = draw(st.booleans())
    return ((lead + (n_in,), (n_out, n_in)) + (((n_out,),) if bias else ())), {}


@st.composite
def embedding_case(draw):
    rows, d = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    idx = draw(hnp.arrays(np.int64, mst.shapes(1, 2), elements=st.integers(0, rows - 1)))
    return ((rows, d),), {"idx": idx}


@st.composite
def cross_entropy_case(draw, nll=False):
    c = draw(st.integers(1, 4))
    layout = "2d" if nll else draw(st.sampled_from(["1d", "2d", "3d"]))
    n, extra = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    shape = {"1d": (c,), "2d": (n, c), "3d": (n, c, extra)}[layout]
    tshape = {"1d": (), "2d": (n,), "3d": (n, extra)}[layout]
    ignore = draw(st.sampled_from([-100, 0]))
    target = draw(hnp.arrays(np.int64, tshape, elements=st.integers(0, c - 1) | st.just(ignore)))
    kw = {"target": target, "ignore_index": ignore, "reduction": draw(st.sampled_from(["mean", "sum", "none"]))}
    if draw(st.booleans()):
        kw["weight"] = draw(hnp.arrays(np.float64, (c,), elements=st.floats(0.25, 2.0)))
    if not nll:
        kw["label_smoothing"] = draw(st.sampled_from([0.0, 0.1, 0.3]))
    return (shape,), kw


@st.composite
def masked_fill_case(draw):
    mask_shape, shape = draw(mst.broadcastable_shapes(2)).input_shapes
    shape = np.broadcast_shapes(mask_shape, shape)  # the mask must broadcast *to* the input
    return (shape,), {"mask": draw(hnp.arrays(np.bool_, mask_shape)), "value": draw(st.sampled_from([0.0, -1e9, 2.5]))}


@st.composite
def gather_case(draw):
    shape = draw(mst.shapes(1))
    d = draw(st.integers(0, len(shape) - 1))
    ishape = tuple(draw(st.integers(1, n)) if i != d else draw(st.integers(1, 4)) for i, n in enumerate(shape))
    index = draw(hnp.arrays(np.int64, ishape, elements=st.integers(0, shape[d] - 1)))
    return (shape,), {"dim": d, "index": index}


@st.composite
def index_select_case(draw):
    shape = draw(mst.shapes(1))
    d = draw(st.integers(-len(shape), len(shape) - 1))
    index = draw(hnp.arrays(np.int64, st.integers(1, 5).map(lambda k: (k,)), elements=st.integers(0, shape[d] - 1)))
    return (shape,), {"dim": d, "index": index}


@st.composite
def topk_case(draw):
    (shape,), kw = draw(dim_case(1))
    kw["k"] = draw(st.integers(1, shape[kw["dim"]]))
    kw["largest"] = draw(st.booleans())
    return (shape,), kw


@st.composite
def split_case(draw, chunk=False):
    (shape,), kw = draw(dim_case(1))
    kw["n"] = draw(st.integers(1, 4))
    return (shape,), kw


def np_gather(x, dim, index):
    """out[i][j][k] = x[i][index[i][j][k]][k] (dim=1): the index may be smaller than x in every dim."""
    grid = list(np.indices(index.shape))
    grid[dim] = index
    return x[tuple(grid)]


def np_topk(x, dim, k, largest):
    s = np.sort(x, axis=dim)
    s = np.flip(s, axis=dim) if largest else s
    return np.take(s, np.arange(k), axis=dim)


def np_split(x, dim, n, chunk):
    size = -(-x.shape[dim] // n) if chunk else n
    return tuple(np.take(x, np.arange(s, min(s + size, x.shape[dim])), axis=dim) for s in range(0, x.shape[dim], size))


def np_norm(x, p, dim, keepdim):
    axis = _axis(dim, x.ndim)
    if p == "inf":
        return np.abs(x).max(axis=axis, keepdims=keepdim)
    return (np.abs(x) ** p).sum(axis=axis, keepdims=keepdim) ** (1.0 / p)


def _tri_np(x, diagonal, upper):
    return np.triu(x, diagonal) if upper else np.tril(x, diagonal)


def np_pad(a, pad, value):
    """F.pad's order: (left, right) of the last dim first, then of the dim before it, ..."""
    widths = [(0, 0)] * (a.ndim - len(pad) // 2) + [tuple(pad[i:i + 2]) for i in range(len(pad) - 2, -1, -2)]
    return np.pad(a, widths, constant_values=value)


def _weight_as(x, kw):
    """The class weights in the logits' dtype, as PyTorch requires."""
    return {k: (T(v, dtype=x.dtype) if k == "weight" else v) for k, v in kw.items()}


def _bounds(lo, hi):
    return [p for p in (lo, hi) if p is not None]


def _broadcasts(*shapes):
    try:
        np.broadcast_shapes(*shapes)
        return True
    except ValueError:
        return False


def _off_integer_quotients(a, b=1.5, gap=0.02):
    """a / b at least `gap` from every integer: floor, trunc and the remainders jump there."""
    q = np.asarray(a / b)
    return bool(np.all(np.abs(q - np.round(q)) > gap))


@st.composite
def scatter_case(draw, repeats=False):
    """scatter's index may be smaller than src in every dim and than the input in every dim but
    `dim`. Without `repeats` no position is written twice (then only one write would survive)."""
    shape = draw(mst.shapes(1))
    d = draw(st.integers(0, len(shape) - 1))
    ishape = tuple(draw(st.integers(1, n)) for n in shape)
    if repeats:
        index = draw(hnp.arrays(np.int64, ishape, elements=st.integers(0, shape[d] - 1)))
    else:  # distinct positions along `dim` in each line: the first ishape[d] of a permutation
        keys = draw(mst.arrays_for(ishape[:d] + (shape[d],) + ishape[d + 1:], unique=True))
        index = np.take(np.argsort(keys, axis=d), np.arange(ishape[d]), axis=d)
    src_shape = tuple(k + draw(st.integers(0, 1)) for k in ishape)
    return (shape, src_shape), {"dim": d, "index": index}


def np_scatter(x, src, dim, index, add=False):
    out = x.copy()
    grid = list(np.indices(index.shape))
    grid[dim] = index
    part = src[tuple(slice(0, k) for k in index.shape)]
    if add:
        np.add.at(out, tuple(grid), part)
    else:
        out[tuple(grid)] = part
    return out


@st.composite
def index_fill_case(draw):
    (shape,), kw = draw(dim_case(1))
    n = shape[kw["dim"]]
    kw["index"] = draw(hnp.arrays(np.int64, st.integers(1, 4).map(lambda k: (k,)), elements=st.integers(-n, n - 1)))
    return (shape, ()), kw


def np_index_fill(x, value, dim, index):
    out = np.moveaxis(x.copy(), dim, 0)
    out[index] = value
    return np.moveaxis(out, 0, dim)


@st.composite
def masked_select_case(draw):
    shape, mask_shape = draw(mst.broadcastable_shapes(2)).input_shapes
    return (shape,), {"mask": draw(hnp.arrays(np.bool_, mask_shape))}


def np_masked_select(x, mask):
    shape = np.broadcast_shapes(x.shape, mask.shape)
    return np.broadcast_to(x, shape)[np.broadcast_to(mask, shape)]


@st.composite
def einsum_case(draw):
    """Two operands whose `...` dims broadcast, in a batched product or through a diagonal ("ii")."""
    batch_a, batch_b = draw(mst.broadcastable_shapes(2, max_dims=2)).input_shapes
    i, j, k = (draw(st.integers(1, 3)) for _ in range(3))
    if draw(st.booleans()):
        return (batch_a + (i, j), batch_b + (j, k)), {"equation": "...ij,...jk->...ik"}
    return (batch_a + (i, i), batch_b + (i, k)), {"equation": "...ii,...ik->...k"}


@st.composite
def bce_logits_case(draw):
    """Logits and targets of one shape; now and then a weight per element and a pos_weight per class."""
    shape = draw(mst.shapes(1))
    kw = {"reduction": draw(st.sampled_from(["mean", "sum", "none"]))}
    if draw(st.booleans()):
        kw["weight"] = draw(mst.arrays_for(shape, min_value=0.0, max_value=2.0))
    if draw(st.booleans()):
        kw["pos_weight"] = draw(mst.arrays_for(shape[-1:], min_value=0.1, max_value=4.0))
    return (shape, shape), kw


def _bce_logits(x, t, reduction, weight=None, pos_weight=None):
    as_x = {k: mt.tensor(v, dtype=x.dtype) for k, v in (("weight", weight), ("pos_weight", pos_weight))
            if v is not None}
    return F.binary_cross_entropy_with_logits(x, t, as_x.pop("weight", None), reduction=reduction, **as_x)


def np_bce_logits(x, t, reduction, weight=None, pos_weight=None):
    scale = 1 + (pos_weight - 1) * t if pos_weight is not None else 1
    loss = (1 - t) * x + scale * np.logaddexp(0, -x)  # -log(1 - sigmoid x) = x + softplus(-x)
    return np_reduce(loss * (1 if weight is None else weight), reduction)


@st.composite
def cosine_case(draw):
    a, b = draw(mst.broadcastable_shapes(2, min_dims=1)).input_shapes
    nd = max(len(a), len(b))
    return (a, b), {"dim": draw(st.integers(-nd, nd - 1))}


def np_cosine_similarity(a, b, dim, eps=1e-8):
    a, b = np.broadcast_arrays(a, b)
    norm = lambda v: np.maximum(np.linalg.norm(v, axis=dim), eps)  # noqa: E731
    return (a * b).sum(axis=dim) / (norm(a) * norm(b))


def np_normalize(a, dim, p, eps=1e-12):
    return a / np.maximum((np.abs(a) ** p).sum(axis=dim, keepdims=True) ** (1 / p), eps)



# ---- issue 33 (h-client33): einsum's matrix-product path, attention-shaped ------------------------
EINSUM_PAIRS = ["bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "bqhd,bkhd->bhqk", "bhqd,qkd->bhqk", "btd,de->bte",
                "ij,jk->ki", "i,j->ij", "bi,bi->", "ij,jk"]


@st.composite
def einsum_pair_case(draw):
    """Two operands of an attention-shaped equation, each letter one size (1 to 3): the `Einsum` node."""
    equation = draw(st.sampled_from(EINSUM_PAIRS))
    terms = equation.split("->")[0].split(",")
    size = {c: draw(st.integers(1, 3)) for c in sorted(set("".join(terms)))}
    return tuple(tuple(size[c] for c in t) for t in terms), {"equation": equation}


# ---- issue 29: matrices drawn well-conditioned, decompositions read gauge-free ---------------------

MATRIX_UNIT = {"min_value": -1.0, "max_value": 1.0}


@st.composite
def square_case(draw, extra=None, max_n=3):
    """A batch (0 or 1 dims) of n x n matrices with entries in [-1, 1], and `extra` shapes after it."""
    batch = draw(st.sampled_from([(), (2,)]))
    n = draw(st.integers(1, max_n))
    shapes = (batch + (n, n),) + tuple(batch + s(n) for s in (extra or ()))
    return shapes, {}


@st.composite
def matrix_case(draw):
    batch = draw(st.sampled_from([(), (2,)]))
    return (batch + (draw(st.integers(1, 3)), draw(st.integers(1, 3))),), {}


def _dominant(a):
    """a + 4 I: with |a_ij| <= 1 and n <= 3, strictly diagonally dominant, so invertible and well-conditioned."""
    return a + 4 * mt.eye(a.shape[-1], dtype=a.dtype)


def _np_dominant(a):
    return a + 4 * np.eye(a.shape[-1])


def _gaps(values, gap=0.1):
    """Sorted values at least `gap` apart, the smallest at least `gap` from 0 (SVD's and eigh's VJPs divide by both)."""
    v = np.sort(np.abs(values), axis=-1)
    return bool(np.all(v[..., 0] > gap) and (v.shape[-1] < 2 or np.all(np.diff(v, axis=-1) > gap)))


def _sym(a):
    return (a + a.mT) * 0.5


def _positive_qr(q, r):
    """Q and R with R's diagonal made positive (LAPACK's signs flip where a reflected column's head crosses 0)."""
    rr = r.numpy(force=True) if isinstance(r, mt.Tensor) else r
    d = np.where(np.diagonal(rr, axis1=-2, axis2=-1) < 0, -1.0, 1.0)
    if isinstance(r, mt.Tensor):
        return q * T(d[..., None, :], dtype=q.dtype), r * T(d[..., :, None], dtype=r.dtype)
    return q * d[..., None, :], r * d[..., :, None]


def _np_svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return s, u * u, vh * vh


def _np_eigh(a):
    w, q = np.linalg.eigh((a + np.swapaxes(a, -1, -2)) / 2)
    return w, q * q


def _same_pivots(a):
    """Every pivot of the LU elimination beats the runner-up by 0.1 (so the row swaps, and the factors, are
    smooth near a) and the matrix is far from singular."""
    n = a.shape[-1]
    for w in a.reshape(-1, n, n).copy():
        for j in range(n):
            col = np.abs(w[j:, j])
            top = np.sort(col)
            if top[-1] < 0.2 or (len(top) > 1 and top[-1] - top[-2] < 0.1):
                return False
            p = j + int(np.argmax(col))
            w[[j, p]] = w[[p, j]]
            w[j + 1:, j] /= w[j, j]
            w[j + 1:, j + 1:] -= np.outer(w[j + 1:, j], w[j, j + 1:])
    return True


def _np_lu_packed(a):
    from minitensor.ops.decompositions import _lu
    return _lu(a)[0]


def _first_zero(a, dim):
    mask = np.ones(a.shape)
    if a.ndim:
        np.moveaxis(mask, dim, 0)[0] = 0
    else:
        mask[()] = 0
    return mask


def np_cumprod_zero(a, dim):
    return np.cumprod(a * _first_zero(a, dim), axis=_axis(dim, a.ndim)).reshape(a.shape)


def np_logcumsumexp(a, dim):
    if a.ndim == 0:
        return a
    return np.logaddexp.accumulate(a, axis=dim)


def np_cov(a):
    return np.atleast_1d(np.cov(a, ddof=1)) if a.ndim == 2 else np.cov(a, ddof=1)


def _np_expm(a):
    """exp(a) by its Taylor series summed far past convergence (|a| <= 1 entrywise, n <= 3)."""
    out = term = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy()
    for k in range(1, 40):
        term = term @ a / k
        out = out + term
    return out


def np_cummax(a, dim):
    return np.maximum.accumulate(a, axis=dim)
# ---- issue 29: cases of the shape, joining and scatter composites --------------------------------

@st.composite
def roll_case(draw):
    shape = draw(mst.shapes(1))
    dim = draw(st.integers(0, len(shape) - 1))
    return (shape,), {"shift": draw(st.integers(-3, 3)), "dim": dim}


@st.composite
def repeat_interleave_case(draw):
    shape = draw(mst.shapes(1, 2, max_side=3))
    dim = draw(st.integers(0, len(shape) - 1))
    return (shape,), {"reps": draw(st.lists(st.integers(0, 2), min_size=shape[dim], max_size=shape[dim])), "dim": dim}


@st.composite
def unfold_case(draw):
    shape = draw(mst.shapes(1, 2))
    dim = draw(st.integers(0, len(shape) - 1))
    return (shape,), {"dim": dim, "size": draw(st.integers(1, shape[dim])), "step": draw(st.integers(1, 2))}


@st.composite
def scatter_reduce_case(draw):
    n, k = draw(st.integers(1, 4)), draw(st.integers(1, 5))
    return ((n,), (k,)), {"index": draw(hnp.arrays(np.int64, (k,), elements=st.integers(0, n - 1))),
                          "reduce": draw(st.sampled_from(["sum", "mean", "amax", "amin"])),
                          "include_self": draw(st.booleans())}


def np_scatter_reduce(x, src, index, reduce, include_self):
    out = x.copy()
    for p in range(len(x)):
        vals = list(src[index == p]) + ([x[p]] if include_self else [])
        if (index == p).any():
            out[p] = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce](vals)
    return out


def np_kron(a, b):
    return np.kron(a, b)


@st.composite
def index_add_dim_case(draw):
    shape = draw(mst.shapes(1, 2, max_side=3))
    dim = draw(st.integers(0, len(shape) - 1))
    k = draw(st.integers(1, 4))
    index = draw(hnp.arrays(np.int64, (k,), elements=st.integers(0, shape[dim] - 1)))
    return (shape, shape[:dim] + (k,) + shape[dim + 1:]), {"dim": dim, "index": index}


def np_index_add(x, s, dim, index):
    out = np.moveaxis(x.copy(), dim, 0)
    np.add.at(out, index, np.moveaxis(s, dim, 0))
    return np.moveaxis(out, 0, dim)


def np_block_diag(*blocks):
    blocks = [b.reshape(1, -1) if b.ndim < 2 else b for b in blocks]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)))
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def np_diag_embed(x, offset):
    m = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (m, m))
    for i in range(x.shape[-1]):
        r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
        out[..., r, c] = x[..., i]
    return out


T = mt.tensor  # the tests turn constant numpy arguments into tensors with this


def np_fold_3x3_k2(x):
    """F.fold to a 3x3 image with a 2x2 kernel, stride 1: each column's patch added where it sits."""
    n, ckk, _ = x.shape
    out = np.zeros((n, ckk // 4, 3, 3))
    for i in range(2):
        for j in range(2):
            for ki in range(2):
                for kj in range(2):
                    out[:, :, i + ki, j + kj] += x[:, ki * 2 + kj::4, i * 2 + j]
    return out

def np_kept_mask(rng, shape, p):
    """Dropout's mask drawn as minitensor draws it: uniform 32-bit words, two from each 64-bit draw, >= p 2^32."""
    n = math.prod(shape)
    return (rng.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n] >= round(p * 2**32)).reshape(shape)


TABLE = [
    # -- arithmetic, with broadcasting between the operands --
    Op("add", "Add", lambda a, b: a + b, np.add, binary()),
    Op("add_scalar_left", "Add", lambda a: 2.5 + a, lambda a: 2.5 + a, unary()),
    Op("sub", "Sub", lambda a, b: a - b, np.subtract, binary()),
    Op("rsub_scalar", "Sub", lambda a: 1.5 - a, lambda a: 1.5 - a, unary()),
    Op("mul", "Mul", lambda a, b: a * b, np.multiply, binary()),
    Op("mul_self", "Mul", lambda a: a * a, lambda a: a * a, unary()),
    Op("div", "Div", lambda a, b: a / b, np.divide, binary(), domain=({}, {"away_from_zero": 0.5})),
    Op("rdiv_scalar", "Div", lambda a: 2.0 / a, lambda a: 2.0 / a, unary(), domain={"away_from_zero": 0.5}),
    Op("pow", "Pow", lambda a, b: a ** b, np.power, binary(),
       domain=({"min_value": 0.5, "max_value": 2.0}, {"min_value": -2.0, "max_value": 2.0})),
    Op("pow_int_exponent", "Pow", lambda a: a ** 3, lambda a: a ** 3, unary()),
    Op("pow_scalar_base", "Pow", lambda a: 2.0 ** a, lambda a: 2.0 ** a, unary()),
    Op("maximum", "Maximum", mt.maximum, np.maximum, binary(), joint_unique=True),
    Op("minimum", "Minimum", mt.minimum, np.minimum, binary(), joint_unique=True),
    Op("neg", "Neg", lambda a: -a, np.negative, unary()),
    # -- rounded division and remainders: steps and saw teeth, drawn away from their jumps --
    Op("floor_divide", "RoundedDiv", lambda a, b: a // b, np.floor_divide, binary(),
       domain=({}, {"away_from_zero": 0.5}), valid=_off_integer_quotients),
    Op("div_trunc", "RoundedDiv", lambda a, b: mt.div(a, b, rounding_mode="trunc"), lambda a, b: np.trunc(a / b),
       binary(), domain=({}, {"away_from_zero": 0.5}), valid=_off_integer_quotients),
    Op("remainder", "Remainder", lambda a, b: a % b, np.remainder, binary(),
       domain=({}, {"away_from_zero": 0.5}), valid=_off_integer_quotients),
    Op("remainder_scalar", "Remainder", lambda a: a % 1.5, lambda a: np.remainder(a, 1.5), unary(),
       valid=_off_integer_quotients),
    Op("rremainder_scalar", "Remainder", lambda a: 2.5 % a, lambda a: np.remainder(2.5, a), unary(),
       domain={"away_from_zero": 0.5}, valid=lambda a: _off_integer_quotients(2.5, a)),
    Op("fmod", "Fmod", mt.fmod, np.fmod, binary(), domain=({}, {"away_from_zero": 0.5}), valid=_off_integer_quotients),
    # -- unary math --
    Op("abs", "Abs", mt.abs, np.abs, unary(), domain=NONZERO),
    Op("sign", "Sign", mt.sign, np.sign, unary(), domain=NONZERO),
    Op("exp", "Exp", mt.exp, np.exp, unary()),
    Op("log", "Log", mt.log, np.log, unary(), domain=POS),
    Op("log1p", "Log1p", mt.log1p, np.log1p, unary(), domain=POS),
    Op("sqrt", "Sqrt", mt.sqrt, np.sqrt, unary(), domain=POS),
    Op("rsqrt", "Rsqrt", mt.rsqrt, lambda a: 1 / np.sqrt(a), unary(), domain=POS, f32_tol=(1e-4, 1e-4)),
    Op("sin", "Sin", mt.sin, np.sin, unary()),
    Op("cos", "Cos", mt.cos, np.cos, unary()),
    Op("tanh", "Tanh", mt.tanh, np.tanh, unary()),
    Op("sigmoid", "Sigmoid", mt.sigmoid, lambda a: 1 / (1 + np.exp(-a)), unary()),
    Op("relu", "Relu", mt.relu, lambda a: np.maximum(a, 0), unary(), domain=NONZERO),
    Op("erf", "Erf", mt.erf, _erf, unary()),
    Op("gelu", "Gelu", lambda a, approximate: F.gelu(a, approximate=approximate), np_gelu,
       _case(mst.shapes().map(lambda s: (s,)), None).flatmap(
           lambda c: st.sampled_from(["none", "tanh"]).map(lambda ap: (c[0], {"approximate": ap})))),
    Op("clamp", "Clamp", lambda a, lo, hi: a.clamp(lo, hi), lambda a, lo, hi: np.clip(a, lo, hi), clamp_case(),
       valid=lambda a, lo, hi: _far_from(a, _bounds(lo, hi))),
    Op("clamp_tensor_bounds", "Clamp", lambda a, lo, hi: mt.clamp(a, lo, hi),
       lambda a, lo, hi: np.minimum(np.maximum(a, lo), hi),
       _case(mst.broadcastable_shapes(3).map(lambda r: r.input_shapes)), joint_unique=True),
    Op("clone", "Cast", mt.clone, np.copy, unary()),
    Op("lerp", "Lerp", mt.lerp, lambda a, b, w: np.where(np.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w)),
       _case(mst.broadcastable_shapes(3).map(lambda r: r.input_shapes))),
    Op("addcmul", None, lambda a, b, c: mt.addcmul(a, b, c, value=0.5), lambda a, b, c: a + 0.5 * b * c,
       _case(mst.broadcastable_shapes(3).map(lambda r: r.input_shapes))),
    Op("addcdiv", None, lambda a, b, c: mt.addcdiv(a, b, c, value=2), lambda a, b, c: a + 2 * b / c,
       _case(mst.broadcastable_shapes(3).map(lambda r: r.input_shapes)), domain=({}, {}, {"away_from_zero": 0.5})),
    # -- issue 29: the rest of PyTorch's pointwise ops (references from numpy and math) --
    Op("tan", "Tan", mt.tan, np.tan, unary(), domain={"min_value": -1.2, "max_value": 1.2}),
    Op("asin", "Asin", mt.asin, np.arcsin, unary(), domain=UNIT),
    Op("acos", "Acos", mt.arccos, np.arccos, unary(), domain=UNIT),
    Op("atan", "Atan", mt.atan, np.arctan, unary()),
    Op("sinh", "Sinh", mt.sinh, np.sinh, unary()),
    Op("cosh", "Cosh", mt.cosh, np.cosh, unary()),
    Op("asinh", "Asinh", mt.asinh, np.arcsinh, unary()),
    Op("acosh", "Acosh", mt.acosh, np.arccosh, unary(), domain={"min_value": 1.2, "max_value": 4.0}),
    Op("atanh", "Atanh", mt.atanh, np.arctanh, unary(), domain=UNIT),
    Op("exp2", "Exp2", mt.exp2, np.exp2, unary()),
    Op("expm1", "Expm1", mt.expm1, np.expm1, unary()),
    Op("log2", "Log2", mt.log2, np.log2, unary(), domain=POS),
    Op("log10", "Log10", mt.log10, np.log10, unary(), domain=POS),
    Op("floor", "Round", mt.floor, np.floor, unary(), valid=lambda a: _off_integer_quotients(a, 1.0)),
    Op("round_decimals", "Round", lambda a: mt.round(a, decimals=1), lambda a: np.round(a, 1), unary(),
       valid=lambda a: _off_integer_quotients(a * 10 + 0.5, 1.0)),
    Op("frac", None, mt.frac, lambda a: a - np.trunc(a), unary(), valid=lambda a: _off_integer_quotients(a, 1.0)),
    Op("logit", "Logit", mt.logit, lambda a: np.log(a / (1 - a)), unary(),
       domain={"min_value": 0.05, "max_value": 0.95}),
    Op("logit_eps", "Logit", lambda a: mt.logit(a, eps=0.2),
       lambda a: np.log(np.clip(a, 0.2, 0.8) / (1 - np.clip(a, 0.2, 0.8))),
       unary(), domain={"min_value": 0.05, "max_value": 0.95}, valid=lambda a: _far_from(a, [0.2, 0.8])),
    Op("nan_to_num", "NanToNum", mt.nan_to_num, np.nan_to_num, unary()),
    Op("atan2", "Atan2", mt.atan2, np.arctan2, binary(),
       domain=({}, {"min_value": 0.3, "max_value": 3.0})),  # b > 0: off the branch cut
    Op("hypot", "Hypot", mt.hypot, np.hypot, binary(), domain=NONZERO),
    Op("logaddexp", "Logaddexp", mt.logaddexp, np.logaddexp, binary()),
    Op("logaddexp2", "Logaddexp2", mt.logaddexp2, np.logaddexp2, binary()),
    Op("copysign", "Copysign", mt.copysign, np.copysign, binary(), domain=NONZERO),
    Op("fmax", "Fmax", mt.fmax, np.fmax, binary(), joint_unique=True),
    Op("fmin", "Fmin", mt.fmin, np.fmin, binary(), joint_unique=True),
    Op("xlogy", "Xlogy", mt.xlogy, lambda a, b: a * np.log(b), binary(), domain=(NONZERO, POS)),  # (gx := 0 at x = 0)
    Op("ldexp", None, mt.ldexp, lambda a, b: a * 2.0 ** b, binary()),
    Op("erfc", "Erfc", mt.erfc, _erfc, unary()),
    Op("erfinv", "Erfinv", mt.erfinv, lambda a: _np_erfinv(a), unary(), domain=UNIT),
    Op("erfcx", "Erfcx", mt.special.erfcx, lambda a: np.exp(a * a) * _erfc(a), unary()),
    Op("lgamma", "Lgamma", mt.lgamma, _lgamma, unary(), domain=POS),
    Op("digamma", "Digamma", mt.digamma, _np_digamma, unary(), domain=POS),
    Op("polygamma", "Polygamma", lambda a: mt.polygamma(2, a), lambda a: _np_polygamma(2, a), unary(),
       domain={"min_value": 0.5, "max_value": 3.0}, f32_tol=(1e-4, 1e-4)),
    Op("mvlgamma", None, lambda a: mt.mvlgamma(a, 3),
       lambda a: 1.5 * math.log(math.pi) + sum(_lgamma(a - i / 2) for i in range(3)),
       unary(), domain={"min_value": 1.2, "max_value": 4.0}),
    Op("i0", "I0", mt.i0, np.i0, unary()),
    Op("i1", "I1", mt.special.i1, lambda a: _np_bessel(1, a), unary(), domain=NONZERO),
    Op("i0e", "I0e", mt.special.i0e, lambda a: np.exp(-np.abs(a)) * np.i0(a), unary(), domain=NONZERO),
    Op("i1e", "I1e", mt.special.i1e, lambda a: np.exp(-np.abs(a)) * _np_bessel(1, a), unary(), domain=NONZERO),
    Op("ndtr", None, mt.special.ndtr, lambda a: 0.5 * _erfc(-a / math.sqrt(2)), unary()),
    Op("log_ndtr", "LogNdtr", mt.special.log_ndtr, lambda a: np.log(0.5 * _erfc(-a / math.sqrt(2))), unary()),
    Op("ndtri", "Ndtri", mt.special.ndtri, lambda a: math.sqrt(2) * _np_erfinv(2 * a - 1), unary(),
       domain={"min_value": 0.05, "max_value": 0.95}),
    Op("sinc", "Sinc", mt.sinc, np.sinc, unary(), domain=NONZERO),  # (its 2nd derivative at 0 is not special-cased)
    Op("entr", "Entr", mt.special.entr, lambda a: -a * np.log(a), unary(), domain=POS),
    Op("xlog1py", "Xlog1py", mt.special.xlog1py, lambda a, b: a * np.log1p(b), binary(), domain=(NONZERO, POS)),
    Op("zeta", "Zeta", lambda q: mt.special.zeta(3.0, q), lambda q: _np_zeta(3.0, q), unary(), domain=POS),
    Op("igamma", "Igamma", lambda x: mt.igamma(mt.full_like(x, 1.5), x), lambda x: _np_igamma(1.5, x), unary(),
       domain=POS),
    Op("igammac", "Igamma", lambda x: mt.igammac(mt.full_like(x, 2.5), x), lambda x: 1 - _np_igamma(2.5, x), unary(),
       domain=POS),
    Op("eq_inplace", "Compared", lambda a, b: (a * 1).eq_(b), lambda a, b: (a == b).astype(a.dtype) * np.ones_like(b),
       binary(), valid=lambda a, b: np.broadcast_shapes(a.shape, b.shape) == a.shape),
    # -- reductions --
    Op("sum", "Sum", lambda a, dim, keepdim: a.sum(dim=dim, keepdim=keepdim),
       lambda a, dim, keepdim: np.sum(a, axis=_axis(dim, a.ndim), keepdims=keepdim), reduce_case()),
    Op("mean", "Mean", lambda a, dim, keepdim: a.mean(dim=dim, keepdim=keepdim),
       lambda a, dim, keepdim: np.mean(a, axis=_axis(dim, a.ndim), keepdims=keepdim), reduce_case()),
    Op("var", "Var", lambda a, dim, keepdim, correction: a.var(dim=dim, keepdim=keepdim, correction=correction),
       lambda a, dim, keepdim, correction: np.var(a, axis=_axis(dim, a.ndim), keepdims=keepdim, ddof=correction),
       reduce_case(corrections=(0, 1, 2)), f32_tol=(1e-4, 1e-4)),
    Op("std", "Std", lambda a, dim, keepdim, correction: a.std(dim=dim, keepdim=keepdim, correction=correction),
       lambda a, dim, keepdim, correction: np.std(a, axis=_axis(dim, a.ndim), keepdims=keepdim, ddof=correction),
       reduce_case(corrections=(0, 1)), domain=UNIQUE, f32_tol=(1e-4, 1e-4),
       valid=lambda a, dim, **_: _count(a.shape, dim) >= 2),  # distinct values, so std > 0: no kink of sqrt
    Op("prod", "Prod", lambda a, dim, keepdim: a.prod(dim=dim, keepdim=keepdim),
       lambda a, dim, keepdim: np.prod(a, axis=_axis(dim, a.ndim), keepdims=keepdim if dim is not None else False),
       reduce_case(multi=False), domain={"min_value": -2.0, "max_value": 2.0}, f32_tol=(1e-4, 1e-4)),
    Op("amax", "Amax", lambda a, dim, keepdim: a.amax(dim=dim, keepdim=keepdim),
       lambda a, dim, keepdim: np.max(a, axis=_axis(dim, a.ndim), keepdims=keepdim), reduce_case(), domain=UNIQUE),
    Op("amin", "Amin", lambda a, dim, keepdim: a.amin(dim=dim, keepdim=keepdim),
       lambda a, dim, keepdim: np.min(a, axis=_axis(dim, a.ndim), keepdims=keepdim), reduce_case(), domain=UNIQUE),
    Op("max_dim_values", None, lambda a, dim, keepdim: a.max(dim=dim, keepdim=keepdim).values,
       lambda a, dim, keepdim: np.max(a, axis=_axis(dim, a.ndim), keepdims=keepdim),
       reduce_case(none=False, multi=False), domain=UNIQUE),
    Op("min_dim_values", None, lambda a, dim, keepdim: mt.min(a, dim, keepdim).values,
       lambda a, dim, keepdim: np.min(a, axis=_axis(dim, a.ndim), keepdims=keepdim),
       reduce_case(none=False, multi=False), domain=UNIQUE),
    Op("max_all", None, lambda a: a.max(), np.max, unary(), domain=UNIQUE),
    Op("logsumexp", "Logsumexp", lambda a, dim, keepdim: a.logsumexp(dim=dim, keepdim=keepdim),
       lambda a, dim, keepdim: np.log(np.sum(np.exp(a), axis=_axis(dim, a.ndim), keepdims=keepdim)),
       reduce_case(none=False)),
    Op("norm", "Norm", lambda a, dim, keepdim: a.norm(dim=dim, keepdim=keepdim),
       lambda a, dim, keepdim: np.sqrt(np.sum(a * a, axis=_axis(dim, a.ndim), keepdims=keepdim)),
       reduce_case(), domain=NONZERO),
    Op("norm0", "CountNonzero", lambda a, dim, keepdim: a.norm(p=0, dim=dim, keepdim=keepdim),
       lambda a, dim, keepdim: np.sum(a != 0, axis=_axis(dim, a.ndim), keepdims=keepdim).astype(a.dtype),
       reduce_case(), domain=NONZERO),
    Op("norm_p", None, lambda a, p, dim, keepdim: a.norm(p=float("inf") if p == "inf" else p, dim=dim, keepdim=keepdim),
       np_norm, reduce_case().flatmap(lambda c: st.sampled_from([1, 3, "inf"]).map(lambda p: (c[0], {**c[1], "p": p}))),
       domain={"unique": True, "away_from_zero": 0.1},
       valid=lambda a, **_: a.size < 2 or np.diff(np.sort(np.abs(a), axis=None)).min() > 1e-3),  # no |x| ties
    Op("cumsum", "Cumsum", lambda a, dim: a.cumsum(dim),
       lambda a, dim: np.cumsum(a, axis=_axis(dim, a.ndim)).reshape(a.shape),
       dim_case(0)),
    # -- softmax family --
    Op("softmax", "Softmax", lambda a, dim: F.softmax(a, dim=dim), np_softmax, dim_case(0)),
    Op("log_softmax", "LogSoftmax", lambda a, dim: F.log_softmax(a, dim=dim), np_log_softmax, dim_case(0)),
    Op("layer_norm", "LayerNorm", lambda x, *wb, k: F.layer_norm(x, x.shape[x.ndim - k:], *wb), np_layer_norm,
       layer_norm_case(), f32_tol=(1e-3, 1e-3)),
    # -- linear algebra: 1-D on either side, batched, broadcast batch dims --
    Op("matmul", "Matmul", mt.matmul, np.matmul,
       _case(mst.matmul_shapes().map(lambda r: r.input_shapes))),
    Op("linear", "Linear", lambda x, w, *b: F.linear(x, w, *b), lambda x, w, *b: x @ w.T + (b[0] if b else 0),
       linear_case()),
    # -- shape ops --
    Op("reshape", "Reshape", lambda a, shape: a.reshape(shape), lambda a, shape: a.reshape(shape), reshape_case()),
    Op("permute", "Permute", lambda a, dims: a.permute(dims), lambda a, dims: np.transpose(a, dims), permute_case()),
    Op("transpose_T", "Permute", lambda a: a.T, lambda a: a.T, unary(2)),
    Op("contiguous", "Contiguous", lambda a: a.T.contiguous().view(-1), lambda a: a.T.reshape(-1),
       _case(mst.shapes(2, 3, min_side=2).map(lambda s: (s,)))),  # (sides >= 2: a transpose that moves elements)
    Op("expand", "Expand", lambda a, size: a.expand(size), lambda a, size: np.broadcast_to(a, size), expand_case()),
    Op("repeat", "Repeat", lambda a, reps: a.repeat(reps), np.tile, repeat_case()),
    Op("cat", "Cat", lambda *xs, dim: mt.cat(xs, dim=dim), lambda *xs, dim: np.concatenate(xs, axis=dim), cat_case()),
    Op("stack", None, lambda *xs, dim: mt.stack(xs, dim=dim), lambda *xs, dim: np.stack(xs, axis=dim),
       cat_case(stack=True)),
    Op("split", None, lambda a, dim, n: a.split(n, dim=dim), lambda a, dim, n: np_split(a, dim, n, False),
       split_case()),
    Op("chunk", None, lambda a, dim, n: a.chunk(n, dim=dim), lambda a, dim, n: np_split(a, dim, n, True), split_case()),
    Op("pad", "Pad", lambda a, pad, value: F.pad(a, pad, value=value),
       np_pad, pad_case()),
    # -- indexing and masking --
    Op("getitem", "Index", lambda a, key: a[key], lambda a, key: a[_np_key(key)], index_case()),
    Op("index_put", "IndexPut", lambda x, v, key: IndexPut.apply(x, key, v), np_index_put, index_put_case()),
    Op("index_add", "IndexAdd", lambda g, key, shape: IndexAdd.apply(g, key, shape), np_scatter_add, index_add_case()),
    Op("where", "Where", lambda a, b, cond: mt.where(T(cond), a, b), lambda a, b, cond: np.where(cond, a, b),
       where_case()),
    Op("masked_fill", None, lambda a, mask, value: a.masked_fill(T(mask), value),
       lambda a, mask, value: np.where(mask, value, a), masked_fill_case()),
    Op("masked_fill_broadcast_input", None, lambda a, mask, value: a.masked_fill(T(mask), value),
       lambda a, mask, value: np.where(mask, value, a),
       _case(mst.broadcastable_shapes(2).map(lambda r: r.input_shapes[:1])).flatmap(
           lambda c: hnp.arrays(np.bool_, mst.shapes()).map(lambda m: (c[0], {"mask": m, "value": -1.5}))),
       valid=lambda a, mask, value: _broadcasts(a.shape, mask.shape)),
    Op("masked_select", None, lambda a, mask: mt.masked_select(a, T(mask)), np_masked_select, masked_select_case()),
    Op("index_fill", None, lambda a, v, dim, index: a.index_fill(dim, T(index), v), np_index_fill, index_fill_case()),
    Op("scatter", "IndexPut", lambda a, src, dim, index: a.scatter(dim, T(index), src), np_scatter, scatter_case()),
    Op("scatter_add", "IndexAdd", lambda a, src, dim, index: mt.scatter_add(a, dim, T(index), src),
       lambda a, src, dim, index: np_scatter(a, src, dim, index, add=True), scatter_case(repeats=True)),
    Op("tril", None, lambda a, diagonal: a.tril(diagonal), lambda a, diagonal: _tri_np(a, diagonal, False),
       unary(2).flatmap(lambda c: st.integers(-2, 2).map(lambda d: (c[0], {"diagonal": d})))),
    Op("triu", None, lambda a, diagonal: mt.triu(a, diagonal), lambda a, diagonal: _tri_np(a, diagonal, True),
       unary(2).flatmap(lambda c: st.integers(-2, 2).map(lambda d: (c[0], {"diagonal": d})))),
    Op("gather", None, lambda a, dim, index: a.gather(dim, T(index)),
       np_gather, gather_case()),
    Op("index_select", None, lambda a, dim, index: a.index_select(dim, T(index)),
       lambda a, dim, index: np.take(a, index, axis=dim), index_select_case()),
    Op("topk_values", None, lambda a, dim, k, largest: a.topk(k, dim=dim, largest=largest).values, np_topk, topk_case(),
       domain=UNIQUE),
    Op("sort_values", None, lambda a, dim, descending: a.sort(dim=dim, descending=descending).values,
       lambda a, dim, descending: np.flip(np.sort(a, axis=dim), axis=dim) if descending else np.sort(a, axis=dim),
       dim_case(1, descending=st.booleans()), domain=UNIQUE),
    Op("einsum", None, lambda a, b, equation: mt.einsum(equation, a, b),
       lambda a, b, equation: np.einsum(equation, a, b), einsum_case()),
    # -- issue 33 (h-client33): einsum of two operands as one matrix product --
    Op("einsum_pair", "Einsum", lambda a, b, equation: mt.einsum(equation, a, b),
       lambda a, b, equation: np.einsum(equation, a, b), einsum_pair_case()),
    # -- issue 29: decompositions (drawn well-conditioned), products, scans and order statistics --
    Op("det", "Det", lambda a: mt.linalg.det(_dominant(a)), lambda a: np.linalg.det(_np_dominant(a)), square_case(),
       domain=MATRIX_UNIT),
    Op("slogdet", "LogAbsDet", lambda a: mt.linalg.slogdet(_dominant(a) - 2 * a).logabsdet,
       lambda a: np.linalg.slogdet(_np_dominant(a) - 2 * a)[1], square_case(), domain=MATRIX_UNIT),
    Op("inv", "Inverse", lambda a: mt.linalg.inv(_dominant(a)), lambda a: np.linalg.inv(_np_dominant(a)),
       square_case(), domain=MATRIX_UNIT, f32_tol=(1e-4, 1e-4)),
    Op("solve", "Solve", lambda a, b: mt.linalg.solve(_dominant(a), b),
       lambda a, b: np.linalg.solve(_np_dominant(a), b), square_case([lambda n: (n, 2)]), domain=MATRIX_UNIT,
       f32_tol=(1e-4, 1e-4)),
    Op("cholesky", "Cholesky", lambda a: mt.linalg.cholesky(a @ a.mT + mt.eye(a.shape[-1], dtype=a.dtype)),
       lambda a: np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + np.eye(a.shape[-1])), square_case(),
       domain=MATRIX_UNIT,
       f32_tol=(1e-4, 1e-4)),
    Op("qr", "QR", lambda a: _positive_qr(*mt.linalg.qr(a)), lambda a: _positive_qr(*np.linalg.qr(a)), matrix_case(),
       domain=MATRIX_UNIT,
       valid=lambda a: np.all(np.abs(np.diagonal(np.linalg.qr(a)[1], axis1=-2, axis2=-1)) > 0.2),
       f32_tol=(1e-3, 1e-3)),
    Op("svd", "SVD", lambda a: (lambda u, s, vh: (s, u * u, vh * vh))(*mt.linalg.svd(a, full_matrices=False)), _np_svd,
       matrix_case(), domain=MATRIX_UNIT, valid=lambda a: _gaps(np.linalg.svd(a, compute_uv=False)),
       f32_tol=(1e-3, 1e-3)),
    Op("eigh", "Eigh", lambda a: (lambda w, q: (w, q * q))(*mt.linalg.eigh(_sym(a))), _np_eigh, square_case(),
       domain=MATRIX_UNIT, valid=lambda a: _gaps(np.linalg.eigvalsh((a + np.swapaxes(a, -1, -2)) / 2) + 10, 0.1)
       and np.all(np.diff(np.linalg.eigvalsh((a + np.swapaxes(a, -1, -2)) / 2), axis=-1) > 0.1),
       f32_tol=(1e-3, 1e-3)),
    Op("matrix_exp", "MatrixExp", mt.linalg.matrix_exp, lambda a: _np_expm(a), square_case(), domain=MATRIX_UNIT,
       f32_tol=(1e-4, 1e-4)),
    # (a + 4 I) with its rows reversed: partial pivoting swaps rows, each pivot clear of the runner-up,
    # so the factors are smooth near every drawn matrix (a plain draw was refused too often by the check)
    Op("lu_factor", "LUFactor", lambda a: mt.linalg.lu_factor(_dominant(a).flip(-2)).LU,
       lambda a: _np_lu_packed(np.flip(_np_dominant(a), -2)), square_case(), domain=MATRIX_UNIT,
       valid=lambda a: _same_pivots(np.flip(a + 4 * np.eye(a.shape[-1]), -2)), f32_tol=(1e-3, 1e-3)),
    Op("cumprod", "Cumprod", lambda a, dim: a.cumprod(dim),
       lambda a, dim: np.cumprod(a, axis=_axis(dim, a.ndim)).reshape(a.shape), dim_case(0), domain=NONZERO),
    Op("cumprod_zero", "Cumprod",
       lambda a, dim: (a * T(_first_zero(a.numpy(force=True), dim), dtype=a.dtype)).cumprod(dim),
       np_cumprod_zero, dim_case(0)),
    Op("logcumsumexp", "Logcumsumexp", lambda a, dim: a.logcumsumexp(dim), np_logcumsumexp, dim_case(0)),
    Op("addmm", None, lambda c, a, b: mt.addmm(c, a, b, beta=0.5, alpha=-2.0), lambda c, a, b: 0.5 * c - 2 * a @ b,
       _case(st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).map(
           lambda t: ((t[0], t[2]), (t[0], t[1]), (t[1], t[2]))))),
    Op("trace", None, mt.trace, np.trace, unary(2, 2)),
    Op("tensordot", None, lambda a, b: mt.tensordot(a, b, dims=([0, 2], [1, 0])),
       lambda a, b: np.tensordot(a, b, axes=([0, 2], [1, 0])), _case(st.just(((2, 3, 2), (2, 2, 3))))),
    Op("cdist", None, lambda a, b: mt.cdist(a, b), lambda a, b: np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)),
       _case(st.just(((3, 2), (2, 2)))), valid=lambda a, b: np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1)).min() > 0.1),
    Op("cov", None, mt.cov, np_cov, _case(st.sampled_from([((2, 4),), ((3, 3),), ((5,),)]))),
    Op("cross", None, lambda a, b: mt.linalg.cross(a, b), lambda a, b: np.cross(a, b),
       _case(st.just(((2, 3), (2, 3))))),
    Op("cummax_values", None, lambda a, dim: a.cummax(dim).values, np_cummax, dim_case(1), domain=UNIQUE),
    Op("median_dim_values", None, lambda a, dim: a.median(dim).values,
       lambda a, dim: np.take_along_axis(np.sort(a, axis=dim), np.full([1 if i == dim % a.ndim else n
                                         for i, n in enumerate(a.shape)], (a.shape[dim] - 1) // 2), dim).squeeze(dim),
       dim_case(1), domain=UNIQUE),
    Op("quantile", None, lambda a, q: mt.quantile(a, q), lambda a, q: np.quantile(a, q),
       unary(1, 2).flatmap(lambda c: st.sampled_from([0.0, 0.3, 0.5, 1.0]).map(lambda q: (c[0], {"q": q}))),
       domain=UNIQUE),
    Op("diff", None, lambda a, dim: a.diff(dim=dim), lambda a, dim: np.diff(a, axis=dim), dim_case(1)),
    Op("trapezoid", None, lambda a, dim: mt.trapezoid(a, dim=dim), lambda a, dim: np.trapezoid(a, axis=dim),
       dim_case(1)),
    Op("pinv", None, mt.linalg.pinv, np.linalg.pinv, matrix_case(), domain=MATRIX_UNIT,
       valid=lambda a: _gaps(np.linalg.svd(a, compute_uv=False), 0.2), f32_tol=(1e-3, 1e-3)),
    Op("matrix_norm_nuc", None, lambda a: mt.linalg.matrix_norm(a, "nuc"), lambda a: np.linalg.norm(a, "nuc", (-2, -1)),
       matrix_case(), domain=MATRIX_UNIT, valid=lambda a: _gaps(np.linalg.svd(a, compute_uv=False))),
    # -- issue 29: shape, joining and scatter composites (no node of their own: the gradient is theirs) --
    Op("roll", None, lambda a, shift, dim: a.roll(shift, dim), lambda a, shift, dim: np.roll(a, shift, dim),
       roll_case()),
    Op("repeat_interleave", None, lambda a, reps, dim: a.repeat_interleave(T(reps), dim=dim),
       lambda a, reps, dim: np.repeat(a, reps, axis=dim), repeat_interleave_case()),
    Op("unfold", None, lambda a, dim, size, step: a.unfold(dim, size, step),
       lambda a, dim, size, step: np.lib.stride_tricks.sliding_window_view(a, size, axis=dim)
       .take(np.arange(0, a.shape[dim] - size + 1, step), axis=dim),
       unfold_case()),
    Op("diag_embed", None, lambda a, offset: mt.diag_embed(a, offset), np_diag_embed,
       unary(1, 2).flatmap(lambda c: st.integers(-2, 2).map(lambda o: (c[0], {"offset": o})))),
    Op("kron", None, mt.kron, np_kron, _case(st.tuples(mst.shapes(0, 2, max_side=3), mst.shapes(0, 2, max_side=3)))),
    Op("index_add_dim", None, lambda a, s, dim, index: a.index_add(dim, T(index), s, alpha=0.5),
       lambda a, s, dim, index: np_index_add(a, 0.5 * s, dim, index), index_add_dim_case()),
    Op("scatter_reduce", None, lambda a, s, index, reduce, include_self: a.scatter_reduce(
        0, T(index), s, reduce, include_self=include_self), np_scatter_reduce, scatter_reduce_case(),
       joint_unique=True),
    Op("block_diag", None, lambda a, b: mt.block_diag(a, b), np_block_diag,
       _case(st.tuples(mst.shapes(0, 2, max_side=3), mst.shapes(0, 2, max_side=3)))),
    # -- nn.functional composites --
    Op("dropout_p0", None, lambda a: F.dropout(a, p=0.0, training=True), lambda a: a, unary()),
    # reseeded at every call, so the finite differences see one mask; the reference draws it the same way
    Op("dropout", "Dropout", lambda a: (mt.manual_seed(3), F.dropout(a, p=0.3))[1],
       lambda a: a * np_kept_mask(np.random.default_rng(3), np.shape(a), 0.3) / 0.7, unary()),
    Op("embedding", None, lambda w, idx: F.embedding(T(idx), w), lambda w, idx: w[idx], embedding_case()),
    Op("cross_entropy", "CrossEntropy",
       lambda x, target, **kw: F.cross_entropy(x, T(target), **_weight_as(x, kw)),
       np_cross_entropy, cross_entropy_case()),
    Op("nll_loss", None,
       lambda x, target, **kw: F.nll_loss(x, T(target), **_weight_as(x, kw)),
       np_nll_loss, cross_entropy_case(nll=True)),
    Op("binary_cross_entropy_with_logits", None, _bce_logits, np_bce_logits, bce_logits_case(),
       domain=({}, {"min_value": 0.0, "max_value": 1.0})),
    Op("cosine_similarity", None, lambda a, b, dim: F.cosine_similarity(a, b, dim=dim), np_cosine_similarity,
       cosine_case(), domain=NONZERO),
    Op("normalize", None, lambda a, dim, p: F.normalize(a, p=p, dim=dim), np_normalize,
       dim_case(1, p=st.sampled_from([1.0, 2.0, 3.0])), domain=NONZERO),
    Op("binary_cross_entropy", "BinaryCrossEntropy",
       lambda x, t: F.binary_cross_entropy(x, t, reduction="none"),
       lambda x, t: -(t * np.log(x) + (1 - t) * np.log1p(-x)), _case(mst.shapes().map(lambda s: (s, s))),
       domain=({"min_value": 0.05, "max_value": 0.95}, {"min_value": 0.05, "max_value": 0.95})),
    Op("fold", "Col2Im", lambda x: F.fold(x, (3, 3), 2), np_fold_3x3_k2,
       _case(st.tuples(st.integers(1, 2), st.integers(1, 2)).map(lambda nc: ((nc[0], nc[1] * 4, 4),)))),
    Op("mse_loss", None, lambda a, b, reduction: F.mse_loss(a, b, reduction=reduction),
       lambda a, b, reduction: np_reduce((a - b) ** 2, reduction),
       _case(mst.shapes().map(lambda s: (s, s))).flatmap(
           lambda c: st.sampled_from(["mean", "sum", "none"]).map(lambda r: (c[0], {"reduction": r})))),
    # -- issue 29 (h-names29): composites of slices, reductions and products (the gradient is theirs) --
    Op("gradient", None, lambda a, dim, edge_order: mt.gradient(a, spacing=0.5, dim=dim, edge_order=edge_order),
       lambda a, dim, edge_order: np.gradient(a, 0.5, axis=dim, edge_order=edge_order), gradient_case()),
    Op("segment_reduce", None, lambda d, lengths, reduce: mt.segment_reduce(d, reduce, lengths=T(lengths)),
       np_segment_reduce, segment_case(), domain=UNIQUE),
    Op("ormqr", None, lambda a, tau, c, left, transpose: mt.ormqr(a, tau, c, left, transpose), np_ormqr,
       ormqr_case(), domain=({}, {"min_value": -1.5, "max_value": 1.5}, {})),
]

IDS = [op.id for op in TABLE]


# ---- running a row ------------------------------------------------------------------------------

def _draw_case(data, op):
    shapes, kw = data.draw(op.case, label="shapes, arguments")
    domains = op.domain if isinstance(op.domain, tuple) else (op.domain,) * len(shapes)
    if op.joint_unique:  # one pool of distinct values, split among the inputs
        sizes = [int(np.prod(s)) for s in shapes]
        pool = data.draw(mst.arrays_for((sum(sizes),), unique=True, **domains[0]), label="values")
        arrays, start = [], 0
        for s, n in zip(shapes, sizes):
            arrays.append(pool[start:start + n].reshape(s))
            start += n
    else:
        arrays = [data.draw(mst.arrays_for(s, **d), label=f"input {i}")
                  for i, (s, d) in enumerate(zip(shapes, domains))]
    if op.valid is not None:
        assume(op.valid(*arrays, **kw))
    return arrays, kw


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _leaves(arrays, dtype, requires_grad=True):
    return [mt.tensor(a, dtype=dtype, requires_grad=requires_grad) for a in arrays]


def _node_names(outs):
    names, stack, seen = set(), [o.grad_fn for o in outs if o.grad_fn is not None], set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        names.add(type(node).__name__)
        stack.extend(child for _, child, _, _ in node.edges if not isinstance(child, mt.Tensor))
    return names


@pytest.mark.parametrize("op", TABLE, ids=IDS)
@given(data=st.data())
def test_forward_matches_numpy(op, data):
    arrays, kw = _draw_case(data, op)
    outs = _as_tuple(op.fn(*_leaves(arrays, mt.float64, requires_grad=False), **kw))
    refs = _as_tuple(op.ref(*[a.copy() for a in arrays], **kw))
    assert len(outs) == len(refs), f"{op.id}: {len(outs)} outputs, the reference has {len(refs)}"
    for out, ref in zip(outs, refs):
        assert_close(out, np.asarray(ref, dtype=np.float64), msg=f"{op.id} with {kw}")


@pytest.mark.parametrize("op", TABLE, ids=IDS)
@given(data=st.data())
def test_gradcheck_float64(op, data):
    arrays, kw = _draw_case(data, op)
    inputs = _leaves(arrays, mt.float64)
    if op.name is not None:  # the row must really run its op, or its gradient goes unchecked
        names = _node_names(_as_tuple(op.fn(*inputs, **kw)))
        assert op.name in names, f"{op.id}: expected a {op.name} node in the graph, found {sorted(names)}"
    assert gradcheck(lambda *xs: op.fn(*xs, **kw), inputs)


@pytest.mark.parametrize("op", TABLE, ids=IDS)
@given(data=st.data())
def test_float32_stays_float32_and_matches_float64(op, data):
    arrays, kw = _draw_case(data, op)
    arrays = [a.astype(np.float32).astype(np.float64) for a in arrays]  # both runs see the same values
    x32, x64 = _leaves(arrays, mt.float32), _leaves(arrays, mt.float64)
    outs32, outs64 = _as_tuple(op.fn(*x32, **kw)), _as_tuple(op.fn(*x64, **kw))
    rng = np.random.default_rng(0)
    us = [rng.standard_normal(o.shape) for o in outs64]
    rtol, atol = op.f32_tol
    for o32, o64 in zip(outs32, outs64):
        assert o32.dtype == mt.float32, f"{op.id}: float32 inputs gave a {o32.dtype} output"
        assert_close(o32, o64, rtol=rtol, atol=atol * max(1.0, float(np.abs(o64.numpy(force=True)).max(initial=0))),
                     check_dtype=False, msg=f"{op.id}: float32 forward")
    mt.autograd.backward([o for o in outs32 if o.requires_grad],
                         [T(u, dtype=mt.float32) for u, o in zip(us, outs32) if o.requires_grad])
    mt.autograd.backward([o for o in outs64 if o.requires_grad], [T(u) for u, o in zip(us, outs64) if o.requires_grad])
    for i, (a, b) in enumerate(zip(x32, x64)):
        if b.grad is None:
            assert a.grad is None
            continue
        assert a.grad.dtype == mt.float32 and a.grad.shape == a.shape, \
            f"{op.id}: grad of input {i} is {a.grad.dtype} {a.grad.shape}"
        scale = max(1.0, float(np.abs(b.grad.numpy(force=True)).max(initial=0)))
        assert_close(a.grad, b.grad, rtol=rtol, atol=atol * scale, check_dtype=False,
                     msg=f"{op.id}: float32 grad of input {i}")


@pytest.mark.parametrize("op", TABLE, ids=IDS)
@settings(max_examples=min(5, settings.default.max_examples))  # costlier: at most 5, fewer on the fast profile
@given(data=st.data())
def test_gradgradcheck_float64(op, data):
    """create_graph=True makes every op's backward differentiable: second derivatives check out too."""
    arrays, kw = _draw_case(data, op)
    assert gradgradcheck(lambda *xs: op.fn(*xs, **kw), _leaves(arrays, mt.float64))


# twins equal to their op's backward to rounding, not bit for bit (another order of sums, fused passes):
# tests/minitensor/fast/test_vjps.py and test_kernels.py (Softmax's short rows) compare them within float tolerances
ROUNDING_TWINS = {"Gelu", "LayerNorm", "Linear", "Softmax"}


def _twinned_ops():
    """Names of the ops whose backward has a bit-for-bit numpy twin in the speed layer (minitensor/fast)."""
    found, stack = set(), [Function]
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if cls.fast_backward is not None and cls.__name__ not in ROUNDING_TWINS:
            found.add(cls.__name__)
    return found


TWINNED_ROWS = [op for op in TABLE if op.name in _twinned_ops()]


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
@pytest.mark.parametrize("op", TWINNED_ROWS, ids=[op.id for op in TWINNED_ROWS])
@settings(max_examples=min(10, settings.default.max_examples))
@given(data=st.data())
def test_speed_layer_twins_give_the_ops_own_gradients_bit_for_bit(op, dtype, data):
    """A backward's numpy twin (run when nothing records the backward) against the op's own backward in
    Tensor ops (run under create_graph=True): the same gradients, bit for bit, for every row of an op
    that has a twin, with a random upstream weight."""
    arrays, kw = _draw_case(data, op)
    runs = []
    for create_graph in (False, True):
        xs = _leaves(arrays, dtype)
        outs = [o for o in _as_tuple(op.fn(*xs, **kw)) if isinstance(o, mt.Tensor) and o.requires_grad]
        rng = np.random.default_rng(1)
        weights = [T(rng.standard_normal(o.shape), dtype=o.dtype) for o in outs]
        wanted = [x for x in xs if x.requires_grad]
        grads = mt.autograd.grad(outs, wanted, grad_outputs=weights, create_graph=create_graph, allow_unused=True)
        runs.append([None if g is None else g.numpy(force=True) for g in grads])
    for i, (fast, plain) in enumerate(zip(*runs)):
        assert (fast is None) == (plain is None), f"{op.id}: input {i}"
        if fast is not None:
            assert fast.dtype == plain.dtype, f"{op.id}: input {i}: {fast.dtype} vs {plain.dtype}"
            np.testing.assert_array_equal(fast, plain, err_msg=f"{op.id}: gradient of input {i}")


def minitensor_ops():
    """Name of every Function subclass defined inside the minitensor package."""
    found, stack = set(), [Function]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            stack.append(sub)
            if sub.__module__.startswith("minitensor."):
                found.add(sub.__name__)
    return found


# nodes of the engine itself, not ops (tested in test_autograd_functional.py): one output of a Function
# with several, and the stand-in for a once_differentiable backward's result
ENGINE_NODES = {"OutputOf", "DelayedError"}
# ---- h-modules: the identity node a module's backward hooks hang on (nn/_module_hooks.py); its gradients,
# hooked and not, are compared in tests/minitensor/nn/test_module_hooks.py
ENGINE_NODES |= {"BackwardHookFunction"}
# identity nodes of two autograd APIs: an unpacked saved tensor in its argument's place (autograd/saved_hooks.py,
# tests/minitensor/test_torch_saved_tensors_hooks.py) and a dual tensor's alias of its primal
# (autograd/forward_ad.py, tests/minitensor/test_torch_forward_ad.py), their gradients compared with PyTorch's there
ENGINE_NODES |= {"Unpacked", "_Alias"}
# the node a base gets when it changes in place through a view (ops/inplace.py): its gradients are compared with
# PyTorch's and checked by finite differences in tests/minitensor/test_inplace.py
ENGINE_NODES |= {"CopySlices"}
# issue 29 (h-miscns): PyTorch's legacy NestedIOFunction, a Function subclass by name only (it computes nothing,
# and using it raises: tested in test_torch_namespaces_issue29.py)
LEGACY_NAMES = {"NestedIOFunction"}


def _ops_without_rows():
    return sorted(minitensor_ops() - {op.name for op in TABLE} - ENGINE_NODES - LEGACY_NAMES)


def test_every_registered_op_has_a_table_row():
    missing = _ops_without_rows()
    assert not missing, (
        f"differentiable ops without a row in the op table (so without a gradient check): {missing}; "
        "add a row to TABLE in tests/minitensor/test_ops.py"
    )


def test_a_new_differentiable_op_without_a_row_is_caught():
    # an op defined inside the package is found the moment its class is created
    new_op = type("BrandNewOp", (Function,), {"__module__": "minitensor.ops.brand_new",
                                              "forward": staticmethod(lambda ctx, x: x.numpy(force=True)),
                                              "backward": staticmethod(lambda ctx, g: g)})
    assert _ops_without_rows() == ["BrandNewOp"]
    del new_op
    gc.collect()  # a class is in a reference cycle (its __mro__), so only the collector frees it
    assert _ops_without_rows() == []


def test_every_table_row_names_a_real_op():
    unknown = sorted({op.name for op in TABLE if op.name is not None} - minitensor_ops())
    assert not unknown, f"table rows name ops minitensor does not define: {unknown}"
    assert len(IDS) == len(set(IDS)), "duplicate row ids"


# ---- composite behaviours a generic row can't express ------------------------------------------

def test_dropout_scales_kept_elements_and_gradient():
    mt.manual_seed(0)
    x = mt.ones(2000, dtype=mt.float64, requires_grad=True)
    y = F.dropout(x, p=0.25, training=True)
    kept = y.numpy(force=True) != 0
    assert_close(y.numpy(force=True)[kept], np.full(kept.sum(), 1 / 0.75))
    assert abs(kept.mean() - 0.75) < 0.05
    y.backward(mt.ones(2000, dtype=mt.float64))
    assert_close(x.grad, np.where(kept, 1 / 0.75, 0.0))  # the same mask scales the gradient


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("shape", [(1,), (7,), (64, 3, 11, 11)])
def test_dropouts_mask_keeps_each_element_with_probability_1_minus_p(p, shape):
    mt.manual_seed(3)
    masks = np.stack([mt.random.kept_mask(shape, p) for _ in range(4000 // math.prod(shape) + 200)])
    assert masks.dtype == np.bool_ and masks.shape[1:] == shape
    n = masks.size
    assert abs(masks.mean() - (1 - p)) < 5 * math.sqrt(p * (1 - p) / n)  # five standard errors
    # the two 32-bit halves of one 64-bit draw, and neighbouring draws, are independent of each other
    flat = masks.reshape(-1)[: n - n % 2].reshape(-1, 2)
    both = flat.all(axis=1).mean()
    assert abs(both - (1 - p) ** 2) < 5 * math.sqrt((1 - p) ** 2 * (1 - (1 - p) ** 2) / len(flat))
    mt.manual_seed(3)
    assert (mt.random.kept_mask(shape, p) == masks[0]).all()  # the seed decides the mask


def test_dropouts_mask_at_the_ends_of_p():
    assert mt.random.kept_mask((5, 3), 0.0).all()
    assert not mt.random.kept_mask((5, 3), 1 - 2.0 ** -40).any()  # (p * 2^32 rounds to 2^32)
    assert mt.random.kept_mask((0, 3), 0.5).shape == (0, 3)


def test_dropout_is_identity_in_eval_mode_and_at_p0():
    x = mt.randn(3, 4)
    assert F.dropout(x, p=0.5, training=False) is x
    assert F.dropout(x, p=0.0) is x
    assert_close(F.dropout(x, p=1.0), np.zeros((3, 4), np.float32))


def test_embedding_repeated_indices_accumulate():
    w = mt.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    out = F.embedding(mt.tensor([[0, 2], [2, 2]]), w)
    out.backward(mt.ones(2, 2, 2))
    assert_close(w.grad, [[1.0, 1.0], [0.0, 0.0], [3.0, 3.0]])


def test_embedding_padding_idx_gets_no_gradient():
    w = mt.randn(4, 3, dtype=mt.float64, requires_grad=True)
    F.embedding(mt.tensor([1, 3, 1]), w, padding_idx=1).sum().backward()
    assert_close(w.grad, [[0.0] * 3, [0.0] * 3, [0.0] * 3, [1.0] * 3])


def test_cross_entropy_all_targets_ignored_is_zero_with_zero_gradient():
    x = mt.randn(3, 4, dtype=mt.float64, requires_grad=True)
    loss = F.cross_entropy(x, mt.tensor([-100, -100, -100]))
    loss.backward()
    assert loss.item() == 0.0  # PyTorch gives nan here (pytorch#70348); we document 0
    assert_close(x.grad, np.zeros((3, 4)))


def test_cross_entropy_with_probability_targets():
    x = mt.randn(3, 4, dtype=mt.float64, requires_grad=True)
    p = np_softmax(np.random.default_rng(1).standard_normal((3, 4)), 1)
    loss = F.cross_entropy(x, mt.tensor(p), label_smoothing=0.2)
    q = p * 0.8 + 0.2 / 4
    assert_close(loss, -(q * np_log_softmax(x.numpy(force=True), 1)).sum(1).mean())
    assert gradcheck(lambda a: F.cross_entropy(a, mt.tensor(p), label_smoothing=0.2, reduction="none"), (x,))


@given(shapes=mst.matmul_shapes())
def test_matmul_result_shape_follows_numpy(shapes):
    a, b = (mt.zeros(s, dtype=mt.float64) for s in shapes.input_shapes)
    assert (a @ b).shape == shapes.result_shape == np.matmul(a.numpy(force=True), b.numpy(force=True)).shape


def test_max_and_min_with_dim_return_indices():
    x = mt.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    values, indices = x.max(dim=1)
    assert_close(values, [5.0, 7.0])
    assert indices.tolist() == [1, 0]
    assert mt.min(x, dim=0).indices.tolist() == [0, 1, 0]
    assert x.max(dim=1, keepdim=True).indices.shape == (2, 1)


def test_sum_to_size_is_the_adjoint_of_expand():
    rng = np.random.default_rng(5)
    x = mt.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    got = x.sum_to_size(3, 1)
    np.testing.assert_allclose(got.numpy(force=True), x.numpy(force=True).sum(axis=(0, 2)).reshape(3, 1))
    assert x.sum_to_size((2, 3, 4)) is x
    u = mt.tensor(rng.standard_normal((3, 1)))
    assert gradcheck(lambda x: x.sum_to_size(3, 1), (x,))
    (gx,) = mt.autograd.grad(got, (x,), grad_outputs=u)
    np.testing.assert_allclose(gx.numpy(force=True), np.broadcast_to(u.numpy(force=True), (2, 3, 4)))
    with pytest.raises(RuntimeError, match=r"sum_to_size: size \[5\] is not expandable"):
        x.sum_to_size(5)
