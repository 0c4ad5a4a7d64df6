"""Custom autograd Functions and double backward in the manner of "Extending PyTorch" and "Double Backward
with Custom Functions", written for PyTorch: a LinearFunction with a separate `setup_context(ctx, inputs,
output)` and `ctx.needs_input_grad`, a MulConstant taking a Python number (its gradient None), Square,
Exp (saving its output) and Sinh (saving intermediates returned as extra outputs) checked by
`torch.autograd.gradcheck` and `gradgradcheck` on float64 inputs, a Function under `@once_differentiable`
whose gradient has no graph even under create_graph, `ctx.mark_non_differentiable` and
`ctx.set_materialize_grads(False)`, and a WGAN-GP gradient penalty:
`torch.autograd.grad(outputs=d_interp, inputs=interp,
grad_outputs=torch.ones_like(d_interp), create_graph=True, retain_graph=True)[0]`,
`((gradients.norm(2, dim=1) - 1) ** 2).mean()`, backpropagated into the critic's weights.

Every weight and input is made here from fixed numbers.
"""
import torch
import torch.nn as nn
from torch.autograd import Function
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    # inputs is a Tuple of all of the inputs passed to forward. output is the output of the forward().
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        # ctx is a context object that can be used to stash information for backward computation
        tensor, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        # We return as many input gradients as there were arguments. Gradients of non-Tensor arguments must be None.
        return grad_output * ctx.constant, None


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        # Because we are saving one of the inputs use `save_for_backward`
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx, grad_out):
        # A function support double backward automatically if autograd is able to record the computations
        # performed in backward
        x, = ctx.saved_tensors
        return grad_out * 2 * x


class Exp(Function):
    # Simple case where everything goes well
    @staticmethod
    def forward(ctx, x):
        # This time we save the output
        result = torch.exp(x)
        # Note that we should use `save_for_backward` here when the tensor saved is an output (or an input).
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out


class Sinh(Function):
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        # In order to be able to save the intermediate results, we need to include them as outputs!
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        # We cannot skip accumulating these even though we won't use the outputs directly.
        # They will be used later in the second backward.
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input


def sinh(x):
    # Create a wrapper that only returns the first output
    return Sinh.apply(x)[0]


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 3 * x ** 2


class SortWithIndices(Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g_values, g_idx):
        idx, = ctx.saved_tensors
        if g_values is None:
            return None
        grad = torch.zeros_like(g_values)
        grad.scatter_(0, idx, g_values)
        return grad


x = torch.linspace(-1, 1, 6, dtype=torch.double).view(2, 3).requires_grad_()
w = torch.cos(torch.arange(12, dtype=torch.double)).view(4, 3).requires_grad_()
b = torch.linspace(0, 0.3, 4, dtype=torch.double, requires_grad=True)
out = LinearFunction.apply(x, w, b)
print(out)
out.sum().backward()
print(x.grad, b.grad, w.grad[0])
print(torch.autograd.gradcheck(LinearFunction.apply, (x, w, b), eps=1e-6, atol=1e-4))
print(torch.autograd.gradcheck(MulConstant.apply, (x, 2.5)), MulConstant.apply(x, 2.5)[1])

x = torch.tensor([0.3, -0.7, 1.1], dtype=torch.double, requires_grad=True)
for name, f in [("Square", Square.apply), ("Exp", Exp.apply), ("Sinh", sinh)]:
    print(name, torch.autograd.gradcheck(f, x), torch.autograd.gradgradcheck(f, x))
    y = f(x)
    g, = torch.autograd.grad(y.sum(), x, create_graph=True)
    gg, = torch.autograd.grad(g.sum(), x)
    print(y, g, gg)

y = Cube.apply(x)
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
print(g, g.requires_grad, g.grad_fn)  # the backward ran without recording: no graph to differentiate again

v = torch.tensor([0.5, -1.0, 2.0, 0.1], requires_grad=True)
values, idx = SortWithIndices.apply(v)
print(values, idx, idx.requires_grad)
(values * torch.tensor([1., 2., 3., 4.])).sum().backward()
print(v.grad)


# A WGAN-GP critic: the gradient penalty needs the gradient of the critic's output w.r.t. its input, with a graph
class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x)


critic = Critic()
with torch.no_grad():
    for k, p in enumerate(critic.parameters()):
        p.copy_(0.5 * torch.sin(torch.arange(p.numel(), dtype=torch.float) * (0.8 + 0.3 * k)).view(p.shape))
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-2, betas=(0.5, 0.9))
real = torch.linspace(-1, 1, 12).view(4, 3)
fake = torch.cos(torch.arange(12, dtype=torch.float)).view(4, 3)
alpha = torch.tensor([0.1, 0.4, 0.6, 0.9]).view(4, 1)  # torch.rand(batch_size, 1) in the paper's recipe
lambda_gp = 10
for step in range(3):
    optimizer.zero_grad()
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interp = critic(interp)
    gradients = torch.autograd.grad(outputs=d_interp, inputs=interp, grad_outputs=torch.ones_like(d_interp),
                                    create_graph=True, retain_graph=True)[0]
    gradients = gradients.view(gradients.size(0), -1)
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
    d_loss = critic(fake).mean() - critic(real).mean() + lambda_gp * gradient_penalty
    d_loss.backward()
    optimizer.step()
    print(f"step {step}: d_loss {d_loss.item():.6f} gp {gradient_penalty.item():.6f}",
          repr(gradient_penalty.grad_fn).split(" object")[0])
print(critic.net[0].weight.grad.sum(), critic.net[2].bias)
