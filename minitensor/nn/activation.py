r"""PyTorch's activation functions beyond ReLU, GELU, SiLU, sigmoid and tanh: each a function
(re-exported by `minitensor.nn.functional`) and a Module with PyTorch's arguments, defaults and repr.

Each is a composition of minitensor ops (mostly `where` picking between two formulas), so its
gradient comes from the ops' VJPs; the docstring states the formula and the gradient it yields,
including the value at the kinks, which matches PyTorch's.

`inplace=True` (and the `F.relu_`, `F.elu_` ... functions) writes the result into the input and returns
it, as PyTorch does: the ordinary op runs on a copy of the old values and the input's history is rewritten
(minitensor/ops/inplace.py), so the gradient is the out-of-place one. As in PyTorch, a leaf that requires
grad can't be changed in place, and a node that saved the old input refuses to run backward afterwards.
"""
from __future__ import annotations

import functools
import inspect
from typing import Callable, TypeVar

from .. import _dtype
from ..autograd.torch_names import shown_as
from ..ops._util import no_bool, norm_dims, tensor_input
from ..ops.indexing import where
from ..ops.inplace import inplace as _write_in_place
from ..ops.softmax import functional_softmax
from ..ops.unary import relu, sigmoid, tanh
from ..random import _gen
from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike
from .functional import softplus
from .layers import _empty, _tensor
from .module import Module
from .parameter import Parameter

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


_Fn = TypeVar("_Fn", bound=Callable[..., Tensor])


def _honours_inplace(op: str) -> Callable[[_Fn], _Fn]:
    """Make fn(..., inplace=True) write its result into the input (as the in-place function `op` does)."""
    def wrap(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def run(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            if not bound.arguments.get("inplace", False):
                return fn(*args, **kwargs)
            bound.arguments["inplace"] = False
            first, *rest = bound.args
            return _write_in_place(tensor_input(first, op), op, fn, *rest, **bound.kwargs)
        return run
    return wrap


def _float_input(input, op):
    x = tensor_input(input, op)
    if _dtype.kind(x.dtype) != "f":
        raise NotImplementedError(f"{op}: expected a floating point input, got {x.dtype}")
    return x


@_honours_inplace("leaky_relu_")
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    r"""x for x > 0, negative_slope * x otherwise.

    forward: out = x where x > 0, else a x   (a = negative_slope)
    VJP:     gx = g where x > 0, else a g
    """
    x = _float_input(input, "leaky_relu")
    return shown_as(where(x > 0, x, x * negative_slope), "LeakyReluBackward0", inputs=(input,))


def _elu(x, alpha, scale, input_scale):
    # the exponential only of x <= 0: e^x of a large unused x would be inf, and 0 * inf a NaN gradient
    return where(x > 0, x * scale, ((x.clamp(max=0) * input_scale).exp() - 1) * (alpha * scale))


@_honours_inplace("elu_")
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    r"""x for x > 0, alpha (e^x - 1) otherwise.

    forward: out = x where x > 0, else alpha (e^x - 1)
    VJP:     gx = g where x > 0, else alpha e^x g
    """
    return shown_as(_elu(_float_input(input, "elu"), alpha, 1.0, 1.0), "EluBackward0", inputs=(input,))


@_honours_inplace("selu_")
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    r"""scale * elu(x, alpha) with the self-normalising constants alpha ~ 1.6733, scale ~ 1.0507.

    forward: out = s x where x > 0, else s alpha (e^x - 1)
    VJP:     gx = s g where x > 0, else s alpha e^x g
    """
    return shown_as(_elu(_float_input(input, "selu"), _SELU_ALPHA, _SELU_SCALE, 1.0), "EluBackward0")  # PyTorch's too


@_honours_inplace("celu_")
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    r"""max(0, x) + min(0, alpha (e^{x / alpha} - 1)): ELU with a slope of 1 at 0 for any alpha.

    forward: out = x where x > 0, else alpha (e^{x / alpha} - 1)
    VJP:     gx = g where x > 0, else e^{x / alpha} g
    """
    x = _float_input(input, "celu")
    if alpha == 0:
        raise RuntimeError("celu: alpha must not be 0 (it divides x)")
    return shown_as(_elu(x, alpha, 1.0, 1.0 / alpha), "CeluBackward0")


@_honours_inplace("mish_")
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    r"""x tanh(softplus(x)).

    forward: out = x tanh(sp),  sp = log(1 + e^x)
    VJP:     gx = g (tanh(sp) + x (1 - tanh(sp)^2) sigmoid(x))
    """
    x = _float_input(input, "mish")
    return shown_as(x * tanh(softplus(x)), "MishBackward0")


@_honours_inplace("hardtanh_")
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    r"""x clamped to [min_val, max_val], with PyTorch's gradient: 0 at the two ends themselves.

    forward: out = min(max(x, min_val), max_val)
    VJP:     gx = g where min_val < x < max_val, else 0
    """
    x = tensor_input(input, "hardtanh")
    no_bool(x, "hardtanh", RuntimeError)
    if min_val > max_val:
        raise ValueError(f"hardtanh: max_val ({max_val}) must be greater than or equal to min_val ({min_val})")
    if x._array.dtype.kind in "iu":  # PyTorch's integer kernel: the bounds truncated to ints, the result an int
        min_val, max_val = int(min_val), int(max_val)
    inside = (x > min_val) & (x < max_val)
    out = where(inside, x, x.detach().clamp(min_val, max_val))  # an end passes no gradient
    return shown_as(out, "HardtanhBackward0", inputs=(input,))  # relu6's too, as PyTorch's relu6 is hardtanh


@_honours_inplace("relu6_")
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    r"""min(max(0, x), 6).

    forward: out = min(max(x, 0), 6)
    VJP:     gx = g where 0 < x < 6, else 0
    """
    return hardtanh(tensor_input(input, "relu6"), 0.0, 6.0)


@_honours_inplace("hardsigmoid_")
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    r"""A piecewise-linear sigmoid: 0 below -3, 1 above 3, x / 6 + 1/2 between.

    forward: out = min(max(x / 6 + 1/2, 0), 1)
    VJP:     gx = g / 6 where -3 < x < 3, else 0
    """
    x = _float_input(input, "hardsigmoid")
    return shown_as(hardtanh(x / 6 + 0.5, 0.0, 1.0), "HardsigmoidBackward0")


@_honours_inplace("hardswish_")
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    r"""x hardsigmoid(x): 0 below -3, x above 3, x (x + 3) / 6 between.

    forward: out = 0 where x <= -3,  x (x + 3) / 6 where -3 < x < 3,  x where x >= 3
    VJP:     gx = 0, (2x + 3) / 6 g, g on those three pieces (so 0 at -3 and g at 3, as PyTorch)
    """
    x = _float_input(input, "hardswish")
    return shown_as(where(x <= -3, x * 0, where(x < 3, x * (x + 3) / 6, x)), "HardswishBackward0")


def glu(input: Tensor, dim: int = -1) -> Tensor:
    r"""The gated linear unit: the first half of `dim` times the sigmoid of the second half.

    forward: out = a * sigmoid(b),  (a, b) = the two halves of x along dim
    VJP:     ga = g sigmoid(b);  gb = g a sigmoid(b) (1 - sigmoid(b))
    """
    x = tensor_input(input, "glu")
    if x.ndim == 0:
        raise RuntimeError("glu: does not support 0-d tensors, as the halved dim must have an even size")
    d = norm_dims(dim, x.ndim, "glu")[0]
    if x.shape[d] % 2:
        raise RuntimeError(f"glu: halving dimension must be even, but dim {d} of shape {tuple(x.shape)} "
                           f"has size {x.shape[d]}")
    a, b = x.chunk(2, dim=d)
    return shown_as(a * sigmoid(b), "GluBackward0")


def logsigmoid(input: Tensor) -> Tensor:
    r"""log(sigmoid(x)), computed stably as -softplus(-x).

    forward: out = -log(1 + e^{-x})
    VJP:     gx = g sigmoid(-x) = g (1 - sigmoid(x))
    """
    return shown_as(-softplus(-_float_input(input, "logsigmoid")), "LogSigmoidBackward0")


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    r"""Leaky ReLU with a learned slope: one for all channels, or one per channel (dim 1).

    forward: out = x where x > 0, else a_c x   (a_c the weight of x's channel)
    VJP:     gx = g where x > 0, else a_c g;   ga_c = \sum over channel c of g x where x <= 0
    """
    x = _float_input(input, "prelu")
    tensor_input(weight, "prelu", "weight")
    n = weight.numel()
    channels = x.shape[1] if x.ndim >= 2 else (x.shape[0] if x.ndim == 1 else 1)
    if n != 1 and n != channels:
        raise RuntimeError(f"prelu: mismatch of parameter numbers and input channel size: found {n} parameters "
                           f"and {channels} channels (input of shape {tuple(x.shape)})")
    if n == 1:
        a = weight.reshape(())
    elif x.ndim == 1:
        a = weight.reshape(n)
    else:
        a = weight.reshape((1, n) + (1,) * (x.ndim - 2))
    return shown_as(where(x > 0, x, a * x), "PreluKernelBackward0")


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: DTypeLike | None = None) -> Tensor:
    r"""softmax(-x) along dim: weights that favour the smallest entries.

    forward: out_i = e^{-x_i} / \sum_j e^{-x_j}
    VJP:     gx = -out * (g - \sum_j g_j out_j)
    """
    return functional_softmax(-tensor_input(input, "softmin"), dim, _stacklevel, dtype=dtype)


def softsign(input: Tensor) -> Tensor:
    r"""x / (1 + |x|).

    forward: out = x / (1 + |x|)
    VJP:     gx = g / (1 + |x|)^2
    """
    x = tensor_input(input, "softsign")
    return x / (x.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    r"""x - tanh(x).

    forward: out = x - tanh(x)
    VJP:     gx = g tanh(x)^2
    """
    x = tensor_input(input, "tanhshrink")
    return x - tanh(x)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    r"""0 for |x| <= lambd, x otherwise.

    forward: out = x where |x| > lambd, else 0
    VJP:     gx = g where |x| > lambd, else 0
    """
    x = _float_input(input, "hardshrink")
    return where(x.abs() > lambd, x, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    r"""x moved towards 0 by lambd, and 0 for |x| <= lambd.

    forward: out = x - lambd sign(x) where |x| > lambd, else 0
    VJP:     gx = g where |x| > lambd, else 0
    """
    x = _float_input(input, "softshrink")
    if lambd < 0:
        raise RuntimeError(f"softshrink: lambda must be greater or equal to 0, but found to be {lambd}")
    return where(x > lambd, x - lambd, where(x < -lambd, x + lambd, 0.0))


@_honours_inplace("threshold_")
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    r"""x where x > threshold, else `value`.

    forward: out = x where x > threshold, else value
    VJP:     gx = g where x > threshold, else 0
    """
    x = tensor_input(input, "threshold")
    no_bool(x, "threshold")
    if x._array.dtype.kind in "iu":  # PyTorch's integer kernel: both scalars truncated to ints, the result an int
        threshold, value = int(threshold), int(value)
    return where(x > threshold, x, value)


@_honours_inplace("rrelu_")
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    r"""Randomised leaky ReLU: in training each x <= 0 gets its own slope a ~ U(lower, upper), drawn
    with minitensor's generator; outside training the slope is (lower + upper) / 2.

    forward: out = x where x > 0, else a x
    VJP:     gx = g where x > 0, else a g   (the same slopes a)
    """
    x = _float_input(input, "rrelu")
    if not training:
        return leaky_relu(x, (lower + upper) / 2)
    slopes = _gen().uniform(lower, upper, tuple(x.shape)).astype(x.dtype)
    return where(x > 0, x, x * Tensor._make(slopes))


# ---- the in-place functions of torch.nn.functional: each writes its op's result into the input and returns it ----
def relu_(input: Tensor) -> Tensor:
    """In place: input becomes relu(input) (recorded in the graph); returns input.

    forward: x <- max(x, 0)
    VJP:     gx = g * (x > 0)   (x before the write)
    """
    return _write_in_place(tensor_input(input, "relu_"), "relu_", relu)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In place: input becomes elu(input, alpha); returns input.

    forward: x <- x if x > 0 else alpha * (exp(x) - 1)
    VJP:     gx = g if x > 0 else g * alpha * exp(x)
    """
    return elu(input, alpha, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In place: input becomes celu(input, alpha); returns input.

    forward: x <- max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    VJP:     gx = g if x > 0 else g * exp(x / alpha)
    """
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In place: input becomes selu(input); returns input.

    forward: x <- scale * (x if x > 0 else alpha * (exp(x) - 1))
    VJP:     gx = g * scale * (1 if x > 0 else alpha * exp(x))
    """
    return selu(input, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In place: input becomes leaky_relu(input, negative_slope); returns input.

    forward: x <- x if x > 0 else negative_slope * x
    VJP:     gx = g if x > 0 else g * negative_slope
    """
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In place: input becomes hardtanh(input, min_val, max_val); returns input.

    forward: x <- clamp(x, min_val, max_val)
    VJP:     gx = g * (min_val < x < max_val)
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In place: input becomes rrelu(input, lower, upper, training); returns input.

    forward: x <- x if x > 0 else a * x   (a ~ U(lower, upper) per element in training, else (lower + upper) / 2)
    VJP:     gx = g if x > 0 else g * a
    """
    return rrelu(input, lower, upper, training, inplace=True)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In place: input becomes threshold(input, threshold, value); returns input.

    forward: x <- x if x > threshold else value
    VJP:     gx = g * (x > threshold)
    """
    return _threshold(input, threshold, value, inplace=True)


_threshold = threshold  # (the parameter `threshold` of threshold_ hides the function)


# ---- the Modules -------------------------------------------------------------------------------
def _inplace_repr(inplace: bool, head: str = "") -> str:
    if not inplace:
        return head
    return f"{head}, inplace=True" if head else "inplace=True"


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return leaky_relu(_tensor(self, input), self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"negative_slope={self.negative_slope}")


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return elu(_tensor(self, input), self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"alpha={self.alpha}")


class CELU(ELU):
    def forward(self, input: Tensor) -> Tensor:
        return celu(_tensor(self, input), self.alpha, self.inplace)


class SELU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return selu(_tensor(self, input), self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return softplus(_tensor(self, input), self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return mish(_tensor(self, input), self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        # min_value / max_value: PyTorch's deprecated spellings, which win when given
        self.min_val = min_val if min_value is None else min_value
        self.max_val = max_val if max_value is None else max_value
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise ValueError(f"Hardtanh: max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input: Tensor) -> Tensor:
        return hardtanh(_tensor(self, input), self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"min_val={self.min_val}, max_val={self.max_val}")


class ReLU6(Hardtanh):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Hardsigmoid(Mish):
    def forward(self, input: Tensor) -> Tensor:
        return hardsigmoid(_tensor(self, input), self.inplace)


class Hardswish(Mish):
    def forward(self, input: Tensor) -> Tensor:
        return hardswish(_tensor(self, input), self.inplace)


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return glu(_tensor(self, input), self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSigmoid(Module):
    # (no __init__: Module's, which takes no argument and names any given, as PyTorch's refuses them)
    def forward(self, input: Tensor) -> Tensor:
        return logsigmoid(_tensor(self, input))


class Softsign(LogSigmoid):
    def forward(self, input: Tensor) -> Tensor:
        return softsign(_tensor(self, input))


class Tanhshrink(LogSigmoid):
    def forward(self, input: Tensor) -> Tensor:
        return tanhshrink(_tensor(self, input))


class PReLU(Module):
    """Leaky ReLU with learned slopes: `num_parameters` of them (1, or the number of channels), each
    starting at `init`; the state-dict key is `weight`, as PyTorch's."""

    weight: Parameter

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = _empty((num_parameters,), dtype, device, "PReLU")
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.weight._array[...] = self.init

    def forward(self, input: Tensor) -> Tensor:
        return prelu(_tensor(self, input), self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmin(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return softmin(_tensor(self, input), self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Hardshrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return hardshrink(_tensor(self, input), self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, input: Tensor) -> Tensor:
        return softshrink(_tensor(self, input), self.lambd)


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        return threshold(_tensor(self, input), self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"threshold={self.threshold}, value={self.value}")


class RReLU(Module):
    """Randomised leaky ReLU: random slopes in training (minitensor's generator), their mean in eval()."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return rrelu(_tensor(self, input), self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"lower={self.lower}, upper={self.upper}")


FUNCTIONS: list[str] = [
    "leaky_relu", "elu", "selu", "celu", "mish", "hardtanh", "relu6", "hardsigmoid", "hardswish", "glu",
    "logsigmoid", "prelu", "softmin", "softsign", "tanhshrink", "hardshrink", "softshrink", "threshold", "rrelu",
    # h-nnrest: the in-place functions
    "relu_", "elu_", "celu_", "selu_", "leaky_relu_", "hardtanh_", "rrelu_", "threshold_",
]
MODULES: list[str] = [
    "LeakyReLU", "ELU", "SELU", "CELU", "Softplus", "Mish", "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish",
    "GLU", "LogSigmoid", "PReLU", "Softmin", "Softsign", "Tanhshrink", "Hardshrink", "Softshrink", "Threshold",
    "RReLU",
]
__all__ = MODULES  # what `from .activation import *` gives minitensor.nn; the functions are re-exported by functional
