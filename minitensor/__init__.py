"""minitensor: a small, readable reverse-mode autograd library on numpy, with PyTorch's API.

    import minitensor as torch
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = (x @ x.T).softmax(dim=-1)
    y.backward(torch.randn(2, 2))
    x.grad
"""
import builtins as _builtins
import math as _math
from typing import TypeGuard as _TypeGuard

from . import _dtype
from . import fast
from .fast import allocator as _allocator

_allocator.tune_if_asked()  # off unless MINITENSOR_TUNE_MALLOC=1: see tune_malloc
from .fast.allocator import tune_malloc  # noqa: F401
from ._dtype import (  # noqa: F401
    bool_ as bool, double, float, float16, float32, float64, get_default_dtype, half, int, int8, int16,
    int32, int64, long, set_default_dtype, uint8,
)
from .tensor import Size, Tensor, device  # noqa: F401
from . import ops as _ops  # noqa: F401  (attaches the op methods to Tensor)
from .ops.elementwise import (  # noqa: F401
    abs, add, clamp, clip, clone, cos, div, divide, erf, exp, gelu, log, maximum, minimum, mul, multiply, neg,
    negative, pow, reciprocal, relu, rsqrt, sigmoid, sign, sin, sqrt, square, sub, subtract, tanh, true_divide,
)
from .ops.compare import (  # noqa: F401
    allclose, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, eq, equal, ge, greater, greater_equal, gt,
    isclose, isfinite, isinf, isnan, le, less, less_equal, logical_and, logical_not, logical_or, logical_xor,
    lt, ne, not_equal,
)
from .ops.reduce import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, count_nonzero, logsumexp, max, mean, min, norm, prod, std, sum, var,
)
from .ops.shape import (  # noqa: F401
    broadcast_to, cat, chunk, concat, concatenate, expand, flatten, flip, movedim, narrow, permute, repeat,
    reshape, split, squeeze, stack, swapaxes, t, transpose, unbind, unflatten, unsqueeze,
)
from .ops.indexing import gather, index_select, masked_fill, nonzero, tril, triu, where  # noqa: F401
from .ops.indexing import index_fill, masked_select, scatter, scatter_add  # noqa: F401
from .ops.elementwise import addcdiv, addcmul, floor_divide, fmod, lerp, remainder  # noqa: F401
from .ops.linalg import bmm, dot, einsum, matmul, mm, outer  # noqa: F401
from .ops.softmax import log_softmax, softmax  # noqa: F401
from .ops.selection import argsort, cumsum, multinomial, sort, topk  # noqa: F401
from .factories import (  # noqa: F401
    arange, as_tensor, bernoulli, empty, empty_like, eye, from_numpy, full, full_like, linspace, normal, ones,
    ones_like, rand, rand_like, randint, randn, randn_like, randperm, tensor, zeros, zeros_like,
)
from .random import Generator, get_rng_state, manual_seed, seed, set_rng_state  # noqa: F401
from . import autograd  # noqa: F401
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401

from .legacy import (  # noqa: F401
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor,
)
dtype = type(float32)
inf, nan, pi, e = _math.inf, _math.nan, _math.pi, _math.e


# (bool, int and float are dtypes in this module, as in PyTorch: annotations name the builtins)
def is_tensor(obj: object) -> _TypeGuard[Tensor]:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> _builtins.int:
    return input.numel()


def set_printoptions(precision: _builtins.int | None = None, threshold: _builtins.int | None = None,
                     edgeitems: _builtins.int | None = None, linewidth: _builtins.int | None = None,
                     sci_mode: _builtins.bool | None = None) -> None:
    import numpy as _np

    _np.set_printoptions(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth)


from . import nn, optim  # noqa: E402,F401
from . import backends, cuda, utils  # noqa: E402,F401
from . import viz  # noqa: E402,F401
from .serialization import load, save  # noqa: E402,F401

__version__ = "0.1.0"

# What `from minitensor import *` gives, and what a type checker takes as minitensor's own names
# (tests/typing/test_public_api.py checks that every public function, class and dtype is listed).
__all__ = [
    "abs", "add", "addcdiv", "addcmul", "all", "allclose", "amax", "amin", "any", "arange", "argmax", "argmin", "argsort",
    "as_tensor", "autograd", "backends", "bernoulli", "bitwise_and", "bitwise_not", "bitwise_or",
    "bitwise_xor", "bmm", "bool", "BoolTensor", "broadcast_to", "ByteTensor", "cat", "CharTensor", "chunk",
    "clamp", "clip", "clone", "concat", "concatenate", "cos", "count_nonzero", "cuda", "cumsum", "device",
    "div", "divide", "dot", "double", "DoubleTensor", "dtype", "e", "einsum", "empty", "empty_like",
    "enable_grad", "eq", "equal", "erf", "exp", "expand", "eye", "flatten", "flip", "float", "float16",
    "float32", "float64", "FloatTensor", "floor_divide", "fmod", "from_numpy", "full", "full_like", "gather",
    "ge", "gelu", "Generator", "get_default_dtype", "get_rng_state", "greater", "greater_equal", "gt", "half",
    "HalfTensor", "index_fill", "index_select", "inf", "inference_mode", "int", "int16", "int32", "int64",
    "int8", "IntTensor", "is_grad_enabled", "is_tensor", "isclose", "isfinite", "isinf", "isnan", "le",
    "lerp", "less", "less_equal", "linspace", "load", "log", "log_softmax", "logical_and", "logical_not",
    "logical_or", "logical_xor", "logsumexp", "long", "LongTensor", "lt", "manual_seed", "masked_fill",
    "masked_select", "matmul", "max", "maximum", "mean", "min", "minimum", "mm", "movedim", "mul",
    "multinomial", "multiply", "nan", "narrow", "ne", "neg", "negative", "nn", "no_grad", "nonzero", "norm",
    "normal", "not_equal", "numel", "ones", "ones_like", "optim", "outer", "permute", "pi", "pow", "prod",
    "rand", "rand_like", "randint", "randn", "randn_like", "randperm", "reciprocal", "relu", "remainder",
    "repeat", "reshape", "rsqrt", "save", "scatter", "scatter_add", "seed", "set_default_dtype",
    "set_grad_enabled", "set_printoptions", "set_rng_state", "ShortTensor", "sigmoid", "sign", "sin", "Size",
    "softmax", "sort", "split", "sqrt", "square", "squeeze", "stack", "std", "sub", "subtract", "sum",
    "swapaxes", "t", "tanh", "Tensor", "tensor", "topk", "transpose", "tril", "triu", "true_divide",
    "tune_malloc", "uint8", "unbind", "unflatten", "unsqueeze", "utils", "var", "viz", "where", "zeros",
    "zeros_like",
]

fast.plug_in_unless_plain()  # SPEED LAYER: plugs in from above (see minitensor/fast); MINITENSOR_PLAIN=1 leaves it out
