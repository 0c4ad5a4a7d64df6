"""A node's own hooks (`grad_fn.register_prehook`, `grad_fn.register_hook`, `grad_fn.metadata`) and
torch.autograd.graph (`Node`, `increment_version`), against PyTorch on programs whose nodes are PyTorch's."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import graph
from minitensor.run import torch_is_minitensor

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
W = np.array([[1.0, 2.0], [-1.0, 0.5], [0.25, -2.0]])


def _hooked(lib):
    """The order of every hook and what each saw, and the leaves' gradients, for x @ w -> tanh -> * v -> sum."""
    x = lib.tensor(X, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    h = lib.tanh(x @ w)
    out = h * lib.tensor(np.linspace(-1, 1, 4).reshape(2, 2))
    log = []

    def shapes(gs):
        return [None if g is None else tuple(g.shape) for g in gs]
    h.register_hook(lambda g: log.append(("tensor hook", tuple(g.shape))))
    h.grad_fn.register_prehook(lambda go: log.append(("tanh pre", shapes(go))))
    h.grad_fn.register_hook(lambda gi, go: log.append(("tanh post", shapes(gi), shapes(go))))
    mm = h.grad_fn.next_functions[0][0]
    mm.register_prehook(lambda go: (go[0] * 2,))  # doubles what reaches the product
    mm.register_hook(lambda gi, go: (gi[0], None))  # and drops w's gradient
    mm.metadata["seen"] = True
    out.sum().backward()
    return log, x.grad.numpy(), w.grad, mm.metadata


def test_node_hooks_run_and_replace_as_pytorchs():
    ours = _hooked(mt)
    assert [entry[0] for entry in ours[0]] == ["tensor hook", "tanh pre", "tanh post"]
    assert ours[2] is None and ours[3] == {"seen": True}
    torch = pytest.importorskip("torch")
    theirs = _hooked(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    assert theirs[2] is None


def test_a_post_hook_sees_a_numpy_vjps_gradients_as_tensors():
    x = mt.tensor(X, requires_grad=True)
    y = x * mt.tensor(X)  # Mul's backward runs the speed layer's numpy twin
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append([type(g).__name__ for g in gi]))
    y.sum().backward()
    assert seen == [["Tensor", "NoneType"]]
    np.testing.assert_array_equal(x.grad.numpy(), X)


@pytest.mark.parametrize("hook, error, message", [
    ("post", RuntimeError, r"hook 'bad' has returned an incorrect number of values \(got 1, but expected 2\)"),
    ("pre", RuntimeError, r"hook 'bad' has returned an incorrect number of values \(got 2, but expected 1\)"),
    ("pre-not-tuple", TypeError, "expected tuple, but hook returned 'Tensor'"),
])
def test_a_hook_returning_the_wrong_thing_gets_pytorchs_error(hook, error, message):
    for lib in (mt, pytest.importorskip("torch")):
        x = lib.tensor(X, requires_grad=True)
        y = x * lib.tensor(X)

        def bad(*args):
            if hook == "post":
                return (args[0][0],)
            return (args[0][0], args[0][0]) if hook == "pre" else args[0][0]
        (y.grad_fn.register_hook if hook == "post" else y.grad_fn.register_prehook)(bad)
        with pytest.raises(error, match=message):
            y.sum().backward()


def test_a_removed_node_hook_no_longer_runs():
    x = mt.tensor(X, requires_grad=True)
    y = x * 3.0
    handle = y.grad_fn.register_prehook(lambda go: (go[0] * 0,))
    handle.remove()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(X.shape, 3.0))


def test_every_grad_fn_is_a_node_and_increment_version_is_an_in_place_change():
    x = mt.tensor(X, requires_grad=True)
    y = (x * x).sum()
    assert isinstance(y.grad_fn, graph.Node) and not isinstance(x, graph.Node)
    graph.increment_version(x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    with pytest.raises(RuntimeError, match="increment_version expect a Iterable\\[Tensor\\] as input"):
        graph.increment_version(3)
    t = mt.ones(2)
    before = t._version
    graph.increment_version([t, t])
    assert t._version == before + 2
    torch = pytest.importorskip("torch")
    tt = torch.ones(2)
    before = tt._version
    torch.autograd.graph.increment_version([tt, tt])
    assert tt._version == before + 2


def test_a_script_imports_torch_autograd_graph():
    with torch_is_minitensor():
        import torch
        from torch.autograd.graph import Node, increment_version  # noqa: F401
        assert isinstance((torch.ones(1, requires_grad=True) * 2).grad_fn, Node)


def _blitz(lib):
    """The 60-minute blitz's walk down loss.grad_fn.next_functions, as printed names (addresses cut)."""
    lib.manual_seed(0)
    fc1, fc2 = lib.nn.Linear(4, 3), lib.nn.Linear(3, 2)
    output = fc2(lib.nn.functional.relu(fc1(lib.randn(1, 4))))
    loss = lib.nn.MSELoss()(output, lib.randn(2).view(1, -1))

    def shown(edges):
        return [(None if n is None else repr(n).split(" object")[0], i) for n, i in edges]
    node, chain = loss.grad_fn, []
    while node is not None:
        chain.append(shown(node.next_functions))
        node = node.next_functions[0][0] if node.next_functions else None
    linear = loss.grad_fn.next_functions[0][0]
    leaf = linear.next_functions[0][0]
    return chain, leaf.variable is fc2.bias, shown(linear.next_functions[2][0].next_functions)


def test_next_functions_walk_the_graph_as_pytorchs_blitz_prints_it():
    ours = _blitz(mt)
    assert ours[0][0] == [("<AddmmBackward0", 0), (None, 0)] and ours[1]
    assert ours[2] == [("<AccumulateGrad", 0)]  # the weight behind its transpose
    torch = pytest.importorskip("torch")
    assert ours == _blitz(torch)


def test_next_functions_of_elementwise_ops_and_after_backward():
    def edges(lib):
        x = lib.tensor(X, requires_grad=True)
        c = lib.tensor(X)
        y = lib.tanh(x * c + x)
        before = [[(None if n is None else repr(n).split(" object")[0], i) for n, i in node.next_functions]
                  for node in (y.grad_fn, y.grad_fn.next_functions[0][0])]
        same = y.grad_fn.next_functions[0][0].next_functions[1][0] is y.grad_fn.next_functions[0][0] \
            .next_functions[0][0].next_functions[0][0]  # one AccumulateGrad per leaf
        return before, same

    ours = edges(mt)
    assert ours[1]
    torch = pytest.importorskip("torch")
    assert ours == edges(torch)


def test_gradient_edges_keep_minitensors_own_walk():
    x = mt.tensor(X, requires_grad=True)
    w = mt.tensor(X, requires_grad=True)
    y = x * w
    assert [(t is x, i) for t, i in y.grad_fn.gradient_edges][:1] == [(True, 0)]
    assert [i for _, i in y.grad_fn.gradient_edges] == [0, 1]


def _ops(lib):
    """name -> a call of one op (or composite) on tensors that require grad, for its node's next_functions."""
    F = lib.nn.functional
    rng = np.random.default_rng(0)

    def t(*shape, rg=True):
        return lib.tensor(rng.standard_normal(shape), requires_grad=rg)
    x, y, w, idx, sq = t(3, 4), t(3, 4), t(4, 5), lib.tensor([0, 2, 1]), t(4, 4)
    return {
        "mse_loss": lambda: F.mse_loss(x, y.detach()), "cross_entropy": lambda: F.cross_entropy(x, idx),
        "nll_loss": lambda: F.nll_loss(F.log_softmax(x, 1), idx), "log_softmax": lambda: F.log_softmax(x, 1),
        "softmax": lambda: F.softmax(x, 1), "silu": lambda: F.silu(x), "softplus": lambda: F.softplus(x),
        "gelu": lambda: F.gelu(x), "relu": lambda: F.relu(x), "tanh": lambda: lib.tanh(x),
        "sigmoid": lambda: lib.sigmoid(x), "matmul": lambda: x @ w, "mm": lambda: lib.mm(x, w),
        "linear without bias": lambda: F.linear(x, w.T.detach().requires_grad_()), "sum": lambda: x.sum(),
        "mean": lambda: x.mean(), "sum over a dim": lambda: x.sum(1), "add": lambda: x + y,
        "tensor - number": lambda: x - 1.0, "number - tensor": lambda: 1.0 - x, "tensor * number": lambda: x * 2.0,
        "number * tensor": lambda: 2.0 * x, "div": lambda: x / y, "pow": lambda: x ** 2, "exp": lambda: x.exp(),
        "view": lambda: x.view(12), "reshape": lambda: x.reshape(2, 6), "transpose": lambda: x.transpose(0, 1),
        ".T": lambda: x.T, "t()": lambda: x.t(), "cat": lambda: lib.cat([x, y]), "stack": lambda: lib.stack([x, y]),
        "layer_norm": lambda: F.layer_norm(x, (4,)), "embedding": lambda: F.embedding(idx, w),
        "x[0]": lambda: x[0], "x[:2]": lambda: x[:2], "unsqueeze": lambda: x.unsqueeze(0),
        "bce_with_logits": lambda: F.binary_cross_entropy_with_logits(x, lib.ones(3, 4)),
        "masked_fill": lambda: x.masked_fill(lib.ones(3, 4, dtype=lib.bool), 0.0), "clone": lambda: x.clone(),
        "abs": lambda: x.abs(), "max": lambda: x.max(), "square": lambda: x.square(), "norm": lambda: x.norm(),
        "addcmul": lambda: lib.addcmul(x, y, x, value=0.5), "addcdiv": lambda: lib.addcdiv(x, y, x.abs() + 1),
        "tril": lambda: sq.tril(), "triu": lambda: sq.triu(), "flip": lambda: x.flip(0),
        "diag_embed": lambda: x.diag_embed(), "trace": lambda: sq.trace(), "dist": lambda: lib.dist(x, y),
        "cdist": lambda: lib.cdist(x, y), "inf-norm": lambda: x.norm(p=float("inf")),
        "reciprocal": lambda: x.reciprocal(), "leaky_relu": lambda: F.leaky_relu(x), "elu": lambda: F.elu(x),
        "hardtanh": lambda: F.hardtanh(x), "smooth_l1_loss": lambda: F.smooth_l1_loss(x, y.detach()),
        "batch_norm": lambda: F.batch_norm(x, None, None, training=True),
        "group_norm": lambda: F.group_norm(x.reshape(3, 4, 1), 2),
    }


@pytest.mark.parametrize("name", [
    "mse_loss", "cross_entropy", "nll_loss", "log_softmax", "softmax", "silu", "softplus", "gelu", "relu", "tanh",
    "sigmoid", "matmul", "mm", "linear without bias", "sum", "mean", "sum over a dim", "add", "tensor - number",
    "number - tensor", "tensor * number", "number * tensor", "div", "pow", "exp", "view", "reshape", "transpose",
    ".T", "t()", "cat", "stack", "layer_norm", "embedding", "x[0]", "x[:2]", "unsqueeze", "bce_with_logits",
    "masked_fill", "clone", "abs", "max", "square", "norm", "addcmul", "addcdiv", "tril", "triu", "flip",
    "diag_embed", "trace", "dist", "cdist", "inf-norm", "reciprocal", "leaky_relu", "elu", "hardtanh",
    "smooth_l1_loss", "batch_norm", "group_norm"])
def test_each_ops_node_points_where_pytorchs_does(name):
    torch = pytest.importorskip("torch")

    def shown(lib):
        out = _ops(lib)[name]()
        return repr(out.grad_fn).split(" object")[0], [
            (None if n is None else repr(n).split(" object")[0], i) for n, i in out.grad_fn.next_functions]
    assert shown(mt) == shown(torch)


def test_a_users_function_named_like_an_op_keeps_its_plain_edges():
    class Mul(mt.autograd.Function):
        @staticmethod
        def forward(ctx, a, k):
            return a * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k if hasattr(ctx, "k") else g, None
    x = mt.tensor(X, requires_grad=True)
    y = Mul.apply(x, 2.0)
    assert [repr(n).split(" object")[0] for n, _ in y.grad_fn.next_functions] == ["<AccumulateGrad"]
