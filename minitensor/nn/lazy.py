r"""Lazy modules: layers whose input size is read off their first input (`LazyLinear(out_features)`).

Until then their parameters are `UninitializedParameter`s (and running statistics `UninitializedBuffer`s):
placeholders with no shape. The first call runs `initialize_parameters(input)`, which gives each placeholder
its shape (`materialize`) and initialises it as the ordinary layer would, and then the module *becomes* that
ordinary layer (`LazyLinear` -> `Linear`), as in PyTorch. Loading a state dict into a lazy module
materialises the placeholders with the loaded shapes. The lazy conv layers live with the convolutions.
"""
from __future__ import annotations

from typing import Any, cast

import numpy as np

from .. import _dtype
from ..ops._util import float_kernel
from ..tensor import Tensor, check_device
from ..types import DeviceLike, DTypeLike
from .extras import BatchNorm3d, InstanceNorm3d
from .layers import Linear, _tensor
from .normalization import BatchNorm1d, BatchNorm2d, InstanceNorm1d, InstanceNorm2d
from .parameter import Parameter


def _dtype_of(dtype):
    return _dtype.get_default_dtype() if dtype is None else _dtype.as_dtype(dtype)


class UninitializedTensorMixin:
    """What the placeholders share: no data yet; `materialize(shape)` gives them a shape and makes them the
    ordinary class (`cls_to_become`)."""

    __slots__ = ()  # no __dict__: materialize swaps the class, which needs the ordinary class's layout
    cls_to_become: type = Tensor
    _array: np.ndarray
    _uninitialized = True

    @property
    def shape(self) -> Any:
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def materialize(self, shape: Any, device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        check_device(device, type(self).__name__)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self._array = np.zeros(shape, dtype=self._array.dtype if dtype is None else _dtype.as_dtype(dtype))  # type: ignore[misc]
        self.__class__ = self.cls_to_become

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter without a shape yet (see the module's docstring)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        check_device(device, "UninitializedParameter")
        super().__init__(np.zeros((0,), dtype=_dtype_of(dtype)), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer without a shape yet (see the module's docstring). `persistent` is read as `nn.Buffer`'s
    flag; it is a class attribute (a non-persistent one is of a subclass), since a slot would change the
    layout that materialising swaps to a plain Tensor's."""

    __slots__ = ()
    cls_to_become = Tensor
    persistent = True
    _is_buffer = True  # assigned as a module's attribute, it is registered as a buffer (Module.__setattr__)

    def __init__(self, requires_grad: bool = False, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None, persistent: bool = True) -> None:
        check_device(device, "UninitializedBuffer")
        super().__init__(np.zeros((0,), dtype=_dtype_of(dtype)), requires_grad=requires_grad)
        if not persistent:
            self.__class__ = _NonPersistentUninitializedBuffer


class _NonPersistentUninitializedBuffer(UninitializedBuffer):
    __slots__ = ()
    persistent = False


def is_lazy(t: Any) -> bool:
    return isinstance(t, UninitializedTensorMixin)


class LazyModuleMixin:
    """Mixed in before the ordinary layer: a forward pre-hook runs `initialize_parameters` on the first input,
    then turns the module into `cls_to_become`."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)  # type: ignore[attr-defined]

    def has_uninitialized_params(self) -> bool:
        m: Any = self
        return any(is_lazy(t) for t in (*m._parameters.values(), *m._buffers.values()))

    def _save_into(self, out: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        """As a module's, but a placeholder goes in as itself (PyTorch's): a detached copy would have a shape."""
        super()._save_into(out, prefix, keep_vars)  # type: ignore[misc]
        m: Any = self
        for k, t in (*m._parameters.items(), *m._buffers.items()):
            if is_lazy(t) and prefix + k in out:
                out[prefix + k] = t

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")


def _infer_parameters(module: Any, args: tuple[Any, ...]) -> None:
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


def _feature_dim(layer: Any, input: Any, dim: int, what: str) -> Tensor:
    """The input as a tensor that has the dim a lazy layer reads its size from; an IndexError, as PyTorch's
    (which reads the dim before any check), naming the layer and the shape when it has not."""
    x = _tensor(layer, input)
    if x.ndim < (dim + 1 if dim >= 0 else -dim):
        raise IndexError(f"{type(layer).__name__}: the input of shape {tuple(x.shape)} has no dim {dim} to read "
                         f"{what} from")
    return x


def _check_linear_input(layer: Any, input: Any) -> None:
    """What Linear's forward refuses whatever its in_features: no last dim, or a dtype not its weight's."""
    x = _feature_dim(layer, input, -1, "in_features")
    if x.dtype != layer.weight.dtype:
        raise RuntimeError(f"{type(layer).__name__}: mat1 and mat2 must have the same dtype, but got {x.dtype} "
                           f"(the input of shape {tuple(x.shape)}) and {layer.weight.dtype} (the weight)")


class LazyLinear(LazyModuleMixin, Linear):
    """Linear whose in_features is the last dim of its first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__(0, 0, False, device, dtype)
        self.out_features = out_features
        # into the store directly: assignment would re-register the names at the end, out of PyTorch's order
        self._parameters["weight"] = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self._parameters["bias"] = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        if self.has_uninitialized_params():  # checked first: a refused input leaves the layer uninitialised
            _check_linear_input(self, input)
        if self.in_features == 0:  # (also after a loaded state dict materialised the weight)
            self.in_features = input.shape[-1]
        if self.has_uninitialized_params():
            cast(Any, self.weight).materialize((self.out_features, self.in_features))
            if self.bias is not None:
                cast(Any, self.bias).materialize((self.out_features,))
            self.reset_parameters()


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None, *, bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=bias)
        m: Any = self
        m.affine, m.track_running_stats = affine, track_running_stats
        if affine:
            m._parameters["weight"] = UninitializedParameter(device=device, dtype=dtype)  # (in PyTorch's order)
            if bias:
                m._parameters["bias"] = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            m.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            m.running_var = UninitializedBuffer(device=device, dtype=dtype)
            m.num_batches_tracked = Tensor._make(np.array(0, dtype=np.int64))

    def reset_parameters(self) -> None:
        m: Any = self
        if not self.has_uninitialized_params() and m.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any) -> None:
        m: Any = self
        if self.has_uninitialized_params():
            # the input checks the forward would make, first: a refused input leaves the layer uninitialised
            x = m._check_input_dim(_feature_dim(self, input, 1, "num_features"))
            float_kernel(x, type(self).__name__)  # (the eager layer's batch_norm / instance_norm refusal)
            unbatched = input.ndim == m._dims[0] and isinstance(self, _LazyInstanceNorm)
            m.num_features = input.shape[0 if unbatched else 1]
            for t in (m.weight, m.bias, m.running_mean, m.running_var):
                if is_lazy(t):
                    t.materialize((m.num_features,))
            self.reset_parameters()


class _LazyInstanceNorm(_LazyNormBase):
    pass  # (PyTorch's lazy instance norms default to affine=True, track_running_stats=True, unlike the eager ones)


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    cls_to_become = BatchNorm3d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    cls_to_become = InstanceNorm3d

MODULES: list[str] = ["UninitializedParameter", "UninitializedBuffer", "LazyLinear", "LazyBatchNorm1d",
                      "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
                      "LazyInstanceNorm3d"]
__all__ = MODULES
