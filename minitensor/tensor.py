"""The `Tensor`: a numpy array, plus what reverse-mode autograd needs to know about it.

A tensor is either a *leaf* (made by the user: `grad_fn is None`), whose `.grad` the backward pass
fills in, or the output of an op, whose `grad_fn` is the graph node that made it.

This module is the bottom layer: it knows nothing of ops or of the backward pass. The ops live in
`minitensor/ops/` and the backward pass in `minitensor/autograd/`; one table of them
(`minitensor/ops/table.py`) attaches their functions here as methods, so `x.exp()` and
`minitensor.exp(x)` are the same function, and `x.backward()` is the engine's.

Storage, as in PyTorch: a view (`view`, `transpose`, `x[0]`, `detach()` ...) shares its base's
memory *and* its version counter, which every in-place change bumps. A graph node remembers the
version of every tensor its backward reads, so backward can refuse to use a value that changed.
"""
from __future__ import annotations

import math
import operator
import weakref
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, Sequence, overload

import numpy as np

from . import _dtype
from ._dtype import public_of as _public_of

if TYPE_CHECKING:  # (annotations only: these modules import this one)
    from numpy.typing import NDArray
    from typing_extensions import Self

    from .autograd.function import Function
    from .types import ArrayLike, DeviceLike, DTypeLike, PublicDType


class Size(tuple[int, ...]):
    """A tensor's shape: a tuple that prints like PyTorch's `torch.Size([2, 3])`.

    `Size.shown_as` is the library name reprs print: `minitensor.Size([2, 3])` and
    `dtype=minitensor.float64`. `python -m minitensor.run` sets it to "torch" while it runs a
    PyTorch script, so the script prints what its tutorial's text shows.
    """

    shown_as: ClassVar[str] = "minitensor"

    def __repr__(self) -> str:
        return f"{Size.shown_as}.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)


class device:
    """Everything runs on the CPU; `device('cpu')` exists so device-aware tutorial code runs."""

    type: str
    index: int | None = None  # (no device number: 'cpu' alone)

    def __init__(self, type: str = "cpu") -> None:
        check_device(type, "device")
        self.type = "cpu"

    def __repr__(self) -> str:
        return "device(type='cpu')"

    def __str__(self) -> str:
        return "cpu"

    def __eq__(self, other: object) -> bool:
        return str(other) == "cpu"

    def __hash__(self) -> int:
        return hash("cpu")

    # `with torch.device(...):` makes it the default device of the factories and modules made inside; the
    # CPU is the only one (and the default), so entering changes nothing
    def __enter__(self) -> device:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


_Device = device  # `device` is also a keyword argument name below


def _grad_enabled() -> bool:
    """Whether grad mode is on (asked only where a rule depends on it: autograd sits above the Tensor)."""
    from .autograd.grad_mode import is_grad_enabled
    return is_grad_enabled()


def check_device(dev: object, where: str) -> None:
    if dev is None or isinstance(dev, device):
        return
    if isinstance(dev, str) and dev.split(":")[0] == "cpu":
        return
    raise RuntimeError(
        f"{where}: device {dev!r} is not available; minitensor runs on the CPU only (use device='cpu')"
    )


def _to_array(data: ArrayLike, dtype: DTypeLike | None, where: str) -> NDArray[Any]:
    """Turn user data (nested lists, scalars, arrays, tensors) into an ndarray with PyTorch's dtype rules."""
    if isinstance(data, Tensor):
        arr = data._array
    elif isinstance(data, (np.ndarray, np.generic)):  # a numpy scalar keeps its dtype, as an array does
        arr = np.asarray(data)
        if _dtype.kind(arr.dtype) not in "biuf":
            raise TypeError(f"{where}: can't convert a numpy array of dtype {arr.dtype}; expected "
                            "bool, integer or float data")
        refuse_foreign_byte_order(arr, where)
    else:
        if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(data)):
            data = _untensor(data)
        try:
            arr = np.asarray(data)
        except ValueError as e:
            raise ValueError(f"{where}: cannot build a tensor from ragged or mixed data ({e})") from None
        # how numpy keeps Python ints beyond int64: uint64, objects, or float64 beside small ints
        if arr.dtype == np.uint64 or arr.dtype == object or (
                arr.dtype == np.float64 and arr.size and np.abs(arr).max() >= 2.0 ** 63):
            arr = _beyond_int64(data, arr, dtype, where)
        if dtype is None and isinstance(data, (list, tuple)) and _dtype.kind(arr.dtype) in "biuf":
            dtype = _list_dtype(data)  # None when the list holds no numpy scalar
        if _dtype.kind(arr.dtype) == "f" and dtype is None:
            with np.errstate(over="ignore"):  # 1e300 is inf in float32, silently as in PyTorch
                arr = arr.astype(_dtype.get_default_dtype())
        elif arr.dtype.kind in "iu" and dtype is None:
            arr = arr.astype(np.int64)
        elif _dtype.kind(arr.dtype) not in "biuf":
            raise TypeError(f"{where}: cannot build a tensor from data of type {arr.dtype} ({type(data).__name__})")
    if dtype is not None:
        dtype = _dtype.as_dtype(dtype, where)
        python_numbers = not isinstance(data, (Tensor, np.ndarray, np.generic))
        if python_numbers and (not _dtype.values_fit(arr, dtype) or (_dtype.is_floating(arr.dtype)
                                                                     and dtype.kind in "iu")):
            # PyTorch checks each Python number by its own type (an int -2 wraps into uint8, -2.0 is an
            # overflow) and raises for one that doesn't fit; an array converts as a C cast does, unchecked.
            # Ints beside floats too: numpy's float64 rounds 2^63 - 1 up to 2^63, which would wrap
            items = list(_flat(data)) if isinstance(data, (list, tuple)) else [data]
            arr = np.array([_dtype.scalar_to(x, dtype, where) for x in items], dtype).reshape(arr.shape)
        # 1e300 to float32 is inf, an array's NaN to int64 is undefined: silently, as in PyTorch (numpy warns)
        with np.errstate(over="ignore", invalid="ignore"):
            arr = arr.astype(dtype, copy=False)
    return arr


def refuse_foreign_byte_order(arr: NDArray[Any], where: str) -> None:
    """PyTorch's refusal of a numpy array whose byte order is not the machine's."""
    if not arr.dtype.isnative:
        raise ValueError(f"{where}: the numpy array's byte order ({arr.dtype}) is not the machine's; convert it "
                         "first: arr.astype(arr.dtype.newbyteorder('='))")


def _beyond_int64(data: Any, arr: NDArray[Any], dtype: DTypeLike | None, where: str) -> NDArray[Any]:
    """Python ints beyond int64 (numpy holds them as uint64, objects, or float64 beside floats or
    small ints): PyTorch reads each int as a C long long unless the tensor is float (asked for, or
    inferred from a float in the data) or bool, so elsewhere they are its overflow error."""
    items = list(_flat(data)) if isinstance(data, (list, tuple)) else [data]
    big = [x for x in items if isinstance(x, int) and not isinstance(x, bool) and not -2 ** 63 <= x < 2 ** 63]
    if not big or not all(isinstance(x, (bool, int, float)) for x in items):
        return arr  # large floats only; or strings, None ...: refused below
    kind = _dtype.as_dtype(dtype, where).kind if dtype is not None else "f" if any(
        isinstance(x, float) for x in items) else "i"
    if kind in "fb":  # as floats (a bool tensor then reads them as True)
        return arr.astype(np.float64)
    raise ValueError(f"{where}: overflow when unpacking long long: {big[0]} does not fit in int64")


def _list_dtype(seq: Any) -> Any:
    """PyTorch's dtype for a list holding numpy scalars: each keeps its own dtype (np.float64(1.) is
    float64) and Python numbers theirs (bool, int64, the default float), promoted together; None
    when the list holds no numpy scalar (numpy's inference, with floats at the default dtype, is it)."""
    items = list(_flat(seq))
    if not any(isinstance(x, (np.generic, np.ndarray)) for x in items):  # (an ndarray: a tensor in the list)
        return None
    out = None
    for x in items:
        if isinstance(x, np.generic):
            d = x.dtype
        elif isinstance(x, bool):
            d = _dtype.bool_
        elif isinstance(x, int):
            d = _dtype.int64
        elif isinstance(x, float):
            d = _dtype.get_default_dtype()
        else:
            d = np.asarray(x).dtype  # an array from a tensor inside the list
        out = d if out is None else _dtype.promote_types(out, d)
    return out


def _flat(seq: Any) -> Iterator[Any]:
    for x in seq:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def _untensor(seq: Any) -> Any:
    """A list holding tensors as PyTorch reads it: each tensor one number (a 0-d array, keeping its dtype),
    so a list of one-element tensors of any shape is a 1-d tensor; a tensor of more elements is PyTorch's
    ValueError."""
    return [(_untensor(x) if isinstance(x, (list, tuple)) else (_one_number(x) if isinstance(x, Tensor) else x))
            for x in seq]


def _one_number(t: Tensor) -> NDArray[Any]:
    if t._array.size != 1:
        raise ValueError(f"tensor: only one element tensors can be converted to Python scalars (a tensor in the "
                         f"list has shape {tuple(t.shape)}; use minitensor.stack to join tensors)")
    return t._array.reshape(())


_new = object.__new__


NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Backward does not fill "
    "it in for such a tensor; call .retain_grad() on it first to keep its gradient, or read the .grad of "
    "the leaf it was computed from.")


class VersionCounter:
    """How many in-place changes a storage has seen: shared by a tensor, its views and `detach()`."""

    value: int = 0  # (a class default, set on the counter at its first change: a new tensor runs no __init__)


class Tensor:
    """An n-dimensional array that records the ops applied to it, so gradients can flow back.

    `Tensor(data)` follows `torch.Tensor(data)`: the data in the default float dtype; `Tensor(2, 3)`
    is an uninitialised (here: zero) tensor of that shape. Prefer `minitensor.tensor(data)`.
    """

    # _array: the numpy array holding the values (`.numpy()` outside the library)
    # _rg: requires_grad;  _base: the tensor whose memory a view shares (None if not a view)
    # _base_grad_fn: the base's grad_fn when this view was taken (its graph is right while that holds)
    __slots__ = ("_array", "_rg", "_grad", "grad_fn", "_version_counter", "_base", "_base_grad_fn", "_hooks",
                 "__weakref__")
    _grad: Tensor | None
    grad_fn: Function | None
    _array: NDArray[Any]
    _rg: bool
    _version_counter: VersionCounter
    _base: Tensor | None
    _base_grad_fn: Function | None
    _hooks: list[Callable[[Tensor], Tensor | None]] | None
    __array_priority__: ClassVar[int] = 1000  # numpy defers `ndarray * tensor` to Tensor.__rmul__

    def __init__(self, *args: Any, dtype: DTypeLike | None = None, requires_grad: bool = False,
                 device: DeviceLike | None = None) -> None:
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
        self._array = data
        self._rg = False
        self._grad = None
        self.grad_fn = None
        self._version_counter = VersionCounter()
        self._base = None
        self._hooks = None
        if requires_grad:
            self.requires_grad_(True)

    @staticmethod
    def _make(arr: NDArray[Any]) -> Tensor:
        """Wrap an ndarray in a Tensor without copying or checking (the hot path of every op; a
        staticmethod, as a classmethod's binding costs a fifth of the call)."""
        t = _new(Tensor)
        t._array = arr
        t._rg = False
        t._grad = None
        t.grad_fn = None
        t._version_counter = VersionCounter()
        t._base = None
        t._hooks = None
        return t

    # ---- storage and versions -------------------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """The same values as a tensor cut from the graph (shares memory; `requires_grad=False`).

        As in PyTorch, changes made through `.data` are invisible to autograd: they don't bump the
        version counter, so backward can't see them. Prefer `detach()` (which shares the counter)
        or `with no_grad():`; the numpy array itself is `.numpy()`."""
        return Tensor._make(self._array)

    @data.setter
    def data(self, value: Tensor | ArrayLike) -> None:
        self._array = value._array if isinstance(value, Tensor) else _to_array(value, None, "data")

    @property
    def _version(self) -> int:
        return self._version_counter.value

    def _bump_version(self) -> None:
        """Record an in-place change of this tensor's memory (seen by its views and its base too)."""
        self._version_counter.value += 1

    def _share_storage_of(self, base: Tensor) -> None:
        """Make self a view of `base`: its memory is base's, so is its version counter."""
        self._version_counter = base._version_counter
        self._base = base if base._base is None else base._base
        self._base_grad_fn = self._base.grad_fn

    def _check_view_is_current(self, op: str) -> None:
        """A view's graph describes its base as it was when the view was taken. A recorded in-place op
        on the base since then gave the base a new history, which PyTorch replays into the view;
        minitensor refuses to use the view instead of giving it a wrong gradient."""
        if self._base is not None and self._base.grad_fn is not self._base_grad_fn:
            raise RuntimeError(
                f"{op}: this tensor (shape {tuple(self.shape)}) is a view of a tensor that was changed by a recorded "
                "in-place operation after the view was taken, so its graph is out of date (PyTorch would rebuild "
                "it; minitensor does not): take the view again after the in-place operation"
            )

    # ---- attributes -----------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Self:
        """Mark a leaf as needing a gradient (in place; returns self).

        A difference from PyTorch: a view made of this tensor before keeps its own `requires_grad`. PyTorch's
        view reports its base's flag from then on, yet no gradient reaches the base through it."""
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "requires_grad_: you can only change requires_grad of leaf tensors; "
                    "use .detach() to get a tensor cut from the graph"
                )
            return self
        if requires_grad and _dtype.kind(self._array.dtype) != "f":
            raise RuntimeError(
                f"requires_grad_: only tensors of floating point dtype can require gradients, got {self.dtype}"
            )
        self._rg = bool(requires_grad)
        return self

    @property
    def grad(self) -> Tensor | None:
        """The gradient backward accumulated here (None until then). Reading it on a non-leaf that does
        not retain its gradient warns, as PyTorch does: backward never fills it, so None there is a slip."""
        if self._grad is None and self.grad_fn is not None and not self.grad_fn.retain:
            import warnings  # (only on this slip: the getter is read on every optimizer step)
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        # checked as PyTorch does, so an optimizer never meets a gradient that doesn't fit its parameter
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._array.shape != self._array.shape:
                raise RuntimeError(f"attempting to assign a gradient of size {list(value.shape)} to a tensor of "
                                   f"size {list(self.shape)}: the gradient and the tensor must have the same size")
            if value.dtype != self.dtype:
                raise RuntimeError(f"attempting to assign a gradient of dtype {value.dtype} to a tensor of dtype "
                                   f"{self.dtype}: the gradient must have the tensor's dtype")
        self._grad = value

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def shape(self) -> Size:
        return Size(self._array.shape)

    @property
    def dtype(self) -> PublicDType:  # (numpy's dtype is `._array.dtype`: minitensor's own code uses that)
        try:
            return _public_of[self._array.dtype]
        except KeyError:  # (a dtype met for the first time)
            return _dtype.public(self._array.dtype)

    @property
    def device(self) -> device:
        return device("cpu")

    @property
    def is_cuda(self) -> bool:
        return False

    @property
    def ndim(self) -> int:
        return self._array.ndim

    def dim(self) -> int:
        return self._array.ndim

    ndimension = dim

    @overload
    def size(self, dim: None = None) -> Size: ...
    @overload
    def size(self, dim: int) -> int: ...
    def size(self, dim=None):
        if dim is None:
            return Size(self._array.shape)
        return self._array.shape[_wrap_dim(dim, self._array.ndim, "size")]

    def numel(self) -> int:
        return int(self._array.size)

    nelement = numel

    def element_size(self) -> int:
        return self._array.itemsize

    def is_floating_point(self) -> bool:
        return _dtype.kind(self._array.dtype) == "f"

    def item(self) -> float:
        if self._array.size != 1:
            raise RuntimeError(
                f"item: a Tensor with {self._array.size} elements cannot be converted to a Python scalar"
            )
        return self._array.reshape(()).item()

    def numpy(self, *, force: bool = False) -> NDArray[Any]:
        """The numpy array holding the values (shared memory, as PyTorch's; `force=True` also for a tensor
        that requires grad, and so is grad mode off: under no_grad, in a Function's forward, nothing the
        array feeds can be recorded)."""
        if self._rg and not force and _grad_enabled():
            raise RuntimeError(
                "numpy: can't call numpy() on a Tensor that requires grad; use tensor.detach().numpy()"
            )
        return self._array

    def tolist(self) -> Any:
        return self._array.tolist()

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> NDArray[Any]:
        return self._array if dtype is None else self._array.astype(dtype)

    def __len__(self) -> int:
        if self._array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        if self._array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._array.shape[0]))

    # `==` is elementwise, so a Tensor hashes by identity, as in PyTorch; object's own hash is the
    # one in C (the engine keys its dict of leaf gradients by tensor).
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        if self._array.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {self._array.size} elements is ambiguous; use .any() or .all()"
            )
        return bool(self._array.reshape(()))

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._array.dtype.kind not in "biu" or self._array.size != 1:
            raise TypeError(f"only integer tensors of a single element can be used as an index, got {self.dtype}")
        return int(self.item())

    def __repr__(self) -> str:
        return _format(self)

    def __format__(self, format_spec: str) -> str:
        """`f"{loss:.4f}"`: a 0-d tensor formats as its number; any other tensor as object does
        (its repr for an empty spec, a TypeError otherwise), as in PyTorch."""
        if self._array.ndim == 0 and type(self) is Tensor:
            return self._array.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    # ---- autograd (`backward()` itself is `minitensor.autograd.api.backward`, attached here) ----
    def detach(self) -> Tensor:
        """The same values, cut from the graph: shares memory and the version counter, like PyTorch."""
        t = Tensor._make(self._array)
        t._version_counter = self._version_counter
        return t

    def detach_(self) -> Self:
        if self._base is not None:  # its base's graph and version would disagree with its own (PyTorch refuses too)
            raise RuntimeError("detach_: can't detach a view in place; use detach(), which returns a new tensor")
        self.grad_fn = None
        self._rg = False
        return self

    def retain_grad(self) -> None:
        """Ask backward to store this non-leaf tensor's gradient in `.grad`."""
        node = self.grad_fn
        if node is not None:
            node.retain = True
        elif not self._rg:
            raise RuntimeError("retain_grad: can't retain_grad on a Tensor that has requires_grad=False")

    @property
    def retains_grad(self) -> bool:
        return self.grad_fn is not None and self.grad_fn.retain

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> _HookHandle:
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

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> _HookHandle:
        """Call `hook(self)` each time backward has accumulated this leaf's gradient into its `.grad`
        (an optimizer step per parameter, as soon as its gradient is ready)."""
        if not self._rg:
            raise RuntimeError("register_post_accumulate_grad_hook: cannot register a hook on a tensor that "
                               "doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("register_post_accumulate_grad_hook: post accumulate grad hooks cannot be "
                               "registered on non-leaf tensors")
        hooks = post_accumulate_hooks.setdefault(id(self), [])
        if len(hooks) == 0:  # forget them with the tensor (keyed by id: `==` on tensors is elementwise)
            weakref.finalize(self, post_accumulate_hooks.pop, id(self), None)
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def cpu(self, memory_format: object = None) -> Self:
        return self

    def cuda(self, device: object = None, non_blocking: bool = False, memory_format: object = None) -> Tensor:
        check_device("cuda", "cuda")

    # ---- layout and storage attributes, PyTorch's names (issue 29) ---------------------------------
    # minitensor's memory is a numpy array on the CPU: its strides (in elements) and offset are
    # numpy's; it is never sparse, quantized, meta, pinned, shared between processes or complex.
    @property
    def is_cpu(self) -> bool:
        return True

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def is_meta(self) -> bool:
        return False

    @property
    def nbytes(self) -> int:
        return int(self._array.nbytes)

    @property
    def itemsize(self) -> int:
        return int(self._array.itemsize)

    @overload
    def stride(self, dim: None = None) -> tuple[int, ...]: ...
    @overload
    def stride(self, dim: int) -> int: ...
    def stride(self, dim=None):
        """The step in elements between neighbours along each dim (one dim's when `dim` is given)."""
        if self._array.flags.c_contiguous:  # row-major: PyTorch's strides (numpy's may differ for size 0 or 1)
            steps, step = [], 1
            for n in reversed(self._array.shape):
                steps.insert(0, step)
                step *= max(n, 1)
            steps = tuple(steps)
        else:
            steps = tuple(s // self._array.itemsize for s in self._array.strides)
        return steps if dim is None else steps[_wrap_dim(dim, self.ndim, "stride")]

    def storage_offset(self) -> int:
        """Where, in elements, this tensor's first element sits in the memory it shares with its base."""
        root = self._array
        while isinstance(root.base, np.ndarray):
            root = root.base
        if not self._array.size or not root.size:
            return 0
        start = self._array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        return int(start // self._array.itemsize)

    def is_contiguous(self, memory_format: object = None) -> bool:
        """Whether the elements lie in memory in row-major order, without gaps (size-1 dims aside)."""
        return bool(self._array.flags.c_contiguous)

    def data_ptr(self) -> int:
        """The address of the first element (0 for an empty tensor, as in PyTorch)."""
        return int(self._array.__array_interface__["data"][0]) if self._array.size else 0

    def is_complex(self) -> bool:
        return False

    def is_signed(self) -> bool:
        return _dtype.kind(self._array.dtype) in "if"

    def is_inference(self) -> bool:
        """False: minitensor's inference_mode is no_grad, it makes no inference tensors."""
        return False

    def is_nonzero(self) -> bool:
        """Whether the one element is non-zero (an error for any other number of elements)."""
        if self._array.size == 0:
            raise RuntimeError("is_nonzero: Boolean value of Tensor with no values is ambiguous")
        if self._array.size > 1:
            raise RuntimeError("is_nonzero: Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._array.reshape(()))

    def is_same_size(self, other: Tensor) -> bool:
        return self.shape == other.shape

    def get_device(self) -> int:
        """-1: the CPU (a CUDA tensor's would be its device index)."""
        return -1

    def is_pinned(self, device: object = None) -> bool:
        return False

    def pin_memory(self, device: object = None) -> Self:
        """The tensor itself: pinned memory speeds copies to a GPU, which minitensor doesn't have."""
        return self

    def share_memory_(self) -> Self:
        """The tensor itself, unchanged: its numpy memory stays private to this process (PyTorch moves
        it into shared memory for torch.multiprocessing, which minitensor doesn't have)."""
        return self

    def is_shared(self) -> bool:
        return False



def _raw(x: Any) -> Any:
    return x._array if isinstance(x, Tensor) else x


# id(leaf) -> the hooks `register_post_accumulate_grad_hook` gave it (the engine calls them after `.grad += g`)
post_accumulate_hooks: dict[int, list[Callable[[Tensor], None]]] = {}


class _HookHandle:
    """What registering a hook returns: `.remove()` it, or use it as a context manager (`with t.register_hook(h):`)
    to have it removed on leaving."""

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if any(h is self._hook for h in self._hooks):
            self._hooks.remove(self._hook)

    def __enter__(self) -> _HookHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _wrap_dim(dim: int, ndim: int, op: str) -> int:
    """A possibly negative `dim` as an index into `range(ndim)`; a clear error when out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def broadcast_dims(shape: Sequence[int], out_shape: Sequence[int]) -> tuple[int, ...]:
    """The dims of `out_shape` that broadcasting `shape` up to it created: new leading dims and stretched 1s."""
    lead = len(out_shape) - len(shape)
    return tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape) if n == 1 and out_shape[i + lead] != 1)


def _size_arg(size: Sequence[Any], op: str) -> tuple[int, ...]:
    """A shape given as ints or as one tuple/list of ints (`zeros(2, 3)`, `x.reshape((2, 3))`), as a tuple of ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:  # (a loop: `all` over a generator costs twice as much, and this runs for every reshape)
        if type(s) is not int:
            break
    else:
        return size
    try:  # operator.index takes ints, numpy ints and 1-element int tensors, never a float (2.5 is no size)
        return tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"{op}: expected ints or one tuple of ints, got {size!r}") from None


# ---- printing, laid out as PyTorch lays out a tensor ------------------------------------------------
# (minitensor.set_printoptions changes these; `sci_mode` None picks scientific notation by the values)
PRINT_OPTIONS: dict[str, Any] = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def _format(t: Tensor) -> str:
    arr = t._array
    prefix = "tensor("
    if arr.size == 0:
        body = "[]"
    else:
        summarize = arr.size > PRINT_OPTIONS["threshold"]
        fmt = _Formatter(_summarized(arr) if summarize else arr)
        body = _layout(arr, len(prefix), summarize, fmt)
    extras = []
    if arr.size == 0 and arr.ndim != 1:  # `[]` alone can't show the shape of an empty tensor
        extras.append(f"size={tuple(arr.shape)}")
    if arr.dtype not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool_) or (
            arr.size == 0 and arr.dtype != _dtype.get_default_dtype()):  # nor the dtype of an empty one
        extras.append(f"dtype={_dtype.public(arr.dtype)}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.torch_name()}>")  # (without the node's address, as PyTorch)
    elif t._rg:
        extras.append("requires_grad=True")
    text = prefix + body
    # each suffix goes on the line if it fits in linewidth, else on a new line under the values (as PyTorch's)
    column = len(text) - text.rfind("\n") + 1
    for e in extras:
        if column + len(e) + 2 > PRINT_OPTIONS["linewidth"]:
            text += ",\n" + " " * len(prefix) + e
            column = len(prefix) + len(e)
        else:
            text += ", " + e
            column += len(e) + 2
    return text + ")"


def _summarized(arr: NDArray[Any]) -> NDArray[Any]:
    """The values a summarized print shows (edgeitems at each end of each dim), to size the columns by."""
    k = PRINT_OPTIONS["edgeitems"]
    for axis, n in enumerate(arr.shape):
        if n > 2 * k:
            arr = np.concatenate([arr.take(range(k), axis), arr.take(range(n - k, n), axis)], axis)
    return arr


class _Formatter:
    """How every number of one tensor is written, chosen from all the values shown (so columns line
    up): integers as they are; floats with 4 decimals, or as `1.` when all are whole numbers, or in
    scientific notation when they span more than 1000x, pass 1e8, or (not whole) go below 1e-4."""

    def __init__(self, arr: NDArray[Any]) -> None:
        self.kind = _dtype.kind(arr.dtype)
        self.sci = False
        self.whole = False
        values = arr.ravel()
        if self.kind == "f":
            with np.errstate(invalid="ignore"):
                finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
            self.whole = bool((np.ceil(finite) == finite).all())
            if finite.size:
                big, small = np.abs(finite).max(), np.abs(finite).min()
                self.sci = bool(big / small > 1000.0 or big > 1.0e8 or (not self.whole and small < 1.0e-4))
            if PRINT_OPTIONS["sci_mode"] is not None:
                self.sci = bool(PRINT_OPTIONS["sci_mode"])
            values = finite  # (PyTorch sizes float columns by the nonzero finite values only)
        self.width = max((len(self._text(v)) for v in values.tolist()), default=1)

    def _text(self, v: Any) -> str:
        if self.kind != "f":
            return str(v)
        p = PRINT_OPTIONS["precision"]
        if self.sci:
            return f"{v:.{p}e}"
        if self.whole:
            return f"{v:.0f}" + ("." if math.isfinite(v) else "")
        return f"{v:.{p}f}"

    def __call__(self, v: Any) -> str:
        text = self._text(v)
        return " " * (self.width - len(text)) + text


def _layout(arr: NDArray[Any], indent: int, summarize: bool, fmt: _Formatter) -> str:
    if arr.ndim == 0:
        return fmt._text(arr.item())
    k = PRINT_OPTIONS["edgeitems"]
    cut = summarize and arr.shape[0] > 2 * k
    if arr.ndim == 1:
        items = [fmt(v) for v in arr.tolist()] if not cut else (
            [fmt(v) for v in arr[:k].tolist()] + [" ..."] + [fmt(v) for v in arr[-k:].tolist()])
        per_line = max(1, (PRINT_OPTIONS["linewidth"] - indent) // (fmt.width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(arr.shape[0])
    parts = [_layout(arr[i], indent + 1, summarize, fmt) for i in (list(rows[:k]) if cut else rows)]
    if cut:
        parts += ["..."] + [_layout(arr[i], indent + 1, summarize, fmt) for i in rows[-k:]]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(parts) + "]"
