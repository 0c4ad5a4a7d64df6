"""autograd.functional, minitensor.func, and a user's Function's PyTorch features, checked without PyTorch:
every derivative against central finite differences in float64 (the comparison with torch itself is
test_torch_autograd_api.py)."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import Function, Variable, once_differentiable
from minitensor.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp
from minitensor.func import functional_call, grad, hessian as func_hessian, jacfwd, jacrev, vjp as func_vjp, vmap

rng = np.random.default_rng(0)
T, D = 3, 2
WQ, WK, WV = (mt.tensor(rng.standard_normal((D, D))) for _ in range(3))
UPSTREAM = mt.tensor(rng.standard_normal((T, D)))  # a random weighting of the block's output


def attention(x):
    """A small single-head softmax attention block: softmax(q k^T / sqrt(d)) v."""
    q, k, v = x @ WQ, x @ WK, x @ WV
    return mt.softmax(q @ k.transpose(0, 1) / D ** 0.5, dim=-1) @ v


def attention_loss(x):
    return (attention(x) * UPSTREAM).sum()


def numeric_jacobian(f, x, eps=1e-6):
    """d f(x) / d x by central differences: shape f(x).shape + x.shape."""
    x0 = x.detach().numpy().copy()
    out_shape = tuple(f(mt.tensor(x0)).shape)
    jac = np.zeros(out_shape + x0.shape)
    for idx in np.ndindex(x0.shape):
        plus, minus = x0.copy(), x0.copy()
        plus[idx] += eps
        minus[idx] -= eps
        diff = (f(mt.tensor(plus)).detach().numpy() - f(mt.tensor(minus)).detach().numpy()) / (2 * eps)
        jac[(Ellipsis,) + idx] = diff
    return jac


X = mt.tensor(rng.standard_normal((T, D)))


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a.detach().numpy() if isinstance(a, mt.Tensor) else a),
                               np.asarray(b), rtol=tol, atol=tol)


# ---- Jacobians and Hessians of attention -----------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"vectorize": True}, {"vectorize": True, "strategy": "forward-mode"}])
def test_jacobian_of_attention_is_the_finite_difference_one(kwargs):
    J = jacobian(attention, X, **kwargs)
    assert J.shape == (T, D, T, D) and not J.requires_grad
    close(J, numeric_jacobian(attention, X))


def test_the_hessian_of_an_attention_loss_is_the_finite_difference_of_its_gradient():
    H = hessian(attention_loss, X)
    assert H.shape == (T, D, T, D)
    gradient = lambda x: grad(attention_loss)(x)  # noqa: E731
    close(H, numeric_jacobian(gradient, X), tol=1e-5)
    close(func_hessian(attention_loss)(X), H, tol=1e-10)
    close(H.reshape(T * D, T * D), H.reshape(T * D, T * D).transpose(0, 1), tol=1e-10)  # symmetric


def test_products_with_a_vector_are_the_full_matrices_times_it():
    v = mt.tensor(rng.standard_normal((T, D)))
    u = mt.tensor(rng.standard_normal((T, D)))
    J = jacobian(attention, X).reshape(T * D, T * D)
    H = hessian(attention_loss, X).reshape(T * D, T * D)
    out, jv = jvp(attention, X, v)
    close(out, attention(X).detach())
    close(jv.reshape(-1), J @ v.reshape(-1))
    close(vjp(attention, X, u)[1].reshape(-1), u.reshape(-1) @ J)
    close(hvp(attention_loss, X, v)[1].reshape(-1), H @ v.reshape(-1))
    close(vhp(attention_loss, X, v)[1].reshape(-1), v.reshape(-1) @ H)


def test_tuple_inputs_and_outputs_nest_the_jacobian_as_pytorch():
    a, b = mt.tensor([1.0, 2.0], dtype=mt.float64), mt.tensor([3.0], dtype=mt.float64)
    J = jacobian(lambda x, y: (x * y, x.sum() + 0 * y), (a, b))
    assert [[tuple(j.shape) for j in row] for row in J] == [[(2, 2), (2, 1)], [(1, 2), (1, 1)]]
    close(J[0][1], [[1.0], [2.0]])
    unused = jacobian(lambda x, y: x * 2, (a, b))
    close(unused[1], np.zeros((2, 1)))
    forward = jacobian(lambda x, y: (x * y, x.sum() + 0 * y), (a, b), vectorize=True, strategy="forward-mode")
    assert type(forward) is list and type(forward[0]) is list  # PyTorch's forward mode gives lists
    close(forward[0][1], J[0][1])
    with pytest.raises(RuntimeError, match="independent of input 1"):
        jacobian(lambda x, y: x * 2, (a, b), strict=True)


def test_create_graph_makes_the_jacobian_differentiable():
    x = mt.tensor([0.5, -1.0], dtype=mt.float64, requires_grad=True)
    J = jacobian(lambda t: t.exp(), x, create_graph=True)
    J.sum().backward()
    close(x.grad, np.exp([0.5, -1.0]))


@pytest.mark.parametrize("call, error", [
    (lambda: jacobian(lambda x: 3, X), TypeError),
    (lambda: jacobian(lambda x: x, 3.0), TypeError),
    (lambda: hessian(lambda x: x, X), RuntimeError),
    (lambda: vjp(lambda x: x, X), RuntimeError),
    (lambda: vjp(lambda x: x, X, mt.ones(2)), RuntimeError),
    (lambda: jacobian(lambda x: x, X, strategy="sideways"), AssertionError),
    (lambda: jacobian(lambda x: x, X, strategy="forward-mode"), NotImplementedError),
])
def test_bad_calls_raise_pytorchs_error_types(call, error):
    with pytest.raises(error):
        call()


# ---- torch.func ------------------------------------------------------------------------------------
def test_func_grad_nests_and_tells_variables_apart():
    x = mt.tensor([1.0, 2.0], dtype=mt.float64)
    close(grad(lambda t: grad(lambda u: (u ** 3).sum())(t).sum())(x), 6 * x.numpy())
    # d/dx [d/dy (x*y)]_{y=x} = d/dx x = 1 (not 2, which confusing x with y would give)
    close(grad(lambda t: grad(lambda u: (t * u).sum())(t).sum())(x), [1.0, 1.0])
    g, (value, aux) = mt.func.grad_and_value(lambda t: ((t ** 2).sum(), t * 2), has_aux=True)(x)
    close(g, 2 * x.numpy())
    assert float(value) == 5.0 and not value.requires_grad and not g.requires_grad


def test_jacrev_and_jacfwd_agree_with_finite_differences():
    for transform in (jacrev, jacfwd):
        close(transform(attention)(X), numeric_jacobian(attention, X))
        ja, jb = transform(lambda a, b: a * b.sum(), argnums=(0, 1))(X, X[0])
        assert ja.shape == (T, D, T, D) and jb.shape == (T, D, D)


def test_func_vjp_can_be_called_twice():
    out, fn = func_vjp(attention, X)
    (first,), (second,) = fn(UPSTREAM), fn(UPSTREAM)
    close(first, second)
    close(first, grad(attention_loss)(X))


def test_vmap_is_the_loop_with_in_dims_and_out_dims():
    xs, w = mt.tensor(rng.standard_normal((4, T, D))), mt.tensor(rng.standard_normal(D))
    close(vmap(attention)(xs), np.stack([attention(x).numpy() for x in xs]))
    out, same = vmap(lambda x, v: (x @ v, v), in_dims=(0, None), out_dims=(1, 0))(xs, w)
    assert out.shape == (T, 4) and same.shape == (4, D)
    close(vmap(grad(attention_loss))(xs)[1], grad(attention_loss)(xs[1]))
    with pytest.raises(ValueError, match="same size"):
        vmap(lambda a, b: a + b)(mt.ones(2, 3), mt.ones(3, 3))
    with pytest.raises(ValueError, match="non-Tensor"):
        vmap(lambda a, b: a, in_dims=(0, 0))(mt.ones(2, 3), 3)


def test_functional_call_swaps_and_restores_even_on_error():
    lin = mt.nn.Linear(3, 2)
    weight = lin.weight
    out = functional_call(lin, {"weight": mt.zeros(2, 3), "bias": mt.ones(2)}, (mt.ones(1, 3),))
    close(out, [[1.0, 1.0]])
    assert lin.weight is weight
    with pytest.raises(RuntimeError):
        functional_call(lin, {"weight": mt.zeros(2, 3)}, (mt.ones(1, 5),))
    assert lin.weight is weight
    with pytest.raises(RuntimeError, match="Missing key"):
        functional_call(lin, {"weight": mt.zeros(2, 3)}, mt.ones(1, 3), strict=True)


# ---- a user's Function -----------------------------------------------------------------------------
class SinCos(Function):
    """Two outputs: sin(x) and cos(x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin(), x.cos()

    @staticmethod
    def backward(ctx, g_sin, g_cos):
        (x,) = ctx.saved_tensors
        return g_sin * x.cos() - g_cos * x.sin()


def test_a_function_with_two_outputs_gets_both_gradients_and_zeros_for_an_unused_one():
    x = mt.tensor([0.3, -1.2], dtype=mt.float64, requires_grad=True)
    s, c = SinCos.apply(x)
    w1, w2 = mt.tensor([1.5, -0.5], dtype=mt.float64), mt.tensor([0.7, 2.0], dtype=mt.float64)
    (g,) = mt.autograd.grad((s * w1 + c * w2).sum(), x)
    close(g, w1.numpy() * np.cos(x.detach().numpy()) - w2.numpy() * np.sin(x.detach().numpy()))
    (g,) = mt.autograd.grad((SinCos.apply(x)[1] * w2).sum(), x)  # sin unused: its gradient is zeros
    close(g, -w2.numpy() * np.sin(x.detach().numpy()))
    assert mt.autograd.gradcheck(lambda t: SinCos.apply(t)[0] * 2 + SinCos.apply(t)[1], (x,))


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out


def test_a_saved_output_is_differentiable_again():
    x = mt.tensor([0.1, 0.4], dtype=mt.float64, requires_grad=True)
    (g,) = mt.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    (gg,) = mt.autograd.grad(g.sum(), x)
    close(gg, np.exp([0.1, 0.4]))


def test_an_output_that_is_an_input_or_a_view_shares_its_version_counter():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class FirstRow(Function):
        @staticmethod
        def forward(ctx, x):
            return x[0]

        @staticmethod
        def backward(ctx, g):
            return mt.stack([g, mt.zeros_like(g)])

    x = mt.ones(2, 3)
    for out in (Identity.apply(x), FirstRow.apply(x)):
        before = out._version
        x.add_(1)
        assert out._version == before + 1
    a = mt.ones(3, requires_grad=True) * 1
    y = Identity.apply(a)
    e = y.exp()
    a.mul_(2)  # e's backward reads y's memory: changed
    with pytest.raises(RuntimeError, match="modified by an inplace"):
        e.sum().backward()


class AddOne(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


def test_mark_dirty_returns_the_input_with_its_version_bumped_and_a_new_history():
    leaf = mt.tensor([1.0, 2.0], requires_grad=True)
    a = leaf * 3
    before = a._version
    out = AddOne.apply(a)
    assert out is a and a._version == before + 2  # the add_, then apply's bump, as in PyTorch
    assert type(a.grad_fn).__name__ == "AddOne"
    a.sum().backward()
    close(leaf.grad, [3.0, 3.0])
    with pytest.raises(RuntimeError, match="leaf Variable"):
        AddOne.apply(leaf)


def test_non_differentiable_outputs_and_materialize_grads():
    seen = []

    class Split(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            idx = (x > 0).to(mt.float64)
            ctx.mark_non_differentiable(idx)
            return x * 2, x * 3, idx

        @staticmethod
        def backward(ctx, g1, g2, g3):
            seen.append((g1, g2, g3))
            return g1 * 2

    x = mt.tensor([1.0, -1.0], dtype=mt.float64, requires_grad=True)
    a, b, idx = Split.apply(x)
    assert not idx.requires_grad and b.requires_grad
    a.sum().backward()
    assert seen[0][1] is None and seen[0][2] is None
    close(x.grad, [2.0, 2.0])


def test_setup_context_style_and_once_differentiable():
    class Square(Function):
        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = mt.tensor([1.0, 3.0], dtype=mt.float64, requires_grad=True)
    (g,) = mt.autograd.grad((Square.apply(x) ** 2).sum(), x, create_graph=True)
    close(g, 4 * x.detach().numpy() ** 3)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


def test_a_wrong_number_of_gradients_is_named():
    class Few(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    x = mt.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        Few.apply(x, x * 1).sum().backward()


# ---- hooks, is_grads_batched, Variable -------------------------------------------------------------
def test_post_accumulate_grad_hook_and_handles_as_context_managers():
    x = mt.ones(3, requires_grad=True)
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    (x * 2).sum().backward()
    close(seen[0], [2.0, 2.0, 2.0])
    mt.autograd.grad((x * 2).sum(), x)  # no accumulation into .grad: no call
    assert len(seen) == 1
    handle.remove()
    with x.register_hook(lambda g: g * 10):
        (x * 1).sum().backward()
    (x * 1).sum().backward()
    close(x.grad, [2 + 10 + 1] * 3)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2).register_post_accumulate_grad_hook(print)


def test_is_grads_batched_gives_one_gradient_per_row():
    x = mt.tensor([1.0, 2.0, 3.0], dtype=mt.float64, requires_grad=True)
    y = x ** 2
    (rows,) = mt.autograd.grad(y, x, mt.eye(3, dtype=mt.float64), is_grads_batched=True)
    close(rows, np.diag([2.0, 4.0, 6.0]))
    with pytest.raises(ValueError, match="allow_unused"):
        mt.autograd.grad(y.sum(), x, allow_unused=False, materialize_grads=True)


def test_variable_is_a_tensor():
    t = mt.ones(2)
    v = Variable(t, requires_grad=True)
    assert v.requires_grad and not t.requires_grad and isinstance(t, Variable)
    t.add_(1)
    assert v._version == t._version and float(v[0]) == 2.0
    with pytest.raises(TypeError):
        Variable([1.0])
