r"""Forward values and gradients equal PyTorch's, in float64, for a broad sample of ops.

Each case is one piece of code run twice, once with `lib = minitensor` and once with
`lib = torch` (and `F` the matching functional module), so the semantics compared are exactly
the ones a tutorial relies on. Skipped where PyTorch is not installed.
"""
import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import minitensor
import minitensor.nn.functional as mF
from minitensor.testing import assert_close, strategies as mst

# a comparison with PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")
tF = torch.nn.functional

LIBS = {"mt": (minitensor, mF), "torch": (torch, tF)}


def _make(lib, arr, requires_grad):
    if lib is torch:
        t = torch.tensor(arr)
        return t.requires_grad_(requires_grad) if arr.dtype.kind == "f" else t
    return minitensor.tensor(arr, requires_grad=requires_grad and arr.dtype.kind == "f")


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.numpy(force=True)


def run_both(fn, arrays, seed=0):
    """fn(lib, F, *tensors) under both libraries: (outputs, gradients) of each, as numpy."""
    results = {}
    for name, (lib, F) in LIBS.items():
        xs = [_make(lib, a, True) for a in arrays]
        outs = fn(lib, F, *xs)
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        rng = np.random.default_rng(seed)
        diff = [(o, rng.standard_normal(tuple(o.shape))) for o in outs if o.requires_grad]
        if diff:
            roots = [o for o, _ in diff]
            grads = [_make(lib, u, False) for _, u in diff]
            (torch.autograd.backward if lib is torch else minitensor.autograd.backward)(roots, grads)
        grads = [None if x.grad is None else _np(x.grad) for x in xs]
        results[name] = ([_np(o) for o in outs], grads)
    return results


def assert_same(fn, arrays, rtol=1e-7, atol=1e-9):
    res = run_both(fn, arrays)
    (outs_m, grads_m), (outs_t, grads_t) = res["mt"], res["torch"]
    assert len(outs_m) == len(outs_t)
    for i, (a, b) in enumerate(zip(outs_m, outs_t)):
        assert a.shape == b.shape, f"output {i}: shape {a.shape} vs torch {b.shape}"
        assert a.dtype == b.dtype, f"output {i}: dtype {a.dtype} vs torch {b.dtype}"
        assert_close(a, b, rtol=rtol, atol=atol, equal_nan=True, msg=f"output {i} differs from torch")
    for i, (a, b) in enumerate(zip(grads_m, grads_t)):
        assert (a is None) == (b is None), f"input {i}: gradient {'missing' if a is None else 'unexpected'} vs torch"
        if a is not None:
            assert_close(a, b, rtol=rtol, atol=atol, equal_nan=True, msg=f"gradient of input {i} differs from torch")


RNG = np.random.default_rng(2024)


def rnd(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape)


def distinct(*shape):
    n = int(np.prod(shape))
    return (RNG.permutation(n) * 0.31 - 0.15 * n).reshape(shape)


TIES = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0], [-1.0, -1.0, 4.0, 4.0]])
LOGITS = rnd(5, 4)
TARGET = np.array([1, -100, 3, 0, 3])
TARGET_3D = np.array([[1, 2], [0, -100]])
WEIGHT = np.array([1.0, 2.0, 0.5, 3.0])
QUOTIENT_A = np.array([5.5, -3.2, 7.1, -7.3, 0.4, -0.4, 2.9, -5.0])
QUOTIENT_B = np.array([2.0, -1.5, -2.0, 3.0, 0.3, 0.3, -0.7, 1.7])
SCATTER_INDEX = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])  # no position twice
SCATTER_REPEATS = np.array([[0, 1, 2, 0], [0, 0, 1, 0]])

CASES = {
    # arithmetic with broadcasting and scalars on either side
    "add_broadcast": (lambda lib, F, a, b: a + b, [rnd(2, 1, 3), rnd(4, 1)]),
    "sub_rsub": (lambda lib, F, a, b: (a - b) * 2.0 - (1.5 - a), [rnd(3, 4), rnd(4)]),
    "mul_div": (lambda lib, F, a, b: a * b / (b * b + 1.0), [rnd(2, 3), rnd(1, 3)]),
    "pow": (lambda lib, F, a, b: a.abs() ** b + a ** 2 + 2.0 ** a, [rnd(2, 3), rnd(3)]),
    "unary": (lambda lib, F, a: (a.exp() + a.abs().sqrt() + a.sin() * a.cos() + a.tanh() + a.sigmoid()
                                 + (a.abs() + 0.5).log() + (a.abs() + 0.5).rsqrt() + lib.erf(a)), [rnd(3, 4)]),
    "relu_clamp": (lambda lib, F, a: F.relu(a) + a.clamp(-0.5, 0.7) + a.clamp(min=0.2) + lib.clamp(a, max=-0.1),
                   [distinct(3, 4) / 10]),
    "clamp_tensor_bounds": (lambda lib, F, a, lo, hi: a.clamp(lo, hi), [np.array([-2.0, 0.5, 3.0, 0.3]),
                                                                       np.array([0.0, 0.0, 0.0, 1.0]),
                                                                       np.array([1.0, 1.0, 1.0, 0.0])]),
    "maximum_minimum_ties": (lambda lib, F, a, b: lib.maximum(a, b) * 2 + lib.minimum(a, b),
                             [np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0])]),
    "gelu_none": (lambda lib, F, a: F.gelu(a), [rnd(3, 4, low=-4, high=4)]),
    "gelu_tanh": (lambda lib, F, a: F.gelu(a, approximate="tanh"), [rnd(3, 4, low=-4, high=4)]),
    # linear algebra
    "matmul_2d": (lambda lib, F, a, b: a @ b, [rnd(3, 4), rnd(4, 2)]),
    "matmul_1d_1d": (lambda lib, F, a, b: lib.matmul(a, b), [rnd(4), rnd(4)]),
    "matmul_1d_batched": (lambda lib, F, a, b: a @ b, [rnd(4), rnd(2, 4, 3)]),
    "matmul_batched_1d": (lambda lib, F, a, b: a @ b, [rnd(2, 3, 4), rnd(4)]),
    "matmul_broadcast_batch": (lambda lib, F, a, b: a @ b, [rnd(2, 1, 3, 4), rnd(3, 4, 2)]),
    "transpose_mT": (lambda lib, F, a: a.transpose(-2, -1) @ a.mT.mT + a[0].T.sum(), [rnd(2, 3, 3)]),
    "linear": (lambda lib, F, x, w, b: F.linear(x, w, b), [rnd(2, 3, 4), rnd(5, 4), rnd(5)]),
    # reductions
    "sum_dims": (lambda lib, F, a: (a.sum(), a.sum(dim=1), a.sum(dim=(0, 2), keepdim=True), a.sum(-1, keepdim=True)),
                 [rnd(2, 3, 4)]),
    "mean_dims": (lambda lib, F, a: (a.mean(), a.mean(dim=0), a.mean(dim=(1, 2)), a.mean(1, keepdim=True)),
                  [rnd(2, 3, 4)]),
    "var_corrections": (lambda lib, F, a: (a.var(), a.var(dim=1), a.var(dim=0, correction=0, keepdim=True),
                                           a.var(dim=(0, 1), correction=2), a.var(1, unbiased=False)), [rnd(3, 4, 2)]),
    "std_corrections": (lambda lib, F, a: (a.std(), a.std(dim=1), a.std(dim=0, correction=0), a.std(0, keepdim=True)),
                        [rnd(3, 4)]),
    "prod": (lambda lib, F, a: (a.prod(), a.prod(dim=1), a.prod(0, keepdim=True)), [rnd(3, 4)]),
    "prod_with_zero": (lambda lib, F, a: a.prod(dim=1), [np.array([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0]])]),
    "logsumexp": (lambda lib, F, a: (a.logsumexp(dim=1), a.logsumexp(dim=0, keepdim=True)),
                  [rnd(3, 4, low=-50, high=50)]),
    "norm": (lambda lib, F, a: (a.norm(), a.norm(dim=1), a.norm(p=1, dim=0)), [distinct(3, 4)]),
    "amax_amin_ties": (lambda lib, F, a: (a.amax(), a.amax(dim=1), a.amin(dim=0), a.amin(dim=(0, 1))), [TIES]),
    "max_min_all_ties": (lambda lib, F, a: (a.max(), a.min()), [TIES]),
    "max_min_dim_distinct": (lambda lib, F, a: (a.max(dim=1).values, a.max(dim=0, keepdim=True)[0],
                                                a.min(dim=-1).values), [distinct(3, 4)]),
    "max_min_dim_indices": (lambda lib, F, a: (a.max(dim=1).indices.double(), a.min(dim=0).indices.double(),
                                               a.argmax(dim=1).double(), a.argmin().double()), [TIES]),
    "cumsum": (lambda lib, F, a: (a.cumsum(0), a.cumsum(dim=-1)), [rnd(3, 4)]),
    # softmax family and losses
    "softmax": (lambda lib, F, a: (F.softmax(a, dim=-1), F.softmax(a, dim=0), a.softmax(1)),
                [rnd(3, 4, low=-5, high=5)]),
    "log_softmax": (lambda lib, F, a: (F.log_softmax(a, dim=-1), a.log_softmax(dim=0)), [rnd(3, 4, low=-5, high=5)]),
    "softmax_huge": (lambda lib, F, a: (F.softmax(a, dim=-1), F.log_softmax(a, dim=-1)),
                     [np.array([[1e4, -1e4, 0.0], [800.0, 799.0, -800.0]])]),
    "layer_norm": (lambda lib, F, x, w, b: F.layer_norm(x, (4,), w, b), [rnd(2, 3, 4), rnd(4), rnd(4)]),
    "layer_norm_2d_shape": (lambda lib, F, x: F.layer_norm(x, (3, 4)), [rnd(2, 3, 4)]),
    "mse_loss": (lambda lib, F, a, b: (F.mse_loss(a, b), F.mse_loss(a, b, reduction="sum"),
                                       F.mse_loss(a, b, reduction="none")), [rnd(3, 4), rnd(3, 4)]),
    "pad": (lambda lib, F, a: F.pad(a, (1, 2, 0, 1), value=0.5), [rnd(2, 3)]),
    "dropout_eval": (lambda lib, F, a: F.dropout(a, p=0.5, training=False), [rnd(3)]),
    # shape and selection
    "reshape_permute": (lambda lib, F, a: a.reshape(4, 6).view(2, -1).permute(1, 0).flatten(), [rnd(2, 3, 4)]),
    "squeeze_unsqueeze": (lambda lib, F, a: a.unsqueeze(0).squeeze(2).unsqueeze(-1), [rnd(3, 1, 2)]),
    "expand_repeat": (lambda lib, F, a: a.expand(2, 3, 2) * 1.0 + a.repeat(2, 1, 2)[:, :, :2], [rnd(3, 1)]),
    "cat_stack": (lambda lib, F, a, b: (lib.cat([a, b], dim=1), lib.stack([a, a * 2], dim=0)), [rnd(2, 3), rnd(2, 1)]),
    "split_chunk": (lambda lib, F, a: a.split(2, dim=1) + a.chunk(3, dim=1) + a.split([1, 4], dim=1), [rnd(2, 5)]),
    "where_masked_fill": (lambda lib, F, a, b: (lib.where(a > 0, a, b), a.masked_fill(b > 0.5, -1e9)),
                          [rnd(3, 4), rnd(4)]),
    "tril_triu": (lambda lib, F, a: (a.tril(), lib.triu(a, 1), a.tril(-1)), [rnd(2, 3, 4)]),
    "gather": (lambda lib, F, a: a.gather(1, _make(lib, np.array([[0, 0, 2], [1, 3, 3], [2, 1, 0]]), False)),
               [rnd(3, 4)]),
    "index_select": (lambda lib, F, a: a.index_select(0, _make(lib, np.array([2, 0, 2]), False)), [rnd(3, 4)]),
    "topk_sort": (lambda lib, F, a: (a.topk(2, dim=1).values, a.topk(2, dim=0, largest=False).values,
                                     a.sort(dim=1).values, a.sort(dim=0, descending=True).values), [distinct(3, 4)]),
    "embedding": (lambda lib, F, w: F.embedding(_make(lib, np.array([[0, 2, 2], [1, 0, 2]]), False), w), [rnd(3, 2)]),
    # indexing: basic and advanced
    "getitem_basic": (lambda lib, F, a: (a[1], a[:, 1:3], a[None, ..., -1], a[0, :, None], a[1:, ::2]), [rnd(3, 4, 2)]),
    "getitem_int_lists": (lambda lib, F, a: (a[[0, 2, 0]], a[[0, 0, 1], [1, 1, 3]], a[:, [3, 3, 0]]), [rnd(3, 4)]),
    "getitem_tensor_index": (lambda lib, F, a: a[_make(lib, np.array([[0, 1], [1, 1]]), False)], [rnd(3, 4)]),
    "getitem_bool_mask": (lambda lib, F, a: (a[a > 0], a[_make(lib, np.array([True, False, True]), False)]),
                          [rnd(3, 4)]),
    "getitem_0d_tensor": (lambda lib, F, a: a[_make(lib, np.array(1), False)] * 2, [rnd(3, 4)]),
    "getitem_separated_advanced": (lambda lib, F, a: a[[0, 1], :, [1, 0]], [rnd(2, 3, 4)]),
    # rounded division and remainders (PyTorch has no derivative for `//` nor for number % tensor: values only)
    "floor_div_remainder_fmod": (lambda lib, F, a, b: (a.detach() // b.detach(), lib.floor_divide(a.detach(), 0.7),
                                                       a % b, lib.remainder(a, 1.5), 2.5 % b.detach(), lib.fmod(a, b),
                                                       a.fmod(-1.5), lib.div(a, b, rounding_mode="trunc"),
                                                       a.div(b, rounding_mode="floor"), -3 // b.detach()),
                                 [QUOTIENT_A, QUOTIENT_B]),
    "integer_floor_div_remainder": (lambda lib, F, a, b: (a // b, a % b, lib.fmod(a, b), a // 2, a % -3, 7 // b,
                                                          lib.div(a, b, rounding_mode="trunc"), a // 2.5, a % 2.5),
                                    [np.array([5, -5, 7, -7, 0, 9]), np.array([3, 3, -2, -2, 4, -9])]),
    "float_division_by_zero": (lambda lib, F, a: (a.detach() // 0.0, a % 0.0, lib.fmod(a, 0.0)),
                               [np.array([1.0, -1.0, 0.0])]),
    # scatter, index_fill, masked_select, masked_fill broadcasting the input up to the mask
    "scatter_src_and_value": (lambda lib, F, x, s: (x.scatter(0, _make(lib, SCATTER_INDEX, False), s),
                                                    lib.scatter(x, 1, _make(lib, SCATTER_INDEX, False), -2.5),
                                                    x.scatter(-1, _make(lib, np.array([[2], [0]]), False), s.detach())),
                              [rnd(3, 4), rnd(2, 4)]),  # (PyTorch's backward fails for a src larger than the index)
    "scatter_add_repeats": (lambda lib, F, x, s: (x.scatter_add(0, _make(lib, SCATTER_REPEATS, False), s),
                                                  lib.scatter_add(x, 1, _make(lib, SCATTER_REPEATS, False), s)),
                            [rnd(3, 4), rnd(2, 4)]),
    "scatter_inplace_on_graph": (lambda lib, F, x, s: _scatter_inplace(lib, x, s), [rnd(3, 4), rnd(3, 4)]),
    "scatter_reduce_no_grad": (lambda lib, F, x, s: (x.detach().scatter(0, _make(lib, SCATTER_REPEATS, False),
                                                                        s.detach(), reduce="add"),
                                                     x.detach().scatter(0, _make(lib, SCATTER_REPEATS, False),
                                                                        s.detach(), reduce="multiply"),
                                                     x.detach().scatter(0, _make(lib, SCATTER_REPEATS, False),
                                                                        1.5, reduce="multiply")),
                               [rnd(3, 4), rnd(2, 4)]),
    "index_fill": (lambda lib, F, x, v: (x.index_fill(1, _make(lib, np.array([0, -1, 0]), False), -1.0),
                                         lib.index_fill(x, 0, _make(lib, np.array(2), False), v)),
                   [rnd(3, 4), np.array(0.5)]),
    "index_fill_inplace": (lambda lib, F, x, v: (x * 1).index_fill_(1, _make(lib, np.array([1, 2]), False), v),
                           [rnd(3, 4), np.array(0.5)]),
    "masked_select": (lambda lib, F, x: (lib.masked_select(x, _make(lib, np.array([True, False, True, True]), False)),
                                         x.masked_select(_make(lib, np.array([[[True], [False], [True]]] * 2), False))),
                      [rnd(3, 4)]),
    "masked_fill_input_broadcasts": (lambda lib, F, x: x.masked_fill(
        _make(lib, np.array([[True, False, True], [False, False, True]]), False), 0.5), [rnd(3)]),
}



def _scatter_inplace(lib, x, s):
    y = x * 2
    y.scatter_(0, _make(lib, SCATTER_INDEX[:1], False), s[:1])
    z = x * 1
    z.scatter_add_(1, _make(lib, SCATTER_REPEATS, False), s[:2])
    return y, z

CE_REDUCTIONS = ["mean", "sum", "none"]


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter:UserWarning")  # torch's own deprecation note
@pytest.mark.parametrize("name", list(CASES))
def test_same_as_torch(name):
    fn, arrays = CASES[name]
    assert_same(fn, arrays)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", CE_REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_same_as_torch(reduction, label_smoothing, weighted):
    def fn(lib, F, x):
        kw = {"weight": _make(lib, WEIGHT, False)} if weighted else {}
        return F.cross_entropy(x, _make(lib, TARGET, False), reduction=reduction, label_smoothing=label_smoothing, **kw)

    assert_same(fn, [LOGITS])


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", CE_REDUCTIONS)
def test_cross_entropy_spatial_and_ignore_index_same_as_torch(reduction, label_smoothing):
    def fn(lib, F, x):
        return F.cross_entropy(x, _make(lib, TARGET_3D, False), ignore_index=-100, reduction=reduction,
                               label_smoothing=label_smoothing)

    assert_same(fn, [rnd(2, 4, 2)])


@pytest.mark.parametrize("ignore_index", [-100, 0, 3])
def test_cross_entropy_custom_ignore_index_and_single_sample(ignore_index):
    assert_same(lambda lib, F, x: F.cross_entropy(x, _make(lib, np.array([3, 0, 1, 3, 2]), False),
                                                  ignore_index=ignore_index), [LOGITS])
    assert_same(lambda lib, F, x: F.cross_entropy(x, _make(lib, np.array(2), False), label_smoothing=0.3), [rnd(4)])


def test_cross_entropy_probability_targets_same_as_torch():
    probs = np.abs(rnd(5, 4))
    probs /= probs.sum(axis=1, keepdims=True)
    assert_same(lambda lib, F, x: F.cross_entropy(x, _make(lib, probs, False), label_smoothing=0.1), [LOGITS])


@pytest.mark.parametrize("reduction", CE_REDUCTIONS)
def test_nll_loss_same_as_torch(reduction):
    def fn(lib, F, x):
        return F.nll_loss(F.log_softmax(x, dim=1), _make(lib, TARGET, False), weight=_make(lib, WEIGHT, False),
                          reduction=reduction)

    assert_same(fn, [LOGITS])


def test_max_with_dim_on_ties_differs_from_torch_by_design():
    # SPEC: ties share the gradient evenly, also for max(dim); torch.max(dim) gives it all to one index.
    # Both agree with torch.amax, which splits.
    res = run_both(lambda lib, F, a: a.max(dim=1).values, [TIES])
    amax = run_both(lambda lib, F, a: a.amax(dim=1), [TIES])
    assert_close(res["mt"][1][0], amax["torch"][1][0])
    assert not np.allclose(res["torch"][1][0], amax["torch"][1][0])


BINARY = {
    "add": lambda lib, F, a, b: a + b,
    "sub": lambda lib, F, a, b: a - b,
    "mul": lambda lib, F, a, b: a * b,
    "div": lambda lib, F, a, b: a / (b.abs() + 0.5),
    "maximum": lambda lib, F, a, b: lib.maximum(a, b),
    "where": lambda lib, F, a, b: lib.where(a > b, a * b, b - a),
}


@pytest.mark.parametrize("name", list(BINARY))
@given(shapes=mst.broadcastable_shapes(2), data=st.data())
def test_broadcasting_binary_ops_same_as_torch(name, shapes, data):
    a, b = (data.draw(mst.arrays_for(s, unique=True)) for s in shapes.input_shapes)
    assume(not np.isin(a, b).any())  # no ties between a and b (maximum, where)
    assert_same(BINARY[name], [a, b])


@given(shapes=mst.matmul_shapes(), data=st.data())
def test_matmul_same_as_torch_on_drawn_shapes(shapes, data):
    a, b = (data.draw(mst.arrays_for(s)) for s in shapes.input_shapes)
    assert_same(lambda lib, F, x, y: x @ y, [a, b], rtol=1e-7, atol=1e-7)


@given(data=st.data())
def test_reductions_same_as_torch_on_drawn_shapes(data):
    shape = data.draw(mst.shapes(1))
    x = data.draw(mst.arrays_for(shape, unique=True))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    keepdim = data.draw(st.booleans())
    correction = data.draw(st.sampled_from([0, 1]))

    def fn(lib, F, a):
        outs = [a.sum(dim=dim, keepdim=keepdim), a.mean(dim=dim, keepdim=keepdim), a.amax(dim=dim, keepdim=keepdim),
                a.logsumexp(dim=dim, keepdim=keepdim), F.softmax(a, dim=dim), F.log_softmax(a, dim=dim),
                a.cumsum(dim)]
        if shape[dim] > correction:
            outs.append(a.var(dim=dim, keepdim=keepdim, correction=correction))
        return tuple(outs)

    assert_same(fn, [x])


def test_dtype_promotion_same_as_torch():
    cases = [
        lambda lib: lib.ones(2) * 2.5,
        lambda lib: lib.ones(2) / np.sqrt(64),
        lambda lib: lib.tensor([1, 2]) * 2.5,
        lambda lib: lib.tensor([1, 2]) / 2,
        lambda lib: lib.tensor([1, 2]) + lib.ones(2),
        lambda lib: lib.ones(2) * lib.tensor(2.0, dtype=lib.float64),
        lambda lib: lib.ones(2, dtype=lib.float64) + lib.ones(2),
        lambda lib: lib.tensor([1, 2]) * True,
        lambda lib: lib.tensor([True, False]) + lib.tensor([True, True]),
        lambda lib: lib.tensor([1, 2], dtype=lib.int32) + lib.tensor([1, 2]),
        lambda lib: lib.tensor([1, 2]).sum(),
        lambda lib: lib.tensor([True, False]).sum(),
        lambda lib: lib.where(lib.tensor([True, False]), 1.0, 0.0),
        lambda lib: lib.tensor([1, 5]).clamp(2.5),
        lambda lib: lib.arange(5),
        lambda lib: lib.arange(0.0, 1.0, 0.5),
        lambda lib: lib.full((2,), 3),
    ]
    for i, case in enumerate(cases):
        ours, theirs = case(minitensor), case(torch)
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], f"case {i}: {ours.dtype}"
        assert ours.tolist() == theirs.tolist(), f"case {i}"


# ---- valid inputs at the edges (empty dims, 0-d tensors) give PyTorch's values and gradients ------

EDGE_CASES = {
    "matmul_empty_inner_dim": (lambda lib, F, a, b: a @ b, [rnd(2, 3, 0), rnd(0, 4)]),
    "matmul_empty_output_dim": (lambda lib, F, a, b: a @ b, [rnd(2, 3, 4), rnd(4, 0)]),
    "matmul_empty_batch": (lambda lib, F, a, b: a @ b, [rnd(0, 3, 4), rnd(4, 2)]),
    "linear_no_input_features": (lambda lib, F, x, w, b: F.linear(x, w, b), [rnd(2, 5, 0), rnd(3, 0), rnd(3)]),
    "linear_no_output_features": (lambda lib, F, x, w, b: F.linear(x, w, b), [rnd(2, 4), rnd(0, 4), rnd(0)]),
    "linear_empty_batch": (lambda lib, F, x, w, b: F.linear(x, w, b), [rnd(0, 4), rnd(3, 4), rnd(3)]),
    "amax_max_over_a_full_dim_of_an_empty_tensor": (
        lambda lib, F, a: (a.amax(1), a.max(1).values, a.min(dim=-1).values, a.amin(1, keepdim=True),
                           a.argmax(1).double()), [rnd(0, 3)]),
    "flatten_empty": (lambda lib, F, a: (a.flatten(1), a.flatten(), a.flatten(0, 1)), [rnd(0, 2, 3)]),
    "reshape_empty_inferred": (lambda lib, F, a: (a.reshape(-1), a.reshape(3, -1), a.view(-1, 3, 2)), [rnd(2, 3, 0)]),
    "squeeze_0d": (lambda lib, F, a: (a.squeeze(0) * 2, a.squeeze(-1), a.squeeze((0,))), [np.array(1.5)]),
    "norm_p0": (lambda lib, F, a: (a.norm(p=0), a.norm(p=0, dim=1), a.norm(p=0, dim=0, keepdim=True)),
                [np.array([[1.0, 0.0, 2.0], [0.0, 0.0, -3.0]])]),
    "nonzero_0d": (lambda lib, F, a, b: (a.nonzero().double(), b.nonzero().double(),
                                         a.nonzero(as_tuple=True)[0].double(), b.nonzero(as_tuple=True)[0].double()),
                   [np.array(3.0), np.array(0.0)]),
    "embedding_empty_batch": (lambda lib, F, w: F.embedding(_make(lib, np.zeros((0, 4), np.int64), False), w),
                              [rnd(5, 3)]),
}


@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_edge_inputs_same_as_torch(name):
    fn, arrays = EDGE_CASES[name]
    assert_same(fn, arrays)


@pytest.mark.parametrize("dtype, values, op, scalar", [
    ("uint8", [0, 1, 255], "add", -1),
    ("uint8", [0, 1, 100], "add", 300),
    ("int8", [0, 1, 100], "add", 1000),
    ("int8", [0, 1, 100], "mul", 1000),
    ("int8", [0, 1, 100], "sub", 1000),
    ("int8", [0, 1, 100], "rsub", 1000),
    ("int16", [0, 7, -300], "add", 2 ** 40 + 5),
    ("uint8", [0, 1, 100], "add_", -1),
])
def test_python_int_beyond_an_integer_tensors_range_wraps_as_in_torch(dtype, values, op, scalar):
    def run(lib):
        x = lib.tensor(values, dtype=getattr(lib, dtype))
        out = {"add": lambda: x + scalar, "mul": lambda: x * scalar, "sub": lambda: x - scalar,
               "rsub": lambda: scalar - x, "add_": lambda: x.add_(scalar)}[op]()
        return np.asarray(out.tolist()), str(out.dtype).split(".")[-1]
    assert run(minitensor)[1] == run(torch)[1]
    np.testing.assert_array_equal(run(minitensor)[0], run(torch)[0])


def test_python_int_beyond_int64_is_an_overflow_error_as_in_torch():
    for lib in (minitensor, torch):
        with pytest.raises(OverflowError):
            lib.tensor([1, 2], dtype=lib.int8) + 2 ** 70
