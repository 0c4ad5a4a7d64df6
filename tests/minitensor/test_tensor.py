r"""The Tensor's attributes, repr, dtypes, conversions, factories, seeding and selection ops (SPEC 3.1)."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.testing import assert_close


@pytest.fixture
def restore_default_dtype():
    old = mt.get_default_dtype()
    yield
    mt.set_default_dtype(old)


# ---- attributes ---------------------------------------------------------------------------------

def test_data_is_the_numpy_array():
    arr = np.arange(6.0).reshape(2, 3)
    x = mt.from_numpy(arr)
    assert isinstance(x.numpy(force=True), np.ndarray) and x.numpy(force=True) is arr


def test_autograd_attributes_of_leaves_and_results():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None and x.grad is None
    y = x * 2
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "MulBackward"
    c = mt.tensor([1.0])
    assert not c.requires_grad and c.is_leaf
    y.sum().backward()
    assert isinstance(x.grad, mt.Tensor) and x.grad.tolist() == [2.0, 2.0]


def test_shape_size_dim_numel():
    x = mt.zeros(2, 3, 4)
    assert x.shape == (2, 3, 4) and isinstance(x.shape, tuple) and repr(x.shape) == "minitensor.Size([2, 3, 4])"
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.size(-1) == 4 and x.size(dim=0) == 2
    assert x.ndim == 3 and x.dim() == 3 and x.numel() == 24
    assert mt.tensor(5.0).shape == () and mt.tensor(5.0).numel() == 1 and mt.tensor(5.0).dim() == 0
    with pytest.raises(IndexError, match="size: dimension out of range"):
        x.size(3)


def test_dtype_and_device():
    assert mt.tensor([1.0]).dtype == mt.float32 == np.float32
    assert mt.tensor([1]).dtype == mt.int64
    assert mt.tensor([True]).dtype == mt.bool
    assert mt.tensor([1.0], dtype=mt.float64).dtype == mt.float64
    x = mt.ones(2)
    assert x.device == "cpu" and x.device == mt.device("cpu") and str(x.device) == "cpu"
    assert repr(x.device) == "device(type='cpu')" and not x.is_cuda


def test_T_and_mT():
    x = mt.tensor(np.arange(6.0).reshape(2, 3))
    assert_close(x.T, np.arange(6.0).reshape(2, 3).T)
    b = mt.tensor(np.arange(24.0).reshape(2, 3, 4))
    assert b.mT.shape == (2, 4, 3) and b.T.shape == (4, 3, 2)
    assert_close(b.mT, np.swapaxes(b.numpy(force=True), -1, -2))
    v = mt.ones(3)
    assert v.T is v  # a 1-D tensor transposes to itself
    with pytest.raises(RuntimeError, match=r"mT.*at least 2 dims.*\(3,\)"):
        v.mT


def test_item_numpy_tolist_array_len_iter():
    assert mt.tensor([[2.5]]).item() == 2.5 and isinstance(mt.tensor([3]).item(), int)
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x.numpy() is x.numpy(force=True)
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert np.asarray(x) is x.numpy(force=True) and np.asarray(x, dtype=np.float64).dtype == np.float64
    assert len(x) == 2
    rows = list(x)
    assert len(rows) == 2 and rows[1].tolist() == [3.0, 4.0]
    with pytest.raises(TypeError, match="0-d"):
        len(mt.tensor(1.0))
    with pytest.raises(TypeError, match="0-d"):
        iter(mt.tensor(1.0))
    with pytest.raises(RuntimeError, match=r"requires grad.*detach\(\)\.numpy\(\)"):
        mt.ones(2, requires_grad=True).numpy()


def test_iterating_keeps_the_graph():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    sum(r * r for r in x).backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_python_conversions():
    assert float(mt.tensor([2.5])) == 2.5 and int(mt.tensor(3)) == 3
    assert bool(mt.tensor([1])) and not bool(mt.tensor(0.0))
    assert [10, 20, 30][mt.tensor(1)] == 20  # __index__


# ---- repr ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("make, text", [
    (lambda: mt.tensor([[1.0, 2.5], [3.0, 4.0]]), "tensor([[1.0000, 2.5000],\n        [3.0000, 4.0000]])"),
    (lambda: mt.tensor([1.0, 2.0]), "tensor([1., 2.])"),
    (lambda: mt.tensor([1, 2]), "tensor([1, 2])"),
    (lambda: mt.tensor(3.5), "tensor(3.5000)"),
    (lambda: mt.tensor([True, False]), "tensor([ True, False])"),
    (lambda: mt.tensor([1.0, 2.0], dtype=mt.float64), "tensor([1., 2.], dtype=minitensor.float64)"),
    (lambda: mt.tensor([1, 2], dtype=mt.int32), "tensor([1, 2], dtype=minitensor.int32)"),
    (lambda: mt.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (lambda: mt.tensor([1.0, 2.0], requires_grad=True) * 2, "tensor([2., 4.], grad_fn=<MulBackward0>)"),
    (lambda: mt.tensor([1 / 3, 2.0]), "tensor([0.3333, 2.0000])"),
    (lambda: mt.tensor([]), "tensor([])"),
    (lambda: mt.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: mt.zeros(0, dtype=mt.int64), "tensor([], dtype=minitensor.int64)"),
], ids=lambda v: v if isinstance(v, str) and len(v) < 30 else None)
def test_repr_like_pytorch(make, text):
    assert repr(make()) == text


def test_repr_of_float64_default(restore_default_dtype):
    mt.set_default_dtype(mt.float64)
    assert repr(mt.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(mt.tensor([1.0], dtype=mt.float32)) == "tensor([1.], dtype=minitensor.float32)"


# ---- dtypes -------------------------------------------------------------------------------------

def test_dtype_names_are_numpy_dtypes_under_pytorch_names():
    assert mt.float32 == np.dtype("float32") and mt.float64 == np.dtype("float64")
    assert mt.int64 == np.dtype("int64") and mt.int32 == np.dtype("int32") and mt.bool == np.dtype("bool")
    assert mt.float == mt.float32 and mt.double == mt.float64 and mt.long == mt.int64 and mt.int == mt.int32


def test_default_dtype_is_float32_and_can_be_changed(restore_default_dtype):
    assert mt.get_default_dtype() == mt.float32
    mt.set_default_dtype(mt.float64)
    assert mt.get_default_dtype() == mt.float64
    assert mt.tensor([1.0]).dtype == mt.float64 and mt.zeros(2).dtype == mt.float64
    assert mt.randn(2).dtype == mt.float64 and mt.arange(0.0, 1.0, 0.5).dtype == mt.float64
    assert (mt.tensor([1, 2]) * 0.5).dtype == mt.float64
    assert mt.tensor([1]).dtype == mt.int64  # integers are not affected
    mt.set_default_dtype(mt.float32)
    assert mt.tensor([1.0]).dtype == mt.float32


def test_explicit_dtype_wins_over_the_data():
    assert mt.tensor([1, 2], dtype=mt.float32).dtype == mt.float32
    assert mt.tensor([1.7, -1.7], dtype=mt.int64).tolist() == [1, -1]
    assert mt.tensor(np.array([1.0], dtype=np.float64)).dtype == mt.float64  # an array keeps its dtype
    assert mt.tensor([1.0], dtype="float64").dtype == mt.float64


# ---- conversions --------------------------------------------------------------------------------

@pytest.mark.parametrize("method, dtype", [("float", mt.float32), ("double", mt.float64), ("long", mt.int64),
                                           ("int", mt.int32), ("bool", mt.bool)])
def test_conversion_methods(method, dtype):
    x = mt.tensor([1.5, -2.7, 0.0])
    y = getattr(x, method)()
    assert y.dtype == dtype
    assert y.tolist() == np.array([1.5, -2.7, 0.0], dtype=np.float32).astype(dtype).tolist()
    assert x.to(dtype).dtype == dtype


def test_to_accepts_dtype_device_and_tensor():
    x = mt.ones(2)
    assert x.to(mt.float32) is x  # nothing to do, no copy
    assert x.to("cpu", mt.float64).dtype == mt.float64
    assert x.to(device="cpu", dtype=mt.float64).dtype == mt.float64
    assert x.to(mt.zeros(1, dtype=mt.int64)).dtype == mt.int64
    assert x.to(mt.float32, copy=True) is not x


def test_to_float64_is_differentiable_and_the_grad_keeps_the_input_dtype():
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    y = x.to(mt.float64)
    assert y.requires_grad and y.grad_fn is not None and y.dtype == mt.float64
    (y * y).sum().backward()
    assert x.grad.dtype == mt.float32 and x.grad.tolist() == [2.0, 4.0]
    z = mt.tensor([0.5], dtype=mt.float64, requires_grad=True)
    (z.float() * 4).sum().backward()
    assert z.grad.dtype == mt.float64 and z.grad.tolist() == [4.0]


def test_conversion_to_an_integer_dtype_cuts_the_gradient():
    x = mt.tensor([1.5], requires_grad=True)
    assert not x.long().requires_grad


# ---- factories ----------------------------------------------------------------------------------

@pytest.mark.parametrize("make, shape, dtype, values", [
    (lambda **kw: mt.zeros(2, 3, **kw), (2, 3), mt.float32, 0.0),
    (lambda **kw: mt.zeros((2, 3), **kw), (2, 3), mt.float32, 0.0),
    (lambda **kw: mt.ones(4, **kw), (4,), mt.float32, 1.0),
    (lambda **kw: mt.full((2,), 7.5, **kw), (2,), mt.float32, 7.5),
    (lambda **kw: mt.empty(3, 1, **kw), (3, 1), mt.float32, None),
    (lambda **kw: mt.zeros_like(mt.ones(2, dtype=mt.float64), **kw), (2,), mt.float64, 0.0),
    (lambda **kw: mt.ones_like(mt.ones(2, 2), **kw), (2, 2), mt.float32, 1.0),
    (lambda **kw: mt.full_like(mt.ones(3), -1.0, **kw), (3,), mt.float32, -1.0),
    (lambda **kw: mt.eye(3, **kw), (3, 3), mt.float32, None),
    (lambda **kw: mt.linspace(0, 1, 5, **kw), (5,), mt.float32, None),
    (lambda **kw: mt.arange(0.0, 1.0, 0.25, **kw), (4,), mt.float32, None),
    (lambda **kw: mt.rand(2, 2, **kw), (2, 2), mt.float32, None),
    (lambda **kw: mt.randn(3, **kw), (3,), mt.float32, None),
], ids=["zeros", "zeros_tuple", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "eye",
        "linspace", "arange_float", "rand", "randn"])
def test_float_factories(make, shape, dtype, values):
    x = make()
    assert x.shape == shape and x.dtype == dtype and x.is_leaf and not x.requires_grad
    if values is not None:
        assert (x.numpy(force=True) == values).all()
    assert make(device="cpu").shape == shape
    assert make(requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="device 'cuda' is not available"):
        make(device="cuda")


def test_factory_values():
    assert mt.eye(2, 3).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert_close(mt.linspace(0, 1, 5), [0.0, 0.25, 0.5, 0.75, 1.0])
    assert mt.arange(5).tolist() == [0, 1, 2, 3, 4] and mt.arange(5).dtype == mt.int64
    assert mt.arange(2, 8, 3).tolist() == [2, 5]
    assert_close(mt.arange(0, 1, 0.25), [0.0, 0.25, 0.5, 0.75])
    assert mt.full((2,), 3).dtype == mt.int64 and mt.full((2,), True).dtype == mt.bool
    r = mt.rand(1000)
    assert (r.numpy(force=True) >= 0).all() and (r.numpy(force=True) < 1).all()
    i = mt.randint(2, 5, (1000,))
    assert i.dtype == mt.int64 and set(i.tolist()) == {2, 3, 4}
    assert set(mt.randint(3, (50,)).tolist()) <= {0, 1, 2}


def test_tensor_Tensor_from_numpy():
    arr = np.array([1.0, 2.0])
    t = mt.tensor(arr)
    arr[0] = 9.0
    assert t.tolist() == [1.0, 2.0]  # tensor() copies
    shared = mt.from_numpy(arr)
    arr[1] = 7.0
    assert shared.tolist() == [9.0, 7.0] and shared.dtype == mt.float64  # from_numpy shares and keeps dtype
    assert mt.Tensor([1, 2]).dtype == mt.float32  # like torch.Tensor: the default float dtype
    assert mt.Tensor(2, 3).shape == (2, 3)
    assert mt.tensor([[1, 2], [3, 4]]).shape == (2, 2)
    assert mt.tensor([mt.tensor(1.0), mt.tensor(2.0)]).tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="from_numpy"):
        mt.from_numpy([1, 2])


def test_tril_and_triu():
    x = mt.ones(3, 4)
    assert mt.tril(x).tolist() == np.tril(np.ones((3, 4))).tolist()
    assert mt.triu(x, 1).tolist() == np.triu(np.ones((3, 4)), 1).tolist()
    assert x.tril(-1).tolist() == np.tril(np.ones((3, 4)), -1).tolist()
    batch = mt.ones(2, 3, 3).triu()
    assert batch.tolist() == [np.triu(np.ones((3, 3))).tolist()] * 2
    with pytest.raises(RuntimeError, match=r"tril.*at least 2 dimensions.*\(3,\)"):
        mt.ones(3).tril()


# ---- seeding and sampling -----------------------------------------------------------------------

def test_manual_seed_gives_the_same_draws():
    def draws():
        return (mt.randn(4).tolist(), mt.rand(3).tolist(), mt.randint(0, 100, (5,)).tolist(),
                mt.multinomial(mt.tensor([0.2, 0.3, 0.5]), 4, replacement=True).tolist(),
                mt.nn.functional.dropout(mt.ones(8), p=0.5).tolist())

    mt.manual_seed(1234)
    first = draws()
    mt.manual_seed(1234)
    assert draws() == first
    mt.manual_seed(4321)
    assert draws() != first


def test_multinomial_with_replacement_frequencies_follow_the_weights():
    mt.manual_seed(0)
    weights = np.array([[1.0, 2.0, 3.0, 4.0], [4.0, 0.0, 0.0, 1.0]])
    s = mt.multinomial(mt.tensor(weights), 20000, replacement=True)
    assert s.shape == (2, 20000) and s.dtype == mt.int64
    for row, w in zip(s.numpy(force=True), weights):
        freq = np.bincount(row, minlength=4) / row.size
        assert np.abs(freq - w / w.sum()).max() < 0.015, freq
    # weight 0 is never drawn
    assert not (s.numpy(force=True)[1] == 1).any() and not (s.numpy(force=True)[1] == 2).any()


def test_multinomial_without_replacement_draws_distinct_categories_in_proportion():
    mt.manual_seed(0)
    s = mt.multinomial(mt.tensor([1.0, 1.0, 1.0, 1.0]), 4)
    assert sorted(s.tolist()) == [0, 1, 2, 3]
    firsts = np.array([mt.multinomial(mt.tensor([1.0, 2.0, 3.0, 4.0]), 2)[0].item() for _ in range(3000)])
    freq = np.bincount(firsts, minlength=4) / firsts.size
    assert np.abs(freq - np.array([0.1, 0.2, 0.3, 0.4])).max() < 0.03, freq
    assert sorted(mt.multinomial(mt.tensor([0.0, 5.0, 0.0, 1.0]), 2).tolist()) == [1, 3]
    # fewer categories of non-zero weight than samples: those first, then ones of weight 0, as PyTorch
    forced = mt.multinomial(mt.tensor([0.0, 1.0, 0.0]), 2).tolist()
    assert forced[0] == 1 and forced[1] in (0, 2)
    with pytest.raises(RuntimeError, match="multinomial.*num_samples=5 > 3"):
        mt.multinomial(mt.tensor([1.0, 1.0, 1.0]), 5)
    with pytest.raises(RuntimeError, match="multinomial.*< 0"):
        mt.multinomial(mt.tensor([1.0, -1.0]), 1)


def _chi2_two_samples(a, b):
    """Chi-square statistic of two equal-size samples' category counts coming from one distribution."""
    keep = (a + b) > 0
    return (((a[keep] - b[keep]) ** 2) / (a[keep] + b[keep])).sum()


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_draws_match_torch_multinomial_statistically(replacement):
    """20,000 draws from the same weights by each library (one row with replacement, or one draw from
    each of 20,000 rows without, as text generation does): a two-sample chi-square test at the 0.1 %
    level, with fixed seeds, so it never flakes. Values differ draw by draw; the distribution may not."""
    torch = pytest.importorskip("torch")
    weights = np.array([0.5, 4.0, 0.0, 2.5, 1.0, 2.0])  # need not sum to 1; category 2 can never come up
    n = 20000
    if replacement:
        ours = mt.multinomial(mt.tensor(weights), n, replacement=True, generator=mt.Generator().manual_seed(0))
        theirs = torch.multinomial(torch.tensor(weights), n, replacement=True,
                                   generator=torch.Generator().manual_seed(0))
    else:
        rows = np.tile(weights, (n, 1))
        ours = mt.multinomial(mt.tensor(rows), 1, generator=mt.Generator().manual_seed(0))
        theirs = torch.multinomial(torch.tensor(rows), 1, generator=torch.Generator().manual_seed(0))
    a, b = (np.bincount(s.numpy().reshape(-1), minlength=6) for s in (ours, theirs))
    assert a[2] == b[2] == 0
    assert _chi2_two_samples(a, b) < 18.47, (a, b)  # the 0.1 % point of chi-square with 5 - 1 = 4 degrees of freedom
    assert np.abs(a / n - weights / weights.sum()).max() < 0.015  # and both near the weights themselves


# ---- selection ----------------------------------------------------------------------------------

def test_topk_sort_argsort():
    x = mt.tensor([[3.0, 1.0, 4.0, 1.5], [9.0, 2.0, 6.0, 5.0]])
    values, indices = x.topk(2)
    assert values.tolist() == [[4.0, 3.0], [9.0, 6.0]] and indices.tolist() == [[2, 0], [0, 2]]
    small = x.topk(1, dim=0, largest=False)
    assert small.values.tolist() == [[3.0, 1.0, 4.0, 1.5]] and small.indices.tolist() == [[0, 0, 0, 0]]
    s = x.sort(dim=1)
    assert s.values.tolist() == [[1.0, 1.5, 3.0, 4.0], [2.0, 5.0, 6.0, 9.0]]
    assert s.indices.tolist() == [[1, 3, 0, 2], [1, 3, 2, 0]]
    assert x.sort(dim=1, descending=True).indices.tolist() == [[2, 0, 3, 1], [0, 2, 3, 1]]
    assert x.argsort(dim=0).tolist() == [[0, 0, 0, 0], [1, 1, 1, 1]]
    assert mt.argsort(mt.tensor([2, 0, 1]), descending=True).tolist() == [0, 2, 1]
    assert type(s).__name__ == "sort" and type(x.topk(1)).__name__ == "topk"


def test_sort_is_stable_for_equal_values():
    assert mt.tensor([2.0, 1.0, 2.0, 1.0]).sort().indices.tolist() == [1, 3, 0, 2]
    assert mt.tensor([2.0, 1.0, 2.0, 1.0]).sort(descending=True).indices.tolist() == [0, 2, 1, 3]


def test_cumsum():
    x = mt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.cumsum(dim=1).tolist() == [[1.0, 3.0, 6.0], [4.0, 9.0, 15.0]]
    assert mt.cumsum(x, 0).tolist() == [[1.0, 2.0, 3.0], [5.0, 7.0, 9.0]]
    assert mt.tensor([1, 2, 3], dtype=mt.int32).cumsum(0).dtype == mt.int64  # as PyTorch
    assert x.cumsum(-1, dtype=mt.float64).dtype == mt.float64


# ---- comparisons and logic ----------------------------------------------------------------------

def test_comparisons_give_bool_tensors_without_gradient():
    a = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = mt.tensor([3.0, 2.0, 1.0])
    cases = [
        (a == b, [False, True, False]), (a != b, [True, False, True]), (a < b, [True, False, False]),
        (a <= b, [True, True, False]), (a > b, [False, False, True]), (a >= b, [False, True, True]),
        (a.eq(2.0), [False, True, False]), (mt.ne(a, b), [True, False, True]), (a.lt(2), [True, False, False]),
        (mt.le(a, 2), [True, True, False]), (a.gt(b), [False, False, True]), (mt.ge(a, 3), [False, False, True]),
    ]
    for result, expected in cases:
        assert result.dtype == mt.bool and not result.requires_grad
        assert result.tolist() == expected
    mask = mt.tensor([[1, 0, 1]])
    assert (mask == 0).tolist() == [[False, True, False]] and mask.eq(0).dtype == mt.bool


def test_logical_ops_and_invert():
    p, q = mt.tensor([True, True, False, False]), mt.tensor([True, False, True, False])
    assert mt.logical_and(p, q).tolist() == [True, False, False, False]
    assert mt.logical_or(p, q).tolist() == [True, True, True, False]
    assert mt.logical_not(p).tolist() == [False, False, True, True]
    assert p.logical_xor(q).tolist() == [False, True, True, False]
    assert (~p).tolist() == [False, False, True, True]
    assert (p & q).tolist() == [True, False, False, False] and (p | q).tolist() == [True, True, True, False]
    assert mt.logical_not(mt.tensor([0.0, 2.0])).tolist() == [True, False]
    with pytest.raises(TypeError, match=r"bitwise_not \(~\).*float32"):
        ~mt.ones(2)


def test_all_and_any_with_and_without_dim():
    x = mt.tensor([[True, False], [True, True]])
    assert x.all().item() is False and x.any().item() is True
    assert x.all(dim=1).tolist() == [False, True] and x.any(dim=0).tolist() == [True, True]
    assert x.all(1, keepdim=True).shape == (2, 1)
    assert mt.tensor([[0.0, 1.0], [0.0, 0.0]]).any(dim=1).tolist() == [True, False]
    assert mt.all(mt.tensor([1, 2])).item() is True


# ---- split and chunk sizes like PyTorch ---------------------------------------------------------

@pytest.mark.parametrize("n, size, sizes", [(10, 4, [4, 4, 2]), (7, 3, [3, 3, 1]), (6, 6, [6]), (3, 5, [3])])
def test_split_sizes(n, size, sizes):
    assert [t.shape[0] for t in mt.arange(n).split(size)] == sizes


@pytest.mark.parametrize("n, chunks, sizes", [(10, 4, [3, 3, 3, 1]), (6, 4, [2, 2, 2]), (5, 4, [2, 2, 1]),
                                              (7, 3, [3, 3, 1]), (7, 5, [2, 2, 2, 1]), (2, 4, [1, 1])])
def test_chunk_sizes_like_pytorch(n, chunks, sizes):
    # chunk uses pieces of ceil(n / chunks), so it can return fewer than `chunks` pieces
    assert [t.shape[0] for t in mt.arange(n).chunk(chunks)] == sizes


def test_split_with_sizes_along_a_dim():
    parts = mt.zeros(2, 5).split([1, 4], dim=1)
    assert [p.shape for p in parts] == [(2, 1), (2, 4)]
    with pytest.raises(RuntimeError, match=r"split.*\[1, 1\].*5"):
        mt.zeros(2, 5).split([1, 1], dim=1)


# ---- what tutorial code does with tensors: `== None`, tensor slice bounds, f-strings, constants -----

def test_comparing_with_none_is_false_not_an_error():
    x = mt.ones(3)
    assert (x == None) is False and (x != None) is True  # noqa: E711
    assert (x == "a") is False and x != "a"
    assert x not in [None, "a"]
    with pytest.raises(TypeError):
        x < None  # noqa: B015  (only == and != fall back to identity, as in Python and PyTorch)


def test_integer_0d_tensors_are_slice_bounds():
    data, i, block = mt.arange(10.0), mt.tensor(3), 4
    assert data[i:i + block].tolist() == [3.0, 4.0, 5.0, 6.0]
    assert data[:i].tolist() == [0.0, 1.0, 2.0] and data[mt.tensor([7]):].tolist() == [7.0, 8.0, 9.0]
    assert data[mt.tensor(True):].shape == (9,)
    assert [10, 20, 30][mt.tensor(1)] == 20
    for bad in (mt.tensor(2.0), mt.tensor([1, 2])):
        with pytest.raises(TypeError, match="integer tensors of a single element"):
            data[bad:]


def test_format_spec_formats_a_0d_tensor_as_its_number():
    loss = mt.tensor(0.123456, requires_grad=True) * 2
    assert f"{loss:.4f}" == "0.2469" and f"{mt.tensor(7):03d}" == "007" and f"{mt.tensor(2.5)}" == "2.5"
    assert f"{mt.ones(2)}" == repr(mt.ones(2))
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{mt.ones(2):.2f}"
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{mt.ones(1):.2f}"  # one element but not 0-d: PyTorch refuses it too


def test_math_constants():
    import math
    assert (mt.inf, mt.pi, mt.e) == (math.inf, math.pi, math.e) and math.isnan(mt.nan)


def test_tutorial_idioms_same_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (mt, torch):
        x = lib.arange(10)
        i = lib.tensor(3)
        assert (x == None) is False and (x != None) is True  # noqa: E711
        assert x[i:i + 2].tolist() == [3, 4]
    for value, spec in ((0.123456, ".4f"), (3.0, ""), (12345.678, ".2e"), (7, "5d"), (True, "")):
        assert format(mt.tensor(value), spec) == format(torch.tensor(value), spec)
    for value in ([1.5], [1.5, 2.5]):
        with pytest.raises(TypeError):
            format(torch.tensor(value), ".2f")
        with pytest.raises(TypeError):
            format(mt.tensor(value), ".2f")
    assert (mt.inf, mt.pi, mt.e) == (torch.inf, torch.pi, torch.e)


# ---- h-tut2: what the torch.func tutorials' NumPy-backed Functions and the default-device recipe need ----
def test_numpy_of_a_tensor_that_requires_grad_is_refused_only_in_grad_mode():
    torch = pytest.importorskip("torch")
    for lib in (mt, torch):
        t = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="numpy()"):
            t.numpy()
        with lib.no_grad():
            assert t.numpy().tolist() == [1.0, 1.0]

        class Twice(lib.autograd.Function):  # forward runs with grad mode off: its inputs' numpy() is allowed
            @staticmethod
            def forward(ctx, x):
                return lib.tensor(x.numpy() * 2)

            @staticmethod
            def backward(ctx, g):
                return 2 * g

        y = Twice.apply(lib.tensor([1.0, -3.0], requires_grad=True))
        assert y.tolist() == [2.0, -6.0] and y.requires_grad


def test_a_device_is_a_context_manager_that_gives_itself():
    torch = pytest.importorskip("torch")
    for lib in (mt, torch):
        d = lib.device("cpu")
        with d as entered:
            made = lib.zeros(2)
        assert entered is d and made.device == d and d.index is None
        with pytest.raises(TypeError):
            d(lambda: None)  # (not a decorator, in PyTorch either)
