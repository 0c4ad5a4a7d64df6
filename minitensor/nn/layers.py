"""The standard layers, each with PyTorch's parameter names, shapes, default initialisation and repr."""
import collections.abc
import math
import operator

import numpy as np

from .. import _dtype
from ..tensor import Tensor, check_device
from . import functional as F
from . import init
from .module import Module, _addindent
from .parameter import Parameter


def _empty(shape, dtype, device, where):
    """An uninitialised (zero) Parameter of the given dtype; `reset_parameters` fills it."""
    check_device(device, where)
    d = _dtype.get_default_dtype() if dtype is None else _dtype.as_dtype(dtype)
    if d.kind != "f":
        raise TypeError(f"{where}: parameters must have a floating point dtype, got {d}")
    return Parameter(np.zeros(shape, dtype=d))


def _tensor(layer, x, name="input"):
    """`x` if it is a Tensor, else a TypeError naming the layer and what it got."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{type(layer).__name__}: {name} must be a Tensor, got {type(x).__name__} "
                        "(minitensor.tensor(data) makes one)")
    return x


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored, as in PyTorch)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    r"""y = x W^T + b with W of shape (out_features, in_features).

    Init as PyTorch: W ~ U(-1/sqrt(in), 1/sqrt(in)), which is `kaiming_uniform_(W, a=sqrt(5))`
    (gain sqrt(2 / (1 + 5)) = 1/sqrt(3), bound = sqrt(3) * gain / sqrt(in)), and b ~ U(-1/sqrt(in), 1/sqrt(in)).
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _empty((out_features, in_features), dtype, device, "Linear")
        if bias:
            self.bias = _empty((out_features,), dtype, device, "Linear")
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(_tensor(self, input), self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`, init N(0, 1).

    The row at `padding_idx` starts at zero and gets no gradient, so it stays zero in training.
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
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
        self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse = max_norm, norm_type, scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = _empty((num_embeddings, embedding_dim), dtype, device, "Embedding")
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(
                    f"Embedding: _weight has shape {tuple(_weight.shape)}, expected {(num_embeddings, embedding_dim)}"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight._array[self.padding_idx] = 0

    def forward(self, input):
        return F.embedding(_tensor(self, input), self.weight, self.padding_idx, self.max_norm, self.norm_type)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None):
        """An Embedding holding a copy of the 2-D `embeddings`, frozen (no gradient) unless freeze=False."""
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape {tuple(embeddings.shape)}")
        n, d = embeddings.shape
        arr = embeddings._array if isinstance(embeddings, Tensor) else np.asarray(embeddings)
        return cls(n, d, padding_idx=padding_idx, _weight=np.array(arr, copy=True), _freeze=freeze)

    def extra_repr(self):
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

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
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

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(_tensor(self, input), self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class Dropout(Module):
    """Zero elements with probability p in training, scaling the rest by 1/(1-p) so the expected
    value is unchanged (inverted dropout); the identity in eval()."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(_tensor(self, input), self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(_tensor(self, input))

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """x * Phi(x); approximate='tanh' uses 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(_tensor(self, input), approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input):
        return F.tanh(_tensor(self, input))


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(_tensor(self, input))


class SiLU(Module):
    def forward(self, input):
        return F.silu(_tensor(self, input))


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(_tensor(self, input), self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(_tensor(self, input), self.dim)


class CrossEntropyLoss(Module):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        self.weight, self.ignore_index = weight, ignore_index
        self.reduction, self.label_smoothing = reduction, label_smoothing

    def forward(self, input, target):
        _tensor(self, input), _tensor(self, target, "target")
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction, self.label_smoothing)


class NLLLoss(CrossEntropyLoss):
    def forward(self, input, target):
        _tensor(self, input), _tensor(self, target, "target")
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class MSELoss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        _tensor(self, input), _tensor(self, target, "target")
        return F.mse_loss(input, target, self.reduction)


# ---- containers --------------------------------------------------------------------------------
def _index(idx, n, what):
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

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.abc.Mapping):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            # A slice keeps the children's names, as PyTorch's does.
            return type(self)(collections.OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self), "Sequential")]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(idx, len(self), "Sequential")]
        self.add_module(key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self), "Sequential")]]:
            del self._modules[key]
        _renumber(self, list(self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        mods = list(self._modules.values())
        n = len(mods)
        if not -n <= index <= n:
            raise IndexError(f"Sequential.insert: index {index} is out of range for {n} modules")
        mods.insert(index + n if index < 0 else index, module)
        _renumber(self, mods)
        return self


class ModuleList(Module):
    """A list of modules, registered as children '0', '1', ... (PyTorch's state-dict names)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            return type(self)(mods[idx])
        return mods[_index(idx, len(mods), "ModuleList")]

    def __setitem__(self, idx, module):
        self.add_module(str(_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx):
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            del mods[idx]
        else:
            del mods[_index(idx, len(mods), "ModuleList")]
        _renumber(self, mods)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        if not isinstance(modules, collections.abc.Iterable):
            raise TypeError(f"ModuleList.extend should be called with an iterable of modules, got {type(modules).__name__}")
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        mods = list(self._modules.values())
        mods.insert(index, module)
        _renumber(self, mods)

    def __repr__(self):
        # Runs of identical children print once, as PyTorch's '(0-5): 6 x Block(...)'.
        reprs = [repr(m) for m in self]
        if not reprs:
            return f"{self._get_name()}()"
        runs = []  # [first index, last index, repr]
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

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __contains__(self, key):
        return key in self._modules

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key):
        return self._modules.pop(key)

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        pairs = modules.items() if isinstance(modules, (collections.abc.Mapping, ModuleDict)) else modules
        for pair in pairs:
            if len(pair) != 2:
                raise ValueError(f"ModuleDict.update: expected (key, module) pairs, got an element of length {len(pair)}")
            self[pair[0]] = pair[1]


class ParameterList(Module):
    """A list of Parameters, registered as '0', '1', ..."""

    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.append(v)

    def append(self, value):
        self.register_parameter(str(len(self._parameters)), value if isinstance(value, Parameter) else Parameter(value))
        return self

    def __getitem__(self, idx):
        return list(self._parameters.values())[idx]

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())
