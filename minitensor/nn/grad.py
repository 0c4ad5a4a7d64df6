"""`torch.nn.grad`: the gradients of a convolution with respect to its input and to its weight, given the
gradient of its output: what a hand-written backward (a custom Function fusing conv and batch norm) needs.

A convolution y = conv(x, w) is linear in x and linear in w, so with g = dL/dy:

    convNd_input(x.shape, w, g)  = dL/dx = conv_transpose(g, w)      (the adjoint of x -> conv(x, w))
    convNd_weight(x, w.shape, g) = dL/dw = correlation of x with g   (the adjoint of w -> conv(x, w))

Each is the vector-Jacobian product of the convolution, taken by autograd at a zero input (or weight):
a linear map's VJP does not depend on the point. The result has a graph to `w` (or `x`) and `g` when they
require grad, as PyTorch's does.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..autograd.api import grad as _vjp
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..factories import zeros
from ..tensor import Tensor
from .conv import conv1d, conv2d, conv3d

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]

_Size = Sequence[int]


def _check_output(conv: Callable[..., Tensor], y: Tensor, grad_output: Tensor) -> None:
    if y.shape != grad_output.shape:  # (PyTorch's check names the first dim that differs)
        d = next(i for i in range(max(y.ndim, grad_output.ndim))
                 if i >= min(y.ndim, grad_output.ndim) or y.shape[i] != grad_output.shape[i])
        got = grad_output.shape[d] if d < grad_output.ndim else None
        raise RuntimeError(f"Expected a tensor of dimension {y.ndim} and tensor.size[{d}] == "
                           f"{y.shape[d] if d < y.ndim else None} but got: dimension {grad_output.ndim} and "
                           f"tensor.size[{d}] = {got}")


def _vjp_at_zero(conv: Callable[..., Tensor], size: _Size, known: Tensor, grad_output: Tensor, of_input: bool,
                 stride: Any, padding: Any, dilation: Any, groups: int) -> Tensor:
    """dL/dz for the convolution's input z (`of_input`) or weight z, of `size`, the other operand being
    `known`: the VJP at z = 0 (the map z -> conv is linear), with a graph when `known` or g require grad."""
    keep_graph = is_grad_enabled() and (known.requires_grad or grad_output.requires_grad)
    with enable_grad():
        z = zeros(tuple(size), dtype=known.dtype, requires_grad=True)
        y = conv(z, known, None, stride, padding, dilation, groups) if of_input else \
            conv(known, z, None, stride, padding, dilation, groups)
        _check_output(conv, y, grad_output)
        (gz,) = _vjp(y, z, grad_output, create_graph=keep_graph)
    return gz if keep_graph else gz.detach()


def conv1d_input(input_size: _Size, weight: Tensor, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Tensor:
    """dL/dx of y = conv1d(x, weight) for an x of `input_size`, given dL/dy = grad_output."""
    return _vjp_at_zero(conv1d, input_size, weight, grad_output, True, stride, padding, dilation, groups)


def conv1d_weight(input: Tensor, weight_size: _Size, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                  dilation: Any = 1, groups: int = 1) -> Tensor:
    """dL/dw of y = conv1d(input, w) for a w of `weight_size`, given dL/dy = grad_output."""
    return _vjp_at_zero(conv1d, weight_size, input, grad_output, False, stride, padding, dilation, groups)


def conv2d_input(input_size: _Size, weight: Tensor, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Tensor:
    """dL/dx of y = conv2d(x, weight) for an x of `input_size`, given dL/dy = grad_output."""
    return _vjp_at_zero(conv2d, input_size, weight, grad_output, True, stride, padding, dilation, groups)


def conv2d_weight(input: Tensor, weight_size: _Size, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                  dilation: Any = 1, groups: int = 1) -> Tensor:
    """dL/dw of y = conv2d(input, w) for a w of `weight_size`, given dL/dy = grad_output."""
    return _vjp_at_zero(conv2d, weight_size, input, grad_output, False, stride, padding, dilation, groups)


def conv3d_input(input_size: _Size, weight: Tensor, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1) -> Tensor:
    """dL/dx of y = conv3d(x, weight) for an x of `input_size`, given dL/dy = grad_output."""
    return _vjp_at_zero(conv3d, input_size, weight, grad_output, True, stride, padding, dilation, groups)


def conv3d_weight(input: Tensor, weight_size: _Size, grad_output: Tensor, stride: Any = 1, padding: Any = 0,
                  dilation: Any = 1, groups: int = 1) -> Tensor:
    """dL/dw of y = conv3d(input, w) for a w of `weight_size`, given dL/dy = grad_output."""
    return _vjp_at_zero(conv3d, weight_size, input, grad_output, False, stride, padding, dilation, groups)
