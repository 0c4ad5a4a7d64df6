r"""Values and gradients at the edges (NaN, inf, underflow, ignored targets, 0-d and empty shapes)
equal PyTorch's. Each case runs the same code under both libraries and reduces the outputs with a
random upstream weight, so every gradient entry counts. Skipped where PyTorch is not installed.
"""
import numpy as np
import pytest

import minitensor
import minitensor.nn.functional as mF

# a comparison with PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")
tF = torch.nn.functional

LIBS = {"mt": (minitensor, mF), "torch": (torch, tF)}
nan, inf = float("nan"), float("inf")


def _tensor(lib, arr, requires_grad=False):
    arr = np.asarray(arr)
    t = lib.tensor(arr.copy())
    return t.requires_grad_(True) if requires_grad and arr.dtype.kind == "f" else t


def _np(t):
    return t.detach().numpy()


def both(fn, *arrays, upstream=None, seed=0):
    """fn(lib, F, *leaves) under each library: {name: (outputs, leaf gradients)} as numpy arrays.

    Every float output is reduced with a random weight (`upstream` replaces it when given)."""
    results = {}
    for name, (lib, F) in LIBS.items():
        xs = [_tensor(lib, a, True) for a in arrays]
        outs = fn(lib, F, *xs)
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        rng = np.random.default_rng(seed)
        roots = [o for o in outs if o.requires_grad]
        if roots:
            ws = [rng.standard_normal(tuple(o.shape)).astype(_np(o).dtype) if upstream is None
                  else np.broadcast_to(np.asarray(upstream, _np(o).dtype), tuple(o.shape)).copy() for o in roots]
            (torch.autograd.backward if lib is torch else minitensor.autograd.backward)(
                roots, [_tensor(lib, w) for w in ws])
        results[name] = ([_np(o) for o in outs], [None if x.grad is None else _np(x.grad) for x in xs])
    return results


def assert_same(fn, *arrays, upstream=None, rtol=None, atol=None):
    single = any(np.asarray(a).dtype == np.float32 for a in arrays)
    rtol = (1e-5 if single else 1e-9) if rtol is None else rtol
    atol = (1e-6 if single else 1e-12) if atol is None else atol
    res = both(fn, *arrays, upstream=upstream)
    (outs_m, grads_m), (outs_t, grads_t) = res["mt"], res["torch"]
    for i, (a, b) in enumerate(zip(outs_m, outs_t)):
        assert a.shape == b.shape, f"output {i}: shape {a.shape}, torch {b.shape}"
        assert a.dtype == b.dtype, f"output {i}: dtype {a.dtype}, torch {b.dtype}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"output {i}")
    for i, (a, b) in enumerate(zip(grads_m, grads_t)):
        assert (a is None) == (b is None), f"input {i}: gradient {a} vs torch {b}"
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"gradient of input {i}")


# ---- cross-entropy and nll_loss --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_of_strided_logits(dtype, reduction):
    """W.T (a contrastive model's symmetric loss) and a (1, C, L) input: the logits are not C-contiguous."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((5, 4)).astype(dtype)
    t = np.array([0, 3, 1, 4])
    assert_same(lambda lib, F, w: F.cross_entropy(w.T, _tensor(lib, t), reduction=reduction), w)
    x = rng.standard_normal((1, 6, 3)).astype(dtype)
    t2 = rng.integers(0, 3, (1, 6))
    assert_same(lambda lib, F, x: F.cross_entropy(x.permute(0, 2, 1), _tensor(lib, t2), reduction=reduction,
                                                  label_smoothing=0.1), x)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_an_ignored_target_with_nan_or_all_minus_inf_logits_is_ignored(loss, reduction):
    x = np.array([[1.0, 2.0, 3.0], [nan, nan, nan], [-inf, -inf, -inf], [0.5, nan, -inf]])
    t = np.array([0, -100, -100, -100])
    assert_same(lambda lib, F, x: getattr(F, loss)(x, _tensor(lib, t), reduction=reduction), x)
    w = np.array([0.2, 1.0, 3.0])
    assert_same(lambda lib, F, x: getattr(F, loss)(x, _tensor(lib, np.array([2, 5, 5, 5])), ignore_index=5,
                                                 weight=_tensor(lib, w), reduction=reduction), x)


def test_label_smoothed_cross_entropy_ignores_a_nan_row():
    x = np.array([[1.0, -2.0, 0.5], [nan, 1.0, 2.0]])
    assert_same(lambda lib, F, x: F.cross_entropy(x, _tensor(lib, np.array([1, -100])), label_smoothing=0.2), x)


# ---- embedding -------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [inf, nan])
def test_an_inf_or_nan_upstream_row_reaches_only_the_row_it_read(bad):
    table = np.arange(12.0).reshape(6, 2)
    idx = np.array([[0, 4], [4, 1]])
    g = np.ones((2, 2, 2))
    g[0, 1, 0] = bad
    assert_same(lambda lib, F, w: F.embedding(_tensor(lib, idx), w), table, upstream=g)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, inf])
@pytest.mark.parametrize("max_norm", [0.0, 1.0, 4.0])
def test_embedding_max_norm_renormalises_the_rows_it_reads_in_place(max_norm, norm_type):
    table = np.random.default_rng(2).standard_normal((5, 3)) * 2
    idx = np.array([[0, 2, 2], [4, 0, 2]])
    res = {}
    for name, (lib, F) in LIBS.items():
        w = _tensor(lib, table, True)
        out = F.embedding(_tensor(lib, idx), w, max_norm=max_norm, norm_type=norm_type)
        out.backward(_tensor(lib, np.random.default_rng(3).standard_normal(tuple(out.shape))))
        res[name] = _np(out), _np(w), _np(w.grad), int(w._version)
    for got, want in zip(res["mt"], res["torch"]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert not np.array_equal(res["mt"][1], table) or max_norm == 4.0  # the table itself was changed


def test_nn_embedding_takes_max_norm_and_refuses_what_it_lacks():
    e = minitensor.nn.Embedding(4, 3, max_norm=0.5)
    with minitensor.no_grad():  # every row's norm above max_norm (a random init may draw one below)
        e.weight.copy_(minitensor.tensor(np.arange(1.0, 13.0).reshape(4, 3)))
    e(minitensor.tensor([1, 3]))
    norms = np.linalg.norm(e.weight.detach().numpy(), axis=1)
    assert (norms[[1, 3]] <= 0.5).all() and (norms[[0, 2]] > 0.5).all()  # only the rows read, as torch
    assert "max_norm=0.5" in repr(e)
    for kw in ({"scale_grad_by_freq": True}, {"sparse": True}):
        with pytest.raises(NotImplementedError, match="scale_grad_by_freq.*sparse"):
            minitensor.nn.Embedding(4, 3, **kw)
        with pytest.raises(NotImplementedError, match="embedding: scale_grad_by_freq.*sparse"):
            mF.embedding(minitensor.tensor([0]), e.weight, **kw)


# ---- max, min, sort and topk with NaN --------------------------------------------------------------

ROWS_WITH_NAN = np.array([[1.0, nan, 3.0, nan], [2.0, -1.0, 2.0, 0.5], [nan, -inf, inf, 0.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_gradient_of_a_nan_max_or_min_goes_to_the_nan_elements(dtype):
    x = ROWS_WITH_NAN.astype(dtype)
    assert_same(lambda lib, F, x: x.max(), x, upstream=1.5)
    assert_same(lambda lib, F, x: x.min(), x, upstream=1.5)
    single = x[:, [0, 1, 2]][[0, 2]]  # one NaN a row: max(dim) splits ties, PyTorch picks one (both route NaN)
    assert_same(lambda lib, F, x: x.max(dim=1), single)
    assert_same(lambda lib, F, x: x.min(dim=1, keepdim=True), single)
    assert_same(lambda lib, F, x: x.amax(dim=1), x)  # PyTorch's amax: NaN to every element of such a row


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sort_and_topk_take_nan_as_the_largest(dtype):
    x = ROWS_WITH_NAN.astype(dtype)
    for descending in (False, True):
        assert_same(lambda lib, F, x: x.sort(dim=1, descending=descending), x)
        assert_same(lambda lib, F, x: x.sort(dim=0, descending=descending), x)
        assert_same(lambda lib, F, x: x.argsort(dim=1, descending=descending), x)
    for largest in (False, True):
        assert_same(lambda lib, F, x: x.topk(2, dim=1, largest=largest), x)


# ---- gradients at special points -----------------------------------------------------------------

@pytest.mark.parametrize("dtype, tiny", [(np.float32, 1e-23), (np.float64, 1e-170)])
def test_the_denominators_gradient_does_not_underflow(dtype, tiny):
    a = np.array([tiny, 2 * tiny, -tiny], dtype)
    b = np.array([tiny, tiny, 3 * tiny], dtype)
    assert_same(lambda lib, F, a, b: a / b, a, b, rtol=1e-6 if dtype == np.float32 else 1e-12, atol=0)
    assert_same(lambda lib, F, a: a / a, a, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", [
    "norm3_at_zero", "norm_half", "pow0", "pow_tensor_exponent", "maximum", "minimum", "relu", "softmax",
    "log_softmax", "sign", "abs", "std_tiny", "var_tiny", "std_zero_row"])
def test_gradients_at_special_points(case, dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    cases = {
        "norm3_at_zero": (lambda lib, F, x: x.norm(p=3, dim=1), [[0.0, 0.0, 0.0], [1.0, -2.0, 0.0]]),
        "norm_half": (lambda lib, F, x: x.norm(p=0.5), [0.0, 1.0, -4.0]),
        "pow0": (lambda lib, F, x: x ** 0, [nan, tiny, 0.0, -0.0, inf, -2.0]),
        "pow_tensor_exponent": (lambda lib, F, x: x ** _tensor(lib, np.array([0.0, 0.0, 2.0, 0.0], dtype)),
                                [nan, tiny, 3.0, 0.0]),
        "maximum": (lambda lib, F, x: lib.maximum(x, _tensor(lib, np.array([1.0, nan, nan, 2.0, 0.0], dtype))),
                    [nan, 1.0, nan, 2.0, -1.0]),
        "minimum": (lambda lib, F, x: lib.minimum(x, _tensor(lib, np.array([1.0, nan, nan, 2.0, 0.0], dtype))),
                    [nan, 1.0, nan, 2.0, -1.0]),
        "relu": (lambda lib, F, x: F.relu(x), [nan, -1.0, 0.0, 2.0, inf, -inf]),
        "softmax": (lambda lib, F, x: F.softmax(x, dim=1), [[1.0, inf, 2.0], [-inf, -inf, 0.0], [1.0, 2.0, 3.0]]),
        "log_softmax": (lambda lib, F, x: F.log_softmax(x, dim=1), [[1.0, inf, 2.0], [-inf, 0.0, 0.0]]),
        "sign": (lambda lib, F, x: x.sign() * x, [nan, -2.0, 0.0, 3.0]),
        "abs": (lambda lib, F, x: x.abs(), [nan, -2.0, 0.0, 3.0]),
        "std_tiny": (lambda lib, F, x: x.std(), [0.0, 1e-30]),
        "var_tiny": (lambda lib, F, x: x.var(), [0.0, 1e-30]),
        "std_zero_row": (lambda lib, F, x: x.std(dim=1), [[0.0, 1e-300], [2.0, 2.0]]),
    }
    fn, values = cases[case]
    assert_same(fn, np.array(values, dtype))


def test_sign_is_in_the_graph_with_a_zero_gradient():
    x = minitensor.tensor([nan, -2.0, 0.0, 3.0], requires_grad=True)
    y = x.sign()
    assert y.grad_fn is not None
    y.backward(minitensor.tensor([inf, nan, 1.0, 1.0]))  # zeros, not g * 0
    assert x.grad.numpy().tolist() == [0.0] * 4


# ---- shapes and dtypes ---------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda x: x.argmax(0, keepdim=True), lambda x: x.argmin(-1, keepdim=True), lambda x: x.max(0, keepdim=True),
    lambda x: x.min(0, keepdim=True), lambda x: x.argsort(), lambda x: x.sort(descending=True),
    lambda x: x.topk(1), lambda x: x.sum(0, keepdim=True)])
def test_a_0d_tensor_stays_0d(call):
    for lib in (minitensor, torch):
        out = call(lib.tensor(3.0))
        out = out if isinstance(out, tuple) else (out,)
        assert [tuple(o.shape) for o in out] == [()] * len(out)


@pytest.mark.parametrize("shape, chunks, dim",
                         [((0,), 2, 0), ((0, 3), 4, 0), ((3, 0), 2, 1), ((5,), 3, 0), ((4, 2), 3, 0)])
def test_chunk_of_an_empty_dim_gives_the_chunks_asked_for(shape, chunks, dim):
    got = [tuple(c.shape) for c in minitensor.zeros(*shape).chunk(chunks, dim)]
    assert got == [tuple(c.shape) for c in torch.zeros(*shape).chunk(chunks, dim)]


@pytest.mark.parametrize("data", [
    [np.float64(1.0)], [1.0, np.float64(2.0)], [np.float32(1.0), 2.0], [np.float32(1.0), np.float64(2.0)],
    [[np.float64(1.0)], [2.0]], (np.float64(1.0),), [np.int32(1)], [np.int32(1), 2], [np.int32(1), 2.5],
    [np.int8(1), np.uint8(2)], [np.uint8(3)], [np.float16(1.0), 2.0], [np.int64(2), np.float32(1.0)], [1, 2.0]])
def test_a_list_of_numpy_scalars_keeps_their_dtypes_as_in_pytorch(data):
    assert str(minitensor.tensor(data).dtype).split(".")[-1] == str(torch.tensor(data).dtype).split(".")[-1]


@pytest.mark.parametrize("op", ["__and__", "__or__", "__xor__"])
@pytest.mark.parametrize("a, b", [(("uint8", [1, 200]), ("int8", -1)), (("int8", [1, -3]), ("uint8", 250)),
                                  (("int16", [1, 7]), ("int64", [5, 6])), (("bool", [True, False]), ("int8", 3))])
def test_bitwise_ops_promote_as_pytorch(op, a, b):
    res = []
    for lib in (minitensor, torch):
        x = lib.tensor(a[1], dtype=getattr(lib, a[0]))
        y = lib.tensor(b[1], dtype=getattr(lib, b[0]))
        out = getattr(x, op)(y)
        res.append((str(out.dtype).split(".")[-1], out.numpy().tolist()))
    assert res[0] == res[1]


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_float_unary_ops_promote_integer_tensors_to_float(name, dtype):
    res = []
    for lib in (minitensor, torch):
        t = lib.tensor([1, 0, 3] if dtype != "bool" else [True, False, True], dtype=getattr(lib, dtype))
        out = getattr(t, name)()
        res.append((str(out.dtype).split(".")[-1], out.numpy()))
    assert res[0][0] == res[1][0]
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-6)


# ---- numpy's RuntimeWarnings: PyTorch is silent ------------------------------------------------------

WARNING_CASES = {
    "inf * 0": lambda x: x * 0,
    "inf - inf": lambda x: x - x,
    "sin(inf)": lambda x: x.sin() + x.cos(),
    "square overflow": lambda x: x.square() * 1e30,
    "norm overflow": lambda x: x.norm() + x.norm(p=3),
    "sum([inf, -inf])": lambda x: x.sum() + x.cumsum(0).sum() + x.mean() + x.var() + x.std(),
    "prod": lambda x: x.prod(),
    "matmul": lambda x: x.reshape(1, -1) @ x.reshape(-1, 1),
    "softmax": lambda x: x.softmax(0) + x.log_softmax(0) + x.logsumexp(0),
    "layer_norm": lambda x: mF.layer_norm(x, (x.shape[0],)),
    "erf and gelu": lambda x: x.erf() + mF.gelu(x) + mF.silu(x),
    "NaN to long": lambda x: x.long().float() * x,
}


@pytest.mark.parametrize("name", sorted(WARNING_CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ops_on_inf_and_nan_do_not_warn_forward_or_backward(name, dtype):
    import warnings

    x = minitensor.tensor(np.array([inf, -inf, nan, 0.0, 3e38, -3e38, 1.0], dtype), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = WARNING_CASES[name](x)
        y.backward(minitensor.ones(tuple(y.shape), dtype=y.dtype) * 1e30)


def test_the_mean_of_nothing_and_huge_casts_do_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = minitensor.zeros(0, 3, requires_grad=True)
        m = x.mean(0)
        assert np.isnan(m.detach().numpy()).all() and np.isnan(minitensor.zeros(0).mean().item())
        assert np.isnan(x.var(0).detach().numpy()).all()
        m.sum().backward()
        assert minitensor.tensor([1e300], dtype=minitensor.float32).item() == inf
        minitensor.tensor([nan, inf]).long()
