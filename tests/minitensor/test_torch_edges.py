r"""Values and gradients at the edges (NaN, inf, underflow, ignored targets, 0-d and empty shapes)
equal PyTorch's. Each case runs the same code under both libraries and reduces the outputs with a
random upstream weight, so every gradient entry counts. Skipped where PyTorch is not installed.
"""
import numpy as np
import pytest

import minitensor
import minitensor.nn.functional as mF

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
    e(minitensor.tensor([1, 3]))
    norms = np.linalg.norm(e.weight.detach().numpy(), axis=1)
    assert (norms[[1, 3]] <= 0.5).all() and (norms[[0, 2]] > 0.5).all()  # only the rows read, as torch
    assert "max_norm=0.5" in repr(e)
    for kw in ({"scale_grad_by_freq": True}, {"sparse": True}):
        with pytest.raises(NotImplementedError, match="scale_grad_by_freq.*sparse"):
            minitensor.nn.Embedding(4, 3, **kw)
        with pytest.raises(NotImplementedError, match="embedding: scale_grad_by_freq.*sparse"):
            mF.embedding(minitensor.tensor([0]), e.weight, **kw)
