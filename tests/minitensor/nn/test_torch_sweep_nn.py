r"""A differential sweep against PyTorch of the nn.functional family tutorials use: linear,
layer_norm, gelu (both approximations), silu, relu, dropout with p = 0 and 1, embedding,
cross_entropy (class indices and probabilities, weight, ignore_index, label_smoothing, every
reduction, (C,), (N, C) and (N, C, L) inputs), nll_loss, mse_loss, softmax and log_softmax along
every dim, and scaled_dot_product_attention (bool and float masks, is_causal, scale), forward and
gradient, float32 and float64, on inputs that are strided views (a transposed weight, attention
heads split by a transpose, sliced or expanded inputs) with values that include +-inf and NaN.

The harness is the `torch_sweep` fixture (tests/minitensor/conftest.py): the same random upstream
weight on both sides, float32 at float32 tolerance and float64 tightly, NaN at the same places,
PyTorch's dtypes, and errors where PyTorch raises. Skipped where PyTorch is not installed.
"""
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import minitensor

# a differential sweep against PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

pytest.importorskip("torch")

SEEDS = st.integers(0, 2 ** 16)
DTYPES = ["float32", "float64"]
# values: mostly ordinary, sometimes an edge (a row of logits holding inf or NaN ...)
VALUES = st.one_of(*[st.floats(-3, 3, width=32)] * 9, st.sampled_from([math.inf, -math.inf, math.nan, 0.0, 1e30]))
FINITE = st.floats(-3, 3, width=32)
# for products that are summed (linear, matmul): no 1e30, as 1e30 * 1e30 + -inf is NaN or -inf in
# float32 depending on whether the BLAS fuses the multiply-add (keeping 1e60) or not
SUMMED = st.one_of(*[FINITE] * 9, st.sampled_from([math.inf, -math.inf, math.nan, 0.0]))
VIEWS = ("contiguous", "transposed", "stepped", "expanded")


def _tensor(sw, data, shape, dtype, values=VALUES, layouts=VIEWS):
    return data.draw(sw.tensors(tuple(shape), (dtype,), values=values, layouts=layouts))


@pytest.mark.parametrize("dtype", DTYPES)
@settings(deadline=None)
@given(data=st.data())
def test_linear_matches_pytorch(torch_sweep, dtype, data):
    sw = torch_sweep
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
    n_in, n_out = data.draw(st.integers(0, 3)), data.draw(st.integers(1, 3))
    x = _tensor(sw, data, lead + [n_in], dtype, SUMMED)
    w = _tensor(sw, data, (n_out, n_in), dtype, SUMMED)  # (transposed: an (in, out) leaf seen as W)
    ops = [x, w]
    if data.draw(st.booleans()):
        ops.append(_tensor(sw, data, (n_out,), dtype, SUMMED))
    sw.check("linear", lambda lib, *a: lib.nn.functional.linear(*a), ops, data.draw(SEEDS))


@pytest.mark.parametrize("dtype", DTYPES)
@settings(deadline=None)
@given(data=st.data())
def test_layer_norm_matches_pytorch(torch_sweep, dtype, data):
    sw = torch_sweep
    shape = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    k = data.draw(st.integers(1, len(shape)))
    norm_shape = tuple(shape[len(shape) - k:])
    # finite values up to 3: beyond ~1e19 PyTorch's float32 variance (E[x^2]) overflows to NaN where
    # minitensor's two-pass variance overflows only when the deviations do (documented), and of a
    # constant row of large values PyTorch's float32 mean is off by rounding, which rstd magnifies
    values = st.one_of(FINITE, st.sampled_from([math.inf, -math.inf, math.nan]))
    x = _tensor(sw, data, shape, dtype, values=values)
    affine = data.draw(st.booleans())
    # (finite weights: with an infinite one, inf - inf turns up in a different term of each library's
    # backward formula, NaN in one and inf in the other)
    ops = [x] + ([_tensor(sw, data, norm_shape, dtype, FINITE), _tensor(sw, data, norm_shape, dtype, FINITE)]
                 if affine else [])
    # (eps 1e-12 only in float64: in float32 1 / sqrt(1e-12) magnifies PyTorch's rounding of a row's mean)
    eps = data.draw(st.sampled_from([1e-5, 0.1] + ([1e-12] if dtype == "float64" else [])))

    def fn(lib, x, *wb):
        return lib.nn.functional.layer_norm(x, norm_shape, *wb, eps=eps)
    # (atol 1e-4 and 1e-9: of a constant row, rstd = 1 / sqrt(eps) magnifies rounding to ~1e-5 in
    # float32; and PyTorch's mean is off by rounding, so its xhat is ~1e-12, not 0, in float64)
    sw.check("layer_norm", fn, ops, data.draw(SEEDS),
             tol=lambda d: (1e-4, 1e-4) if d == np.float32 else (1e-9, 1e-9))


ACTIVATIONS = {
    "gelu": lambda lib, x: lib.nn.functional.gelu(x),
    "gelu_tanh": lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
    "silu": lambda lib, x: lib.nn.functional.silu(x),
    "relu": lambda lib, x: lib.nn.functional.relu(x),
    "dropout_p0": lambda lib, x: lib.nn.functional.dropout(x, p=0.0, training=True),
    "dropout_p1": lambda lib, x: lib.nn.functional.dropout(x, p=1.0, training=True),
    "dropout_eval": lambda lib, x: lib.nn.functional.dropout(x, p=0.5, training=False),
    "softplus": lambda lib, x: lib.nn.functional.softplus(x),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@settings(deadline=None)
@given(data=st.data())
def test_activations_match_pytorch(torch_sweep, name, dtype, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1))[0]
    values = VALUES
    if name == "gelu" and dtype == "float32":  # PyTorch's vectorised float32 gelu(+inf) is NaN (one element: inf)
        values = VALUES.filter(lambda v: v != math.inf)
    sw.check(name, ACTIVATIONS[name], [_tensor(sw, data, shape, dtype, values)], data.draw(SEEDS))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@settings(deadline=None)
@given(data=st.data())
def test_softmax_along_every_dim_matches_pytorch(torch_sweep, log, dtype, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1, min_dims=1))[0]
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    fn = (lambda lib, x: lib.nn.functional.log_softmax(x, dim=dim)) if log else (
        lambda lib, x: lib.nn.functional.softmax(x, dim=dim))
    sw.check("log_softmax" if log else "softmax", fn, [_tensor(sw, data, shape, dtype)], data.draw(SEEDS))


@pytest.mark.parametrize("dtype", DTYPES)
@settings(deadline=None)
@given(data=st.data())
def test_embedding_matches_pytorch(torch_sweep, dtype, data):
    sw = torch_sweep
    rows, width = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3))
    weight = _tensor(sw, data, (rows, width), dtype)
    idx_shape = data.draw(st.lists(st.integers(0, 3), max_size=2))
    index = data.draw(sw.tensors(tuple(idx_shape), ("int64", "int64", "int32"), values=st.integers(-1, rows)))
    padding_idx = data.draw(st.sampled_from([None, 0, -1]))

    def fn(lib, idx, w):
        return lib.nn.functional.embedding(idx, w, padding_idx=padding_idx)
    sw.check("embedding", fn, [index, weight], data.draw(SEEDS))


@st.composite
def class_problems(draw, sw, dtype, probabilities=False):
    """(logits, target, weight or None, the class dim): (C,), (N, C) or (N, C, L) logits."""
    c = draw(st.integers(1, 4))
    kind = draw(st.sampled_from(["C", "NC", "NCL"]))
    n, length = draw(st.integers(0, 3)), draw(st.integers(1, 3))
    shape = {"C": (c,), "NC": (n, c), "NCL": (n, c, length)}[kind]
    logits = draw(sw.tensors(shape, (dtype,), values=VALUES, layouts=VIEWS))
    if probabilities:
        target = draw(sw.tensors(shape, (dtype,), values=st.floats(0, 1, width=32), layouts=VIEWS))
    else:
        t_shape = {"C": (), "NC": (n,), "NCL": (n, length)}[kind]
        target = draw(sw.tensors(t_shape, ("int64",), values=st.integers(-1, c - 1), layouts=VIEWS))
    weight = draw(st.one_of(st.none(), sw.tensors((c,), (dtype,), values=st.floats(0, 2, width=32),
                                                  layouts=("contiguous",))))
    return logits, target, weight


def _some_target_counts(target, weight, ignore):
    """Whether a class-index target has an element that is not ignored and weighs more than 0 (a
    documented difference: with none, 'mean' is 0 here and NaN in PyTorch; see
    docs/pytorch_compatibility.md)."""
    t, _ = target.make(minitensor)
    if t.dtype.kind == "f":
        return True
    kept = t[t != ignore]
    return bool(kept.numel()) and (weight is None or bool(weight.leaf[kept.numpy()].sum() > 0))


def _constant(op):
    """A class weight: PyTorch differentiates nothing into it, minitensor refuses one that needs a gradient."""
    leaf = op.leaf
    return type(op)(leaf=leaf, view=lambda t: t.detach(), layout="detached", shape=op.shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@settings(deadline=None)
@given(data=st.data())
def test_cross_entropy_matches_pytorch(torch_sweep, reduction, dtype, data):
    sw = torch_sweep
    probabilities = data.draw(st.booleans())
    logits, target, weight = data.draw(class_problems(sw, dtype, probabilities))
    smoothing = data.draw(st.sampled_from([0.0, 0.0, 0.1, 0.5]))
    ignore = data.draw(st.sampled_from([-100, -1, 0]))
    assume(reduction != "mean" or _some_target_counts(target, weight, ignore))
    ops = [logits, target] + ([_constant(weight)] if weight is not None else [])

    def fn(lib, x, t, *w):
        return lib.nn.functional.cross_entropy(x, t, *w, ignore_index=ignore, reduction=reduction,
                                               label_smoothing=smoothing)
    sw.check("cross_entropy", fn, ops, data.draw(SEEDS))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@settings(deadline=None)
@given(data=st.data())
def test_nll_loss_matches_pytorch(torch_sweep, reduction, dtype, data):
    sw = torch_sweep
    logits, target, weight = data.draw(class_problems(sw, dtype))
    ignore = data.draw(st.sampled_from([-100, -1, 0]))
    assume(reduction != "mean" or _some_target_counts(target, weight, ignore))
    ops = [logits, target] + ([_constant(weight)] if weight is not None else [])

    def fn(lib, x, t, *w):
        return lib.nn.functional.nll_loss(x.log_softmax(dim=1 if x.ndim > 1 else 0), t, *w, ignore_index=ignore,
                                          reduction=reduction)
    sw.check("nll_loss", fn, ops, data.draw(SEEDS))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@settings(deadline=None)
@given(data=st.data())
def test_mse_loss_matches_pytorch(torch_sweep, reduction, dtype, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1))[0]
    ops = [_tensor(sw, data, shape, dtype), _tensor(sw, data, shape, dtype)]
    sw.check("mse_loss", lambda lib, a, b: lib.nn.functional.mse_loss(a, b, reduction=reduction), ops,
             data.draw(SEEDS))


@pytest.mark.parametrize("dtype", DTYPES)
@settings(deadline=None)
@given(data=st.data())
def test_scaled_dot_product_attention_matches_pytorch(torch_sweep, dtype, data):
    sw = torch_sweep
    b, h = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 2))
    tq, tk, e, ev = (data.draw(st.integers(1, 3)) for _ in range(4))
    # heads split off by a transpose, (B, T, H, E) -> (B, H, T, E), as a tutorial's attention does
    q, k, v = (_tensor(sw, data, shape, dtype, values=FINITE, layouts=VIEWS)
               for shape in ((b, h, tq, e), (b, h, tk, e), (b, h, tk, ev)))
    mask_kind = data.draw(st.sampled_from(["none", "bool", "float", "causal"]))
    ops, kw = [q, k, v], {}
    if mask_kind in ("bool", "float"):
        mask_shape = data.draw(st.sampled_from([(tq, tk), (b, 1, 1, tk), (b, h, tq, tk)]))
        if mask_kind == "bool":
            ops.append(data.draw(sw.tensors(mask_shape, ("bool",), layouts=("contiguous",))))
        else:
            values = st.one_of(st.floats(-2, 2, width=32), st.just(-math.inf))
            ops.append(_constant(data.draw(sw.tensors(mask_shape, (dtype,), values=values, layouts=("contiguous",)))))
    kw["is_causal"] = mask_kind == "causal"
    kw["scale"] = data.draw(st.sampled_from([None, 0.5]))

    def fn(lib, q, k, v, *mask):
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, *mask, **kw)
    sw.check("scaled_dot_product_attention", fn, ops, data.draw(SEEDS),
             tol=lambda d: (1e-4, 1e-5) if d == np.float32 else (1e-9, 1e-11))


def _leaf(values, dtype="float32"):
    return _Leaf(np.array(values, dtype=dtype))


class _Leaf:  # a contiguous leaf Operand, made without the fixture (the table is built at import)
    def __init__(self, leaf, view=None):
        self.value, self.leaf, self.layout, self.shape = None, leaf, "contiguous", leaf.shape
        self.view = view or (lambda t: t)

    def make(self, lib):
        leaf = lib.tensor(self.leaf.copy())
        if self.leaf.dtype.kind == "f":
            leaf.requires_grad_(True)
        return self.view(leaf), leaf

    def __repr__(self):
        return repr(self.leaf)


FOUND = [
    ("cross_entropy of a row holding +inf is NaN", lambda lib, x, t: lib.nn.functional.cross_entropy(x, t),
     [_leaf([[np.inf, 0.0]]), _leaf([1], "int64")]),
    ("cross_entropy of class probabilities refuses ignore_index >= 0",
     lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, ignore_index=0),
     [_leaf([[0.0, 1.0]]), _leaf([[0.5, 0.5]])]),
    ("cross_entropy of NaN and 1e30 logits", lambda lib, x, t: lib.nn.functional.cross_entropy(x, t, reduction="none"),
     [_leaf([np.nan, 1e30], "float64"), _leaf(0, "int64")]),
    ("layer_norm of a float32 row whose variance overflows", lambda lib, x: lib.nn.functional.layer_norm(x, (2,)),
     [_leaf([[1e20, 0.0]])]),
    ("linear of float32 with a float64 weight", lambda lib, x, w: lib.nn.functional.linear(x, w),
     [_leaf([[1.0]]), _leaf([[2.0]], "float64")]),
    ("linear of float32 with a float64 bias", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
     [_leaf([[1.0]]), _leaf([[2.0]]), _leaf([0.5], "float64")]),
    ("linear of inf and 0 (no numpy warning)", lambda lib, x, w: lib.nn.functional.linear(x, w),
     [_leaf([[0.0]]), _leaf([[np.inf]])]),
    ("layer_norm's backward of an inf row (no numpy warning)",
     lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (1,), w, b),
     [_leaf([0.0], "float64"), _leaf([np.inf], "float64"),
                                                                         _leaf([0.0], "float64")]),
]


@pytest.mark.parametrize("what, fn, ops", FOUND, ids=[case[0] for case in FOUND])
def test_defects_the_sweep_found(torch_sweep, what, fn, ops):
    torch_sweep.check(what, fn, ops, seed=0)
