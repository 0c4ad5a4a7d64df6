"""torch.autograd.functional, torch.func, custom Functions' features, hooks and Variable: minitensor's
values, gradients, result structure (tuples, shapes, requires_grad) and error types against PyTorch's."""
import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

import torch.autograd.functional as TAF  # noqa: E402
import torch.func as TFUNC  # noqa: E402

import minitensor.autograd.functional as MAF  # noqa: E402
import minitensor.func as MFUNC  # noqa: E402

rng = np.random.default_rng(1)
A, B, V = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.standard_normal((2, 3))


def same(r_torch, r_mini, path="result"):
    """Equal structure (tuple/list/dict nesting), shapes, values and requires_grad."""
    if isinstance(r_torch, (tuple, list)):
        assert isinstance(r_mini, tuple if isinstance(r_torch, tuple) else list), path
        assert len(r_torch) == len(r_mini), path
        for i, (p, q) in enumerate(zip(r_torch, r_mini)):
            same(p, q, f"{path}[{i}]")
    elif isinstance(r_torch, dict):
        assert r_torch.keys() == r_mini.keys(), path
        for k in r_torch:
            same(r_torch[k], r_mini[k], f"{path}[{k!r}]")
    else:
        assert tuple(r_torch.shape) == tuple(r_mini.shape), (path, r_torch.shape, r_mini.shape)
        np.testing.assert_allclose(r_torch.detach().numpy(), r_mini.detach().numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=path)
        assert r_torch.requires_grad == r_mini.requires_grad, path


def lib_pair(*arrays):
    return tuple(torch.tensor(a) for a in arrays), tuple(mt.tensor(a) for a in arrays)


# functions written once, run on either library (the ops have the same names)
def two_out(x, y):
    return (x * y).tanh(), (x ** 2).sum(0)


def scalar(x, y):
    return ((x.tanh() * y).sum() - (x * x).mean()) ** 2


def attention(x):
    s = x @ x.transpose(0, 1) / 3 ** 0.5
    return s.softmax(-1) @ x


FUNCTIONAL = [
    ("jacobian", lambda F, x: F.jacobian(two_out, x)),
    ("jacobian-single", lambda F, x: F.jacobian(lambda a: two_out(a, x[1])[0], x[0])),
    ("jacobian-vectorize", lambda F, x: F.jacobian(two_out, x, vectorize=True)),
    ("jacobian-forward", lambda F, x: F.jacobian(two_out, x, vectorize=True, strategy="forward-mode")),
    ("jacobian-attention", lambda F, x: F.jacobian(attention, x[0])),
    ("jacobian-unused", lambda F, x: F.jacobian(lambda a, b: a * 2, x)),
    ("jacobian-create-graph", lambda F, x: F.jacobian(two_out, x, create_graph=True)),
    ("hessian", lambda F, x: F.hessian(scalar, x)),
    ("hessian-single", lambda F, x: F.hessian(lambda a: scalar(a, x[1]), x[0])),
    ("hessian-attention", lambda F, x: F.hessian(lambda a: (attention(a) * a).sum(), x[0])),
    ("hessian-forward", lambda F, x: F.hessian(scalar, x, vectorize=True, outer_jacobian_strategy="forward-mode")),
    ("vjp", lambda F, x: F.vjp(two_out, x, (x[0] * 0 + 1, x[1] * 2))),
    ("vjp-scalar", lambda F, x: F.vjp(scalar, x)),
    ("jvp", lambda F, x: F.jvp(two_out, x, (x[0] * 0 + 1, x[1] * 2))),
    ("jvp-single", lambda F, x: F.jvp(lambda a: a.exp(), x[0], x[0] * 0 + 1)),
    ("hvp", lambda F, x: F.hvp(scalar, x, (x[0] * 0 + 1, x[1] * 2))),
    ("vhp", lambda F, x: F.vhp(scalar, x, (x[0] * 0 + 1, x[1] * 2))),
    ("vhp-create-graph", lambda F, x: F.vhp(scalar, x, (x[0] * 0 + 1, x[1] * 2), create_graph=True)),
]


@pytest.mark.parametrize("name, call", FUNCTIONAL, ids=[c[0] for c in FUNCTIONAL])
def test_autograd_functional_matches_pytorch(name, call):
    xt, xm = lib_pair(A, B)
    if "create-graph" in name:
        xt = tuple(t.requires_grad_() for t in xt)
        xm = tuple(t.requires_grad_() for t in xm)
    rm = call(MAF, xm)
    if name in PLAIN_IN_TORCH:  # PyTorch's vmap costs seconds on first use: compare with its plain call's values
        rt = PLAIN_IN_TORCH[name](TAF, xt)
        rm = tuple(tuple(r) for r in rm) if isinstance(rm, list) else rm  # (its forward mode gives lists)
    else:
        rt = call(TAF, xt)
    same(rt, rm)
    if "create-graph" in name:  # and the result differentiates back to the inputs as PyTorch's does
        first = lambda r: r[1][0] if name.startswith("vhp") else r[0][0]  # noqa: E731
        gt = torch.autograd.grad((first(rt) ** 2).sum(), xt, allow_unused=True, materialize_grads=True)
        gm = mt.autograd.grad((first(rm) ** 2).sum(), xm, allow_unused=True, materialize_grads=True)
        same(gt, gm)


PLAIN_IN_TORCH = {
    "jacobian-vectorize": lambda F, x: F.jacobian(two_out, x),
    "jacobian-forward": lambda F, x: F.jacobian(two_out, x),
    "hessian-forward": lambda F, x: F.hessian(scalar, x),
}


FUNCTIONAL_ERRORS = [
    lambda F, x: F.jacobian(lambda a: 3, x[0]),
    lambda F, x: F.jacobian(lambda a: a, 3.0),
    lambda F, x: F.jacobian(lambda a, b: a * 2, x, strict=True),
    lambda F, x: F.jacobian(lambda a: a, x[0], strategy="sideways"),
    lambda F, x: F.jacobian(lambda a: a, x[0], strategy="forward-mode"),
    lambda F, x: F.jacobian(lambda a: a, x[0], strict=True, vectorize=True),
    lambda F, x: F.hessian(lambda a: a, x[0]),
    lambda F, x: F.hessian(lambda a: (a, a), x[0]),
    lambda F, x: F.vjp(lambda a: a, x[0]),
    lambda F, x: F.vjp(lambda a: a, x[0], x[1]),
    lambda F, x: F.jvp(lambda a: a, x[0]),
    lambda F, x: F.vhp(lambda a: a.sum(), x[0], x[1]),
]


@pytest.mark.parametrize("call", FUNCTIONAL_ERRORS)
def test_autograd_functional_raises_pytorchs_error_types(call):
    xt, xm = lib_pair(A, B)
    with pytest.raises(Exception) as et:
        call(TAF, xt)
    with pytest.raises(type(et.value)):
        call(MAF, xm)


def f_scalar(x, y):
    return ((x * y).tanh() ** 2).sum()


def f_two(x, y):
    return (x * y).tanh(), x.sum(0) ** 2


FUNC = [
    ("grad", lambda F, x: F.grad(f_scalar)(*x)),
    ("grad-argnums", lambda F, x: F.grad(f_scalar, argnums=(0, 1))(*x)),
    ("grad-and-value", lambda F, x: F.grad_and_value(f_scalar, argnums=1)(*x)),
    ("grad-aux", lambda F, x: F.grad(lambda a, b: (f_scalar(a, b), a * 2), has_aux=True)(*x)),
    ("grad-pytree", lambda F, x: F.grad(lambda d: f_scalar(d["a"], d["b"][0]))({"a": x[0], "b": [x[1]]})),
    ("grad-of-grad", lambda F, x: F.grad(lambda a: F.grad(lambda b: (b ** 4).sum())(a).sum())(x[1])),
    ("grad-confusion", lambda F, x: F.grad(lambda a: F.grad(lambda b: (a * b).sum())(a).sum())(x[1])),
    ("jacrev", lambda F, x: F.jacrev(f_two)(*x)),
    ("jacrev-argnums", lambda F, x: F.jacrev(f_two, argnums=(0, 1))(*x)),
    ("jacrev-aux", lambda F, x: F.jacrev(lambda a: (a.sin(), a.cos()), has_aux=True)(x[1])),
    ("jacfwd", lambda F, x: F.jacfwd(f_two)(*x)),
    ("jacfwd-argnums", lambda F, x: F.jacfwd(f_two, argnums=(0, 1))(*x)),
    ("jacrev-jacrev", lambda F, x: F.jacrev(F.jacrev(lambda a: a.sin().sum()))(x[1])),
    ("hessian", lambda F, x: F.hessian(f_scalar)(*x)),
    ("hessian-argnums", lambda F, x: F.hessian(f_scalar, argnums=(0, 1))(*x)),
    ("hessian-attention", lambda F, x: F.hessian(lambda a: (attention(a) * a).sum())(x[0])),
    ("vmap", lambda F, x: F.vmap(lambda a, b: (a * b).sum(-1))(x[0], x[0] * 2)),
    ("vmap-none", lambda F, x: F.vmap(lambda a, b: (a * b).sum(-1), in_dims=(0, None))(*x)),
    ("vmap-out-dims", lambda F, x: F.vmap(lambda a, b: (a * b, b), in_dims=(1, None), out_dims=(1, 0))(x[0], x[1][:2])),
    ("vmap-negative", lambda F, x: F.vmap(lambda a: a.softmax(-1), in_dims=-1, out_dims=-1)(x[0])),
    ("vmap-grad", lambda F, x: F.vmap(F.grad(f_scalar), in_dims=(0, None))(*x)),
    ("vmap-jacrev", lambda F, x: F.vmap(F.jacrev(lambda a: a.softmax(-1)))(x[0])),
    ("vmap-tuple-arg", lambda F, x: F.vmap(lambda p: p[0] * p[1], in_dims=((0, None),))((x[0], x[1]))),
]


@pytest.mark.parametrize("name, call", FUNC, ids=[c[0] for c in FUNC])
def test_func_matches_pytorch(name, call):
    xt, xm = lib_pair(A, B)
    same(call(TFUNC, xt), call(MFUNC, xm))


def test_func_vjp_matches_pytorch():
    xt, xm = lib_pair(A, B)
    (ot, fn_t), (om, fn_m) = TFUNC.vjp(f_two, *xt), MFUNC.vjp(f_two, *xm)
    same(ot, om)
    ct, cm = lib_pair(V, B)
    same(fn_t(ct), fn_m(cm))
    same(fn_t(ct), fn_m(cm))  # twice


FUNC_ERRORS = [
    lambda F, x: F.grad(lambda a, b: a * b)(*x),
    lambda F, x: F.grad(f_scalar, argnums=5)(*x),
    lambda F, x: F.grad(f_scalar, has_aux=True)(*x),
    lambda F, x: F.vmap(lambda a: a)(x[0], x[1]),
    lambda F, x: F.vmap(lambda a, b: a + b)(x[0], x[0][:1]),
    lambda F, x: F.vmap(lambda a, b: a, in_dims=(0, 0))(x[0], 3),
    lambda F, x: F.vmap(lambda a: a, in_dims=2)(x[0]),
    lambda F, x: F.vmap(lambda a: 1)(x[0]),
    lambda F, x: F.vmap(lambda a: a, in_dims=(None,))(x[0]),
]


@pytest.mark.parametrize("call", FUNC_ERRORS)
def test_func_raises_pytorchs_error_types(call):
    xt, xm = lib_pair(A, B)
    with pytest.raises(Exception) as et:
        call(TFUNC, xt)
    with pytest.raises(type(et.value)):
        call(MFUNC, xm)


def linear_pair():
    lt, lm = torch.nn.Linear(3, 2).double(), mt.nn.Linear(3, 2).double()
    with torch.no_grad():
        lt.weight.copy_(torch.tensor(lm.weight.detach().numpy()))
        lt.bias.copy_(torch.tensor(lm.bias.detach().numpy()))
    return lt, lm


def test_functional_call_matches_pytorch_and_restores():
    (lt, lm), (xt, xm) = linear_pair(), lib_pair(A)
    same(TFUNC.functional_call(lt, {"weight": torch.ones(2, 3).double()}, xt),
         MFUNC.functional_call(lm, {"weight": mt.ones(2, 3).double()}, xm))
    same(TFUNC.functional_call(lt, ({"weight": torch.ones(2, 3).double()}, {"bias": torch.zeros(2).double()}), xt[0]),
         MFUNC.functional_call(lm, ({"weight": mt.ones(2, 3).double()}, {"bias": mt.zeros(2).double()}), xm[0]))
    pt = {k: v.detach() for k, v in lt.named_parameters()}
    pm = {k: v.detach() for k, v in lm.named_parameters()}
    same(TFUNC.grad(lambda p: TFUNC.functional_call(lt, p, xt).pow(2).sum())(pt),
         MFUNC.grad(lambda p: MFUNC.functional_call(lm, p, xm).pow(2).sum())(pm))
    for d, kw in [({"weight": 1}, {"strict": True}), ({"weight": 1, "bias": 1, "foo": 1}, {"strict": True})]:
        with pytest.raises(RuntimeError):
            TFUNC.functional_call(lt, {k: torch.zeros(2) for k in d}, xt, **kw)
        with pytest.raises(RuntimeError):
            MFUNC.functional_call(lm, {k: mt.zeros(2) for k in d}, xm, **kw)
    with pytest.raises(ValueError):
        MFUNC.functional_call(lm, ({"weight": mt.zeros(2, 3)}, {"weight": mt.zeros(2, 3)}), xm)
    assert isinstance(lm.weight, mt.nn.Parameter) and lm.weight.shape == (2, 3)


# ---- custom Functions: the same class body on both libraries --------------------------------------------
def make_functions(lib):
    F = lib.autograd.Function
    once = torch.autograd.function.once_differentiable if lib is torch else mt.autograd.once_differentiable

    class SinCos(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos(), (x > 0).long(), 5

        @staticmethod
        def backward(ctx, g1, g2, g3, g4):
            (x,) = ctx.saved_tensors
            return g1 * x.cos() - g2 * x.sin()

    class Exp(F):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    class MulAdd(F):  # PyTorch 2's style
        @staticmethod
        def forward(x, y):
            return x * y, x + y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * y + g2, g1 * x + g2

    class Once(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @once
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class AddOne(F):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class Lazy(F):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            a, b = x * 2, x * 3
            ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 if g2 is None else g1 * 2 + 1000

    return dict(SinCos=SinCos, Exp=Exp, MulAdd=MulAdd, Once=Once, AddOne=AddOne, Lazy=Lazy)


def run_custom(lib, x_np, y_np):
    fns = make_functions(lib)
    x = lib.tensor(x_np, requires_grad=True)
    y = lib.tensor(y_np, requires_grad=True)
    w = lib.tensor(np.linspace(-1, 1, x_np.size).reshape(x_np.shape))
    out = {}
    s, c, pos, five = fns["SinCos"].apply(x)
    out["sincos"] = (s, c, pos.to(lib.float64), lib.tensor(float(five)))
    out["sincos_grad"] = lib.autograd.grad((s * w + c).sum(), x)
    out["sincos_one_unused"] = lib.autograd.grad((fns["SinCos"].apply(x)[1] * w).sum(), x)
    (g,) = lib.autograd.grad((fns["Exp"].apply(x) * w).sum(), x, create_graph=True)
    out["exp_double"] = lib.autograd.grad((g * w).sum(), x)
    p, q = fns["MulAdd"].apply(x, y)
    out["muladd"] = lib.autograd.grad((p * q * w).sum(), (x, y))
    (g,) = lib.autograd.grad((fns["Once"].apply(x) ** 2).sum(), x, create_graph=True)
    out["once"] = (g, )
    a = x * 3
    r = fns["AddOne"].apply(a)
    out["dirty"] = (lib.tensor(float(r is a)), lib.tensor(float(a._version)), *lib.autograd.grad((r * w).sum(), x))
    a2, b2 = fns["Lazy"].apply(x)
    out["lazy"] = (lib.tensor(float(b2.requires_grad)), *lib.autograd.grad(a2.sum(), x))
    return out


def test_custom_functions_match_pytorch():
    rt, rm = run_custom(torch, A, V), run_custom(mt, A, V)
    for key in rt:
        same(rt[key], rm[key], key)


def test_custom_function_errors_match_pytorch():
    for lib in (torch, mt):
        fns = make_functions(lib)
        x = lib.tensor(A, requires_grad=True)
        with pytest.raises(RuntimeError, match="once_differentiable"):
            (g,) = lib.autograd.grad((fns["Once"].apply(x) ** 2).sum(), x, create_graph=True)
            g.sum().backward()
        with pytest.raises(RuntimeError, match="leaf Variable"):
            fns["AddOne"].apply(x)


def test_an_identity_function_output_shares_the_version_counter_as_in_pytorch():
    for lib in (torch, mt):
        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        x = lib.ones(3)
        y = Identity.apply(x)
        x.add_(1)
        assert y is not x and y._version == x._version == 1 and float(y[0]) == 2.0


# ---- hooks, is_grads_batched, Variable ------------------------------------------------------------------
def hooks_run(lib):
    x = lib.tensor(A, requires_grad=True)
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    (x * 2).sum().backward()
    lib.autograd.grad((x * 3).sum(), x)
    h.remove()
    (x * 4).sum().backward()
    with x.register_hook(lambda g: g * 10):
        (x * 1).sum().backward()
    (x * 1).sum().backward()
    return (*seen, x.grad)


def test_hooks_match_pytorch():
    same(hooks_run(torch), hooks_run(mt))


def test_is_grads_batched_matches_pytorch():
    res = []
    for lib in (torch, mt):
        x = lib.tensor(B, requires_grad=True)
        y = x.sin() * 2
        res.append(lib.autograd.grad(y, x, lib.eye(3, dtype=lib.float64), retain_graph=True, is_grads_batched=True))
        z = lib.tensor(B, requires_grad=True)
        res.append(lib.autograd.grad(y, (x, z), lib.eye(3, dtype=lib.float64), is_grads_batched=True,
                                     allow_unused=True, materialize_grads=True))
    same(res[0], res[2])
    same(res[1], res[3])


def test_variable_matches_pytorch():
    from torch.autograd import Variable as TV

    from minitensor.autograd import Variable as MV
    for V_, lib in ((TV, torch), (MV, mt)):
        t = lib.ones(2)
        v = V_(t, requires_grad=True)
        assert v is not t and v.requires_grad and not t.requires_grad and isinstance(t, V_)
        with pytest.raises(TypeError):
            V_([1.0])
        with pytest.raises(RuntimeError):
            V_(lib.ones(2, dtype=lib.int64), requires_grad=True)


def test_backward_of_a_tensor_without_grad_is_pytorchs_error():  # (h-tut2)
    messages = []
    for lib in (mt, torch):
        a, b = lib.ones(2, requires_grad=True).sum(), lib.ones(2).sum()
        for call in (lambda: b.backward(), lambda: lib.autograd.backward([a, b]),
                     lambda: lib.autograd.grad([a, b], [lib.ones(1, requires_grad=True)])):
            with pytest.raises(RuntimeError) as err:
                call()
            messages.append(str(err.value))
    assert messages[:3] == messages[3:]
    assert messages[1] == "element 1 of tensors does not require grad and does not have a grad_fn"
