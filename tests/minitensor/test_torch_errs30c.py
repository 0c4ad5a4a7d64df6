"""Issue 30 point 2 (h-errs30c): the last open error differences of torch / Tensor / F rows, beyond the calls
scripts/api_errors.py's sweep makes (tests/scripts/test_torch_api_errors.py keeps those fixed): the same
exception class as PyTorch, or the same result (shape, dtype, values), and nothing the call was given changed
when it raises."""
import math

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

INF, NAN = math.inf, math.nan


def r(L, *shape):
    return L.arange(math.prod(shape), dtype=L.float32).reshape(*shape) / 10


def t(L, *values, dtype=None):
    return L.tensor(list(values), dtype=None if dtype is None else getattr(L, dtype))


def ones(L, dtype, *shape):
    return L.ones(*shape, dtype=getattr(L, dtype))


def F(L):
    return L.nn.functional


B23 = [[True, False, True], [False, True, True]]
I23 = [[1, 2, 3], [4, 5, 6]]
X23 = [[0.25, 0.5, 0.75], [1.0, 1.5, 2.0]]

CASES = {
    # cumsum_ / cumprod_: bools have no kernel; the dim is checked first; dtype= must be the tensor's own
    "cumsum_bool": lambda L: ones(L, "bool", 2, 3).cumsum_(0),
    "cumprod_bool": lambda L: ones(L, "bool", 2, 3).cumprod_(1),
    "cumsum_bool_dim": lambda L: ones(L, "bool", 2, 3).cumsum_(5),
    "cumsum_int32": lambda L: ones(L, "int32", 2, 3).cumsum_(0),
    "cumprod_uint8": lambda L: ones(L, "uint8", 2, 3).cumprod_(0),
    "cumsum_dtype_other": lambda L: ones(L, "float32", 2, 3).cumsum_(0, dtype=L.bool),
    "cumsum_dtype_own": lambda L: ones(L, "float32", 2, 3).cumsum_(0, dtype=L.float32),
    # Tensor.repeat_interleave wants repeats; the function's counts-alone form stays
    "repeat_interleave_method_none": lambda L: t(L, 1, 2, 3).repeat_interleave(),
    "repeat_interleave_method_output_size": lambda L: t(L, 1, 2).repeat_interleave(output_size=3),
    "repeat_interleave_counts": lambda L: L.repeat_interleave(t(L, 2, 0, 1)),
    # index_copy: the shapes first, IndexError
    "index_copy_5d": lambda L: L.index_copy(r(L, 1, 2, 1, 2, 1), 0, t(L, 0, 1), r(L, 2, 3)),
    "index_copy_more_dims": lambda L: L.index_copy(r(L, 2, 3), 0, t(L, 0, 1), r(L, 2, 3, 1)),
    "index_copy_dims_before_dtype": lambda L: L.index_copy(r(L, 2, 3), 0, t(L, 0, 1), ones(L, "int64", 2, 3, 1)),
    "index_copy_count": lambda L: L.index_copy(r(L, 2, 3), 0, t(L, 0, 1), r(L, 3, 3)),
    "index_copy_slice": lambda L: L.index_copy(r(L, 2, 3), 0, t(L, 0, 1), r(L, 2, 4)),
    "index_copy_0d_source": lambda L: L.index_copy(r(L, 3), 0, t(L, 0, 1), L.tensor(1.0)),
    "index_copy_0d_source_ok": lambda L: L.index_copy(r(L, 3), 0, t(L, 1), L.tensor(1.0)),
    "index_copy_matrix_index": lambda L: L.index_copy(r(L, 2, 3), 0, L.tensor([[0, 1]]), r(L, 2, 3, 1)),
    "index_copy_": lambda L: r(L, 1, 2, 1, 2, 1).index_copy_(0, t(L, 0, 1), r(L, 2, 3)),
    # embedding_bag: shapes (ValueError), mode, then the indices' dtype and range (RuntimeError)
    "embedding_bag_0d": lambda L: F(L).embedding_bag(L.tensor(1), r(L, 4, 3)),
    "embedding_bag_3d": lambda L: F(L).embedding_bag(L.zeros(1, 2, 1, dtype=L.int64), r(L, 4, 3)),
    "embedding_bag_out_of_range": lambda L: F(L).embedding_bag(t(L, 0, 5), r(L, 4, 3), t(L, 0)),
    "embedding_bag_negative": lambda L: F(L).embedding_bag(L.tensor([[0, -1]]), r(L, 4, 3)),
    "embedding_bag_float": lambda L: F(L).embedding_bag(L.tensor([[0.0, 1.0]]), r(L, 4, 3)),
    "embedding_bag_bool_2d": lambda L: F(L).embedding_bag(L.tensor([[True, False]]), r(L, 4, 3)),
    "embedding_bag_uint8": lambda L: F(L).embedding_bag(t(L, 1, 2, dtype="uint8"), r(L, 4, 3), t(L, 0)),
    "embedding_bag_uint8_2d": lambda L: F(L).embedding_bag(L.tensor([[1, 2]], dtype=L.uint8), r(L, 4, 3)),
    "embedding_bag_bool_1d": lambda L: F(L).embedding_bag(t(L, True, False), r(L, 4, 3), t(L, 0)),
    "embedding_bag_int32": lambda L: F(L).embedding_bag(L.tensor([[1, 2]], dtype=L.int32), r(L, 4, 3)),
    "embedding_bag_float_offsets": lambda L: F(L).embedding_bag(t(L, 1, 2), r(L, 4, 3), t(L, 0.0)),
    "embedding_bag_2d_offsets": lambda L: F(L).embedding_bag(t(L, 1, 2), r(L, 4, 3), L.tensor([[0]])),
    "embedding_bag_1d_weight": lambda L: F(L).embedding_bag(t(L, 1, 2), r(L, 4), t(L, 0)),
    "embedding_bag_mode_after_shape": lambda L: F(L).embedding_bag(L.tensor(1), r(L, 4, 3), mode="x"),
    "embedding_bag_module_int": lambda L: L.nn.EmbeddingBag(2, 3)(L.tensor(I23)),
    # module_load: self.copy_(other)'s broadcasting and errors, into self's shape and dtype
    "module_load_broadcast": lambda L: r(L, 2, 3).module_load(r(L, 3)),
    "module_load_no_broadcast": lambda L: r(L, 2, 3).module_load(r(L, 4, 5)),
    "module_load_0d": lambda L: L.tensor(0.5).module_load(r(L, 2, 3)),
    "module_load_dtype": lambda L: r(L, 2, 3).module_load(L.ones(2, 3, dtype=L.float64)),
    "module_load_assign": lambda L: r(L, 2, 3).module_load(r(L, 4, 5), assign=True),
    # hinge_embedding_loss: an integer input computes in its dtype (the margin truncated)
    "hinge_int": lambda L: L.hinge_embedding_loss(L.tensor(I23), L.tensor(X23), 2.5, 0),
    "hinge_int_negative": lambda L: L.hinge_embedding_loss(L.tensor(I23), -L.ones(2, 3), 2.5, 0),
    "hinge_int32_sum": lambda L: L.hinge_embedding_loss(L.tensor(I23, dtype=L.int32), -L.ones(2, 3), 2.5, 2),
    "hinge_uint8_wraps": lambda L: L.hinge_embedding_loss(L.tensor(I23, dtype=L.uint8), -L.ones(2, 3), 2.5, 0),
    "hinge_F_int_mean": lambda L: F(L).hinge_embedding_loss(L.tensor(I23), L.tensor(X23)),
    "hinge_F_int_sum": lambda L: F(L).hinge_embedding_loss(L.tensor(I23), L.tensor(X23), margin=2, reduction="sum"),
    "hinge_float_int_target": lambda L: F(L).hinge_embedding_loss(L.tensor(X23), L.tensor(I23)),
    "hinge_bool": lambda L: F(L).hinge_embedding_loss(L.tensor(B23), L.tensor(X23)),
    # igamma / igammac: PyTorch's edge values
    "igamma_bool": lambda L: L.igamma(L.tensor(B23), L.tensor(X23)),
    "igammac_bool": lambda L: L.igammac(L.tensor(B23), L.tensor(X23)),
    "igamma_edges": lambda L: L.igamma(t(L, 0., 0., 1., INF, INF, INF, NAN, 0., NAN, INF, 2., -1.),
                                       t(L, 0., 1., 0., INF, 1., 0., 0., NAN, INF, NAN, INF, 1.)),
    "igammac_edges": lambda L: L.special.gammaincc(t(L, 0., 0., 1., INF, INF, INF, NAN, 0., NAN, INF, 2., -1.),
                                                   t(L, 0., 1., 0., INF, 1., 0., 0., NAN, INF, NAN, INF, 1.)),
    # nll_loss / cross_entropy: PyTorch's nll_loss_nd checks
    "nll_0d": lambda L: F(L).nll_loss(L.tensor(0.5), L.tensor(0)),
    "nll_5d": lambda L: F(L).nll_loss(r(L, 1, 2, 1, 2, 1), r(L, 2, 3)),
    "ce_no_broadcast": lambda L: F(L).cross_entropy(r(L, 2, 3), r(L, 4, 5)),
    "ce_float_target_batch": lambda L: F(L).cross_entropy(r(L, 2, 3), r(L, 2)),
    "nll_target_rest": lambda L: F(L).nll_loss(r(L, 2, 3, 4), L.zeros(2, 5, dtype=L.int64)),
    "ce_target_rest_4d": lambda L: F(L).cross_entropy(r(L, 2, 3, 4, 5), L.zeros(2, 5, 4, dtype=L.int64)),
    "nll_1d_two_targets": lambda L: F(L).nll_loss(r(L, 3), t(L, 1, 2)),
    "ce_1d_0d_target": lambda L: F(L).cross_entropy(r(L, 3), L.tensor(1)),
    "ce_2d_0d_target": lambda L: F(L).cross_entropy(r(L, 2, 3), L.tensor(1)),
    "nll_int32_target": lambda L: F(L).nll_loss(r(L, 2, 3), t(L, 0, 1, dtype="int32")),
    "ce_bool_target": lambda L: F(L).cross_entropy(r(L, 2, 3), t(L, True, False)),
    "ce_int_same_shape": lambda L: F(L).cross_entropy(t(L, 1, 2), t(L, 0, 1)),
    "nll_int_input": lambda L: F(L).nll_loss(L.zeros(2, 3, dtype=L.int64), t(L, 0, 1)),
    "ce_int_input": lambda L: F(L).cross_entropy(L.zeros(2, 3, dtype=L.int64), t(L, 0, 1)),
    "ce_multi_target": lambda L: F(L).cross_entropy(r(L, 2, 3), L.zeros(2, 1, dtype=L.int64)),
    "ce_probabilities_5d": lambda L: F(L).cross_entropy(r(L, 1, 2, 1, 2, 1), r(L, 1, 2, 1, 2, 1)),
    "ce_uint8_target": lambda L: F(L).cross_entropy(r(L, 2, 3), t(L, 0, 2, dtype="uint8")),
    # smooth_l1_loss: promoted operands; two integer ones have no kernel
    "smooth_l1_bool_float": lambda L: F(L).smooth_l1_loss(L.tensor(B23), L.tensor(X23)),
    "smooth_l1_float_bool_none": lambda L: F(L).smooth_l1_loss(L.tensor(X23), L.tensor(B23), reduction="none"),
    "smooth_l1_bool_double": lambda L: F(L).smooth_l1_loss(L.tensor(B23), L.tensor(X23, dtype=L.float64)),
    "smooth_l1_bool_bool": lambda L: F(L).smooth_l1_loss(L.tensor(B23), L.tensor(B23)),
    "smooth_l1_int_int": lambda L: F(L).smooth_l1_loss(L.tensor(I23), L.tensor(I23), reduction="sum"),
    "smooth_l1_bool_beta0": lambda L: F(L).smooth_l1_loss(L.tensor(B23), L.tensor(X23), beta=0.0),
}


def _run(L, name):
    try:
        return CASES[name](L), None
    except Exception as e:  # noqa: BLE001 - the point: which error each library raises
        return None, e


@pytest.mark.parametrize("name", list(CASES))
def test_same_error_or_result_as_pytorch(name):
    want, terr = _run(torch, name)
    got, merr = _run(mt, name)
    if terr is not None:
        assert merr is not None, f"{name}: PyTorch raises {type(terr).__name__}: {terr}; minitensor returned {got}"
        assert isinstance(merr, type(terr)), f"{name}: minitensor {type(merr).__name__}: {merr}; PyTorch {terr!r}"
        return
    assert merr is None, f"{name}: minitensor raises {merr!r}, PyTorch returns {want}"
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy().astype(np.float64), want.detach().numpy().astype(np.float64),
                               rtol=1e-5, atol=1e-6, equal_nan=True)


def test_refused_calls_change_nothing_and_module_load_leaves_self():
    x = mt.ones(2, 3, dtype=mt.bool)
    with pytest.raises(NotImplementedError, match=r"cumsum_: .*bool"):
        x.cumsum_(0)
    assert x.dtype == mt.bool and x.numpy().all() and x._version == 0
    w = mt.arange(12.0).reshape(4, 3)
    with pytest.raises(RuntimeError, match=r"embedding_bag: index 1 of input takes value 5.*\[0, 4\)"):
        mt.nn.functional.embedding_bag(mt.tensor([0, 5]), w, mt.tensor([0]), max_norm=1.0)
    np.testing.assert_array_equal(w.numpy(), np.arange(12.0).reshape(4, 3))  # (no renorm before the refusal)
    p = mt.zeros(2, 3)
    loaded = p.module_load(mt.tensor([1.0, 2.0, 3.0]))
    assert loaded.shape == (2, 3) and not p.numpy().any() and loaded is not p
    with pytest.raises(TypeError, match=r"repeat_interleave\(\): .*needs repeats.*shape \(3,\)"):
        mt.tensor([1, 2, 3]).repeat_interleave()
    with pytest.raises(IndexError, match=r"index_copy: source \(2-d, shape \(2, 3\)\).*\(5-d"):
        mt.index_copy(mt.zeros(1, 2, 1, 2, 1), 0, mt.tensor([0, 1]), mt.zeros(2, 3))
