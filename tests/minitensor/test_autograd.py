r"""The engine: accumulation, graph lifetime, hooks, grad modes, `autograd.grad` and user Functions.

These are the cases from the guide's list of traps: fan-out (`x * x`), diamonds, repeated indices,
very deep graphs, a second backward through a freed graph, `.grad` accumulation, freeing by
reference counting, and in-place changes to tensors a backward still needs.
"""
import gc
import weakref

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.autograd import Function, grad
from minitensor.testing import assert_close


def leaf(values, dtype=mt.float64):
    return mt.tensor(values, dtype=dtype, requires_grad=True)


# ---- accumulation -------------------------------------------------------------------------------

def test_reuse_in_one_op_accumulates():
    x = leaf([1.5, -2.0])
    (x * x).sum().backward()
    assert_close(x.grad, [3.0, -4.0])
    x.grad = None
    (x + x).sum().backward()
    assert_close(x.grad, [2.0, 2.0])


def test_diamond_b_is_a_plus_a_and_c_is_b_plus_b_gives_four():
    a = leaf(3.0)
    b = a + a
    c = b + b
    c.backward()
    assert a.grad.item() == 4.0


def test_diamond_with_different_paths():
    # d = a*b + exp(a): dd/da = b + exp(a) sums two paths that meet again at the end
    a, b = leaf(0.5), leaf(2.0)
    d = a * b + a.exp()
    d.backward()
    assert_close(a.grad, 2.0 + np.exp(0.5))
    assert_close(b.grad, 0.5)


def test_repeated_integer_indices_accumulate():
    table = leaf(np.arange(8.0).reshape(4, 2))
    idx = mt.tensor([[1, 3, 1], [1, 0, 3]])
    rows = table[idx]  # an embedding lookup with duplicates
    rows.backward(mt.ones(2, 3, 2, dtype=mt.float64))
    assert_close(table.grad, [[1, 1], [3, 3], [0, 0], [2, 2]])


def test_repeated_indices_via_list_and_index_select_accumulate():
    x = leaf([10.0, 20.0, 30.0])
    (x[[0, 0, 2, 0]] * mt.tensor([1.0, 2.0, 3.0, 4.0], dtype=mt.float64)).sum().backward()
    assert_close(x.grad, [7.0, 0.0, 3.0])
    x.grad = None
    x.index_select(0, mt.tensor([2, 2])).sum().backward()
    assert_close(x.grad, [0.0, 0.0, 2.0])


@pytest.mark.slow  # builds and walks 100,000 nodes
def test_a_100000_op_chain_backpropagates_without_recursion():
    a = leaf(1.0)
    b = a
    for _ in range(100_000):
        b = -b
    b.backward()  # an even number of negations
    assert a.grad.item() == 1.0
    del b  # freeing the chain must not recurse either


def test_leaf_grad_accumulates_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    (x * x).sum().backward()
    assert_close(x.grad, [3.0 + 2.0, 3.0 + 4.0])
    x.grad = None
    (x * 3).sum().backward()
    assert_close(x.grad, [3.0, 3.0])


def test_gradient_has_its_tensors_shape_and_dtype_after_broadcasting():
    bias = leaf(np.zeros(4), dtype=mt.float32)
    x = mt.randn(2, 3, 4)
    (x + bias).backward(mt.ones(2, 3, 4))
    assert bias.grad.shape == (4,) and bias.grad.dtype == mt.float32
    assert_close(bias.grad, np.full(4, 6.0, np.float32))


# ---- graph lifetime -----------------------------------------------------------------------------

def test_second_backward_without_retain_graph_is_a_clear_error():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"backward through the graph a second time.*retain_graph=True"):
        y.backward()


def test_second_backward_with_retain_graph_accumulates():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, [4.0, 8.0])


def test_graph_is_freed_by_reference_counting_alone():
    was_enabled = gc.isenabled()
    gc.disable()  # no cycle collector: only reference counts may free the graph
    try:
        x = leaf(np.ones(3))
        h = x.exp()
        node, h_ref = weakref.ref(h.grad_fn), weakref.ref(h)
        z = (h * 2).sum()
        z_node = weakref.ref(z.grad_fn)
        del h
        assert node() is not None  # still needed by z's graph
        del z
        assert node() is None and h_ref() is None and z_node() is None
    finally:
        if was_enabled:
            gc.enable()


def test_graph_is_freed_after_backward_and_del_with_gc_disabled():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        x = leaf(np.ones(3))
        h = F.softmax(x * 2, dim=0)
        loss = (h * mt.tensor([1.0, 2.0, 3.0], dtype=mt.float64)).sum()
        refs = [weakref.ref(h), weakref.ref(h.grad_fn), weakref.ref(loss.grad_fn)]
        loss.backward()
        del h, loss
        assert all(r() is None for r in refs)
        assert x.grad is not None  # the leaf and its gradient stay
    finally:
        if was_enabled:
            gc.enable()


def test_after_backward_a_graph_still_referenced_holds_no_intermediate_results():
    # As in PyTorch: `loss = ...; loss.backward()` in a loop keeps the last graph until `loss` is
    # rebound, so that graph must not keep the step's activations alive.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        x, w = leaf(np.ones((4, 3))), leaf(np.full((3, 2), 0.5))
        h = (x @ w).tanh()  # tanh's backward reads its output
        p = F.softmax(h * 2, dim=1)
        loss = (p * mt.tensor([[1.0, -2.0]], dtype=mt.float64)).sum()
        refs = [weakref.ref(h), weakref.ref(p)]
        del h, p
        assert all(r() is not None for r in refs)  # backward still needs them
        loss.backward()
        assert loss.grad_fn is not None and all(r() is None for r in refs)
    finally:
        if was_enabled:
            gc.enable()


def test_a_backward_reading_its_output_needs_no_one_else_to_hold_it():
    x = leaf([0.5, -1.0, 2.0])
    weight = mt.tensor([1.0, 3.0, -2.0], dtype=mt.float64)
    loss = (x.exp().sigmoid() * weight).sum()  # neither output is referenced from outside the graph
    (gx,) = grad(loss, [x], create_graph=True)
    s = 1 / (1 + np.exp(-np.exp(x.numpy(force=True))))
    assert_close(gx, weight.numpy() * s * (1 - s) * np.exp(x.numpy(force=True)))
    assert gx.grad_fn is not None  # the VJP, recorded through the saved outputs, is differentiable again
    (gx * weight).sum().backward()
    assert x.grad is not None and np.isfinite(x.grad.numpy()).all()


# ---- hooks and retain_grad ----------------------------------------------------------------------

def test_register_hook_replaces_the_gradient():
    x = leaf([1.0, 2.0])
    h = x * 3
    h.register_hook(lambda g: g * 10)
    (h * h).sum().backward()  # dL/dh = 2h = [6, 12], then x 10, then x 3
    assert_close(x.grad, [180.0, 360.0])


def test_hook_returning_none_keeps_the_gradient_and_sees_it():
    seen = []
    x = leaf([1.0, 2.0])
    h = x * 3
    h.register_hook(lambda g: seen.append(g.numpy(force=True).copy()))
    h.sum().backward()
    assert_close(seen[0], [1.0, 1.0])
    assert_close(x.grad, [3.0, 3.0])


def test_leaf_hook_and_handle_remove():
    x = leaf([1.0, 2.0])
    handle = x.register_hook(lambda g: g * 0)
    (x * 2).sum().backward()
    assert_close(x.grad, [0.0, 0.0])
    handle.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert_close(x.grad, [2.0, 2.0])


def test_retain_grad_keeps_a_non_leaf_gradient():
    x = leaf([1.0, 2.0])
    h = x * 3
    other = x * 4
    h.retain_grad()
    (h * h + other).sum().backward()
    assert_close(h.grad, [6.0, 12.0])
    assert other.grad is None  # not retained: non-leaf gradients are not kept by default
    assert h.retains_grad and not other.retains_grad


def test_hook_on_a_tensor_without_grad_is_an_error():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        mt.ones(2).register_hook(lambda g: g)


# ---- grad modes ---------------------------------------------------------------------------------

def test_no_grad_and_enable_grad_as_context_managers():
    x = leaf([1.0])
    with mt.no_grad():
        y = x * 2
        with mt.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and z.grad_fn is not None
    assert mt.is_grad_enabled()


def test_grad_modes_as_decorators():
    x = leaf([1.0])

    @mt.no_grad()
    def evaluate(t):
        return t * 2

    @mt.enable_grad()
    def train(t):
        return t * 2

    assert not evaluate(x).requires_grad
    with mt.no_grad():
        assert train(x).requires_grad
    assert mt.is_grad_enabled()


def test_set_grad_enabled_context_decorator_and_plain_call():
    x = leaf([1.0])
    with mt.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad

    @mt.set_grad_enabled(False)
    def f(t):
        return t * 2

    assert mt.is_grad_enabled()  # decorating must not switch it off
    assert not f(x).requires_grad and mt.is_grad_enabled()
    try:
        mt.set_grad_enabled(False)
        assert not mt.is_grad_enabled()
    finally:
        mt.set_grad_enabled(True)
    assert mt.is_grad_enabled()


def test_grad_mode_is_restored_after_an_exception():
    with pytest.raises(ValueError):
        with mt.no_grad():
            raise ValueError("boom")
    assert mt.is_grad_enabled()


# ---- autograd.grad --------------------------------------------------------------------------------

def test_autograd_grad_returns_gradients_and_leaves_dot_grad_alone():
    x, w = leaf([1.0, 2.0]), leaf([3.0, -1.0])
    (gx, gw) = grad((x * w).sum(), [x, w])
    assert_close(gx, [3.0, -1.0])
    assert_close(gw, [1.0, 2.0])
    assert x.grad is None and w.grad is None


def test_backward_from_two_outputs_where_one_leads_into_the_other():
    """`h` is an output and also an input of the other output `y`: its node runs once, with the
    gradient from both (the engine must count y's edge into it, and not walk it twice)."""
    x = leaf([1.0, -2.0, 0.5])
    h = (x * 3.0).exp()                                 # a node behind h's own, counted once
    y = (h * h).sum()
    u = mt.tensor([0.3, -1.1, 2.0], dtype=mt.float64)
    mt.autograd.backward([y, h], [None, u], retain_graph=True)
    e = np.exp(3 * x.numpy(force=True))
    want = 3 * (2 * e + u.numpy(force=True)) * e                     # d/dx [sum(e^6x) + u . e^3x]
    assert_close(x.grad, want)
    (gx,) = grad([h, y], [x], grad_outputs=[u, None])   # the same, roots in the other order
    assert_close(gx, want)


def test_backward_from_a_leaf_and_a_node_together():
    """A leaf among the outputs gets its upstream gradient added to what flows back to it from the
    other outputs (the engine keeps leaves' and nodes' pending gradients in one dict), and the
    same output given twice gets both gradients."""
    x = leaf([1.0, -2.0, 0.5])
    u = mt.tensor([0.3, -1.1, 2.0], dtype=mt.float64)
    y = (x * x).sum()
    mt.autograd.backward([x, y], [u, None], retain_graph=True)
    assert_close(x.grad, u.numpy(force=True) + 2 * x.numpy(force=True))
    (gx,) = grad([x, x], [x], grad_outputs=[u, u])
    assert_close(gx, 2 * u.numpy(force=True))
    z = x * 3.0
    (gx,) = grad([z, z, y], [x], grad_outputs=[u, u, None])
    assert_close(gx, 6 * u.numpy(force=True) + 2 * x.numpy(force=True))


def test_autograd_grad_allow_unused():
    x, unused = leaf([1.0, 2.0]), leaf([5.0])
    with pytest.raises(RuntimeError, match=r"grad: The differentiated Tensor at index 1 .* not .* used.*allow_unused"):
        grad((x * 2).sum(), [x, unused])
    gx, gu = grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert_close(gx, [2.0, 2.0])
    assert gu is None


def test_autograd_grad_create_graph_gives_differentiable_gradients():
    x = leaf([1.0, 2.0])
    (g,) = grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad
    assert_close(g, [3.0, 12.0])
    (gg,) = grad(g.sum(), x)
    assert_close(gg, [6.0, 12.0])


def test_autograd_grad_with_grad_outputs():
    x = leaf([1.0, 2.0, 3.0])
    (g,) = grad(x * x, x, grad_outputs=mt.tensor([1.0, 0.0, -1.0], dtype=mt.float64))
    assert_close(g, [2.0, 0.0, -6.0])


def test_backward_of_a_non_scalar_needs_a_gradient():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"only for scalar outputs.*\(2,\)"):
        (x * 2).backward()


# ---- user Functions -----------------------------------------------------------------------------

class ScaledCube(Function):
    r"""out = s * x^3 (s a number);  VJP: gx = 3 s x^2 g, nothing for s."""

    @staticmethod
    def forward(ctx, x, s):
        ctx.save_for_backward(x)
        ctx.scale = s
        return s * x.numpy(force=True) ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True, False)
        return 3 * ctx.scale * x * x * g, None


def test_user_function_save_for_backward_and_needs_input_grad():
    x = leaf([1.0, -2.0])
    y = ScaledCube.apply(x, 0.5)
    assert y.grad_fn is not None and y.grad_fn.name() == "ScaledCubeBackward"
    y.sum().backward()
    assert_close(x.grad, [1.5, 6.0])
    assert mt.autograd.gradcheck(lambda t: ScaledCube.apply(t, 0.5), (leaf([0.3, -1.1]),))


def test_forward_can_read_needs_input_grad_as_in_pytorch():
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen.append(ctx.needs_input_grad)
            return a.numpy(force=True) * b.numpy(force=True)

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.inputs
            return g * b, None

    a, b = leaf([2.0]), mt.tensor([3.0], dtype=mt.float64)
    Scale.apply(a, b).sum().backward()
    with mt.no_grad():
        Scale.apply(a, b)
    assert seen == [(True, False), (False, False)]
    assert_close(a.grad, [3.0])


def test_needs_input_grad_is_false_for_inputs_without_grad():
    seen = {}

    class Product(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a.numpy(force=True) * b.numpy(force=True)

        @staticmethod
        def backward(ctx, g):
            seen["needs"] = ctx.needs_input_grad
            a, b = ctx.inputs
            return (g * b if ctx.needs_input_grad[0] else None), (g * a if ctx.needs_input_grad[1] else None)

    a, b = leaf([2.0]), mt.tensor([3.0], dtype=mt.float64)
    Product.apply(a, b).sum().backward()
    assert seen["needs"] == (True, False)
    assert_close(a.grad, [3.0])
    assert b.grad is None


def test_saved_tensors_are_gone_after_backward():
    x = leaf([1.0])
    y = ScaledCube.apply(x, 1.0)
    node = y.grad_fn
    y.backward(mt.ones(1, dtype=mt.float64))
    with pytest.raises(RuntimeError, match="second time"):
        node.saved_tensors


def test_function_without_grad_inputs_records_nothing():
    y = ScaledCube.apply(mt.tensor([1.0], dtype=mt.float64), 2.0)
    assert y.grad_fn is None and not y.requires_grad


def test_wrong_shaped_gradient_from_a_user_function_names_the_op():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x.numpy(force=True).sum()

        @staticmethod
        def backward(ctx, g):
            return g  # should be expanded to x's shape

    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"'BadShapeBackward'.*shape \(\).*input 0.*shape \(3,\)"):
        BadShape.apply(x).backward()
    assert x.grad is None  # nothing was accumulated by the failed backward


def test_wrong_number_of_gradients_names_the_op():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a.numpy(force=True) + b.numpy(force=True)

        @staticmethod
        def backward(ctx, g):
            return g

    a, b = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match=r"'TooFewBackward' returned 1 gradients.*2 arguments"):
        TooFew.apply(a, b).sum().backward()


# ---- in-place changes, aliasing, detach ----------------------------------------------------------

def test_in_place_change_of_a_saved_input_is_detected():
    x = leaf([1.0, 2.0])
    h = x * 2
    y = h.log()  # log's backward reads h
    with mt.no_grad():
        h.add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*'LogBackward'"):
        y.sum().backward()


def test_in_place_change_of_a_saved_output_is_detected():
    x = leaf([1.0, 2.0])
    h = x.exp()  # exp's backward reads its own output
    with mt.no_grad():
        h.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: its output.*'ExpBackward'"):
        (h * 1.0).sum().backward()


def test_in_place_change_of_an_unused_output_is_fine():
    x = leaf([1.0, 2.0])
    h = x + 1  # add's backward reads neither its inputs' values nor its output
    with mt.no_grad():
        h.mul_(2.0)
    (h * 3).sum().backward()
    assert_close(x.grad, [3.0, 3.0])


def test_in_place_on_a_leaf_that_requires_grad_is_refused():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.add_(1.0)
    assert_close(x, [1.0, 2.0])
    with mt.no_grad():
        x.add_(1.0)  # the optimizer's way
    assert_close(x, [2.0, 3.0])


def test_grad_never_aliases_another_tensors_memory():
    x = leaf([1.0, 2.0])
    upstream = mt.tensor([1.0, 1.0], dtype=mt.float64)
    (x + 0).backward(upstream)
    assert not np.shares_memory(x.grad.numpy(force=True), upstream.numpy(force=True))
    upstream.data[0] = 99.0
    assert_close(x.grad, [1.0, 1.0])
    y = leaf([3.0, 4.0])
    z = x * 1 + y * 1
    z.backward(upstream)
    assert not np.shares_memory(x.grad.numpy(force=True), y.grad.numpy(force=True))


def test_grad_is_a_copy_whenever_anyone_else_holds_the_gradient():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x + y).sum().backward()  # Add hands the same gradient tensor to both leaves
    assert not np.shares_memory(x.grad.numpy(force=True), y.grad.numpy(force=True))
    kept = []
    z = leaf([1.0, 2.0])
    z.register_hook(lambda g: kept.append(g))
    (z * 3).sum().backward()
    assert not np.shares_memory(z.grad.numpy(force=True), kept[0].numpy(force=True))
    w = leaf([[1.0, 2.0]])
    w.reshape(2).backward(mt.tensor([1.0, 1.0], dtype=mt.float64))  # Reshape's VJP returns a view
    assert w.grad.numpy(force=True).base is None or not np.shares_memory(w.grad.numpy(force=True), w.numpy(force=True))


def test_grad_of_a_leaf_used_as_root_is_a_copy():
    x = leaf([1.0, 2.0])
    g = mt.tensor([5.0, 6.0], dtype=mt.float64)
    x.backward(g)
    assert not np.shares_memory(x.grad.numpy(force=True), g.numpy(force=True))


def test_detach_shares_data_and_cuts_the_graph():
    x = leaf([1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert np.shares_memory(d.numpy(force=True), y.numpy(force=True))
    assert d.grad_fn is None and not d.requires_grad and d.is_leaf
    (y.sum() + (d * 5).sum()).backward()
    assert_close(x.grad, [2.0, 2.0])  # nothing flows through the detached branch


def test_requires_grad_rules_for_integer_tensors():
    with pytest.raises(RuntimeError, match="floating point.*int64"):
        mt.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        mt.arange(3).requires_grad_()
    idx = mt.tensor([0, 1])
    assert not idx.requires_grad
    x = leaf([1.0, 2.0])
    assert not (x > 1).requires_grad  # comparisons have no gradient
    assert not x.argmax().requires_grad
    assert (x * idx).requires_grad  # an int operand just has no gradient of its own


def test_requires_grad_propagates_and_leaves_are_leaves():
    x, c = leaf([1.0]), mt.tensor([2.0], dtype=mt.float64)
    y = x * c
    assert y.requires_grad and not y.is_leaf and x.is_leaf and c.is_leaf
    assert not (c * 2).requires_grad
    with pytest.raises(RuntimeError, match="only change requires_grad of leaf"):
        y.requires_grad_(False)


def test_backward_frees_what_forward_kept_on_ctx_unless_the_graph_is_retained():
    x = leaf([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
    w = mt.tensor([1.0, -2.0, 0.5], dtype=mt.float64)
    y = mt.nn.functional.layer_norm(x, (3,))
    node = y.grad_fn
    assert "xhat" in node.__dict__  # LayerNorm keeps xhat and rstd for its backward
    (y * w).sum().backward(retain_graph=True)
    first = x.grad.numpy(force=True).copy()
    assert "xhat" in node.__dict__
    (y * w).sum().backward()  # a second backward still has what it needs, then frees it
    np.testing.assert_allclose(x.grad.numpy(force=True), 2 * first)
    assert "xhat" not in node.__dict__ and node.inputs is None and node.saved == ()


def test_retain_grad_and_explain_work_on_a_node_that_keeps_no_output():
    x = leaf([1.0, 2.0])
    scaled = x * 3  # Mul reads no output, so its node holds no reference to `scaled`
    scaled.retain_grad()
    total = (scaled * scaled).sum()
    report = mt.autograd.explain(total, names={"scaled": scaled, "total": total})
    assert [r.output_name for r in report.rows][-1] == "scaled"
    total.backward()
    assert_close(scaled.grad, [6.0, 12.0])


def test_an_op_of_three_arguments_records_only_those_needing_a_gradient():
    x, w = leaf([[1.0, 2.0]]), leaf([[0.5, -1.0], [2.0, 1.0]])
    b = mt.tensor([0.1, 0.2], dtype=mt.float64)  # a constant bias
    y = F.linear(x, w, b)
    assert y.grad_fn.needs_input_grad == (True, True, False)
    assert [i for i, *_ in y.grad_fn.edges] == [0, 1]
    weight = mt.tensor([[1.0, -2.0]], dtype=mt.float64)
    (y * weight).sum().backward()
    assert_close(x.grad, weight.numpy(force=True) @ w.numpy(force=True))
    assert_close(w.grad, weight.numpy(force=True).T @ x.numpy(force=True))
