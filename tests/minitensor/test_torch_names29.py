"""Issue 29's last torch names (h-names29) against PyTorch: values, dtypes, gradients (with a random upstream
weight) and the error type of one bad input each. gradient, segment_reduce and ormqr also have rows in
test_ops.py's op table (finite differences in float64)."""
import numpy as np
import pytest

import minitensor as mt
from minitensor import func as mfunc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

rng = np.random.default_rng(29)
X34 = rng.standard_normal((3, 4))
X6 = rng.standard_normal((6, 2))
A43 = rng.standard_normal((2, 4, 3))
SPD = (lambda a: a @ a.T + 9 * np.eye(9))(rng.standard_normal((9, 9)))
B9 = np.eye(9) * 2 + 0.1
POINTS = np.array([[0., 1], [1, 0], [2, 0], [2, 2], [0.5, 0.7]], dtype=np.float32)
LOGP = rng.standard_normal((6, 2, 4))
TABLE = rng.standard_normal((6, 3))
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 0])


def _T(L, a):
    return L.tensor(a)


def _geqrf(L, a):
    return L.geqrf(a)


PACKED, TAU = (np.stack(parts) for parts in zip(*[(h.T, t) for h, t in (np.linalg.qr(a, mode="raw") for a in A43)]))


def _rearrange(L, x, pattern, **lengths):
    f = mfunc.rearrange if L is mt else torch.func.rearrange
    return f(x, pattern, **lengths)


def _low_rank_svd(L, a):
    U, S, V = L.svd_lowrank(a, q=3)
    return S, U @ L.diag_embed(S) @ V.mT, U * U, V * V  # U and V's signs are the draw's: compare invariants


def _pca(L, a):
    U, S, V = L.pca_lowrank(a, q=3)
    return S, V * V


def _lobpcg(L, a, **kw):
    E, X = L.lobpcg(a, k=2, **kw)
    return E, X * X


# id, f(L, *tensors), inputs (float arrays get requires_grad=True), grad: compare input gradients
CASES = [
    ("gradient", lambda L, x: L.gradient(x), [X34], True),
    ("gradient_spacing_dim", lambda L, x: L.gradient(x, spacing=[2.0], dim=[-1], edge_order=2), [X34], True),
    ("gradient_coordinates", lambda L, x, c0, c1: L.gradient(x, spacing=[c0, c1], edge_order=2),
     [X34, np.array([0., 1, 3]), np.array([0., .5, 1, 2.5])], True),
    ("gradient_int", lambda L, x: L.gradient(x), [np.array([1, 2, 4, 7, 11])], False),
    ("histogramdd", lambda L, p: L.histogramdd(p, bins=[3, 2]), [POINTS], False),
    ("histogramdd_weight_density", lambda L, p, w: L.histogramdd(p, bins=2, range=[0., 1., 0., 2.], weight=w,
                                                                  density=True),
     [POINTS, np.arange(5, dtype=np.float32)], False),
    ("histogramdd_edges", lambda L, p: L.histogramdd(p, [L.tensor([0., 1, 2]), L.tensor([0., 2])]), [POINTS], False),
    ("segment_sum", lambda L, d: L.segment_reduce(d, "sum", lengths=L.tensor([2, 0, 4])), [X6], True),
    ("segment_mean_initial", lambda L, d: L.segment_reduce(d, "mean", lengths=L.tensor([2, 0, 4]), initial=1.5),
     [X6], True),
    ("segment_max_offsets", lambda L, d: L.segment_reduce(d, "max", offsets=L.tensor([0, 3, 3, 6])), [X6], True),
    ("segment_prod_axis1", lambda L, d: L.segment_reduce(d, "prod", lengths=L.tensor([[1, 3], [4, 0]]), axis=1),
     [X6.reshape(2, 6)[:, :4]], True),
    ("geqrf", _geqrf, [A43], False),
    ("geqrf_float32", _geqrf, [A43.astype(np.float32)], False),
    ("orgqr", lambda L, a: L.orgqr(*L.geqrf(a.detach())), [A43], False),
    ("ormqr_left", lambda L, a, t, c: L.ormqr(a, t, c, True, False),
     [PACKED, TAU, rng.standard_normal((2, 4, 2))], True),
    ("ormqr_left_t", lambda L, a, t, c: L.ormqr(a, t, c, True, True),
     [PACKED, TAU, rng.standard_normal((2, 4, 2))], True),
    ("ormqr_right_t", lambda L, a, t, c: L.ormqr(a, t, c, False, True),
     [PACKED, TAU, rng.standard_normal((2, 5, 4))], True),
    ("svd_lowrank", _low_rank_svd, [A43[0]], True),
    ("svd_lowrank_wide", _low_rank_svd, [A43[0].T.copy()], True),
    ("pca_lowrank", _pca, [A43[1]], True),
    ("lobpcg", _lobpcg, [SPD], True),
    ("lobpcg_smallest", lambda L, a: _lobpcg(L, a, largest=False), [SPD], True),
    ("lobpcg_B", lambda L, a, b: _lobpcg(L, a.detach(), B=b.detach()), [SPD, B9], False),
    ("embedding_bag_sum", lambda L, w, i, o: L.embedding_bag(w, i, o), [TABLE, IDX, np.array([0, 3, 3, 5])], True),
    ("embedding_bag_mean_last", lambda L, w, i, o: L.embedding_bag(w, i, o, False, 1, False, None, True),
     [TABLE, IDX, np.array([0, 3, 3, 8])], True),
    ("embedding_bag_max_pad", lambda L, w, i, o: L.embedding_bag(w, i, o, False, 2, False, None, False, 2),
     [TABLE, IDX, np.array([0, 3, 3, 5])], True),
    ("embedding_bag_float32_sum_pad", lambda L, w, i, o: L.embedding_bag(w, i, o, False, 0, False, None, False, 4),
     [TABLE.astype(np.float32), IDX, np.array([0, 3, 3, 5])], True),
    ("ctc_loss", lambda L, lp: L.ctc_loss(lp.log_softmax(2), L.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2]), [LOGP],
     True),
    ("ctc_loss_sum", lambda L, lp: L.ctc_loss(lp.log_softmax(2), L.tensor([[1, 2], [3, 3]]), L.tensor([6, 5]),
                                               L.tensor([2, 2]), 0, 2), [LOGP], True),
    ("rearrange", lambda L, x: _rearrange(L, x, "a (b c) -> c a b", c=2), [X34], True),
    ("rearrange_ellipsis_list", lambda L, x: _rearrange(L, [x, 2 * x], "n ... c -> c (... n) 1"), [X34], True),
]


def _outputs(result):
    items = result if isinstance(result, (tuple, list)) else (result,)
    return [t for item in items for t in (item if isinstance(item, (tuple, list)) else (item,))]


@pytest.mark.parametrize("name,f,inputs,grad", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, f, inputs, grad):
    torch.manual_seed(0)  # (lobpcg's start, svd_lowrank's test matrix)
    results, grads = [], []
    for L in (mt, torch):
        xs = [L.tensor(a) for a in inputs]
        for x in xs:
            if x.dtype in (L.float32, L.float64) and grad:
                x.requires_grad_()
        outs = _outputs(f(L, *xs))
        results.append(outs)
        if grad:
            w = np.random.default_rng(1)
            total = sum((o * L.tensor(w.standard_normal(tuple(o.shape))).to(o.dtype)).sum()
                        for o in outs if o.requires_grad)
            total.backward()
            grads.append([x.grad for x in xs if x.requires_grad])
    mine, theirs = results
    assert len(mine) == len(theirs), name
    for m, t in zip(mine, theirs):
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], name
        assert tuple(m.shape) == tuple(t.shape), name
        tol = 1e-5 if t.dtype == torch.float32 or name.startswith("lobpcg") else 1e-7  # (PyTorch's LOBPCG
        # stops within its tolerance, sqrt(float64's eps), from a random start: minitensor's eigh is exact)
        np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol, err_msg=name)
    for gm, gt in zip(*grads) if grad else ():
        assert gm is not None and gt is not None, name
        tol = 1e-5 if name.startswith("lobpcg") else 1e-6
        np.testing.assert_allclose(gm.numpy(), gt.numpy(), rtol=tol, atol=tol, err_msg=name)


# one bad input each: the error type matches PyTorch's
ERRORS = [
    ("gradient_edge_order", lambda L: L.gradient(L.tensor(X34), edge_order=3)),
    ("gradient_spacing_count", lambda L: L.gradient(L.tensor(X34), spacing=[1.0, 2.0, 3.0])),
    ("gradient_too_short", lambda L: L.gradient(L.tensor([1.0, 2.0]), edge_order=2)),
    ("histogramdd_bins_count", lambda L: L.histogramdd(L.tensor(POINTS), bins=[2, 2, 2])),
    ("histogramdd_range_size", lambda L: L.histogramdd(L.tensor(POINTS), bins=2, range=[0.0, 1.0])),
    ("histogramdd_int", lambda L: L.histogramdd(L.tensor(POINTS).long(), bins=2)),
    ("segment_bad_reduce", lambda L: L.segment_reduce(L.tensor(X6), "foo", lengths=L.tensor([6]))),
    ("segment_bad_lengths", lambda L: L.segment_reduce(L.tensor(X6), "sum", lengths=L.tensor([2, 2]))),
    ("segment_no_lengths", lambda L: L.segment_reduce(L.tensor(X6), "sum")),
    ("geqrf_1d", lambda L: L.geqrf(L.tensor([1.0, 2.0]))),
    ("geqrf_int", lambda L: L.geqrf(L.tensor([[1, 2], [3, 4]]))),
    ("ormqr_shape", lambda L: L.ormqr(*L.geqrf(L.tensor(A43[0])), L.tensor(rng.standard_normal((3, 2))))),
    ("pca_q", lambda L: L.pca_lowrank(L.tensor(A43[0]), q=5)),
    ("lobpcg_too_many", lambda L: L.lobpcg(L.tensor(SPD), k=4)),
    ("embedding_bag_weights_mean", lambda L: L.embedding_bag(L.tensor(TABLE), L.tensor(IDX), L.tensor([0, 3]), False,
                                                             1, False, L.ones(8, dtype=L.float64))),
    ("ctc_loss_reduction", lambda L: L.ctc_loss(L.tensor(LOGP).log_softmax(2), L.tensor([[1, 2], [3, 3]]), [6, 5],
                                                [2, 2], 0, "mean")),
    ("rearrange_rank", lambda L: _rearrange(L, L.tensor(X34), "a b c -> c b a")),
    ("rearrange_one_side", lambda L: _rearrange(L, L.tensor(X34), "a b -> a")),
]


@pytest.mark.parametrize("name,f", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, f):
    with pytest.raises(Exception) as theirs:
        f(torch)
    with pytest.raises(Exception) as mine:
        f(mt)
    assert isinstance(mine.value, type(theirs.value)), (name, mine.value, theirs.value)


def test_from_file_reads_and_shares_as_torch(tmp_path):
    for L in (mt, torch):
        path = tmp_path / f"{L.__name__}.bin"
        np.arange(6, dtype=np.float32).tofile(path)
        assert L.from_file(str(path), size=4).tolist() == [0.0, 1.0, 2.0, 3.0]
        assert L.from_file(str(path)).shape == (0,)
        assert L.from_file(str(path), size=3, dtype=L.float64).dtype == L.float64
        private = L.from_file(str(path), shared=False, size=6)
        private[0] = 9  # a private copy: the file keeps its 0
        shared = L.from_file(str(path), shared=True, size=6, requires_grad=False)
        shared.detach()[1] = 7  # a shared mapping: the file gets the 7
        assert np.fromfile(path, dtype=np.float32).tolist() == [0.0, 7.0, 2.0, 3.0, 4.0, 5.0]
        assert L.from_file(str(path), size=2, requires_grad=True).requires_grad
        with pytest.raises(RuntimeError):
            L.from_file(str(path), size=7)
