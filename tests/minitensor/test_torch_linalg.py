r"""torch.linalg, the BLAS-like products, the matrix functions, scans and order statistics of issue 29
against PyTorch: values, dtypes, gradients (a random upstream weight on every output that has one)
and error types, one table row a name, on small fixed matrices (well-conditioned, distinct singular
values and eigenvalues, so every gradient is defined). Skipped where PyTorch is not installed.
"""
import warnings

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")

R = np.random.default_rng(29)
A = R.standard_normal((3, 3)) + 3 * np.eye(3)  # well-conditioned
AB = R.standard_normal((2, 3, 3)) + 3 * np.eye(3)  # a batch
SPD = A @ A.T + np.eye(3)
TALL = R.standard_normal((4, 3))
WIDE = R.standard_normal((2, 4))
B = R.standard_normal((3, 2))
V = R.standard_normal(3)
W = R.standard_normal(3)
X = R.standard_normal((2, 5))
SING = np.array([[1.0, 2.0], [2.0, 4.0]])


def sym(lib, a):
    return (a + a.mT) / 2


# name: (fn(lib, *tensors), arrays, whether to check gradients)
CASES = {
    # -- the known misses first --
    "trace": (lambda lib, a: lib.trace(a), [A], True),
    "trace_method_int": (lambda lib, a: a.trace(), [np.arange(9).reshape(3, 3)], False),
    "addmm": (lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2), [B[:1], A, B], True),
    "addmm_method": (lambda lib, c, a, b: c.addmm(a, b), [R.standard_normal((3, 2)), A, B], True),
    "addmm_beta0_nan": (lambda lib, a, b: lib.addmm(lib.full((3, 2), float("nan"), dtype=a.dtype), a, b, beta=0),
                        [A, B], True),
    "addmv": (lambda lib, c, a, v: lib.addmv(c, a, v, alpha=-1), [V, A, W], True),
    "addr": (lambda lib, c, v, w: lib.addr(c, v, w, beta=2), [A, V, W], True),
    "addbmm": (lambda lib, c, a, b: lib.addbmm(c, a, b), [A, AB, AB], True),
    "baddbmm": (lambda lib, c, a, b: lib.baddbmm(c, a, b, alpha=0.5), [A, AB, AB], True),
    "mv": (lambda lib, a, v: lib.mv(a, v), [A, V], True),
    "ger": (lambda lib, v, w: lib.ger(v, w), [V, W], True),
    "inner": (lambda lib, a, b: lib.inner(a, b), [A, B.T], True),
    "vdot": (lambda lib, v, w: lib.vdot(v, w), [V, W], True),
    "tensordot_int": (lambda lib, a, b: lib.tensordot(a, b, dims=1), [A, B], True),
    "tensordot_lists": (lambda lib, a, b: lib.tensordot(a, b, dims=([0], [0])), [A, B], True),
    "chain_matmul": (lambda lib, a, b: lib.chain_matmul(a, a, b), [A, B], True),
    "sum_axis_keepdims": (lambda lib, a: a.sum(axis=0, keepdims=True), [A], True),
    "mean_axis": (lambda lib, a: lib.mean(a, axis=(0, 1)), [A], True),
    "std_keepdims": (lambda lib, a: a.std(dim=1, keepdims=True), [A], True),
    "var_axis": (lambda lib, a: lib.var(a, axis=1), [A], True),
    "max_axis": (lambda lib, a: tuple(a.max(axis=1, keepdims=True)), [A], True),
    "min_axis": (lambda lib, a: tuple(lib.min(a, axis=0)), [A], True),
    "amax_axis": (lambda lib, a: a.amax(axis=1), [A], True),
    "amin_keepdims": (lambda lib, a: lib.amin(a, 0, keepdims=True), [A], True),
    "prod_axis": (lambda lib, a: a.prod(axis=1, keepdims=True), [A], True),
    "all_axis": (lambda lib, a: lib.all(a > 0, axis=1), [A], False),
    "any_keepdims": (lambda lib, a: (a > 0).any(dim=1, keepdims=True), [A], False),
    "logsumexp_axis": (lambda lib, a: a.logsumexp(axis=1, keepdims=True), [A], True),
    "argmax_axis": (lambda lib, a: a.argmax(axis=1, keepdims=True), [A], False),
    "argmin_axis": (lambda lib, a: lib.argmin(a, axis=0), [A], False),
    "count_nonzero_axis": (lambda lib, a: lib.count_nonzero(a, axis=1), [A], False),
    # -- torch.linalg's common ones --
    "linalg.norm": (lambda lib, a: lib.linalg.norm(a), [A], True),
    "linalg.norm_dim": (lambda lib, a: lib.linalg.norm(a, 3, dim=1), [A], True),
    "linalg.norm_nuc": (lambda lib, a: lib.linalg.norm(a, "nuc"), [A], True),
    "linalg.norm_inf": (lambda lib, a: lib.linalg.norm(a, float("inf")), [A], True),
    "linalg.vector_norm": (lambda lib, a: lib.linalg.vector_norm(a, 1.5, dim=(0, 1), keepdim=True), [A], True),
    "linalg.vector_norm_ninf": (lambda lib, a: lib.linalg.vector_norm(a, float("-inf")), [A], True),
    "linalg.matrix_norm_2": (lambda lib, a: lib.linalg.matrix_norm(a, 2), [AB], True),
    "linalg.matrix_norm_m1": (lambda lib, a: lib.linalg.matrix_norm(a, -1, keepdim=True), [AB], True),
    "linalg.det": (lambda lib, a: lib.linalg.det(a), [AB], True),
    "linalg.slogdet": (lambda lib, a: tuple(lib.linalg.slogdet(a)), [AB], True),
    "linalg.inv": (lambda lib, a: lib.linalg.inv(a), [AB], True),
    "linalg.solve": (lambda lib, a, b: lib.linalg.solve(a, b), [AB, B], True),
    "linalg.solve_vector": (lambda lib, a, v: lib.linalg.solve(a, v), [A, V], True),
    "linalg.solve_right": (lambda lib, a, b: lib.linalg.solve(a, b, left=False), [A, B.T], True),
    "linalg.cholesky": (lambda lib, a: lib.linalg.cholesky(a @ a.mT + lib.eye(3, dtype=a.dtype)), [A], True),
    "linalg.cholesky_upper": (lambda lib, a: lib.linalg.cholesky(sym(lib, a), upper=True), [SPD], True),
    "linalg.qr_tall": (lambda lib, a: tuple(lib.linalg.qr(a)), [TALL], True),
    "linalg.qr_wide": (lambda lib, a: tuple(lib.linalg.qr(a)), [WIDE], True),
    "linalg.qr_r": (lambda lib, a: lib.linalg.qr(a, mode="r").R, [TALL], False),  # PyTorch: no gradient with mode='r'

    "linalg.svd": (lambda lib, a: (lambda u, s, vh: (u * u, s, vh * vh))(*lib.linalg.svd(a, full_matrices=False)),
                   [TALL], True),
    "linalg.svd_full": (lambda lib, a: (lambda u, s, vh: (u[:, :2] * u[:, :2], s))(*lib.linalg.svd(a)), [WIDE.T],
                        True),
    "linalg.svdvals": (lambda lib, a: lib.linalg.svdvals(a), [WIDE], True),
    "linalg.eigh": (lambda lib, a: (lambda w, q: (w, q * q))(*lib.linalg.eigh(sym(lib, a))), [SPD], True),
    "linalg.eigh_U": (lambda lib, a: (lambda w, q: (w, q * q))(*lib.linalg.eigh(sym(lib, a), UPLO="U")), [SPD], True),
    "linalg.eigvalsh": (lambda lib, a: lib.linalg.eigvalsh(sym(lib, a)), [SPD], True),
    # -- the rest of torch.linalg --
    "linalg.inv_ex": (lambda lib, a: tuple(lib.linalg.inv_ex(a)), [A], True),
    "linalg.solve_ex": (lambda lib, a, b: tuple(lib.linalg.solve_ex(a, b)), [A, B], True),
    "linalg.cholesky_ex": (lambda lib, a: tuple(lib.linalg.cholesky_ex(sym(lib, a))), [SPD], True),
    "linalg.solve_triangular": (lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True), [A, B], True),
    "linalg.solve_triangular_unit": (lambda lib, a, b: lib.linalg.solve_triangular(a, b.mT, upper=False, left=False,
                                                                                 unitriangular=True), [A, B], True),
    "linalg.lstsq": (lambda lib, a, b: lib.linalg.lstsq(a, b).solution, [TALL, R.standard_normal((4, 2))], True),
    "linalg.pinv": (lambda lib, a: lib.linalg.pinv(a), [TALL], True),
    "linalg.matrix_rank": (lambda lib, a: lib.linalg.matrix_rank(a), [np.outer(V, W)], False),
    "linalg.matrix_power": (lambda lib, a: lib.linalg.matrix_power(a, 3), [A], True),
    "linalg.matrix_power_neg": (lambda lib, a: lib.linalg.matrix_power(a, -2), [A], True),
    "linalg.matrix_power_0": (lambda lib, a: lib.linalg.matrix_power(a, 0), [A], False),
    "linalg.matrix_exp": (lambda lib, a: lib.linalg.matrix_exp(a), [AB * 0.5], True),
    "linalg.cross": (lambda lib, a, b: lib.linalg.cross(a, b), [A, B[:, [0, 1, 0]]], True),
    "linalg.multi_dot": (lambda lib, v, a, b: lib.linalg.multi_dot([v, a, b]), [V, A, B], True),
    "linalg.vecdot": (lambda lib, a, b: lib.linalg.vecdot(a, b, dim=0), [A, B[:, [0, 1, 0]]], True),
    "linalg.diagonal": (lambda lib, a: lib.linalg.diagonal(a, offset=-1, dim1=1, dim2=2), [AB], True),
    "linalg.lu_factor": (lambda lib, a: tuple(lib.linalg.lu_factor(a)), [AB - 3 * np.eye(3)], True),
    "linalg.lu": (lambda lib, a: tuple(lib.linalg.lu(a)), [AB - 3 * np.eye(3)], True),
    "linalg.lu_wide": (lambda lib, a: tuple(lib.linalg.lu(a))[::2], [WIDE], False),
    "linalg.lu_solve": (lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b), [A - 3 * np.eye(3), B],
                        True),
    "linalg.lu_solve_adjoint": (lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, adjoint=True),
                                [A, B], True),
    "linalg.tensorinv": (lambda lib, a: lib.linalg.tensorinv(a.reshape(2, 2, 4), ind=2),
                         [np.eye(4) * 2 + R.standard_normal((4, 4)) * 0.3], True),
    "linalg.tensorsolve": (lambda lib, a, b: lib.linalg.tensorsolve(a.reshape(2, 3, 6), b),
                           [np.eye(6) * 2 + R.standard_normal((6, 6)) * 0.3, R.standard_normal((2, 3))], True),
    "linalg.cond": (lambda lib, a: lib.linalg.cond(a), [A], True),
    "linalg.cond_fro": (lambda lib, a: lib.linalg.cond(a, "fro"), [A], False),  # PyTorch 2.13's backward fails here
    "linalg.vander": (lambda lib, v: lib.linalg.vander(v, N=4), [V], True),
    # -- torch's matrix functions --
    "det": (lambda lib, a: lib.det(a), [A], True),
    "det_method": (lambda lib, a: a.det(), [A], True),
    "inverse": (lambda lib, a: a.inverse(), [A], True),
    "logdet": (lambda lib, a: lib.logdet(a), [A], True),
    "logdet_negative": (lambda lib, a: lib.logdet(-a), [np.diag([1.0, 2.0, 3.0])], False),
    "slogdet": (lambda lib, a: tuple(a.slogdet()), [A], True),
    "pinverse": (lambda lib, a: lib.pinverse(a), [WIDE], True),
    "cholesky": (lambda lib, a: lib.cholesky(sym(lib, a), True), [SPD], True),
    "cholesky_solve": (lambda lib, b, a: lib.cholesky_solve(b, lib.linalg.cholesky(sym(lib, a))), [B, SPD], True),
    "cholesky_inverse": (lambda lib, a: lib.cholesky_inverse(lib.linalg.cholesky(sym(lib, a))), [SPD], True),
    "qr": (lambda lib, a: tuple(lib.qr(a)), [TALL], True),
    "svd": (lambda lib, a: (lambda u, s, v: (u * u, s, v * v))(*lib.svd(a)), [TALL], True),
    "lu_solve": (lambda lib, b, a: lib.lu_solve(b, *lib.linalg.lu_factor(a)), [B, A], True),
    "triangular_solve": (lambda lib, b, a: tuple(lib.triangular_solve(b, a, transpose=True)), [B, A], True),
    "matrix_power": (lambda lib, a: a.matrix_power(2), [A], True),
    "matrix_exp": (lambda lib, a: a.matrix_exp(), [A * 0.3], True),
    "cross": (lambda lib, a, b: lib.cross(a, b, dim=1), [A, B[:, [0, 1, 0]]], True),
    "cdist": (lambda lib, a, b: lib.cdist(a, b), [TALL, A], True),
    "cdist_p1": (lambda lib, a, b: lib.cdist(a, b, p=1), [TALL, A], True),
    "dist": (lambda lib, a, b: lib.dist(a, b, 3), [A, A.T], True),
    "pdist": (lambda lib, a: lib.pdist(a), [TALL], True),
    "cov": (lambda lib, a: lib.cov(a), [X], True),
    "cov_weights": (lambda lib, a: lib.cov(a, correction=0, fweights=lib.tensor([1, 2, 1, 3, 1]),
                                           aweights=lib.tensor([0.5, 1, 2, 1, 1], dtype=a.dtype)), [X], True),
    "corrcoef": (lambda lib, a: a.corrcoef(), [X], True),
    "renorm": (lambda lib, a: a.renorm(2, 0, 3.0), [A], True),
    "frobenius_norm": (lambda lib, a: lib.frobenius_norm(a, (0, 1)), [A], True),
    "nuclear_norm": (lambda lib, a: lib.nuclear_norm(a), [A], True),
    "vander": (lambda lib, v: lib.vander(v), [V], False),  # PyTorch 2.13's backward fails here: see test_gradients
    "vander_increasing_int": (lambda lib, v: lib.vander(v, 4, increasing=True), [np.array([1, 2, 3])], False),
    # -- scans --
    "cumprod": (lambda lib, a: a.cumprod(1), [A], True),
    "cumprod_zero": (lambda lib, a: lib.cumprod(a, 0), [np.array([2.0, 0.0, 3.0, 0.5])], True),
    "cumprod_int": (lambda lib, a: lib.cumprod(a, 0), [np.array([2, 3, 4], dtype=np.int32)], False),
    "cummax": (lambda lib, a: tuple(a.cummax(0)), [A], True),
    "cummin": (lambda lib, a: tuple(lib.cummin(a, 1)), [A], True),
    "cummax_ties": (lambda lib, a: tuple(lib.cummax(a, 0)), [np.array([1, 3, 3, 2, 3])], False),
    "logcumsumexp": (lambda lib, a: a.logcumsumexp(1), [A * 30], True),
    "diff": (lambda lib, a: lib.diff(a, n=2, dim=0), [TALL], True),
    "diff_prepend": (lambda lib, a, b: a.diff(dim=1, prepend=b, append=b), [A, V[:, None]], True),
    "diff_bool": (lambda lib, a: lib.diff(a > 3), [A], False),
    "trapezoid": (lambda lib, a, x: lib.trapezoid(a, x), [A, V], True),
    "trapz_dx": (lambda lib, a: lib.trapz(a, dx=0.5, dim=0), [A], True),
    "cumulative_trapezoid": (lambda lib, a: lib.cumulative_trapezoid(a, dim=0), [TALL], True),
    # -- reductions and order statistics --
    "nansum": (lambda lib, a: lib.nansum(a, 1), [np.array([[1.0, np.nan], [2.0, 3.0]])], True),
    "nanmean": (lambda lib, a: a.nanmean(dim=0, keepdim=True), [np.array([[1.0, np.nan], [2.0, 3.0]])], True),
    "median": (lambda lib, a: a.median(), [A], True),
    "median_dim": (lambda lib, a: tuple(lib.median(a, 1, keepdim=True)), [A], True),
    "median_int": (lambda lib, a: tuple(a.median(0)), [np.array([[3, 1], [1, 2], [2, 2]])], False),
    "median_nan": (lambda lib, a: tuple(a.median(0)), [np.array([1.0, np.nan, 2.0])], False),
    "nanmedian": (lambda lib, a: tuple(lib.nanmedian(a, 0)), [np.array([[1.0, np.nan], [2.0, 3.0], [5.0, 4]])], True),
    "mode": (lambda lib, a: tuple(lib.mode(a)), [np.array([[2, 1, 1, 2, 3], [0, 0, 1, 1, 1]])], False),
    "kthvalue": (lambda lib, a: tuple(a.kthvalue(2, 0)), [A], True),
    "quantile": (lambda lib, a: lib.quantile(a, 0.3, dim=1), [A], True),
    "quantile_tensor_q": (lambda lib, a: a.quantile(lib.tensor([0.25, 0.5], dtype=a.dtype), dim=0, keepdim=True),
                          [A], True),
    **{f"quantile_{m}": ((lambda m: lambda lib, a: lib.quantile(a, 0.4, interpolation=m))(m), [A], True)
       for m in ("lower", "higher", "nearest", "midpoint")},
    "nanquantile": (lambda lib, a: lib.nanquantile(a, 0.5, dim=1), [np.array([[1.0, np.nan, 3], [2.0, 3.0, 7]])],
                    True),
    "aminmax": (lambda lib, a: tuple(lib.aminmax(a, dim=1)), [A], True),
    "msort": (lambda lib, a: lib.msort(a), [A], True),
    "std_mean": (lambda lib, a: tuple(lib.std_mean(a, dim=1)), [A], True),
    "var_mean": (lambda lib, a: tuple(lib.var_mean(a, 0, correction=0, keepdim=True)), [A], True),
}


def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


def _run(lib, fn, arrays, grad):
    dtype = lib.float64
    ts = [lib.tensor(a, dtype=dtype, requires_grad=grad) if a.dtype.kind == "f" else lib.tensor(a) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = _outputs(fn(lib, *ts))
    return ts, outs


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.numpy(force=True)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    fn, arrays, grad = CASES[name]
    mts, mouts = _run(mt, fn, arrays, grad)
    tts, touts = _run(torch, fn, arrays, grad)
    assert len(mouts) == len(touts), name
    for m, t in zip(mouts, touts):
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"{name}: {m.dtype} vs {t.dtype}"
        assert tuple(m.shape) == tuple(t.shape), f"{name}: shape {tuple(m.shape)} vs {tuple(t.shape)}"
        np.testing.assert_allclose(_np(m), _np(t), rtol=1e-7, atol=1e-9, err_msg=name)
    if not grad:
        return
    rng = np.random.default_rng(0)
    pairs = [(m, t) for m, t in zip(mouts, touts) if t.requires_grad and m.requires_grad]
    weights = [rng.standard_normal(tuple(t.shape)) for _, t in pairs]
    torch.autograd.backward([t for _, t in pairs], [torch.tensor(w) for w in weights])
    mt.autograd.backward([m for m, _ in pairs], [mt.tensor(w) for w in weights])
    for i, (m, t) in enumerate(zip(mts, tts)):
        if m.grad is None and t.grad is not None:  # (an input the result doesn't read: PyTorch may give zeros)
            assert not np.any(_np(t.grad)), f"{name}: input {i} got no gradient, PyTorch's is not 0"
            continue
        if t.grad is None:
            assert m.grad is None or not np.any(_np(m.grad)), f"{name}: input {i} got a gradient PyTorch doesn't give"
            continue
        np.testing.assert_allclose(_np(m.grad), _np(t.grad), rtol=1e-6, atol=1e-8, err_msg=f"{name}: grad of {i}")


ERRORS = {
    "inv_singular": (lambda lib: lib.linalg.inv(lib.tensor(SING)), RuntimeError),
    "solve_singular": (lambda lib: lib.linalg.solve(lib.tensor(SING), lib.ones(2, 1, dtype=lib.float64)), RuntimeError),
    "cholesky_not_pd": (lambda lib: lib.linalg.cholesky(-lib.eye(2, dtype=lib.float64)), RuntimeError),
    "inv_ex_check": (lambda lib: lib.linalg.inv_ex(lib.tensor(SING), check_errors=True), RuntimeError),
    "det_non_square": (lambda lib: lib.linalg.det(lib.tensor(TALL)), RuntimeError),
    "inv_1d": (lambda lib: lib.linalg.inv(lib.tensor(V)), RuntimeError),
    "det_int": (lambda lib: lib.linalg.det(lib.eye(2, dtype=lib.int64)), RuntimeError),
    "solve_shapes": (lambda lib: lib.linalg.solve(lib.tensor(A), lib.tensor(TALL)), RuntimeError),
    "solve_dtypes": (lambda lib: lib.linalg.solve(lib.tensor(A), lib.tensor(B, dtype=lib.float32)), RuntimeError),
    "qr_mode": (lambda lib: lib.linalg.qr(lib.tensor(A), mode="thin"), RuntimeError),
    "eigh_uplo": (lambda lib: lib.linalg.eigh(lib.tensor(SPD), UPLO="X"), RuntimeError),
    "addmm_shapes": (lambda lib: lib.addmm(lib.tensor(A), lib.tensor(TALL), lib.tensor(B)), RuntimeError),
    "addmm_1d": (lambda lib: lib.addmm(lib.tensor(V), lib.tensor(V), lib.tensor(A)), RuntimeError),
    "mv_2d": (lambda lib: lib.mv(lib.tensor(A), lib.tensor(A)), RuntimeError),
    "trace_3d": (lambda lib: lib.trace(lib.tensor(AB)), RuntimeError),
    "tensordot_mismatch": (lambda lib: lib.tensordot(lib.tensor(A), lib.tensor(TALL), dims=([0], [0])), RuntimeError),
    "cross_size": (lambda lib: lib.linalg.cross(lib.tensor(WIDE), lib.tensor(WIDE)), RuntimeError),
    "multi_dot_one": (lambda lib: lib.linalg.multi_dot([lib.tensor(A)]), RuntimeError),
    "matrix_norm_1d": (lambda lib: lib.linalg.matrix_norm(lib.tensor(V)), RuntimeError),
    "vector_norm_int": (lambda lib: lib.linalg.vector_norm(lib.tensor([1, 2])), RuntimeError),
    "kthvalue_range": (lambda lib: lib.kthvalue(lib.tensor(V), 4), RuntimeError),
    "quantile_q_range": (lambda lib: lib.quantile(lib.tensor(V), 1.5), RuntimeError),
    "quantile_int": (lambda lib: lib.quantile(lib.tensor([1, 2]), 0.5), RuntimeError),
    "quantile_interp": (lambda lib: lib.quantile(lib.tensor(V), 0.5, interpolation="cubic"), RuntimeError),
    "diff_0d": (lambda lib: lib.diff(lib.tensor(1.0)), RuntimeError),
    "sum_dim_and_axis": (lambda lib: lib.tensor(A).sum(dim=0, axis=1), TypeError),
    "pdist_3d": (lambda lib: lib.pdist(lib.tensor(AB)), RuntimeError),
    "cov_3d": (lambda lib: lib.cov(lib.tensor(AB)), RuntimeError),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    fn, kind = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(kind):
            fn(torch)
        with pytest.raises(kind):
            fn(mt)


def test_linalg_errors_are_linalgerror():
    with pytest.raises(mt.linalg.LinAlgError, match="linalg.inv"):
        mt.linalg.inv(mt.tensor(SING))
    with pytest.raises(mt.linalg.LinAlgError, match="positive-definite"):
        mt.linalg.cholesky(-mt.eye(2, dtype=mt.float64))


def test_det_gradient_at_a_singular_matrix_is_the_adjugate():
    """PyTorch 2.13 gives 0 here; the adjugate, [[4, -2], [-2, 1]], is what finite differences give."""
    a = mt.tensor(SING, requires_grad=True)
    assert mt.autograd.gradcheck(mt.linalg.det, (a,))
    mt.linalg.det(a).backward()
    np.testing.assert_allclose(a.grad.numpy(force=True), [[4.0, -2.0], [-2.0, 1.0]])


@pytest.mark.parametrize("fn", [lambda a: mt.linalg.cond(a, "fro"), lambda a: mt.vander(a[0]),
                                lambda a: mt.linalg.qr(a, mode="r").R, lambda a: mt.linalg.cond(a, -2)])
def test_gradients_where_pytorch_has_none(fn):
    assert mt.autograd.gradcheck(fn, (mt.tensor(A, requires_grad=True),))


def test_in_place_blas_variants_write_into_the_tensor():
    for name, args in [("addmm_", (A, B)), ("addmv_", (A, W)), ("addr_", (V, W)), ("baddbmm_", (AB, AB))]:
        base = {"addmm_": B.copy(), "addmv_": V.copy(), "addr_": A.copy(), "baddbmm_": AB.copy()}[name]
        m, t = mt.tensor(base.copy()), torch.tensor(base.copy())
        getattr(m, name)(*[mt.tensor(a) for a in args], beta=0.5, alpha=2)
        getattr(t, name)(*[torch.tensor(a) for a in args], beta=0.5, alpha=2)
        np.testing.assert_allclose(m.numpy(), t.numpy(), err_msg=name)


def test_torch_linalg_is_importable_through_run():
    from minitensor.run import MODULES

    assert MODULES["torch.linalg"] == "minitensor.linalg"


NORM_INPUTS = {"a zero": [0.0, 2.0, 3.0], "no zero": [2.0, -3.0], "all zeros": [0.0, 0.0], "nan": [float("nan"), 2.0],
               "tiny": [1e-30, 2.0], "matrix with a zero": [[0.0, 2.0], [3.0, 4.0]],
               "matrix": [[1.0, -2.0], [-3.0, 4.0]]}


@pytest.mark.parametrize("p", [-1.0, -2.0, -0.5, float("-inf"), float("inf"), 0.5, 3.0])
@pytest.mark.parametrize("name", NORM_INPUTS)
def test_vector_norms_of_every_order_match_pytorch_with_zeros_and_nan(name, p):
    """Negative and -inf orders: a zero in the slice makes |0|^p = inf, so the norm is 0 with gradient 0, and
    -inf is the smallest |x| (both were wrong: the zeros were skipped, and torch.norm's -inf gave 0)."""
    results = []
    for lib in (mt, torch):
        x = lib.tensor(NORM_INPUTS[name], dtype=lib.float64, requires_grad=True)
        whole, by_dim = lib.linalg.vector_norm(x, ord=p), lib.norm(x, p=p, dim=0)
        kept = lib.linalg.vector_norm(x, ord=p, dim=0, keepdim=True)
        weight = lib.arange(1.0, by_dim.numel() + 1, dtype=lib.float64).reshape(by_dim.shape)
        (whole + (by_dim * weight).sum() + 3 * kept.sum()).backward()
        results.append([t.detach().numpy() for t in (whole, by_dim, kept, x.grad)])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0, equal_nan=True)


@pytest.mark.parametrize("p", [-1.0, float("-inf")])
def test_a_negative_order_norm_of_nothing_is_an_error_as_in_pytorch(p):
    for lib in (mt, torch):
        with pytest.raises(RuntimeError, match="norm"):
            lib.linalg.vector_norm(lib.zeros(0), ord=p)


@pytest.mark.parametrize("kwargs", [{}, {"dim": [1, 2]}, {"dim": (2, 0), "keepdim": True}])
def test_torch_norm_nuc_over_two_dims_matches_pytorch(kwargs):
    """torch.norm(x, p='nuc') is the nuclear matrix norm over two dims (it raised a TypeError)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 4)) if not kwargs else rng.standard_normal((2, 3, 4))
    results = []
    for lib in (mt, torch):
        a = lib.tensor(x, requires_grad=True)
        out = lib.norm(a, p="nuc", **kwargs)
        (out * lib.arange(1.0, out.numel() + 1, dtype=lib.float64).reshape(out.shape)).sum().backward()
        results.append((out.detach().numpy(), a.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape, dim", [((2, 3, 4), None), ((3,), None), ((2, 3, 4), [0])])
def test_torch_norm_nuc_needs_two_dims_as_in_pytorch(shape, dim):
    for lib in (mt, torch):
        with pytest.raises(RuntimeError, match="linalg.matrix_norm"):
            lib.norm(lib.ones(*shape), p="nuc", dim=dim)
