"""gradcheck / gradgradcheck in forward mode (check_forward_ad, check_fwd_over_rev) against PyTorch's: which
calls pass, and the error class and first line of the message for wrong jvps and backwards."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import GradcheckError, gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

X = np.array([0.3, -1.2, 0.8])
Y = np.array([1.5, 0.4, -0.7])


def functions(lib):
    """exp(x) with a right or wrong jvp / backward, a missing jvp, and a two-input product (y * x, x + y)."""
    def exp_fn(jvp_scale, bwd_scale, with_jvp=True):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                ctx.x = x
                return x.exp()

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return bwd_scale * g * x.exp()

        if with_jvp:
            Exp.jvp = staticmethod(lambda ctx, t: jvp_scale * t * ctx.x.exp())
        return Exp.apply

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.a, ctx.b = a, b
            return a * b, a + b

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * ctx.b + g2, g1 * ctx.a + g2

        @staticmethod
        def jvp(ctx, ta, tb):  # wrong: the second output's tangent counts tb three times
            return ta * ctx.b + tb * ctx.a, ta + 3 * tb

    return {
        "good": exp_fn(1, 1), "wrong jvp": exp_fn(2, 1), "wrong backward": exp_fn(1, 2),
        "both wrong": exp_fn(2, 2), "no jvp": exp_fn(1, 1, with_jvp=False), "two": Two.apply,
        "ops": lambda x: (x.sin() * x).softmax(0),
    }


def first_line(lib, call):
    try:
        return call()
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        return type(e).__name__, str(e).splitlines()[0].replace("minitensor.", "torch.")


def args_for(lib, name):
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    if name == "two":
        return (x, lib.tensor(Y, dtype=lib.float64, requires_grad=True))
    return (x,)


GRADCHECK_KWARGS = [
    {},
    {"check_forward_ad": True},
    {"check_forward_ad": True, "check_backward_ad": False},
    {"check_forward_ad": True, "check_backward_ad": False, "check_undefined_grad": False,
     "check_batched_grad": False},  # the forward AD tutorial's call
    {"check_forward_ad": True, "raise_exception": False},
    {"check_forward_ad": True, "check_backward_ad": False, "raise_exception": False},
    {"check_backward_ad": False},
    {"check_forward_ad": False, "check_backward_ad": False},
    {"check_batched_forward_grad": True},
    {"check_batched_grad": True, "check_forward_ad": True, "check_backward_ad": False},
]


@pytest.mark.parametrize("kwargs", GRADCHECK_KWARGS, ids=str)
@pytest.mark.parametrize("name", ["good", "wrong jvp", "wrong backward", "both wrong", "no jvp", "two", "ops"])
def test_gradcheck_passes_and_fails_as_pytorchs(name, kwargs):
    ours = first_line(mt, lambda: gradcheck(functions(mt)[name], args_for(mt, name), **kwargs))
    theirs = first_line(torch, lambda: torch.autograd.gradcheck(functions(torch)[name], args_for(torch, name),
                                                               **kwargs))
    assert ours == theirs


def test_the_wrong_jvp_is_caught_only_by_the_forward_check_and_the_wrong_backward_only_by_the_reverse_one():
    f = functions(mt)
    x = args_for(mt, "good")
    assert gradcheck(f["wrong jvp"], x) is True
    assert gradcheck(f["wrong backward"], x, check_forward_ad=True, check_backward_ad=False) is True
    with pytest.raises(GradcheckError, match="^Jacobian computed with forward mode mismatch"):
        gradcheck(f["wrong jvp"], x, check_forward_ad=True)
    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to input 0,"):
        gradcheck(f["wrong backward"], x, check_forward_ad=True)
    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        gradcheck(f["no jvp"], x, check_forward_ad=True, check_backward_ad=False)


def test_the_forward_mode_message_shows_pytorchs_jacobians():
    def message(lib, check):
        try:
            check(functions(lib)["wrong jvp"], args_for(lib, "good"), check_forward_ad=True)
        except Exception as e:  # noqa: BLE001
            return str(e).replace("minitensor.", "torch.")
        raise AssertionError("the wrong jvp passed")

    ours, theirs = message(mt, gradcheck), message(torch, torch.autograd.gradcheck)
    # the first three parts (what mismatched, the numerical and the analytical Jacobian) are PyTorch's
    assert ours.split("analytical:")[0] == theirs.split("analytical:")[0]
    assert ours.split("analytical:")[1].split("\n")[:3] == theirs.split("analytical:")[1].split("\n")[:3]
    assert "d output[2] / d input[2]" in ours  # the worst element, minitensor's addition


def test_the_pair_named_counts_the_inputs_and_outputs_that_require_grad():
    """The wrong tangent is the second output's with respect to y, the third argument (first one a constant)."""
    for lib, check in ((mt, gradcheck), (torch, torch.autograd.gradcheck)):
        two = functions(lib)["two"]
        x, y = args_for(lib, "two")
        c = lib.tensor(Y, dtype=lib.float64)
        got = first_line(lib, lambda: check(lambda c, x, y: (y * 1.0,) + tuple(two(x, y)), (c, x, y),
                                            check_forward_ad=True))
        assert got == ("GradcheckError", "Jacobian computed with forward mode mismatch for output 2 with respect "
                                         "to input 1,")


def test_forward_check_catches_a_wrong_jvp_inside_a_composite():
    class ScaledJvp(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.x = x
            return x * x

        @staticmethod
        def backward(ctx, g):
            return 2 * g * ctx.x

        @staticmethod
        def jvp(ctx, t):
            return 2 * t * ctx.x + 1e-3 * t  # off by a little: still beyond rtol=1e-3 where x is small

    w = mt.tensor(np.random.default_rng(0).standard_normal((3, 2)))
    fn = lambda x: (ScaledJvp.apply(x.tanh()).softmax(-1) @ w).exp()  # noqa: E731
    x = mt.tensor([[0.01, -0.02, 0.03], [0.2, 0.1, -0.3]], dtype=mt.float64, requires_grad=True)
    assert gradcheck(fn, (x,)) is True
    assert gradcheck(fn, (x,), check_forward_ad=True, raise_exception=False) is False


@pytest.mark.parametrize("kwargs", [
    {"check_fwd_over_rev": True},
    {"check_fwd_over_rev": True, "check_rev_over_rev": False, "check_undefined_grad": False},
    {"check_fwd_over_rev": True, "check_rev_over_rev": False},
    {"check_rev_over_rev": False},
    {"check_fwd_over_rev": True, "check_rev_over_rev": False, "check_undefined_grad": False,
     "check_batched_grad": True},
], ids=str)
@pytest.mark.parametrize("name", ["good", "wrong jvp", "no jvp", "ops", "detached backward"])
def test_gradgradcheck_forward_over_reverse_is_pytorchs(name, kwargs):
    def detached(lib):
        class Cube(lib.autograd.Function):
            """x^3 whose backward is right to first order but has no second derivative (x.detach())."""
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                ctx.x = x
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * g * x.detach() ** 2

            @staticmethod
            def jvp(ctx, t):
                return 3 * t * ctx.x ** 2
        return Cube.apply

    def fn(lib):
        return detached(lib) if name == "detached backward" else functions(lib)[name]

    ours = first_line(mt, lambda: gradgradcheck(fn(mt), args_for(mt, "good"), **kwargs))
    theirs = first_line(torch, lambda: torch.autograd.gradgradcheck(fn(torch), args_for(torch, "good"), **kwargs))
    assert ours == theirs


def test_gradgradcheck_reverse_failure_starts_with_pytorchs_line():
    class DetachedSquare(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x.detach()  # right values, but no derivative with respect to x

    with pytest.raises(GradcheckError, match="^Jacobian mismatch for output 0 with respect to input 0,\n"
                                             "gradgradcheck: the derivative"):
        gradgradcheck(DetachedSquare.apply, (mt.tensor(X, dtype=mt.float64, requires_grad=True),))
