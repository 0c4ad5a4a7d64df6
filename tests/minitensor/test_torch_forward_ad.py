"""torch.autograd.forward_ad (minitensor/autograd/forward_ad.py): dual tensors against PyTorch's."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minitensor as mt
import minitensor.autograd.forward_ad as fwAD

torch = pytest.importorskip("torch")
tfwAD = torch.autograd.forward_ad


def pair(a, requires_grad=False):
    a = np.asarray(a)
    return (mt.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad))


def close(ours, theirs, dtype=np.float64):
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **tol)


def raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        return type(e).__name__, str(e).replace("minitensor.", "torch.")
    return None


# ---- the API: levels, make_dual, unpack_dual, errors -------------------------------------------------

def test_the_namespace_is_pytorchs():
    assert sorted(fwAD.__all__) == sorted(tfwAD.__all__)
    assert fwAD.UnpackedDualTensor._fields == tfwAD.UnpackedDualTensor._fields
    from minitensor import run
    assert run.MODULES["torch.autograd.forward_ad"] == "minitensor.autograd.forward_ad"


def _error_cases(lib, ad):
    x, t = lib.ones(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
    return {
        "make_dual outside a level": lambda: ad.make_dual(x, t),
        "exit without a level": lambda: ad.exit_dual_level(),
        "exit a level that is not the last": lambda: ad.exit_dual_level(level=0),
    }, {
        "nested": lambda: ad.enter_dual_level(),
        "wrong size": lambda: ad.make_dual(x, lib.ones(4, dtype=lib.float64)),
        "size one": lambda: ad.make_dual(x, lib.ones(1, dtype=lib.float64)),
        "integer primal": lambda: ad.make_dual(lib.arange(3), t),
        "integer tangent": lambda: ad.make_dual(x, lib.arange(3)),
        "wrong level": lambda: ad.make_dual(x, t, level=1),
        "unpack a dual at a wrong level": lambda: ad.unpack_dual(ad.make_dual(x, t), level=1),
        "dual of a dual": lambda: ad.make_dual(ad.make_dual(x, t), t),
        "dual of a result of a dual": lambda: ad.make_dual(ad.make_dual(x, t) * 2, t),
        "exit another level": lambda: ad.exit_dual_level(level=3),
    }


def test_errors_are_pytorchs():
    ours_out, ours_in = _error_cases(mt, fwAD)
    theirs_out, theirs_in = _error_cases(torch, tfwAD)
    for name in ours_out:
        assert raised(ours_out[name]) == raised(theirs_out[name]) != None, name  # noqa: E711
    with fwAD.dual_level(), tfwAD.dual_level():
        for name in ours_in:
            assert raised(ours_in[name]) == raised(theirs_in[name]) != None, name  # noqa: E711


def test_levels_enter_exit_and_decorate():
    assert fwAD.enter_dual_level() == tfwAD.enter_dual_level() == 0
    x = mt.ones(2)
    d = fwAD.make_dual(x, mt.ones(2))
    fwAD.exit_dual_level()
    tfwAD.exit_dual_level()
    assert fwAD.unpack_dual(d).tangent is None  # after the level, a plain tensor
    assert raised(fwAD.exit_dual_level) == raised(tfwAD.exit_dual_level)

    @fwAD.dual_level()
    def inside():
        return fwAD.unpack_dual(fwAD.make_dual(x, x * 3) * 2).tangent

    np.testing.assert_array_equal(inside().numpy(), [6.0, 6.0])
    assert raised(lambda: fwAD.make_dual(x, x)) is not None  # the decorator left the level
    with fwAD.dual_level() as level:
        assert level == 0
    with pytest.raises(ZeroDivisionError), fwAD.dual_level():
        1 / 0
    with fwAD.dual_level():  # the level was exited by the exception
        pass


def test_unpack_dual_fields_repr_and_identity():
    x, tx = pair(np.float32([1.0, 2.0]))
    t, tt = pair(np.float32([0.5, -1.0]))
    assert fwAD.unpack_dual(x, level=1).tangent is tfwAD.unpack_dual(tx, level=1).tangent is None
    assert repr(fwAD.unpack_dual(x)) == repr(tfwAD.unpack_dual(tx))
    assert fwAD.unpack_dual(3) == tfwAD.unpack_dual(3) == (3, None)
    with fwAD.dual_level(), tfwAD.dual_level():
        d = fwAD.make_dual(x, t)
        u = fwAD.unpack_dual(d)
        assert isinstance(u, tuple) and u.primal is u[0] and u.tangent is t  # the tangent as given
        assert tfwAD.unpack_dual(tfwAD.make_dual(tx, tt)).tangent is tt
        np.testing.assert_array_equal(d.detach().numpy(), x.numpy())  # (d requires grad here: the docs)
        assert d.dtype == x.dtype and d is not x
        np.testing.assert_array_equal(u.primal.numpy(), x.numpy())
        assert fwAD.unpack_dual(u.primal).tangent is None  # the primal has no tangent
        assert fwAD.unpack_dual(x).tangent is None  # nor the tensor the dual was made of
        assert u.primal.requires_grad is False  # as PyTorch: nothing that requires grad behind it
        # a float32 tangent of a float64 primal is kept as given, the results are float64, as PyTorch's
        d64 = fwAD.make_dual(x.double(), t.float())
        td64 = tfwAD.make_dual(tx.double(), tt.float())
        assert fwAD.unpack_dual(d64).tangent.dtype == mt.float32
        assert str(fwAD.unpack_dual(d64 * 2).tangent.dtype) == str(tfwAD.unpack_dual(td64 * 2).tangent.dtype) \
            .replace("torch", "minitensor")


def test_tangent_is_none_without_a_dual_and_through_non_differentiable_ops():
    x, tx = pair([1.0, -2.0, 3.0])
    with fwAD.dual_level(), tfwAD.dual_level():
        d, td = fwAD.make_dual(x, x), tfwAD.make_dual(tx, tx)
        for f in [lambda a, lib: a.detach(), lambda a, lib: a > 0, lambda a, lib: a.argmax(),
                  lambda a, lib: lib.zeros_like(a), lambda a, lib: x * 2 if lib is mt else tx * 2]:
            assert fwAD.unpack_dual(f(d, mt)).tangent is None
            assert tfwAD.unpack_dual(f(td, torch)).tangent is None
        close(fwAD.unpack_dual(d * 0).tangent, tfwAD.unpack_dual(td * 0).tangent)


# ---- values: a sweep of ops against PyTorch ---------------------------------------------------------

OPS = {
    "polynomial": lambda a, b, lib: a ** 3 - 2 * a * b + b / 3,
    "transcendental": lambda a, b, lib: lib.sin(a) * lib.exp(b) + lib.tanh(a * b) - lib.log(a * a + 1),
    "matmul": lambda a, b, lib: a @ b.T @ a,
    "reductions": lambda a, b, lib: lib.stack([a.sum(0), (a * b).mean(1), a.amax(0), lib.logsumexp(b, 1)]),
    "views": lambda a, b, lib: (a.T.reshape(2, 8)[:, 1:5] * b.flatten()[None, :4]).unsqueeze(0).permute(2, 0, 1),
    "indexing and cat": lambda a, b, lib: lib.cat([a[1:, ::2], b[lib.tensor([0, 3, 3])][:, :2]], 0),
    "softmax and norm": lambda a, b, lib: lib.nn.functional.softmax(a, 1) * lib.linalg.norm(b, dim=0),
    "nn.functional": lambda a, b, lib: lib.nn.functional.layer_norm(
        lib.nn.functional.gelu(a) + lib.nn.functional.silu(b), (4,)),
    "losses": lambda a, b, lib: lib.stack([lib.nn.functional.mse_loss(a, b),
                                          lib.nn.functional.cross_entropy(a, lib.tensor([0, 1, 2, 3]))]),
    "conv": lambda a, b, lib: lib.nn.functional.conv1d(a[None], b[:, None, :3], groups=4),
}


def _tangent_of(lib, ad, op, a, b, ta, tb, only_a=False):
    with ad.dual_level():
        da = ad.make_dual(a, ta)
        db = b if only_a else ad.make_dual(b, tb)
        return ad.unpack_dual(op(da, db, lib)).tangent


@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tangents_equal_pytorchs(name, dtype):
    rng = np.random.default_rng(len(name))
    arrays = [rng.uniform(0.5, 1.5, (4, 4)).astype(dtype) for _ in range(4)]
    (a, ta_), (b, tb_), (t1, tt1), (t2, tt2) = [pair(v) for v in arrays]
    ours = _tangent_of(mt, fwAD, OPS[name], a, b, t1, t2)
    theirs = _tangent_of(torch, tfwAD, OPS[name], ta_, tb_, tt1, tt2)
    assert tuple(ours.shape) == tuple(theirs.shape)
    close(ours, theirs, dtype)
    close(_tangent_of(mt, fwAD, OPS[name], a, b, t1, t2, only_a=True),
          _tangent_of(torch, tfwAD, OPS[name], ta_, tb_, tt1, tt2, only_a=True), dtype)


def test_module_and_functional_call_with_dual_parameters():
    rng = np.random.default_rng(0)
    ours_m = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.Tanh(), mt.nn.Linear(4, 2)).double()
    theirs_m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    theirs_m.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours_m.state_dict().items()})
    x, tx = pair(rng.normal(size=(5, 3)))
    tangents = {k: rng.normal(size=tuple(p.shape)) for k, p in ours_m.named_parameters()}
    with fwAD.dual_level(), tfwAD.dual_level():
        ours = mt.func.functional_call(ours_m, {k: fwAD.make_dual(p, mt.tensor(tangents[k]))
                                                for k, p in ours_m.named_parameters()}, (x,))
        theirs = torch.func.functional_call(theirs_m, {k: tfwAD.make_dual(p, torch.tensor(tangents[k]))
                                                       for k, p in theirs_m.named_parameters()}, (tx,))
        close(fwAD.unpack_dual(ours).tangent, tfwAD.unpack_dual(theirs).tangent)
        close(fwAD.unpack_dual(ours).primal, tfwAD.unpack_dual(theirs).primal)
        assert fwAD.unpack_dual(ours).tangent.requires_grad == tfwAD.unpack_dual(theirs).tangent.requires_grad
        # reverse mode at the same time: the parameters get PyTorch's gradients
        w = rng.normal(size=(5, 2))
        (ours * mt.tensor(w)).sum().backward()
        (theirs * torch.tensor(w)).sum().backward()
    for (k, p), q in zip(ours_m.named_parameters(), theirs_m.parameters()):
        close(p.grad, q.grad)


def test_reverse_mode_through_a_dual_and_its_primal():
    rng = np.random.default_rng(1)
    x, tx = pair(rng.normal(size=4), requires_grad=True)
    t, tt = pair(rng.normal(size=4))
    w = rng.normal(size=4)
    with fwAD.dual_level(), tfwAD.dual_level():
        d, td = fwAD.make_dual(x, t), tfwAD.make_dual(tx, tt)
        y, ty = d.sin() * d, td.sin() * td
        p, tp = fwAD.unpack_dual(y).primal, tfwAD.unpack_dual(ty).primal
        assert p.requires_grad and tp.requires_grad and fwAD.unpack_dual(p).tangent is None
        ((y + p.exp()) * mt.tensor(w)).sum().backward()
        ((ty + tp.exp()) * torch.tensor(w)).sum().backward()
        # forward over reverse: the tangent of a gradient is a Hessian-vector product
        g = mt.autograd.grad((d ** 3 * mt.tensor(w)).sum(), d, create_graph=True)[0]
        tg = torch.autograd.grad((td ** 3 * torch.tensor(w)).sum(), td, create_graph=True)[0]
        close(fwAD.unpack_dual(g).tangent, tfwAD.unpack_dual(tg).tangent)
    close(x.grad, tx.grad)


# ---- a user's Function ------------------------------------------------------------------------------

def _functions(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            ctx.result = lib.exp(foo)
            return ctx.result

        @staticmethod
        def jvp(ctx, g):
            return g * ctx.result

    class Two(lib.autograd.Function):  # two outputs, a non-tensor input; jvp gets zeros for y
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.x, ctx.y, ctx.k = x, y, k
            return x * y * k, x + y

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            assert tk is None
            return (tx * ctx.y + ctx.x * ty) * ctx.k, tx + ty

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * ctx.y * ctx.k + g2, g1 * ctx.x * ctx.k + g2, None

    class NoJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Exp, Two, NoJvp


def test_custom_function_jvp_is_called_as_pytorch_does():
    rng = np.random.default_rng(2)
    (x, tx), (y, ty), (t, tt) = [pair(rng.normal(size=3), requires_grad=r) for r in (True, False, False)]
    Exp, Two, NoJvp = _functions(mt)
    TExp, TTwo, TNoJvp = _functions(torch)
    with fwAD.dual_level(), tfwAD.dual_level():
        d, td = fwAD.make_dual(x, t), tfwAD.make_dual(tx, tt)
        close(fwAD.unpack_dual(Exp.apply(d)).tangent, tfwAD.unpack_dual(TExp.apply(td)).tangent)
        close(fwAD.unpack_dual(Exp.apply(d).sin() * d).tangent, tfwAD.unpack_dual(TExp.apply(td).sin() * td).tangent)
        ours, theirs = Two.apply(d, y, 3.0), TTwo.apply(td, ty, 3.0)
        for o, th in zip(ours, theirs):
            close(fwAD.unpack_dual(o).tangent, tfwAD.unpack_dual(th).tangent)
        close(fwAD.unpack_dual(ours[0] * ours[1]).tangent, tfwAD.unpack_dual(theirs[0] * theirs[1]).tangent)
        (ours[0] + ours[1] ** 2).sum().backward()  # its backward still serves reverse mode
        (theirs[0] + theirs[1] ** 2).sum().backward()
        assert raised(lambda: NoJvp.apply(d)) == raised(lambda: TNoJvp.apply(td)) != None  # noqa: E711
        close(NoJvp.apply(x), TNoJvp.apply(tx))  # without a tangent, no jvp is needed
    close(x.grad, tx.grad)


# ---- properties -------------------------------------------------------------------------------------

def _f(a, b):
    return mt.tanh(a @ b) * a.sum(1, keepdim=True) + mt.exp(-b.T ** 2)


def _jt(a, b, ta, tb):
    with fwAD.dual_level():
        return fwAD.unpack_dual(_f(fwAD.make_dual(a, ta), fwAD.make_dual(b, tb))).tangent


arrays = st.integers(0, 2**32 - 1).map(lambda s: np.random.default_rng(s).normal(size=(4, 3, 3)))


@settings(max_examples=25, deadline=None)
@given(arrays, st.floats(-3, 3))
def test_tangent_is_linear_in_the_tangents(v, c):
    a, b, t1, t2 = [mt.tensor(x) for x in v]
    s1, s2 = [mt.tensor(x) for x in np.random.default_rng(7).normal(size=(2, 3, 3))]
    lhs = _jt(a, b, c * t1 + t2, c * s1 + s2)
    rhs = c * _jt(a, b, t1, s1) + _jt(a, b, t2, s2)
    np.testing.assert_allclose(lhs.numpy(), rhs.numpy(), rtol=1e-10, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(arrays)
def test_tangent_equals_finite_differences(v):
    a, b, ta, tb = [mt.tensor(x) for x in v]
    h = 1e-6
    fd = (_f(a + h * ta, b + h * tb) - _f(a - h * ta, b - h * tb)) / (2 * h)
    np.testing.assert_allclose(_jt(a, b, ta, tb).numpy(), fd.numpy(), rtol=1e-6, atol=1e-7)


# ---- node names --------------------------------------------------------------------------------------

def _grad_fn_names(lib, ad, requires_grad):
    """What `grad_fn=<...>` shows for a dual, ops on it, and the primals unpack_dual gives back."""
    x = lib.tensor(np.array([0.3, -1.2, 0.8]), dtype=lib.float64, requires_grad=requires_grad)
    t = lib.tensor(np.array([1.0, 0.5, -2.0]), dtype=lib.float64)

    def name(y):
        return None if y.grad_fn is None else repr(y).split("grad_fn=<")[1].split(">")[0]

    with ad.dual_level():
        d = ad.make_dual(x, t)
        return {"dual": name(d), "dual * 2": name(d * 2), "sin(dual)": name(d.sin()), "dual + x": name(d + x),
                "dual of a view": name(ad.make_dual(x.view(3, 1), t.view(3, 1))),
                "primal of the dual": name(ad.unpack_dual(d).primal),
                "primal of sin(dual)": name(ad.unpack_dual(d.sin()).primal)}


def test_grad_fn_names_of_duals_are_pytorchs():
    assert _grad_fn_names(mt, fwAD, True) == _grad_fn_names(torch, tfwAD, True)
    assert _grad_fn_names(mt, fwAD, True)["dual"] == "ViewBackward0"
    assert _grad_fn_names(mt, fwAD, True)["primal of the dual"] == "Identity"


def test_a_dual_of_a_tensor_without_grad_has_a_node_unlike_pytorchs():
    """The documented difference: minitensor's dual is a graph node even then (PyTorch: no grad_fn)."""
    ours, theirs = _grad_fn_names(mt, fwAD, False), _grad_fn_names(torch, tfwAD, False)
    assert set(theirs.values()) == {None}
    assert ours["dual"] == "ViewBackward0" and ours["sin(dual)"] == "SinBackward0"
    assert ours["primal of the dual"] is None  # the primal is a plain tensor, as in PyTorch


# ---- h-tut2: ctx.save_for_forward, as the "Extending torch.func with autograd.Function" tutorial uses it ----
def _exp_function(lib):
    class MyExp(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])  # backward reads x, jvp reads the output
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.exp()

        @staticmethod
        def jvp(ctx, t):
            result, = ctx.saved_tensors
            return t * result

    return MyExp


def test_save_for_forward_is_what_jvp_reads_and_backward_still_reads_its_own():
    x = np.array([0.3, -1.2, 0.8])
    t, w = np.array([1.0, 2.0, -0.5]), np.array([0.7, -0.4, 1.9])  # (w: a random-like weight on the output)
    got = []
    for lib, ad in ((mt, fwAD), (torch, torch.autograd.forward_ad)):
        xr = lib.tensor(x, requires_grad=True)
        with ad.dual_level():
            out = _exp_function(lib).apply(ad.make_dual(xr, lib.tensor(t)))
            tangent = ad.unpack_dual(out).tangent
            (out * lib.tensor(w)).sum().backward()
        got.append((tangent.detach().numpy(), tangent.requires_grad, type(tangent.grad_fn).__name__ != "NoneType",
                    xr.grad.numpy()))
    (ta, ra, fa, ga), (tb, rb, fb, gb) = got
    np.testing.assert_allclose(ta, tb, rtol=1e-12)
    np.testing.assert_allclose(ga, gb, rtol=1e-12)
    assert (ra, fa) == (rb, fb) == (True, True)  # the saved output is the one with a graph


def test_save_for_forward_takes_tensors_only():
    for lib in (mt, torch):
        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x, 3)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

        with pytest.raises(AssertionError, match="save_for_forward expects all arguments to be tensors; you should "
                                                 "save non-tensors as attributes on ctx."):
            Keep.apply(lib.ones(1))
