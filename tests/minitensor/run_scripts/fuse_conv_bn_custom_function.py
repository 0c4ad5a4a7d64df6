"""PyTorch's "Fusing Convolution and Batch Norm using Custom Function" tutorial, small and in float64:
a Conv2D Function whose backward is written with conv2d and conv_transpose2d (checked against
torch.nn.grad.conv2d_input / conv2d_weight), a BatchNorm Function with its hand-written backward,
the fused FusedConvBN2DFunction (the in-place sub_/div_ on the conv output), each passed through
gradcheck, then the FusedConvBN module trained a few steps next to nn.Conv2d + nn.BatchNorm2d.

Every weight and input is made here from fixed numbers (the two libraries' generators differ)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


def data(*shape, seed=1.0, dtype=torch.double, requires_grad=False):
    n = math.prod(shape)
    t = 0.5 + 0.5 * torch.sin(torch.arange(n, dtype=dtype) * seed + seed).reshape(shape)
    return t.requires_grad_(requires_grad)


def convolution_backward(grad_out, X, weight):
    grad_input = F.conv2d(X.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)
    grad_X = F.conv_transpose2d(grad_out, weight)
    return grad_X, grad_input


class Conv2D(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, weight):
        ctx.save_for_backward(X, weight)
        return F.conv2d(X, weight)

    # Use @once_differentiable by default unless we intend to double backward
    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        X, weight = ctx.saved_tensors
        return convolution_backward(grad_out, X, weight)


weight = data(5, 3, 3, 3, seed=0.7, requires_grad=True)
X = data(4, 3, 7, 7, seed=0.3, requires_grad=True)
print(torch.autograd.gradcheck(Conv2D.apply, (X, weight)))

# the same two gradients from torch.nn.grad
grad_out = data(4, 5, 5, 5, seed=1.1)
grad_X, grad_weight = convolution_backward(grad_out, X.detach(), weight.detach())
print(torch.allclose(grad_X, torch.nn.grad.conv2d_input(X.shape, weight, grad_out)),
      torch.allclose(grad_weight, torch.nn.grad.conv2d_weight(X, weight.shape, grad_out)))
print(grad_X.shape, grad_weight.shape, round(grad_weight.sum().item(), 6))


def unsqueeze_all(t):
    # Helper function to ``unsqueeze`` all the dimensions that we reduce over
    return t[None, :, None, None]


def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
    # We use the formula: ``out = (X - mean(X)) / (sqrt(var(X)) + eps)``
    # in batch norm 2D forward. To simplify our derivation, we follow the
    # chain rule and compute the gradients as follows before accumulating
    # them all into a final grad_input.
    #  1) ``grad of out wrt var(X)`` * ``grad of var(X) wrt X``
    #  2) ``grad of out wrt mean(X)`` * ``grad of mean(X) wrt X``
    #  3) ``grad of out wrt X in the numerator`` * ``grad of X wrt X``
    # We then rewrite the formulas to use as few extra buffers as possible
    tmp = ((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
    tmp *= -1
    d_denom = tmp / (sqrt_var + eps)**2  # ``d_denom = -num / denom**2``
    # It is useful to delete tensors when you no longer need them with ``del``
    # For example, we could've done ``del tmp`` here because we won't use it later
    # In this case, it's not a big difference because ``tmp`` only has size of (C,)
    # The important thing is avoid allocating NCHW-sized tensors unnecessarily
    d_var = d_denom / (2 * sqrt_var)  # ``denom = torch.sqrt(var) + eps``
    # Compute ``d_mean_dx`` before allocating the final NCHW-sized grad_input buffer
    d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
    d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
    # ``d_mean_dx`` has already been reassigned to a C-sized buffer so no need to worry

    # ``(1) unbiased_var(x) = ((X - unsqueeze_all(mean))**2).sum(dim=(0, 2, 3)) / (N - 1)``
    grad_input = X * unsqueeze_all(d_var * N)
    grad_input += unsqueeze_all(-d_var * sum)
    grad_input *= 2 / ((N - 1) * N)
    # (2) mean (see above)
    grad_input += d_mean_dx
    # (3) Add 'grad_out / <factor>' without allocating an extra buffer
    grad_input *= unsqueeze_all(sqrt_var + eps)
    grad_input += grad_out
    grad_input /= unsqueeze_all(sqrt_var + eps)  # ``sqrt_var + eps > 0!``
    return grad_input


class BatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        # Don't save ``keepdim`` values for backward
        sum = X.sum(dim=(0, 2, 3))
        var = X.var(unbiased=True, dim=(0, 2, 3))
        N = X.numel() / X.size(1)
        sqrt_var = torch.sqrt(var)
        ctx.save_for_backward(X)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        mean = sum / N
        denom = sqrt_var + eps
        out = X - unsqueeze_all(mean)
        out /= unsqueeze_all(denom)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        X, = ctx.saved_tensors
        return batch_norm_backward(grad_out, X, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)


a = data(1, 2, 3, 4, seed=0.9, requires_grad=True)
print(torch.autograd.gradcheck(BatchNorm.apply, (a,), fast_mode=False))
print(BatchNorm.apply(a).sum(dim=(0, 2, 3)).abs().max() < 1e-12)  # zero mean per channel


class FusedConvBN2DFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, conv_weight, eps=1e-3):
        assert X.ndim == 4  # N, C, H, W
        # (1) Only need to save this single buffer for backward!
        ctx.save_for_backward(X, conv_weight)

        # (2) Exact same Conv2D forward from example above
        X = F.conv2d(X, conv_weight)
        # (3) Exact same BatchNorm2D forward from example above
        sum = X.sum(dim=(0, 2, 3))
        var = X.var(unbiased=True, dim=(0, 2, 3))
        N = X.numel() / X.size(1)
        sqrt_var = torch.sqrt(var)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        mean = sum / N
        denom = sqrt_var + eps
        # Try to do as many things in-place as possible
        # Instead of `out = (X - a) / b`, doing `out = X - a; out /= b`
        # avoids allocating one extra NCHW-sized buffer here
        out = X - unsqueeze_all(mean)
        out /= unsqueeze_all(denom)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        X, conv_weight, = ctx.saved_tensors
        # (4) Batch norm backward
        # (5) We need to recompute conv
        X_conv_out = F.conv2d(X, conv_weight)
        grad_out = batch_norm_backward(grad_out, X_conv_out, ctx.sum, ctx.sqrt_var,
                                       ctx.N, ctx.eps)
        # (6) Conv2d backward
        grad_X, grad_input = convolution_backward(grad_out, X, conv_weight)
        return grad_X, grad_input, None, None, None, None, None


weight = data(5, 3, 3, 3, seed=0.4, requires_grad=True)
X = data(2, 3, 4, 4, seed=0.6, requires_grad=True)
print(torch.autograd.gradcheck(FusedConvBN2DFunction.apply, (X, weight)))


class FusedConvBN(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, exp_avg_factor=0.1,
                 eps=1e-3, device=None, dtype=None):
        super(FusedConvBN, self).__init__()
        factory_kwargs = {'device': device, 'dtype': dtype}
        # Conv parameters
        weight_shape = (out_channels, in_channels, kernel_size, kernel_size)
        self.conv_weight = nn.Parameter(torch.empty(*weight_shape, **factory_kwargs))
        # Batch norm parameters
        num_features = out_channels
        self.num_features = num_features
        self.eps = eps
        # Initialize
        self.reset_parameters()

    def forward(self, X):
        return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)

    def reset_parameters(self) -> None:
        nn.init.kaiming_uniform_(self.conv_weight, a=math.sqrt(5))


fused = FusedConvBN(3, 4, 3, dtype=torch.double)
unfused = nn.Sequential(nn.Conv2d(3, 4, 3, bias=False, dtype=torch.double),
                        nn.BatchNorm2d(4, affine=False, eps=1e-3, dtype=torch.double))
print(fused.conv_weight.shape, fused.conv_weight.dtype, fused.conv_weight.abs().max() <= 1 / math.sqrt(27))
with torch.no_grad():
    fused.conv_weight.copy_(data(4, 3, 3, 3, seed=0.8) - 0.5)
    unfused[0].weight.copy_(fused.conv_weight)
inputs = data(6, 3, 6, 6, seed=0.2)
target = data(6, 4, 4, 4, seed=0.5)
opt_fused = torch.optim.SGD(fused.parameters(), lr=0.05)
opt_unfused = torch.optim.SGD(unfused.parameters(), lr=0.05)
for step in range(3):
    losses = []
    for model, opt in ((fused, opt_fused), (unfused, opt_unfused)):
        opt.zero_grad()
        loss = F.mse_loss(model(inputs), target)
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 8))
    print(step, losses)  # (nn.BatchNorm2d: the biased variance, eps under the root)
