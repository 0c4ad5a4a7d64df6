"""PyTorch's "Extending torch.func with autograd.Function" tutorial: Functions written with a separate
setup_context (forward without ctx) so torch.func's transforms can see through them: NumPy-backed sort
and take whose backward is itself a Function (so grad of grad works), generate_vmap_rule, a vmap
staticmethod, a jvp staticmethod for forward mode (jvp, jacfwd), and once_differentiable.

Every input is made here from fixed numbers (the two libraries' generators differ)."""
import numpy as np
import torch
import torch.autograd.forward_ad as fwAD
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


def to_numpy(tensor):
    return tensor.cpu().numpy()


class NumpySort(torch.autograd.Function):
    # Note that forward does not take ctx
    @staticmethod
    def forward(x, dim):
        device = x.device
        x = to_numpy(x)
        ind = np.argsort(x, axis=dim)
        ind_inv = np.argsort(ind, axis=dim)
        result = np.take_along_axis(x, ind, axis=dim)
        # Any intermediates to be saved in backward must be returned as
        # outputs.
        return (
            # The desired output
            torch.tensor(result, device=device),
            # intermediate to save for backward
            torch.tensor(ind, device=device),
            # intermediate to save for backward
            torch.tensor(ind_inv, device=device),
        )

    # setup_context is responsible for calling methods and/or assigning to
    # the ctx object. Please do not do additional compute (e.g. add
    # Tensors together) in setup_context.
    @staticmethod
    def setup_context(ctx, inputs, output):
        x, dim = inputs
        # Note that output is whatever you returned from forward.
        # If you returned multiple values, then output is a Tuple of multiple values.
        # If you returned a single Tensor, then output is a Tensor.
        # If you returned a Tuple with a single Tensor, then output is a
        # Tuple with a single Tensor.
        _, ind, ind_inv = output
        ctx.mark_non_differentiable(ind, ind_inv)
        # Tensors must be saved via ctx.save_for_backward. Please do not
        # assign them directly onto the ctx object.
        ctx.save_for_backward(ind, ind_inv)
        # Non-tensors may be saved by assigning them as attributes on the ctx object.
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output, _0, _1):
        # For the autograd.Function to be arbitrarily composable with function
        # transforms, all staticmethod other than forward and setup_context
        # must be implemented in a "transformable" way; that is, they must
        # only consist of PyTorch operations or autograd.Function.
        #
        # For example, this allows us to do double backwards and/or compute
        # second order gradients.
        #
        # We've written the backward pass of NumpySort in terms of another
        # autograd.Function, NumpyTake.
        ind, ind_inv = ctx.saved_tensors
        return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None

    # The vmap rule: called by PyTorch's vmap with the inputs' batch dims
    @staticmethod
    def vmap(info, in_dims, x, dim):
        x_bdim, _ = in_dims

        # wrap dim
        logical_dim = x.dim() if x_bdim is None else x.dim() - 1
        dim = dim if dim >= 0 else dim + logical_dim

        x = x.movedim(x_bdim, 0)
        result = NumpySort.apply(x, dim + 1)
        # The first output is batched along dim 0, so are the indices
        return result, (0, 0, 0)


class NumpyTake(torch.autograd.Function):
    @staticmethod
    def forward(x, ind, ind_inv, dim):
        device = x.device
        x = to_numpy(x)
        ind = to_numpy(ind)
        return torch.tensor(np.take_along_axis(x, ind, dim), device=device)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, ind, ind_inv, dim = inputs
        ctx.save_for_backward(ind, ind_inv)
        ctx.dim = dim

    @staticmethod
    def backward(ctx, grad_output):
        ind, ind_inv = ctx.saved_tensors
        result = NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim)
        return result, None, None, None

    @staticmethod
    def vmap(info, in_dims, x, ind, ind_inv, dim):
        x_bdim, ind_bdim, ind_inv_bdim, _ = in_dims

        # wrap dim
        logical_dim = x.dim() if x_bdim is None else x.dim() - 1
        dim = dim if dim >= 0 else dim + logical_dim

        def maybe_expand_bdim_at_front(x, x_bdim):
            if x_bdim is None:
                return x.expand(info.batch_size, *x.shape)
            return x.movedim(x_bdim, 0)

        # If the Tensor doesn't have the dimension being vmapped over,
        # expand it out. Otherwise, move it to the front of the Tensor
        x = maybe_expand_bdim_at_front(x, x_bdim)
        ind = maybe_expand_bdim_at_front(ind, ind_bdim)
        ind_inv = maybe_expand_bdim_at_front(ind_inv, ind_inv_bdim)

        # The return is a tuple (output, out_dims). Since output is a Tensor,
        # then out_dims is an Optional[int] (instead of being a Tuple).
        return NumpyTake.apply(x, ind, ind_inv, dim + 1), 0


def numpy_sort(x, dim=-1):
    result, _, _ = NumpySort.apply(x, dim)
    return result


x = torch.tensor([[0.3, -1.2, 2.5], [1.1, 0.4, -0.7]])
grad_x = torch.func.grad(lambda x: numpy_sort(x).sum())(x)
assert torch.allclose(grad_x, torch.ones_like(x))
print(numpy_sort(x))
weights = torch.tensor([1.0, 2.0, 3.0])
print(torch.func.grad(lambda x: (numpy_sort(x) * weights).sum())(x))
# second order: the backward is made of Functions
print(torch.func.grad(lambda x: torch.func.grad(lambda y: (numpy_sort(y) ** 3 * weights).sum())(x).sum())(x))
y = x.clone().requires_grad_()
out = numpy_sort(y)
print(out)
(out * weights).sum().backward()
print(y.grad)

# vmap with the vmap staticmethods
result = torch.vmap(numpy_sort)(x)
assert torch.allclose(result, numpy_sort(result, 1))
print(result)
print(torch.vmap(numpy_sort, in_dims=1)(x))
print(torch.vmap(torch.func.grad(lambda x: (numpy_sort(x) * weights).sum()))(x))


class MyCube(torch.autograd.Function):
    # Set generate_vmap_rule to True to ask PyTorch to automatically generate
    # a vmap rule.
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        # In order for the autograd.Function to work with higher-order
        # gradients, we must add the gradient contribution of `dx`.
        result = grad_output * dx + grad_dx * 6 * x
        return result


def my_cube(x):
    result, dx = MyCube.apply(x)
    return result


x = torch.tensor([0.5, -1.5, 2.0])
result = torch.vmap(my_cube)(x)
assert torch.allclose(result, x ** 3)
print(result)
print(torch.func.grad(my_cube)(x[1]), torch.vmap(torch.func.grad(my_cube))(x))
print(torch.vmap(torch.func.grad(torch.func.grad(my_cube)))(x))


class MyExp(torch.autograd.Function):
    generate_vmap_rule = True  # (for jacfwd and jacrev, which vmap)

    @staticmethod
    def forward(x):
        result = x.exp()
        return result

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result = output
        # Since jvp(ctx) uses result, and backward uses it too
        ctx.save_for_backward(result)
        ctx.save_for_forward(result)

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result

    @staticmethod
    def jvp(ctx, x_t):
        # Tensors saved for forward must be accessed via ctx.saved_tensors
        result, = ctx.saved_tensors
        return x_t * result


x = torch.tensor([0.1, -0.4, 0.8])
t = torch.tensor([1.0, 2.0, 0.5])
out, jvp_out = torch.func.jvp(MyExp.apply, (x,), (t,))
print(out, jvp_out, torch.allclose(jvp_out, t * x.exp()))
print(torch.func.jacfwd(MyExp.apply)(x))
# the same jvp staticmethod through torch.autograd.forward_ad's dual tensors, with reverse mode as well
xr = x.clone().requires_grad_()
with fwAD.dual_level():
    out = MyExp.apply(fwAD.make_dual(xr, t))
    print(fwAD.unpack_dual(out).tangent)
    (out * t).sum().backward()
print(xr.grad)
print(torch.allclose(torch.func.jacrev(MyExp.apply)(x), torch.diag(x.exp())))


# once_differentiable: a backward that is not itself differentiable (first order only)
class MySquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2 * x * grad_output


x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
y = MySquare.apply(x)
(g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
print(y, g, g.requires_grad)
try:
    g.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
