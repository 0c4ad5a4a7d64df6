r"""The fused ops (GELU, LayerNorm, CrossEntropy, Linear) against their compositions of primitive ops.

Each fused op is one `Function` with a hand-derived VJP, written twice: in numpy for the
first-order backward (fast) and in Tensor ops for `create_graph=True` (differentiable again).
Here, in float64 with a random upstream gradient (never `.sum()`, whose gradient hides errors):
- the values and the gradients of every input equal the same formula composed of primitive ops;
- the numpy and the Tensor-op backward agree;
- float32 in gives float32 out and float32 gradients, close to the float64 ones;
- extreme inputs (GELU at +-50 and +-1e4, a constant LayerNorm row, every target ignored) give
  the right limits, finite values and no numpy warnings.
The op table (tests/minitensor/test_ops.py) adds gradcheck and gradgradcheck for each of them.
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import grad
from minitensor.testing import assert_close, strategies as mst

F64 = {"rtol": 1e-12, "atol": 1e-12}


def _t(a, dtype=mt.float64, requires_grad=True):
    return mt.tensor(np.asarray(a, dtype=np.float64), dtype=dtype, requires_grad=requires_grad)


def _value_and_grads(fn, inputs, u, create_graph=False):
    """fn(*inputs) and the gradient of <fn(*inputs), u> with respect to each input."""
    out = fn(*inputs)
    return out, grad(out, inputs, mt.tensor(u, dtype=out.dtype), create_graph=create_graph)


def _check_same(fused, composed, arrays, seed=0, tol=F64, dtype=mt.float64):
    """The fused op and the composition agree on values and on the VJP of a random upstream gradient,
    and the fused op's numpy (first-order) and Tensor-op (create_graph) backward agree too."""
    inputs = [_t(a, dtype) for a in arrays]
    out, grads = _value_and_grads(fused, inputs, _upstream(fused, inputs, seed))
    ref, ref_grads = _value_and_grads(composed, inputs, _upstream(fused, inputs, seed))
    assert out.dtype == ref.dtype == dtype and out.shape == ref.shape
    assert_close(out, ref, **tol, msg="value")
    _, graph_grads = _value_and_grads(fused, inputs, _upstream(fused, inputs, seed), create_graph=True)
    for i, (g, r, gg) in enumerate(zip(grads, ref_grads, graph_grads)):
        assert g.dtype == dtype and g.shape == inputs[i].shape
        assert_close(g, r, **tol, msg=f"gradient of input {i}")
        assert_close(gg, g, **tol, msg=f"create_graph gradient of input {i}")
    return out, grads


def _upstream(fn, inputs, seed):
    with mt.no_grad():
        shape = fn(*inputs).shape
    return np.random.default_rng(seed).standard_normal(shape)


def _node_names(out):
    names, stack = set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        names.add(type(node).__name__)
        stack.extend(child for _, child, _, _ in node.edges if not isinstance(child, mt.Tensor))
    return names


def _no_warnings():
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("error")
    return ctx


# ---- GELU ---------------------------------------------------------------------------------------

K = math.sqrt(2 / math.pi)


def composed_gelu(x, approximate):
    """The textbook formulas, from Tanh / Erf and arithmetic: the implementation before the fusion."""
    if approximate == "tanh":
        return 0.5 * x * (1 + mt.tanh(K * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1 + mt.erf(x * (1 / math.sqrt(2))))


APPROX = ["tanh", "none"]


@pytest.mark.parametrize("approximate", APPROX)
@given(x=mst.shapes().flatmap(lambda s: mst.arrays_for(s, min_value=-6.0, max_value=6.0)))
def test_gelu_equals_its_composition(approximate, x):
    out, _ = _check_same(lambda t: F.gelu(t, approximate=approximate), lambda t: composed_gelu(t, approximate), [x])
    assert out.grad_fn.name() == "GeluBackward"


@pytest.mark.parametrize("approximate", APPROX)
def test_gelu_float32_stays_float32_and_matches_float64(approximate):
    x = np.random.default_rng(1).uniform(-8, 8, (64, 33)).astype(np.float32)
    u = np.random.default_rng(2).standard_normal(x.shape)
    o32, (g32,) = _value_and_grads(lambda t: F.gelu(t, approximate=approximate), [_t(x, mt.float32)], u)
    o64, (g64,) = _value_and_grads(lambda t: F.gelu(t, approximate=approximate), [_t(x)], u)
    assert o32.dtype == g32.dtype == mt.float32
    assert_close(o32, o64, rtol=2e-6, atol=1e-6, check_dtype=False)
    assert_close(g32, g64, rtol=2e-5, atol=1e-5, check_dtype=False)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64], ids=str)
@pytest.mark.parametrize("approximate", APPROX)
def test_gelu_at_extreme_inputs_has_the_limits_and_warns_nothing(approximate, dtype):
    x = _t([50.0, -50.0, 1e4, -1e4, 30.0, -30.0, 0.0], dtype)
    u = np.array([0.5, -1.5, 2.0, 3.0, -1.0, 1.0, 4.0])
    ctx = _no_warnings()
    try:
        y, (gx,) = _value_and_grads(lambda t: F.gelu(t, approximate=approximate), [x], u)
        _, (gg,) = _value_and_grads(lambda t: F.gelu(t, approximate=approximate), [x], u, create_graph=True)
    finally:
        ctx.__exit__(None, None, None)
    # gelu(x) -> x as x -> +inf, -> 0 as x -> -inf; its slope -> 1 and 0; gelu(0) = 0 with slope 1/2
    assert y.dtype == gx.dtype == dtype
    assert_close(y, [50.0, 0.0, 1e4, 0.0, 30.0, 0.0, 0.0], rtol=0, atol=0)
    # (exactly, up to x phi(x) ~ 1e-195 at x = -30 for the erf form in float64)
    assert_close(gx, u * np.array([1, 0, 1, 0, 1, 0, 0.5]), rtol=0, atol=1e-150, check_dtype=False)
    assert np.isfinite(gg.numpy(force=True)).all()


def test_gelu_tanh_first_order_backward_calls_no_transcendental_function(monkeypatch):
    x = _t(np.linspace(-4, 4, 50))
    y = F.gelu(x, approximate="tanh")

    def forbidden(*args, **kwargs):
        raise AssertionError("the backward recomputed a transcendental function")

    for name in ("exp", "tanh", "expm1", "log1p"):
        monkeypatch.setattr(np, name, forbidden)
    (gx,) = grad(y, [x], mt.ones(50, dtype=mt.float64))
    monkeypatch.undo()
    assert_close(gx, grad(composed_gelu(x, "tanh"), [x], mt.ones(50, dtype=mt.float64))[0], **F64)


def test_gelu_tanh_is_more_accurate_than_one_plus_tanh_in_the_negative_tail():
    # 1 + tanh(u) cancels for u << 0; x * sigmoid(2u) does not: compare with exact exp in Python
    xs = [-3.0, -5.0, -8.0]
    y = F.gelu(_t(xs, requires_grad=False), approximate="tanh")
    exact = [x / (1 + math.exp(-2 * K * (x + 0.044715 * x ** 3))) for x in xs]
    assert_close(y, exact, rtol=1e-14, atol=0)


# ---- LayerNorm ----------------------------------------------------------------------------------

def composed_layer_norm(x, k, *wb, eps=1e-5):
    dims = tuple(range(x.ndim - k, x.ndim))
    d = x - x.mean(dim=dims, keepdim=True)
    out = d * ((d * d).mean(dim=dims, keepdim=True) + eps).rsqrt()
    return out * wb[0] + wb[1] if wb else out


@st.composite
def layer_norm_arrays(draw):
    shape = draw(mst.shapes(1, 4))
    k = draw(st.integers(1, len(shape)))
    norm = shape[len(shape) - k:]
    arrays = [draw(mst.arrays_for(shape, min_value=-5.0, max_value=5.0))]
    if draw(st.booleans()):
        arrays += [draw(mst.arrays_for(norm)), draw(mst.arrays_for(norm))]
    return k, arrays


@given(case=layer_norm_arrays())
def test_layer_norm_equals_its_composition(case):
    k, arrays = case
    out, _ = _check_same(lambda x, *wb: F.layer_norm(x, x.shape[x.ndim - k:], *wb),
                         lambda x, *wb: composed_layer_norm(x, k, *wb), arrays, tol={"rtol": 1e-10, "atol": 1e-10})
    assert out.grad_fn.name() == "LayerNormBackward"


def test_layer_norm_float32_stays_float32_and_matches_float64():
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((64, 11, 48)) * 2 + 0.5, rng.standard_normal(48), rng.standard_normal(48)]
    arrays = [a.astype(np.float32) for a in arrays]
    u = rng.standard_normal((64, 11, 48))
    fn = lambda x, w, b: F.layer_norm(x, (48,), w, b)  # noqa: E731
    o32, g32 = _value_and_grads(fn, [_t(a, mt.float32) for a in arrays], u)
    o64, g64 = _value_and_grads(fn, [_t(a) for a in arrays], u)
    assert o32.dtype == mt.float32 and all(g.dtype == mt.float32 for g in g32)
    assert_close(o32, o64, rtol=1e-5, atol=1e-5, check_dtype=False)
    for a, b in zip(g32, g64):  # gw and gb sum 704 rows: scale the tolerance by their size
        assert_close(a, b, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(b.numpy(force=True)).max())), check_dtype=False)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64], ids=str)
def test_layer_norm_of_constant_rows_is_finite(dtype):
    # rows of 48 equal values: dyadic ones (their sum is exact, so x - mu = 0: the output is the bias),
    # and ones like 0.1 whose float sum is not exact (a tiny x - mu that eps keeps finite)
    x = _t(np.tile(np.array([[0.375], [-3.5], [1e4], [0.1], [-3.7], [1e4 + 0.1]]), (1, 48)), dtype)
    w, b = _t(np.linspace(-1, 1, 48), dtype), _t(np.linspace(0, 2, 48), dtype)
    u = np.random.default_rng(4).standard_normal((6, 48))
    ctx = _no_warnings()
    try:
        y, grads = _value_and_grads(lambda *t: F.layer_norm(t[0], (48,), t[1], t[2]), [x, w, b], u)
    finally:
        ctx.__exit__(None, None, None)
    assert np.isfinite(y.numpy(force=True)).all() and all(np.isfinite(g.numpy(force=True)).all() for g in grads)
    assert_close(y[:3], np.broadcast_to(b.numpy(force=True), (3, 48)), rtol=0, atol=0)


def test_layer_norm_without_affine_output_does_not_alias_what_backward_saved():
    x = _t(np.random.default_rng(5).standard_normal((3, 4)))
    y = F.layer_norm(x, (4,))
    u = np.random.default_rng(6).standard_normal((3, 4))
    expected = grad(composed_layer_norm(x, 1), [x], mt.tensor(u))[0]
    with mt.no_grad():
        y.data[...] = 7.0  # an in-place change of the output must not reach the saved xhat
    assert_close(grad(y, [x], mt.tensor(u))[0], expected, **F64)


# ---- CrossEntropy -------------------------------------------------------------------------------

def composed_cross_entropy(x, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """log_softmax, an index and a weighted sum, in primitive ops: the definition the fused op implements."""
    out_shape = np.shape(target)
    if x.ndim == 1:
        x = x.unsqueeze(0)
    c = x.shape[1]
    rows = x.movedim(1, -1).reshape(-1, c) if x.ndim > 2 else x
    t = np.asarray(target).reshape(-1)
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    w = np.ones(c) if weight is None else weight
    logp = F.log_softmax(rows, dim=1)
    wt = mt.tensor(w[safe] * keep, dtype=x.dtype)
    smooth = -(logp * mt.tensor(w, dtype=x.dtype)).sum(dim=1) * mt.tensor(keep, dtype=x.dtype)
    loss = -logp[np.arange(len(t)), safe] * wt * (1 - label_smoothing) + smooth * (label_smoothing / c)
    if reduction == "none":
        return loss.reshape(out_shape)
    if reduction == "sum":
        return loss.sum()
    total = float((w[safe] * keep).sum())
    return loss.sum() / (total if total > 0 else 1.0)


@st.composite
def cross_entropy_cases(draw):
    c = draw(st.sampled_from([1, 2, 3, 5, 40]))  # 40: more columns than the transposed row max takes
    layout = draw(st.sampled_from(["1d", "2d", "3d"]))
    n, extra = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    shape = {"1d": (c,), "2d": (n, c), "3d": (n, c, extra)}[layout]
    tshape = {"1d": (), "2d": (n,), "3d": (n, extra)}[layout]
    ignore = draw(st.sampled_from([-100, 0, 1]))
    target = draw(hnp.arrays(np.int64, tshape, elements=st.integers(0, c - 1) | st.just(ignore)))
    kw = {"ignore_index": ignore, "reduction": draw(st.sampled_from(["mean", "sum", "none"])),
          "label_smoothing": draw(st.sampled_from([0.0, 0.1, 0.5]))}
    weight = draw(st.none() | hnp.arrays(np.float64, (c,), elements=st.floats(0.25, 2.0)))
    x = draw(mst.arrays_for(shape, min_value=-8.0, max_value=8.0))
    return x, target, weight, kw


@given(case=cross_entropy_cases())
def test_cross_entropy_equals_its_composition(case):
    x, target, weight, kw = case
    wt = None if weight is None else mt.tensor(weight)
    out, _ = _check_same(lambda a: F.cross_entropy(a, mt.tensor(target), weight=wt, **kw),
                         lambda a: composed_cross_entropy(a, target, weight, **kw), [x])
    assert "CrossEntropy" in _node_names(out)  # one op (a 'none' loss of 1-D or 3-D logits is reshaped after)


@pytest.mark.parametrize("layout", [(5,), (6, 5), (3, 5, 2)], ids=["1d", "2d", "3d"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_equals_its_composition_in_every_mode(layout, reduction, smoothing, weighted):
    """Every combination once, with some targets ignored (Hypothesis above may not draw each one)."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal(layout) * 3
    tshape = () if len(layout) == 1 else (layout[0],) + layout[2:]
    target = rng.integers(0, 5, tshape)
    if target.ndim:
        target.reshape(-1)[::4] = -100
    weight = rng.uniform(0.25, 2.0, 5) if weighted else None
    kw = {"reduction": reduction, "label_smoothing": smoothing}
    _check_same(lambda a: F.cross_entropy(a, mt.tensor(target), weight=None if weight is None else mt.tensor(weight),
                                          **kw),
                lambda a: composed_cross_entropy(a, target, weight, **kw), [x])


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_float32_stays_float32_and_matches_float64(weighted, smoothing):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((704, 3)) * 4).astype(np.float32)
    t = rng.integers(0, 3, 704)
    t[::5] = -100
    w = rng.uniform(0.5, 2, 3).astype(np.float32) if weighted else None
    for reduction in ("mean", "sum", "none"):
        def fn(a):
            return F.cross_entropy(a, mt.tensor(t), weight=None if w is None else mt.tensor(w, dtype=a.dtype),
                                   reduction=reduction, label_smoothing=smoothing)
        u = rng.standard_normal(() if reduction != "none" else (704,))
        o32, (g32,) = _value_and_grads(fn, [_t(x, mt.float32)], u)
        o64, (g64,) = _value_and_grads(fn, [_t(x)], u)
        assert o32.dtype == g32.dtype == mt.float32
        assert_close(o32, o64, rtol=1e-5, atol=1e-5, check_dtype=False, msg=reduction)
        assert_close(g32, g64, rtol=1e-5, atol=1e-6, check_dtype=False, msg=reduction)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_with_every_target_ignored_is_zero_with_zero_gradient(reduction, smoothing, weighted):
    x = _t(np.random.default_rng(8).standard_normal((3, 4, 2)))
    target = mt.tensor(np.full((3, 2), 2))
    w = mt.tensor([1.0, 2.0, 0.5, 3.0], dtype=mt.float64) if weighted else None
    ctx = _no_warnings()
    try:
        loss, (gx,) = _value_and_grads(
            lambda a: F.cross_entropy(a, target, weight=w, ignore_index=2, reduction=reduction,
                                      label_smoothing=smoothing), [x], np.ones(() if reduction != "none" else (3, 2)))
    finally:
        ctx.__exit__(None, None, None)
    assert_close(loss, np.zeros(loss.shape), rtol=0, atol=0)  # PyTorch: nan for 'mean' (pytorch#70348)
    assert_close(gx, np.zeros((3, 4, 2)), rtol=0, atol=0)


def test_cross_entropy_with_a_minus_inf_logit_is_finite():
    x = _t([[0.0, -math.inf, 2.0], [1.0, 1.0, -math.inf]])
    u = np.array([0.7, -1.2])
    ctx = _no_warnings()
    try:
        loss, (gx,) = _value_and_grads(lambda a: F.cross_entropy(a, mt.tensor([2, 0]), reduction="none"), [x], u)
    finally:
        ctx.__exit__(None, None, None)
    assert_close(loss, [math.log(1 + math.exp(-2.0)), math.log(2.0)], **F64)
    p0 = np.array([1, 0, math.exp(2.0)]) / (1 + math.exp(2.0))
    assert_close(gx, [0.7 * (p0 - [0, 0, 1]), -1.2 * np.array([-0.5, 0.5, 0.0])], **F64)


def test_cross_entropy_weight_of_the_wrong_shape_is_an_error():
    with pytest.raises(RuntimeError, match=r"cross_entropy: weight of shape \(2,\) should have shape \(3,\)"):
        F.cross_entropy(mt.randn(4, 3), mt.tensor([0, 1, 2, 0]), weight=mt.ones(2))


# ---- Linear -------------------------------------------------------------------------------------

@st.composite
def linear_arrays(draw):
    lead = draw(mst.shapes(0, 3))
    n_in, n_out = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    arrays = [draw(mst.arrays_for(lead + (n_in,))), draw(mst.arrays_for((n_out, n_in)))]
    if draw(st.booleans()):
        arrays.append(draw(mst.arrays_for((n_out,))))
    return arrays


@given(arrays=linear_arrays())
def test_linear_equals_matmul_plus_bias(arrays):
    out, _ = _check_same(lambda x, w, *b: F.linear(x, w, *b), lambda x, w, *b: x @ w.mT + b[0] if b else x @ w.mT,
                         arrays)
    assert out.grad_fn.name() == "LinearBackward"  # one node for x W^T + b


def test_linear_float32_stays_float32_and_matches_float64():
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal((64, 11, 48)), rng.standard_normal((192, 48)) * 0.2, rng.standard_normal(192)]
    arrays = [a.astype(np.float32) for a in arrays]
    u = rng.standard_normal((64, 11, 192))
    o32, g32 = _value_and_grads(F.linear, [_t(a, mt.float32) for a in arrays], u)
    o64, g64 = _value_and_grads(F.linear, [_t(a) for a in arrays], u)
    assert o32.dtype == mt.float32 and all(g.dtype == mt.float32 for g in g32)
    assert_close(o32, o64, rtol=1e-5, atol=1e-5, check_dtype=False)
    for a, b in zip(g32, g64):
        assert_close(a, b, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(b.numpy(force=True)).max())), check_dtype=False)


def test_linear_only_some_inputs_need_a_gradient():
    rng = np.random.default_rng(10)
    x, w, b = _t(rng.standard_normal((2, 3))), _t(rng.standard_normal((4, 3)), requires_grad=False), \
        _t(rng.standard_normal(4))
    u = rng.standard_normal((2, 4))
    gx, gb = grad(F.linear(x, w, b), [x, b], mt.tensor(u))
    assert_close(gx, u @ w.numpy(force=True), **F64)
    assert_close(gb, u.sum(0), **F64)
    assert F.linear(x.detach(), w, None).grad_fn is None


def test_linear_with_a_1d_weight_works_and_mixed_dtypes_are_refused_as_in_pytorch():
    x = _t(np.arange(6.0).reshape(2, 3))
    assert_close(F.linear(x, _t([1.0, 2.0, 3.0])), [8.0, 26.0], **F64)  # (2, 3) @ (3,): PyTorch's 1-D weight
    with pytest.raises(RuntimeError,
                       match="^linear: input, weight and bias must have the same dtype, got float32, float64, float64"):
        F.linear(x.float(), _t(np.eye(3)), _t(np.zeros(3)))
    with pytest.raises(RuntimeError, match="linear: .* got float64, float64, float32"):
        F.linear(x, _t(np.eye(3)), _t(np.zeros(3)).float())
    with pytest.raises(RuntimeError,
                       match="matmul: expected both arguments to have the same dtype, got float32 and float64"):
        x.float() @ _t(np.eye(3))


def test_cross_entropy_refuses_a_class_weight_that_requires_grad_instead_of_dropping_its_gradient():
    x = mt.randn(4, 3, dtype=mt.float64, requires_grad=True)
    t = mt.tensor([0, 2, 1, 2])
    w = mt.tensor([1.0, 2.0, 0.5], dtype=mt.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="cross_entropy: the class weight requires grad.*weight.detach"):
        F.cross_entropy(x, t, weight=w)
    loss = F.cross_entropy(x, t, weight=w.detach())  # the constant weight works
    loss.backward()
    assert x.grad is not None and w.grad is None
