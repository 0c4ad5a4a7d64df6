"""The `Tensor`: a numpy array, plus what reverse-mode autograd needs to know about it.

A tensor is either a *leaf* (made by the user: `grad_fn is None`), whose `.grad` the backward pass
fills in, or the output of an op, whose `grad_fn` is the graph node that made it. The ops
themselves live in `minitensor/ops/`; each module attaches its functions here as methods with
`tensor_method`, so `x.exp()` and `minitensor.exp(x)` are the same function.
"""
import math
import weakref

import numpy as np

from . import _dtype
from .autograd import grad_mode


class Size(tuple):
    """A tensor's shape: a tuple that prints like PyTorch's `torch.Size([2, 3])`."""

    def __repr__(self):
        return f"minitensor.Size({list(self)})"

    def numel(self):
        return math.prod(self)


class device:
    """Everything runs on the CPU; `device('cpu')` exists so device-aware tutorial code runs."""

    def __init__(self, type="cpu"):
        check_device(type, "device")
        self.type = "cpu"

    def __repr__(self):
        return "device(type='cpu')"

    def __str__(self):
        return "cpu"

    def __eq__(self, other):
        return str(other) == "cpu"

    def __hash__(self):
        return hash("cpu")


_Device = device  # `device` is also a keyword argument name below


def check_device(dev, where):
    if dev is None or isinstance(dev, device):
        return
    if isinstance(dev, str) and dev.split(":")[0] == "cpu":
        return
    raise RuntimeError(
        f"{where}: device {dev!r} is not available; minitensor runs on the CPU only (use device='cpu')"
    )


def _to_array(data, dtype, where):
    """Turn user data (nested lists, scalars, arrays, tensors) into an ndarray with PyTorch's dtype rules."""
    if isinstance(data, Tensor):
        arr = data.data
    elif isinstance(data, (np.ndarray, np.generic)):  # a numpy scalar keeps its dtype, as an array does
        arr = np.asarray(data)
    else:
        if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
            data = _untensor(data)
        try:
            arr = np.asarray(data)
        except ValueError as e:
            raise ValueError(f"{where}: cannot build a tensor from ragged or mixed data ({e})") from None
        if arr.dtype.kind == "f" and dtype is None:
            arr = arr.astype(_dtype.get_default_dtype())
        elif arr.dtype.kind in "iu" and dtype is None:
            arr = arr.astype(np.int64)
        elif arr.dtype.kind not in "biuf":
            raise TypeError(f"{where}: cannot build a tensor from data of type {arr.dtype} ({type(data).__name__})")
    if dtype is not None:
        arr = arr.astype(_dtype.as_dtype(dtype), copy=False)
    return arr


def _flat(seq):
    for x in seq:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _untensor(seq):
    return [(_untensor(x) if isinstance(x, (list, tuple)) else (x.data if isinstance(x, Tensor) else x)) for x in seq]


_new = object.__new__


class Tensor:
    """An n-dimensional array that records the ops applied to it, so gradients can flow back.

    `Tensor(data)` follows `torch.Tensor(data)`: the data in the default float dtype; `Tensor(2, 3)`
    is an uninitialised (here: zero) tensor of that shape. Prefer `minitensor.tensor(data)`.
    """

    __slots__ = ("data", "_rg", "grad", "grad_fn", "_version", "_hooks", "__weakref__")
    __array_priority__ = 1000  # numpy defers `ndarray * tensor` to Tensor.__rmul__

    def __init__(self, *args, dtype=None, requires_grad=False, device=None):
        check_device(device, "Tensor")
        dtype = _dtype.as_dtype(dtype) or _dtype.get_default_dtype()
        if args and all(isinstance(a, int) for a in args):
            data = np.zeros(args, dtype=dtype)
        elif len(args) == 1:
            data = _to_array(args[0], dtype, "Tensor")
        elif not args:
            data = np.zeros((0,), dtype=dtype)
        else:
            raise TypeError(f"Tensor(): expected data or a shape of ints, got {args!r}")
        self.data = data
        self._rg = False
        self.grad = None
        self.grad_fn = None
        self._version = 0
        self._hooks = None
        if requires_grad:
            self.requires_grad_(True)

    @staticmethod
    def _make(arr):
        """Wrap an ndarray in a Tensor without copying or checking (the hot path of every op; a
        staticmethod, as a classmethod's binding costs a fifth of the call)."""
        t = _new(Tensor)
        t.data = arr
        t._rg = False
        t.grad = None
        t.grad_fn = None
        t._version = 0
        t._hooks = None
        return t

    # ---- attributes -----------------------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Mark a leaf as needing a gradient (in place; returns self)."""
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "requires_grad_: you can only change requires_grad of leaf tensors; "
                    "use .detach() to get a tensor cut from the graph"
                )
            return self
        if requires_grad and self.data.dtype.kind != "f":
            raise RuntimeError(
                f"requires_grad_: only tensors of floating point dtype can require gradients, got {self.dtype}"
            )
        self._rg = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def shape(self):
        return Size(self.data.shape)

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def device(self):
        return device("cpu")

    @property
    def is_cuda(self):
        return False

    @property
    def ndim(self):
        return self.data.ndim

    def dim(self):
        return self.data.ndim

    ndimension = dim

    def size(self, dim=None):
        if dim is None:
            return Size(self.data.shape)
        return self.data.shape[_wrap_dim(dim, self.data.ndim, "size")]

    def numel(self):
        return int(self.data.size)

    nelement = numel

    def element_size(self):
        return self.data.itemsize

    def is_floating_point(self):
        return self.data.dtype.kind == "f"

    def item(self):
        if self.data.size != 1:
            raise RuntimeError(
                f"item: a Tensor with {self.data.size} elements cannot be converted to a Python scalar"
            )
        return self.data.reshape(()).item()

    def numpy(self):
        if self._rg:
            raise RuntimeError(
                "numpy: can't call numpy() on a Tensor that requires grad; use tensor.detach().numpy()"
            )
        return self.data

    def tolist(self):
        return self.data.tolist()

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)

    def __len__(self):
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __iter__(self):
        if self.data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.data.shape[0]))

    # `==` is elementwise, so a Tensor hashes by identity, as in PyTorch; object's own hash is the
    # one in C (the engine keys its dict of leaf gradients by tensor).
    __hash__ = object.__hash__

    def __bool__(self):
        if self.data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {self.data.size} elements is ambiguous; use .any() or .all()"
            )
        return bool(self.data.reshape(()))

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.data.dtype.kind not in "iu" or self.data.size != 1:
            raise TypeError(f"only integer tensors of a single element can be used as an index, got {self.dtype}")
        return int(self.item())

    def __repr__(self):
        return _format(self)

    # ---- autograd -------------------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) * gradient into the `.grad` of every leaf that needs one."""
        if inputs is not None:
            _engine().backward([self], [gradient], retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)
        else:  # the call of every training step: straight to the engine
            (_ENGINE or _engine()).run_backward((self,), (gradient,), create_graph if retain_graph is None
                                                else retain_graph, create_graph)

    def detach(self):
        """The same data, cut from the graph (shares memory, like PyTorch)."""
        return Tensor._make(self.data)

    def detach_(self):
        self.grad_fn = None
        self._rg = False
        return self

    def retain_grad(self):
        """Ask backward to store this non-leaf tensor's gradient in `.grad`."""
        node = self.grad_fn
        if node is not None:
            node.retain = True
            if node._out is None:  # the node keeps its output only if its backward reads it
                node._out = weakref.ref(self)
        elif not self._rg:
            raise RuntimeError("retain_grad: can't retain_grad on a Tensor that has requires_grad=False")

    @property
    def retains_grad(self):
        return self.grad_fn is not None and self.grad_fn.retain

    def register_hook(self, hook):
        """Call `hook(grad)` when this tensor's gradient is computed; a returned tensor replaces it."""
        if not self._rg:
            raise RuntimeError("register_hook: cannot register a hook on a tensor that doesn't require gradient")
        node = self.grad_fn
        if node is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            if node.hooks is None:
                node.hooks = []
            hooks = node.hooks
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    # ---- conversions ----------------------------------------------------------------------------
    def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False):
        """`.to(dtype)`, `.to('cpu')`, `.to(other_tensor)`, `.to(device, dtype)` as in PyTorch."""
        for a in args:
            if isinstance(a, Tensor):
                dtype = a.dtype
            elif isinstance(a, (str, _Device)) and str(a).split(":")[0] in ("cpu", "cuda", "mps"):
                check_device(a, "to")
            else:
                dtype = a
        check_device(device, "to")
        if dtype is None:
            return self.clone() if copy else self
        from .ops.elementwise import cast

        return cast(self, _dtype.as_dtype(dtype), copy)

    def type(self, dtype=None):
        if dtype is None:
            return f"minitensor.{ {'f': 'Float', 'i': 'Long', 'b': 'Bool'}.get(self.dtype.kind, '')}Tensor"
        return self.to(dtype)

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def half(self):
        return self.to(_dtype.float16)

    def long(self):
        return self.to(_dtype.int64)

    def int(self):
        return self.to(_dtype.int32)

    def bool(self):
        return self.to(_dtype.bool_)

    def byte(self):
        return self.to(_dtype.uint8)

    def type_as(self, other):
        return self.to(other.dtype)

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        check_device("cuda", "cuda")

    # ---- in-place updates (no graph: allowed where PyTorch allows them) -------------------------
    def _inplace(self, op):
        if self._rg and grad_mode._enabled:
            what = "a leaf Variable that requires grad" if self.grad_fn is None else "a tensor that is part of a graph"
            raise RuntimeError(
                f"{op}: {what} is being used in an in-place operation; wrap the update in "
                "`with minitensor.no_grad():` or use the out-of-place op"
            )
        self._version += 1

    def _set(self, op, values, what="a result"):
        """Write already-computed `values` into self; a failure here leaves the tensor as it was."""
        if np.shape(values) != self.data.shape:
            try:
                np.broadcast_to(values, self.data.shape)
            except ValueError:
                raise RuntimeError(
                    f"{op}: {what} of shape {np.shape(values)} can't be written in place into a tensor of "
                    f"shape {tuple(self.shape)}"
                ) from None
        self._inplace(op)
        self.data[...] = values
        return self

    def _arith(self, op, fn, other):
        """add_/sub_/mul_/div_: compute first (clear errors), check PyTorch's in-place dtype rule, then write."""
        o = _raw(other)
        try:
            with np.errstate(divide="ignore", invalid="ignore"):
                values = np.asarray(fn(self.data, o))
        except ValueError:
            raise RuntimeError(
                f"{op}: shapes {tuple(self.shape)} and {np.shape(o)} cannot be broadcast together"
            ) from None
        self._check_inplace_dtype(op, values.dtype)
        return self._set(op, values)

    def _check_inplace_dtype(self, op, dtype):
        """PyTorch's in-place rule: a result is cast to self's dtype, but a float never truncates into integers."""
        if dtype.kind == "f" and self.data.dtype.kind != "f":
            raise RuntimeError(f"{op}: result type {dtype} can't be cast to the in-place output type {self.dtype}")

    def zero_(self):
        return self._set("zero_", 0)

    def fill_(self, value):
        return self._set("fill_", _raw(value))

    def copy_(self, src):
        return self._set("copy_", _raw(src), "the source")

    def add_(self, other, alpha=1):
        return self._arith("add_", lambda d, o: d + alpha * o, other)

    def sub_(self, other, alpha=1):
        return self._arith("sub_", lambda d, o: d - alpha * o, other)

    def mul_(self, other):
        return self._arith("mul_", lambda d, o: d * o, other)

    def div_(self, other):
        return self._arith("div_", lambda d, o: d / o, other)

    def clamp_(self, min=None, max=None):
        return self._set("clamp_", np.clip(self.data, min, max))

    def addcmul_(self, t1, t2, value=1):
        return self._set("addcmul_", self.data + value * _raw(t1) * _raw(t2))

    def addcdiv_(self, t1, t2, value=1):
        return self._set("addcdiv_", self.data + value * _raw(t1) / _raw(t2))

    def lerp_(self, end, weight):
        return self._set("lerp_", self.data + _raw(weight) * (_raw(end) - self.data))

    def uniform_(self, a=0.0, b=1.0, generator=None):
        from .random import _gen

        return self._set("uniform_", _gen(generator).uniform(a, b, self.data.shape))

    def normal_(self, mean=0.0, std=1.0, generator=None):
        from .random import _gen

        return self._set("normal_", _gen(generator).normal(mean, std, self.data.shape))

    def __setitem__(self, index, value):
        from .ops.indexing import _index_key

        key, value = _index_key(index, self.data.shape), _raw(value)
        try:  # check first, so a bad index or value leaves the tensor (and its version) unchanged
            np.broadcast_to(value, self.data[key].shape)
        except IndexError as e:
            raise IndexError(f"__setitem__: invalid index for a tensor of shape {tuple(self.shape)}: {e}") from None
        except ValueError:
            raise RuntimeError(
                f"__setitem__: a value of shape {np.shape(value)} can't be assigned to a selection of shape "
                f"{self.data[key].shape} of a tensor of shape {tuple(self.shape)}"
            ) from None
        self._inplace("__setitem__")
        self.data[key] = value


from .autograd import function as _function  # noqa: E402

_function._Tensor = Tensor  # Function.apply makes Tensors without importing this module


def _engine():
    """The backward engine (it imports this module, so it is found on first use, then kept)."""
    global _ENGINE
    if _ENGINE is None:
        from .autograd import engine as _ENGINE
    return _ENGINE


_ENGINE = None


def _raw(x):
    return x.data if isinstance(x, Tensor) else x


class _HookHandle:
    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def _wrap_dim(dim, ndim, op):
    """A possibly negative `dim` as an index into `range(ndim)`; a clear error when out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _size_arg(size, op):
    """A shape given as ints or as one tuple/list of ints (`zeros(2, 3)`, `x.reshape((2, 3))`), as a tuple of ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:  # (a loop: `all` over a generator costs twice as much, and this runs for every reshape)
        if type(s) is not int:
            break
    else:
        return size
    try:
        return tuple(int(s) for s in size)
    except TypeError:
        raise TypeError(f"{op}: expected ints or one tuple of ints, got {size!r}") from None


def tensor_method(*names):
    """Attach the decorated function to `Tensor` as a method (under its own name, or `names`)."""

    def attach(fn):
        for name in names or (fn.__name__,):
            setattr(Tensor, name, fn)
        return fn

    return attach


def _format(t):
    arr = t.data
    kind = arr.dtype.kind
    if kind == "f" and arr.size and np.isfinite(arr).all() and (arr == np.round(arr)).all() and np.abs(arr).max() < 1e8:
        body = np.array2string(arr, separator=", ", prefix="tensor(", floatmode="unique", threshold=1000)
    elif kind == "f":
        body = np.array2string(arr, separator=", ", prefix="tensor(", precision=4, floatmode="fixed", threshold=1000)
    else:
        body = np.array2string(arr, separator=", ", prefix="tensor(", threshold=1000)
    extras = []
    if arr.size == 0 and arr.ndim != 1:  # `[]` alone can't show the shape of an empty tensor
        extras.append(f"size={tuple(arr.shape)}")
    if arr.dtype not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool_) or (
            arr.size == 0 and arr.dtype != _dtype.get_default_dtype()):  # nor the dtype of an empty one
        extras.append(f"dtype=minitensor.{arr.dtype}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn={t.grad_fn!r}")
    elif t._rg:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"
