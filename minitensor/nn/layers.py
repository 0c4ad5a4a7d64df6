"""The standard layers, each with PyTorch's parameter names, shapes, default initialisation and repr."""
from __future__ import annotations

import collections.abc
import math
import operator
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, overload

import numpy as np

from .. import _dtype
from ..tensor import Tensor, check_device
from ..types import DeviceLike, DTypeLike
from . import functional as F, init
from .module import Module, _addindent, _parameter_lines
from .parameter import Parameter

if TYPE_CHECKING:
    from typing_extensions import Self


def _empty(shape: tuple[int, ...], dtype: DTypeLike | None, device: DeviceLike | None, where: str) -> Parameter:
    """An uninitialised (zero) Parameter of the given dtype; `reset_parameters` fills it."""
    check_device(device, where)
    d = _dtype.get_default_dtype() if dtype is None else _dtype.as_dtype(dtype)
    if _dtype.kind(d) != "f":
        raise TypeError(f"{where}: parameters must have a floating point dtype, got {d}")
    return Parameter(np.zeros(shape, dtype=d))


def _tensor(layer: Module, x: object, name: str = "input") -> Tensor:
    """`x` if it is a Tensor, else a TypeError naming the layer and what it got."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{type(layer).__name__}: {name} must be a Tensor, got {type(x).__name__} "
                        "(minitensor.tensor(data) makes one)")
    return x


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored, as in PyTorch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    r"""y = x W^T + b with W of shape (out_features, in_features).

    Init as PyTorch: W ~ U(-1/sqrt(in), 1/sqrt(in)), which is `kaiming_uniform_(W, a=sqrt(5))`
    (gain sqrt(2 / (1 + 5)) = 1/sqrt(3), bound = sqrt(3) * gain / sqrt(in)), and b ~ U(-1/sqrt(in), 1/sqrt(in)).
    """

    weight: Parameter
    bias: Parameter | None

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _empty((out_features, in_features), dtype, device, "Linear")
        if bias:
            self.bias = _empty((out_features,), dtype, device, "Linear")
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(_tensor(self, input), self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`, init N(0, 1).

    The row at `padding_idx` starts at zero and gets no gradient, so it stays zero in training.
    """

    weight: Parameter

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Any = None, _freeze: bool = False, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__()
        if scale_grad_by_freq or sparse:
            raise NotImplementedError("Embedding: scale_grad_by_freq=True and sparse=True are not supported "
                                      "(minitensor has no sparse gradients); leave both False")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx {padding_idx} must be within num_embeddings ({num_embeddings})"
                )
            padding_idx = operator.index(padding_idx) % num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = _empty((num_embeddings, embedding_dim), dtype, device, "Embedding")
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(
                    f"Embedding: _weight has shape {tuple(_weight.shape)}, expected {(num_embeddings, embedding_dim)}"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._array[self.padding_idx] = 0

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(_tensor(self, input), self.weight, self.padding_idx, self.max_norm, self.norm_type)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None) -> Self:
        """An Embedding holding a copy of the 2-D `embeddings`, frozen (no gradient) unless freeze=False."""
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape {tuple(embeddings.shape)}")
        n, d = embeddings.shape
        arr = embeddings._array if isinstance(embeddings, Tensor) else np.asarray(embeddings)
        return cls(n, d, padding_idx=padding_idx, _weight=np.array(arr, copy=True), _freeze=freeze)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2.0:
            s += f", norm_type={self.norm_type}"
        return s


class LayerNorm(Module):
    """Normalise the trailing `normalized_shape` dims; weight starts at 1, bias at 0."""

    weight: Parameter | None
    bias: Parameter | None

    def __init__(self, normalized_shape: int | tuple[int, ...] | list[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        if elementwise_affine:
            self.weight = _empty(shape, dtype, device, "LayerNorm")
            if bias:
                self.bias = _empty(shape, dtype, device, "LayerNorm")
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(_tensor(self, input), self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class Dropout(Module):
    """Zero elements with probability p in training, scaling the rest by 1/(1-p) so the expected
    value is unchanged (inverted dropout); the identity in eval()."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(_tensor(self, input), self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class ReLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu_(_tensor(self, input)) if self.inplace else F.relu(_tensor(self, input))  # type: ignore[attr-defined]  # (F exports it through activation.FUNCTIONS)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """x * Phi(x); approximate='tanh' uses 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return F.gelu(_tensor(self, input), approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.tanh(_tensor(self, input))


class Sigmoid(Module):
    def forward(self, input: Tensor) -> Tensor:
        return F.sigmoid(_tensor(self, input))


class SiLU(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace  # accepted for PyTorch's signature; the result is a new tensor

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, input: Tensor) -> Tensor:
        return F.silu(_tensor(self, input))


class Softmax(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(_tensor(self, input), self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(_tensor(self, input), self.dim)


class _Loss(Module):
    """The base of the loss modules, as PyTorch's: it keeps `reduction` ('none', 'mean' or 'sum'), read from
    the deprecated `size_average` / `reduce` flags when either is given (with PyTorch's warning). A custom
    loss subclasses it and reads `self.reduction` in its `forward`."""

    reduction: str

    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = F._legacy_reduction(size_average, reduce, reduction, stacklevel=4)


class _WeightedLoss(_Loss):
    """A loss with per-class weights: `weight` is a buffer (in the state dict when given), as PyTorch's."""

    weight: Tensor | None

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        _tensor(self, input), _tensor(self, target, "target")
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None, ignore_index: int = -100,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        _tensor(self, input), _tensor(self, target, "target")
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class MSELoss(_Loss):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        _tensor(self, input), _tensor(self, target, "target")
        return F.mse_loss(input, target, reduction=self.reduction)


# ---- containers --------------------------------------------------------------------------------
def _index(idx: int, n: int, what: str) -> int:
    """A valid non-negative position for `idx` in a container of length n, or a clear IndexError."""
    i = operator.index(idx)
    if not -n <= i < n:
        raise IndexError(f"{what}: index {i} is out of range for a container of {n} modules")
    return i % n


def _renumber(container, modules):
    """Make `modules` the children '0', '1', ... again after a delete or an insert, as PyTorch does,
    so a later append cannot collide with an old name."""
    container._modules.clear()
    for i, m in enumerate(modules):
        container.add_module(str(i), m)


class Sequential(Module):
    """Modules applied in order; children are named '0', '1', ... (or by an OrderedDict's keys)."""

    def __init__(self, *args: Any) -> None:  # modules, or one mapping name -> module
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.abc.Mapping):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input: Any) -> Any:
        for m in self._modules.values():
            input = m(input)
        return input

    @overload
    def __getitem__(self, idx: slice) -> Self: ...
    @overload
    def __getitem__(self, idx: int) -> Module: ...
    def __getitem__(self, idx: int | slice) -> Module:
        if isinstance(idx, slice):
            # A slice keeps the children's names, as PyTorch's does.
            return type(self)(collections.OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        self.add_module(key, module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self), "Sequential")]]:
            del self._modules[key]
        _renumber(self, list(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Self:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Self:
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Self:
        mods = list(self._modules.values())
        n = len(mods)
        if not -n <= index <= n:
            raise IndexError(f"Sequential.insert: index {index} is out of range for {n} modules")
        mods.insert(index + n if index < 0 else index, module)
        _renumber(self, mods)
        return self


class ModuleList(Module):
    """A list of modules, registered as children '0', '1', ... (PyTorch's state-dict names)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    @overload
    def __getitem__(self, idx: slice) -> Self: ...
    @overload
    def __getitem__(self, idx: int) -> Module: ...
    def __getitem__(self, idx: int | slice) -> Module:
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return type(self)(mods[idx])
        return mods[_index(idx, len(mods), "ModuleList")]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: int | slice) -> None:
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            del mods[idx]
        else:
            del mods[_index(idx, len(mods), "ModuleList")]
        _renumber(self, mods)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> Self:
        return self.extend(modules)

    def append(self, module: Module) -> Self:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Self:
        if not isinstance(modules, collections.abc.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable of modules, "
                            f"got {type(modules).__name__}")
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        mods = list(self._modules.values())
        mods.insert(index, module)
        _renumber(self, mods)

    def __repr__(self) -> str:
        # Runs of identical children print once, as PyTorch's '(0-5): 6 x Block(...)'.
        reprs = [repr(m) for m in self]
        if not reprs:
            return f"{self._get_name()}()"
        runs: list[list[Any]] = []  # [first index, last index, repr]
        for i, r in enumerate(reprs):
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        lines = []
        for first, last, r in runs:
            head = f"({first})" if first == last else f"({first}-{last}): {last - first + 1} x"
            lines.append(_addindent(f"{head}: {r}" if first == last else f"{head} {r}", 2))
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules, registered under their keys (kept in insertion order)."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        pairs = modules.items() if isinstance(modules, (collections.abc.Mapping, ModuleDict)) else modules
        for pair in pairs:
            if len(pair) != 2:
                raise ValueError("ModuleDict.update: expected (key, module) pairs, got an "
                                 f"element of length {len(pair)}")
            self[pair[0]] = pair[1]


class ParameterList(Module):
    """A list of Parameters, registered as '0', '1', ..."""

    def __init__(self, values: Iterable[Tensor | Any] | None = None) -> None:
        super().__init__()
        for v in values or ():
            self.append(v)

    def append(self, value: Tensor | Any) -> Self:
        self.register_parameter(str(len(self._parameters)), value if isinstance(value, Parameter) else Parameter(value))
        return self

    def __getitem__(self, idx: int) -> Parameter:
        return list(self._parameters.values())[idx]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def extra_repr(self) -> str:
        return _parameter_lines(enumerate(self._parameters.values()))
