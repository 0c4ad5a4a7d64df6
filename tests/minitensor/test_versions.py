r"""Storage semantics (`minitensor/tensor.py` + the autograd engine): `.data`, views, `detach()`,
version counters, and the check every graph node makes before its backward reads a tensor.

What the core promises, as PyTorch: `.data` shares memory but not the version counter (changes
through it are invisible to autograd); views and `detach()` share their base's memory *and*
version counter; a backward that would read a tensor changed in place since the forward raises
"modified by an inplace operation" naming the op, and a node that read no values (add, sum,
reshape ...) may run again after its graph was freed.

Each case runs under minitensor with its own expected values; where PyTorch is installed, the
same code runs under torch too.
"""
import numpy as np
import pytest

import attention
import minitensor as mt


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


rng = np.random.default_rng(7)
X3 = np.array([1.0, 2.0, 3.0])
X23 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
U3 = rng.standard_normal(3)
U2 = rng.standard_normal(2)
U23 = rng.standard_normal((2, 3))


def T(lib, values, grad=False):
    return lib.tensor(np.array(values, dtype=np.float64), requires_grad=grad)


def arrays(fn, lib):
    out = fn(lib)
    out = out if isinstance(out, tuple) else (out,)
    return [None if t is None else np.array(t.detach().numpy()) for t in out]


def assert_arrays(got, want, rtol=1e-12, atol=1e-12):
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert (a is None) == (b is None), f"result {i}: {a} vs {b}"
        if a is None:
            continue
        b = np.asarray(b, dtype=np.float64) if not isinstance(b, np.ndarray) else b
        assert a.shape == b.shape and a.dtype == b.dtype, f"result {i}: {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"result {i}")


def version_of(lib, version):
    """A version number as a float64 0-d tensor (so it travels with the other results)."""
    return lib.tensor(float(version), dtype=lib.float64)


def same_as_torch(fn, torch):
    assert_arrays(arrays(fn, mt), arrays(fn, torch), rtol=1e-10)


# ---- .data and .numpy() -----------------------------------------------------------------------

def test_data_is_a_tensor_sharing_memory_cut_from_the_graph():
    p = T(mt, X3, True)
    d = p.data
    assert isinstance(d, mt.Tensor) and not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert np.shares_memory(d.numpy(), p.numpy(force=True))
    y = (p * 2).data
    assert not y.requires_grad and y.grad_fn is None


def _data_updates(lib):
    """The issue's `.data` idioms (an optimizer's and an initialiser's), minus the `alpha=` keyword."""
    p = T(lib, X3, True)
    (p * p).backward(T(lib, U3))
    lr = 0.1
    p.data.add_(-lr * p.grad)
    after_step = p.detach().clone()
    snapshot = p.data.clone()
    p.data.mul_(2)
    p.data[0] = -1.0
    q = p.data
    q += 1.0
    versions = [p._version]
    assert not snapshot.requires_grad and not np.shares_memory(snapshot.numpy(), p.detach().numpy())
    p.data.normal_(0, 0.02)
    versions.append(p._version)
    assert float(p.detach().abs().max()) < 0.2
    p.data.zero_()
    versions.append(p._version)
    return after_step, snapshot, p, lib.tensor(np.array(versions, dtype=np.float64))


def test_in_place_changes_through_data_change_values_not_the_version():
    step = X3 - 0.1 * 2 * X3 * U3
    after = X3 * 2
    after[0] = -1.0
    after += 1.0
    assert_arrays(arrays(_data_updates, mt), [step, step, np.zeros(3), np.zeros(3)])
    p = T(mt, X3, True)
    p.data.mul_(2)
    p.data[0] = -1.0
    d = p.data
    d += 1.0
    assert_arrays([p.numpy(force=True)], [after])
    assert p._version == 0 and p.is_leaf and p.requires_grad


def test_in_place_changes_through_data_same_as_torch(torch):
    same_as_torch(_data_updates, torch)


def test_data_add_with_alpha_as_the_issue_writes_it():
    p = T(mt, X3, True)
    (p * p).backward(T(mt, U3))
    p.data.add_(p.grad, alpha=-0.1)
    assert_arrays([p.numpy(force=True)], [X3 - 0.1 * 2 * X3 * U3])
    assert p._version == 0


def _change_through_data_after_forward(lib):
    p = T(lib, X3, True)
    y = p * p  # saves p
    p.data.mul_(2)  # invisible to autograd: no error, the backward reads the new values
    y.backward(T(lib, U3))
    return p.grad


def test_changes_through_data_are_invisible_to_autograd():
    assert_arrays(arrays(_change_through_data_after_forward, mt), [2 * (2 * X3) * U3])


def test_changes_through_data_are_invisible_to_autograd_same_as_torch(torch):
    same_as_torch(_change_through_data_after_forward, torch)


def test_assigning_data_changes_values_not_version_nor_requires_grad():
    p = T(mt, X3, True)
    p.data = T(mt, [5.0, 6.0])
    assert p.tolist() == [5.0, 6.0] and p._version == 0 and p.requires_grad and p.is_leaf


def test_numpy_refuses_a_tensor_that_requires_grad_unless_forced():
    p = T(mt, X3, True)
    with pytest.raises(RuntimeError, match=r"requires grad.*detach\(\)\.numpy\(\)"):
        p.numpy()
    with pytest.raises(RuntimeError):
        (p * 2).numpy()
    a = p.numpy(force=True)
    assert np.shares_memory(a, p.detach().numpy()) and np.shares_memory(a, p.data.numpy())
    plain = T(mt, X3)
    assert plain.numpy() is plain.numpy()  # the array itself, not a copy
    plain.numpy()[0] = 9.0
    assert plain.tolist() == [9.0, 2.0, 3.0]


# ---- views and detach() share the version counter -----------------------------------------------

ALL = np.s_[...]
VIEWS = {  # name: (make the view of x (2, 3), the elements of x it holds)
    "view": (lambda x: x.view(6), ALL),
    "view_3x2": (lambda x: x.view(3, 2), ALL),
    "reshape": (lambda x: x.reshape(3, 2), ALL),
    "transpose": (lambda x: x.transpose(0, 1), ALL),
    "permute": (lambda x: x.permute(1, 0), ALL),
    "T": (lambda x: x.T, ALL),
    "mT": (lambda x: x.mT, ALL),
    "t": (lambda x: x.t(), ALL),
    "slice_rows": (lambda x: x[0:1], np.s_[0:1]),
    "row": (lambda x: x[1], np.s_[1]),
    "column": (lambda x: x[:, 1], np.s_[:, 1]),
    "step_slice": (lambda x: x[:, ::2], np.s_[:, ::2]),
    "none_index": (lambda x: x[None], ALL),
    "ellipsis": (lambda x: x[..., 1], np.s_[:, 1]),
    "unsqueeze": (lambda x: x.unsqueeze(0), ALL),
    "squeeze": (lambda x: x.unsqueeze(1).squeeze(1), ALL),
    "flatten": (lambda x: x.flatten(), ALL),
    "detach": (lambda x: x.detach(), ALL),
    "narrow": (lambda x: x.narrow(1, 1, 2), np.s_[:, 1:]),
    "split": (lambda x: x.split(1, dim=1)[2], np.s_[:, 2:]),
    "chunk": (lambda x: x.chunk(2, dim=0)[1], np.s_[1:]),
    "unbind": (lambda x: x.unbind(1)[0], np.s_[:, 0]),
    "movedim": (lambda x: x.movedim(0, 1), ALL),
    "unflatten": (lambda x: x.flatten().unflatten(0, (3, 2)), ALL),
    "view_of_view": (lambda x: x.T[1:].T, np.s_[:, 1:]),
    "expand": (lambda x: x[:, None].expand(2, 4, 3), ALL),  # read-only: only the base writes
}
READ_ONLY = {"expand"}
SCALAR_VIEWS = {  # name: (select one element of x (2, 3) with int indices, its flat index)
    "int_index_of_1d": (lambda x: x.flatten()[4], 4),
    "two_int_indices": (lambda x: x[1, 0], 3),
    "iteration_of_1d": (lambda x: list(x.flatten())[2], 2),
}


def _base_change_seen_by_view(lib, make):
    x = T(lib, X23)
    v = make(x)
    before = v.detach().clone()
    x.mul_(2)  # through the base
    return version_of(lib, v._version), v, before


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_in_place_change_of_the_base_is_seen_by_the_view(name):
    version, v, before = arrays(lambda lib: _base_change_seen_by_view(lib, VIEWS[name][0]), mt)
    assert version == 1
    assert_arrays([v], [2 * before])


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_in_place_change_of_the_base_is_seen_by_the_view_in_torch(name, torch):
    same_as_torch(lambda lib: _base_change_seen_by_view(lib, VIEWS[name][0]), torch)


def _view_change_seen_by_base(lib, make):
    x = T(lib, X23)
    v = make(x)
    v.add_(10.0)
    v2 = make(x)
    v2.mul_(-1.0)
    return version_of(lib, x._version), x


@pytest.mark.parametrize("name", sorted(set(VIEWS) - READ_ONLY))
def test_in_place_change_of_a_view_changes_the_base_and_its_version(name):
    make, held = VIEWS[name]
    version, x = arrays(lambda lib: _view_change_seen_by_base(lib, make), mt)
    assert version == 2
    want = X23.copy()
    want[held] = -(want[held] + 10)
    assert_arrays([x], [want])


@pytest.mark.parametrize("name", sorted(set(VIEWS) - READ_ONLY))
def test_in_place_change_of_a_view_changes_the_base_in_torch_too(name, torch):
    same_as_torch(lambda lib: _view_change_seen_by_base(lib, VIEWS[name][0]), torch)


def test_writing_into_an_expanded_view_is_refused():
    x = T(mt, X23)
    v = x[:, None].expand(2, 4, 3)
    with pytest.raises((RuntimeError, ValueError)):
        v.add_(1.0)
    assert x.tolist() == X23.tolist() and x._version == 0


def _scalar_view(lib, make):
    x = T(lib, X23)
    v = make(x)
    v.fill_(-7.0)  # a view: the base changes
    w = make(x)
    x.add_(1.0)  # and the view sees the base's change
    return x, w, version_of(lib, w._version)




@pytest.mark.parametrize("name", sorted(SCALAR_VIEWS))
def test_an_element_selected_by_int_indices_is_a_view(name):
    make, flat = SCALAR_VIEWS[name]
    x, w, version = arrays(lambda lib: _scalar_view(lib, make), mt)
    selected = np.zeros_like(X23, dtype=bool)
    selected.reshape(-1)[flat] = True
    assert_arrays([x, w, version], [np.where(selected, -7.0, X23) + 1, np.array(-6.0), np.array(2.0)])


@pytest.mark.parametrize("name", sorted(SCALAR_VIEWS))
def test_an_element_selected_by_int_indices_is_a_view_in_torch(name, torch):
    make, _ = SCALAR_VIEWS[name]
    x, w, version = arrays(lambda lib: _scalar_view(lib, make), torch)
    assert w == -6.0 and version == 2


COPIES = {
    "clone": lambda lib, x: x.clone(),
    "advanced_index": lambda lib, x: x[[0, 1]],
    "bool_mask": lambda lib, x: x[x > 2],
    "reshape_needing_a_copy": lambda lib, x: x.T.reshape(6),
    "arithmetic": lambda lib, x: x + 0,
    "cast": lambda lib, x: x.to(lib.float32),
    "repeat": lambda lib, x: x.repeat(1, 1),
    "tril": lambda lib, x: x.tril(),
    "cat_two": lambda lib, x: lib.cat([x, x]),
    "tensor_of_a_tensor": lambda lib, x: lib.tensor(x.numpy().copy()),
}
ALIASING_COPIES = {
    "contiguous_of_a_transpose": lambda lib, x: x.T.contiguous(),
    "flip": lambda lib, x: x.flip(0),
    "cat_of_one": lambda lib, x: lib.cat([x]),
    "stack_of_one": lambda lib, x: lib.stack([x]),
}


def _copy_is_independent(lib, make):
    x = T(lib, X23)
    c = make(lib, x)
    before = c.detach().clone()
    x.mul_(2)
    c_version = c._version
    c.add_(100.0)
    return x, c - before, version_of(lib, c_version), version_of(lib, x._version)


@pytest.mark.parametrize("name", sorted(COPIES))
def test_an_op_that_copies_shares_neither_memory_nor_version(name):
    x, diff, c_version, x_version = arrays(lambda lib: _copy_is_independent(lib, COPIES[name]), mt)
    assert_arrays([x, c_version, x_version], [2 * X23, np.array(0.0), np.array(1.0)])
    assert (diff == 100.0).all()


@pytest.mark.parametrize("name", sorted(COPIES) + sorted(ALIASING_COPIES))
def test_an_op_that_copies_in_torch(name, torch):
    make = {**COPIES, **ALIASING_COPIES}[name]
    x, diff, c_version, x_version = arrays(lambda lib: _copy_is_independent(lib, make), torch)
    assert_arrays([x, c_version, x_version], [2 * X23, np.array(0.0), np.array(1.0)])
    assert (diff == 100.0).all()


@pytest.mark.parametrize("name", sorted(ALIASING_COPIES))
def test_ops_pytorch_documents_as_copies_do_not_alias(name):
    x, diff, c_version, x_version = arrays(lambda lib: _copy_is_independent(lib, ALIASING_COPIES[name]), mt)
    assert_arrays([x, c_version, x_version], [2 * X23, np.array(0.0), np.array(1.0)])
    assert (diff == 100.0).all()


def _grad_accumulates_in_place(lib):
    x = T(lib, X3, True)
    (x * 2).backward(T(lib, U3))
    first = x.grad
    (x * 3).backward(T(lib, U3))
    return first, x.grad


def test_gradient_accumulates_into_the_existing_grad_tensor():
    first, now = arrays(_grad_accumulates_in_place, mt)
    assert_arrays([first, now], [5 * U3, 5 * U3])


def test_gradient_accumulates_into_the_existing_grad_tensor_in_torch(torch):
    assert_arrays(arrays(_grad_accumulates_in_place, torch), [5 * U3, 5 * U3])


def test_detach_shares_the_counter_and_data_does_not():
    x = T(mt, X3, True)
    y = x * 2
    d, v = y.detach(), y[0:2]
    y_data = y.data
    d.add_(1.0)
    assert (y._version, d._version, v._version, y_data._version) == (1, 1, 1, 0)
    y_data.add_(1.0)
    assert (y._version, d._version, v._version) == (1, 1, 1)
    assert y.tolist() == [4.0, 6.0, 8.0] and v.tolist() == [4.0, 6.0]


# ---- the version check at backward --------------------------------------------------------------

ERRORS = []


def error_case(mt_match, marks=()):
    """`setup(lib) -> go`: go() must raise RuntimeError 'modified by an inplace operation' under
    torch, and under minitensor too, naming the op (`mt_match`)."""
    def register(fn):
        ERRORS.append(pytest.param(fn, mt_match, id=fn.__name__, marks=marks))
        return fn
    return register


MODIFIED = "modified by an inplace operation"


@error_case(rf"{MODIFIED}.*'MulBackward'")
def weight_not_requiring_grad_changed(lib):
    """The issue's `y = (x * w).sum(); w.add_(1); y.backward()`: w needs no grad, but mul saved it."""
    x, w = T(lib, X3, True), T(lib, [0.5, -1.0, 2.0])
    y = (x * w).sum()
    w.add_(1)
    return y.backward


@error_case(rf"{MODIFIED}.*its output.*'ExpBackward'")
def exp_output_zeroed_through_detach(lib):
    """The issue's `y = x.exp(); y.detach().zero_(); y.sum().backward()`: detach shares the counter."""
    x = T(lib, X3, True)
    y = x.exp()
    y.detach().zero_()
    return y.sum().backward


@error_case(rf"{MODIFIED}.*'MulBackward'")
def no_grad_change_of_a_slice_between_forward_and_backward(lib):
    """The issue's `with no_grad(): x[0:2].mul_(10)` between the forward and backward of (x * x).sum()."""
    x = T(lib, X3, True)
    y = (x * x).sum()
    with lib.no_grad():
        x[0:2].mul_(10)
    return y.backward


@error_case(rf"{MODIFIED}.*'MulBackward'")
def detach_changed_after_a_mul_saved_the_tensor(lib):
    x = T(lib, X3, True)
    y = x * 2
    z = y * y
    y.detach().add_(1)
    return z.sum().backward


@error_case(rf"{MODIFIED}.*'MulBackward'")
def setitem_on_a_saved_leaf_under_no_grad(lib):
    x = T(lib, X3, True)
    y = (x * x).sum()
    with lib.no_grad():
        x[2] = 0.0
    return y.backward


@error_case(rf"{MODIFIED}.*'WhereBackward'")
def where_mask_changed(lib):
    """PyTorch's where saves its condition: changing it after the forward is caught."""
    x, mask = T(lib, X3, True), lib.tensor([True, False, True])
    y = lib.where(mask, x, 0.0)
    mask[0] = False
    return lambda: y.backward(T(lib, U3))




@error_case(MODIFIED)
def masked_fill_mask_changed(lib):
    """The issue's `mask[0] = 0` after using mask in masked_fill: PyTorch's masked_fill saves the mask."""
    x, mask = T(lib, X3, True), lib.tensor([True, False, True])
    y = x.masked_fill(mask, 0.0)
    mask[0] = False
    return lambda: y.backward(T(lib, U3))


@error_case(MODIFIED)
def masked_fill_in_place_mask_changed(lib):
    x, mask = T(lib, X3, True), lib.tensor([True, False, True])
    y = x * 1
    y.masked_fill_(mask, 0.0)
    mask[0] = False
    return lambda: y.backward(T(lib, U3))


@error_case(rf"{MODIFIED}.*'ScaleBackward'")
def tensor_saved_with_save_for_backward_changed(lib):
    """A user Function: what save_for_backward got is checked too (here a tensor that is no input)."""
    Function = lib.autograd.Function

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor_holder):
            ctx.save_for_backward(factor_holder[0])
            return x * factor_holder[0]

        @staticmethod
        def backward(ctx, g):
            (factor,) = ctx.saved_tensors
            return g * factor, None

    x, factor = T(lib, X3, True), T(lib, [2.0, 3.0, 4.0])
    y = Scale.apply(x, [factor])
    factor.mul_(10)
    return lambda: y.backward(T(lib, U3))


@pytest.mark.parametrize("setup, mt_match", ERRORS)
def test_backward_refuses_a_tensor_changed_in_place(setup, mt_match):
    go = setup(mt)
    with pytest.raises(RuntimeError, match=mt_match):
        go()


@pytest.mark.parametrize("setup, mt_match", [p.values for p in ERRORS], ids=[p.id for p in ERRORS])
def test_torch_refuses_too(setup, mt_match, torch):
    go = setup(torch)
    with pytest.raises(RuntimeError, match=MODIFIED):
        go()


def test_the_failed_backward_can_be_fixed_by_changing_a_copy():
    """The error's advice: compute on a copy (`.clone()`), then the original backward works."""
    x, w = T(mt, X3, True), T(mt, [0.5, -1.0, 2.0])
    y = x * w
    w2 = w.clone()
    w2.add_(1)
    y.backward(T(mt, U3))
    assert_arrays([x.grad.numpy()], [U3 * [0.5, -1.0, 2.0]])


# ---- nodes that read no values: no check, and a second backward works ----------------------------

SHAPE_ONLY = {
    "add": lambda h: h + 2,
    "radd": lambda h: 2 + h,
    "add_two_tensors": lambda h: h + h,
    "sub": lambda h: h - 1,
    "rsub": lambda h: 1 - h,
    "sub_row": lambda h: h - h[0],
    "neg": lambda h: -h,
    "sum": lambda h: h.sum(dim=1, keepdim=True).expand(2, 3),
    "mean": lambda h: h.mean(dim=0).expand(2, 3),
    "reshape": lambda h: h.reshape(3, 2).reshape(2, 3),
    "permute": lambda h: h.permute(1, 0).T,
    "transpose": lambda h: h.transpose(0, 1).transpose(0, 1),
    "expand": lambda h: h[0:1].expand(2, 3),
    "basic_index": lambda h: h[0:2, 0:3],
    "cast": lambda h: h.float().double(),
    "unsqueeze_squeeze": lambda h: h.unsqueeze(0).squeeze(0),
    "flatten_view": lambda h: h.flatten().view(2, 3),
    "clone": lambda h: h.clone(),
}
SHAPE_ONLY_GRAD = {  # d(sum(U * op(h)))/dh, for the fixed U23
    "add": U23, "radd": U23, "add_two_tensors": 2 * U23, "sub": U23, "rsub": -U23, "neg": -U23,
    "sub_row": U23 - np.array([U23.sum(0), np.zeros(3)]),
    "sum": np.repeat(U23.sum(1, keepdims=True), 3, 1), "mean": np.repeat(U23.sum(0, keepdims=True) / 2, 2, 0),
    "reshape": U23, "permute": U23, "transpose": U23, "expand": np.array([U23.sum(0), np.zeros(3)]),
    "basic_index": U23, "cast": U23.astype(np.float32).astype(np.float64), "unsqueeze_squeeze": U23,
    "flatten_view": U23, "clone": U23,
}


def _shape_only_twice(lib, op):
    x = T(lib, X23, True)
    h = x + 0
    y = op(h)
    with lib.no_grad():
        h.mul_(5)  # its values changed, but no backward reads them
    u = lib.tensor(U23.astype(np.float32)) if y.dtype == lib.float32 else lib.tensor(U23)
    y.backward(u)
    first = x.grad.clone()
    y.backward(u)  # a second time, without retain_graph
    return first, x.grad


@pytest.mark.parametrize("name", sorted(SHAPE_ONLY))
def test_shape_only_nodes_ignore_in_place_changes_and_run_twice(name):
    want = SHAPE_ONLY_GRAD[name]
    assert_arrays(arrays(lambda lib: _shape_only_twice(lib, SHAPE_ONLY[name]), mt), [want, 2 * want], rtol=1e-6)


@pytest.mark.parametrize("name", sorted(SHAPE_ONLY))
def test_shape_only_nodes_same_as_torch(name, torch):
    same_as_torch(lambda lib: _shape_only_twice(lib, SHAPE_ONLY[name]), torch)


def test_second_backward_through_add_and_sum_doubles_the_gradient():
    """The issue's `(x + 2).sum()` twice."""
    x = T(mt, X3, True)
    y = (x + 2).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def _mul_twice(lib, retain):
    x = T(lib, X3, True)
    y = (x * 2).sum()
    y.backward(retain_graph=retain)
    return x, y


def test_second_backward_through_mul_raises():
    """The issue's `(x * 2).sum()` twice; retain_graph=True allows it."""
    x, y = _mul_twice(mt, False)
    with pytest.raises(RuntimeError, match=r"backward through the graph a second time.*'MulBackward'"):
        y.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    x, y = _mul_twice(mt, True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


def test_second_backward_through_mul_raises_in_torch(torch):
    x, y = _mul_twice(torch, False)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    x, y = _mul_twice(torch, True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


# ---- a base changed in place after a view of it was taken -----------------------------------------

def _raises_or_equals(fn, want):
    """minitensor's promise for these: raise (the documented difference), or give PyTorch's values."""
    try:
        got = arrays(fn, mt)
    except RuntimeError as e:
        assert "in-place" in str(e) or "inplace" in str(e), e
        return
    assert_arrays(got, want)


def _graph_base_mul_after_slice(lib):
    x = T(lib, X3, True)
    y = x * 2
    v = y[0:2]
    y.mul_(3)  # recorded: y = 6x, and v (a view of y) is 6x[0:2] too
    (v * 1).backward(T(lib, U2))
    return v, x.grad


def _graph_base_mul_after_reshape(lib):
    x = T(lib, X3, True)
    y = x * 2
    v = y.view(3, 1)
    y.mul_(3)
    (v * 1).backward(T(lib, U3[:, None]))
    return v, x.grad


def _plain_base_written_after_slice(lib):
    h = T(lib, [1.0, 2.0], True)
    buf = lib.zeros(3, dtype=lib.float64)
    v = buf[0:2]
    buf[0:2] = h * 2  # v sees 2h: in PyTorch it is in the graph too
    loss = (v * T(lib, U2)).sum() + h.sum()
    loss.backward()
    return v, h.grad




def test_view_taken_before_a_recorded_change_of_its_graph_base():
    _raises_or_equals(_graph_base_mul_after_slice, [6 * X3[:2], np.append(6 * U2, 0.0)])


def test_reshaped_view_taken_before_a_recorded_change_of_its_graph_base():
    _raises_or_equals(_graph_base_mul_after_reshape, [6 * X3[:, None], 6 * U3])


def test_view_taken_before_a_plain_buffer_is_written_with_graph_values():
    _raises_or_equals(_plain_base_written_after_slice, [np.array([2.0, 4.0]), 2 * U2 + 1])


@pytest.mark.parametrize("fn", [_graph_base_mul_after_slice, _graph_base_mul_after_reshape,
                                _plain_base_written_after_slice])
def test_view_taken_before_a_recorded_change_torch_values(fn, torch):
    want = {_graph_base_mul_after_slice: [6 * X3[:2], np.append(6 * U2, 0.0)],
            _graph_base_mul_after_reshape: [6 * X3[:, None], 6 * U3],
            _plain_base_written_after_slice: [np.array([2.0, 4.0]), 2 * U2 + 1]}[fn]
    assert_arrays(arrays(fn, torch), want)


def test_base_changed_after_taking_an_element_of_a_graph_tensor():
    x = T(mt, X3, True)
    y = x * 2
    v = y[0]
    y.mul_(3)
    try:
        (v * 1).backward()
    except RuntimeError as e:  # minitensor may refuse (the documented difference) ...
        assert "inplace" in str(e) or "in-place" in str(e)
        return
    assert v.item() == 6.0  # ... or give PyTorch's value and gradient
    assert x.grad.tolist() == [6.0, 0.0, 0.0]


def _base_changed_under_no_grad_after_slice(lib):
    x = T(lib, X3, True)
    y = x * 2
    v = y[0:2]
    with lib.no_grad():
        y.mul_(2)  # not recorded: v = 4x[0:2] in value, 2x[0:2] for autograd
    (v * v).backward(T(lib, U2))
    return v, x.grad


def test_base_changed_under_no_grad_after_a_view_was_taken():
    _raises_or_equals(_base_changed_under_no_grad_after_slice,
                      [4 * X3[:2], np.append(U2 * 2 * 4 * X3[:2] * 2, 0.0)])


def test_base_changed_under_no_grad_after_a_view_was_taken_same_as_torch(torch):
    same_as_torch(_base_changed_under_no_grad_after_slice, torch)


def _other_part_of_base_written_after_slice(lib):
    x = T(lib, X3, True)
    y = x * 2
    v = y[0:2]
    y[2] = 5.0  # elements v doesn't hold
    (v * 1).backward(T(lib, U2))
    return v, x.grad


def test_other_part_of_the_base_written_after_a_view_was_taken():
    _raises_or_equals(_other_part_of_base_written_after_slice, [2 * X3[:2], np.append(2 * U2, 0.0)])


def test_other_part_of_the_base_written_torch_values(torch):
    assert_arrays(arrays(_other_part_of_base_written_after_slice, torch), [2 * X3[:2], np.append(2 * U2, 0.0)])


def _no_grad_view_changed_with_grad(lib):
    x = T(lib, X3, True)
    y = x * 2
    with lib.no_grad():
        v = y[0:2]
    v.mul_(3)  # in grad mode: PyTorch refuses ("A view was created in no_grad mode ...")
    y.backward(T(lib, U3))
    return y, x.grad


def test_view_made_under_no_grad_then_changed_in_place_with_grad_raises():
    with pytest.raises(RuntimeError):
        _no_grad_view_changed_with_grad(mt)


def test_view_made_under_no_grad_then_changed_in_place_with_grad_raises_in_torch(torch):
    with pytest.raises(RuntimeError, match="no_grad mode"):
        _no_grad_view_changed_with_grad(torch)


# ---- MultiHeadAttention.last_weights: changing it never silently changes the gradients -----------

def _mha_grads(fused, use_weights, change=None, need_weights=True):
    mt.manual_seed(0)
    mha = attention.MultiHeadAttention(8, 2, dropout=0.3 if fused == "dropout" else 0.0).double()
    mha.fused = fused if fused != "dropout" else False
    x = mt.randn(2, 5, 8, dtype=mt.float64, requires_grad=True)
    out, weights = mha(x, is_causal=True, need_weights=need_weights)
    gen = np.random.default_rng(3)
    loss = (out * mt.tensor(gen.standard_normal(tuple(out.shape)))).sum()
    if use_weights:
        loss = loss + (weights * mt.tensor(gen.standard_normal(tuple(weights.shape)))).sum()
    if change is not None:
        change(mha)
    loss.backward()
    return [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in mha.parameters()]


@pytest.mark.parametrize("fused", [True, False, "dropout"], ids=["fused", "composed", "composed_with_dropout"])
@pytest.mark.parametrize("use_weights", [False, True], ids=["loss_of_output", "loss_of_output_and_weights"])
@pytest.mark.parametrize("how", ["mul_", "zero_", "setitem", "fill_diagonal_block"])
def test_changing_mha_last_weights_in_place_raises_or_leaves_the_gradients(fused, use_weights, how):
    """`last_weights` is `weights.detach()`, which shares the weights' memory and version counter:
    an in-place change of it must either raise at backward or not change the gradients."""
    def change(mha):
        w = mha.last_weights
        assert not w.requires_grad
        if how == "mul_":
            w.mul_(100)
        elif how == "zero_":
            w.zero_()
        elif how == "setitem":
            w[0, 0] = 1.0
        else:
            w[:, :, 0:2, 0:2] = 0.5
    want = _mha_grads(fused, use_weights)
    try:
        got = _mha_grads(fused, use_weights, change)
    except RuntimeError as e:
        assert "in-place" in str(e) or "inplace" in str(e)
        return
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_mha_last_weights_is_detached_and_none_without_weights():
    mha = attention.MultiHeadAttention(8, 2)
    x = mt.randn(5, 8)
    out, w = mha(x)  # unbatched
    assert mha.last_weights.shape == (1, 2, 5, 5) and mha.last_weights.grad_fn is None
    assert np.shares_memory(mha.last_weights.numpy(), w.numpy(force=True))
    mha(x, need_weights=False)
    assert mha.last_weights is None
