r"""`torch.nn.utils.fusion`: a conv or linear layer followed by an eval-mode batch norm, folded into one layer.

In eval mode the batch norm is a fixed affine map per output channel c, so with y = W x + b

    bn(y)_c = (y_c - mean_c) / sqrt(var_c + eps) * gamma_c + beta_c  =  W'_c x + b'_c,   where
    s_c  = gamma_c / sqrt(var_c + eps)
    W'_c = W_c * s_c                       (the output-channel slice of W: dim 0, dim 1 for a transposed conv)
    b'_c = (b_c - mean_c) * s_c + beta_c   (b = 0 for a layer without bias)

gamma = 1 and beta = 0 for a batch norm without affine parameters (conv only, as in PyTorch). The fused
weight and bias keep the layer's dtypes (a bias-less layer's new bias takes the weight's), and come back as
new leaf Parameters: the fusion itself is not differentiated.
"""
from __future__ import annotations

import copy
from typing import Any, TypeVar

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]

_M = TypeVar("_M")


def _require_eval(layer: Any, bn: Any) -> None:
    # PyTorch states these preconditions as AssertionErrors; raised explicitly so `python -O` keeps them
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _require_running_stats(bn: Any) -> None:
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def _with_fused(layer: Any, weight: Parameter, bias: Parameter) -> Any:
    # written into the parameter store so that `bias` keeps its place in state_dict when the layer had none
    layer._parameters["weight"], layer._parameters["bias"] = weight, bias
    return layer


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Tensor | None, bn_b: Tensor | None,
                         transpose: bool = False) -> tuple[Parameter, Parameter]:
    """(W', b') of the conv equal to conv then eval-mode batch norm (module docstring):
    W' = W * s over the output channels (dim 0; dim 1 when `transpose`), b' = (b - mean) * s + beta with
    s = gamma / sqrt(var + eps). W' has conv_w's dtype and requires_grad; b' has conv_b's (conv_w's dtype
    and requires_grad=False when conv_b is None)."""
    bias_dtype = conv_w.dtype if conv_b is None else conv_b.dtype
    bias_requires_grad = False if conv_b is None else conv_b.requires_grad
    with no_grad():
        rsqrt = (bn_rv + bn_eps).rsqrt()
        scale = rsqrt if bn_w is None else bn_w * rsqrt
        shape = [1, -1] if transpose else [-1, 1]
        w = (conv_w * scale.reshape(shape + [1] * (conv_w.ndim - 2))).to(conv_w.dtype)
        # (b - mean) * rsqrt * gamma + beta, in PyTorch's order of rounding
        b = ((0 - bn_rm) if conv_b is None else (conv_b - bn_rm)) * rsqrt
        if bn_w is not None:
            b = b * bn_w
        if bn_b is not None:
            b = b + bn_b
        b = b.to(bias_dtype)
    return Parameter(w._array, conv_w.requires_grad), Parameter(b._array, bias_requires_grad)


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Tensor | None, bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                           bn_w: Tensor, bn_b: Tensor) -> tuple[Parameter, Parameter]:
    """(W', b') of the Linear equal to linear then eval-mode batch norm: W' = W * s[:, None],
    b' = (b - mean) * s + beta, s = gamma / sqrt(var + eps). gamma and beta are required (as in PyTorch)."""
    # a batch norm without affine parameters: PyTorch's arithmetic on None fails with these TypeErrors
    if bn_w is None:
        raise TypeError("unsupported operand type(s) for *: 'NoneType' and 'Tensor'")
    if bn_b is None:
        raise TypeError("unsupported operand type(s) for +: 'Tensor' and 'NoneType'")
    bias_dtype = linear_w.dtype if linear_b is None else linear_b.dtype
    bias_requires_grad = False if linear_b is None else linear_b.requires_grad
    with no_grad():
        scale = bn_w * (bn_rv + bn_eps).rsqrt()
        w = linear_w * scale.unsqueeze(-1).to(linear_w.dtype)
        b = (((0 - bn_rm) if linear_b is None else (linear_b - bn_rm)) * scale + bn_b).to(bias_dtype)
    return Parameter(w._array, linear_w.requires_grad), Parameter(b._array, bias_requires_grad)


def fuse_conv_bn_eval(conv: _M, bn: Any, transpose: bool = False) -> _M:
    """A deep copy of `conv` (eval mode) whose weight and bias include the eval-mode batch norm `bn` after it;
    `transpose=True` for a ConvTranspose layer (its output channels are dim 1 of the weight)."""
    c: Any = conv
    _require_eval(c, bn)
    fused = copy.deepcopy(c)
    _require_running_stats(bn)
    return _with_fused(fused, *fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                     bn.eps, bn.weight, bn.bias, transpose))


def fuse_linear_bn_eval(linear: _M, bn: Any) -> _M:
    """A deep copy of `linear` (eval mode) whose weight and bias include the eval-mode batch norm `bn` after it.
    bn.num_features must equal linear.out_features, or be 1 (then it broadcasts over the features)."""
    lin: Any = linear
    _require_eval(lin, bn)
    fused = copy.deepcopy(lin)
    if lin.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
                             f"linear.out_features={lin.out_features} and bn.num_features={bn.num_features}")
    _require_running_stats(bn)
    return _with_fused(fused, *fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                       bn.eps, bn.weight, bn.bias))
