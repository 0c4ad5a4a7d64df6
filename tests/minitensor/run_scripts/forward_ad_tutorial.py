"""PyTorch's "Forward-mode Automatic Differentiation (Beta)" tutorial, in its idiom: dual tensors, modules
with dual parameters, functional_call, a custom Function with a jvp, and torch.func's jvp on a module."""
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn as nn
from torch.func import functional_call

torch.manual_seed(0)


def data(*shape, seed=1.0, dtype=torch.float32):
    """Deterministic stand-ins for the tutorial's random tensors (the two libraries' generators differ)."""
    n = 1
    for d in shape:
        n *= d
    return torch.sin(torch.arange(n, dtype=dtype) * seed + seed).reshape(shape)


def linear():
    m = nn.Linear(5, 5)
    with torch.no_grad():
        m.weight.copy_(data(5, 5, seed=0.3))
        m.bias.copy_(data(5, seed=0.7))
    return m


def show(name, t):
    print(name, tuple(t.shape), [round(v, 4) for v in t.flatten().tolist()[:6]])


primal = data(10, 10, seed=0.1)
tangent = data(10, 10, seed=0.2)


def fn(x, y):
    return x ** 2 + y ** 2


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    assert fwAD.unpack_dual(dual_input).tangent is tangent
    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    assert fwAD.unpack_dual(dual_input_alt).tangent is not tangent
    plain_tensor = data(10, 10, seed=0.3)
    dual_output = fn(dual_input, plain_tensor)
    jvp = fwAD.unpack_dual(dual_output).tangent
    show("jvp", jvp)
    print("close to 2 x t:", torch.allclose(jvp, 2 * primal * tangent))
print("tangent after the level:", fwAD.unpack_dual(dual_output).tangent)

# modules: swap each parameter for a dual
model = linear()
inp = data(16, 5, seed=0.4)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: data(*p.shape, seed=0.5) for name, p in params.items()}
with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    out = model(inp)
    jvp = fwAD.unpack_dual(out).tangent
    show("module jvp", jvp)
    print("close:", torch.allclose(jvp, inp @ tangents["weight"].T + tangents["bias"], atol=1e-6))

# functional_call with dual parameters
model = linear()
dual_params = {}
with fwAD.dual_level():
    for name, p in params.items():
        dual_params[name] = fwAD.make_dual(p, tangents[name])
    out = functional_call(model, dual_params, inp)
    jvp = fwAD.unpack_dual(out).tangent
    show("functional_call jvp", jvp)
    primal_out = fwAD.unpack_dual(out).primal
    print("primal requires grad:", primal_out.requires_grad, "has tangent:", fwAD.unpack_dual(primal_out).tangent)
    # reverse mode at the same time: the parameters still get their gradients
    (out * data(16, 5, seed=0.6)).sum().backward()
    show("weight grad", params["weight"].grad)


# a custom Function with a jvp
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        del ctx.result
        return gO


fn_apply = Fn.apply
primal = data(10, 10, seed=0.8, dtype=torch.double).requires_grad_()
tangent = data(10, 10, seed=0.9, dtype=torch.double)
with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn_apply(dual_input)
    jvp = fwAD.unpack_dual(dual_output).tangent
    show("custom jvp", jvp)
    print("close:", torch.allclose(jvp, primal.detach().exp() * tangent))
    downstream = fwAD.unpack_dual(dual_output.sin() * 3).tangent
    show("after the custom Function", downstream)

# the tutorial checks the jvp against finite differences (reverse mode off: Fn has no backward)
print("gradcheck:", torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
                                             check_undefined_grad=False, check_batched_grad=False))


class WrongJvp(Fn):
    @staticmethod
    def jvp(ctx, gI):
        return 2 * gI * ctx.result


try:
    torch.autograd.gradcheck(WrongJvp.apply, (primal[:2, :2],), check_forward_ad=True, check_backward_ad=False)
except RuntimeError as e:  # (GradcheckError, a RuntimeError)
    print(type(e).__name__ + ":", str(e).splitlines()[0])


class NoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


with fwAD.dual_level():
    try:
        NoJvp.apply(fwAD.make_dual(primal, tangent))
    except NotImplementedError as e:
        print("NotImplementedError:", e)

# torch.func.jvp with a module through functional_call
model = linear()
func_params = {k: v.detach() for k, v in model.named_parameters()}


def func(params, x):
    return functional_call(model, params, x)


_, jvp_out = torch.func.jvp(lambda p: func(p, inp), (func_params,), (tangents,))
show("func.jvp", jvp_out)

# the level's rules
with fwAD.dual_level() as level:
    print("level", level)
    try:
        fwAD.enter_dual_level()
    except RuntimeError as e:
        print("RuntimeError:", e)
try:
    fwAD.make_dual(torch.ones(2), torch.ones(2))
except RuntimeError as e:
    print("RuntimeError:", e)
print(fwAD.unpack_dual(torch.ones(2)))
