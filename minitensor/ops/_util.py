"""Helpers every op module shares: operands, dims, and `unbroadcast` (the adjoint of broadcasting)."""
from __future__ import annotations

import numbers
import operator
from typing import Any, Callable

import numpy as np

from .. import _dtype
from ..tensor import Tensor, _raw as raw, _wrap_dim, broadcast_dims
from ..types import TensorOrNumber


def operand(x, op):
    """A Tensor or a Python scalar. numpy scalars act as Python scalars (weak), as they do in PyTorch."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (numbers.Number, bool)):
        return x
    if isinstance(x, (np.ndarray, list, tuple)):
        from ..factories import tensor

        return tensor(x)
    raise TypeError(f"{op}: unsupported operand of type {type(x).__name__}; expected a Tensor or a number")


def int_arg(value: Any, op: str, name: str) -> int:
    """An argument that PyTorch's signature types `int`: an int, a numpy int or a 1-element integer tensor,
    checked before the tensor's shape as PyTorch's argument parser does (a float or a longer tensor is a
    TypeError naming the argument)."""
    if type(value) is int:
        return value
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}(): argument '{name}' must be int, not {type(value).__name__}") from None


def float_arg(value: Any, op: str, name: str) -> Any:
    """An argument that PyTorch's signature types `float`: any real number (a bool, an int, a numpy scalar),
    or PyTorch's TypeError naming the argument, checked before the tensor's shape as its parser does."""
    if type(value) is float or isinstance(value, numbers.Real):  # (a float first: the ABC's check costs 20x)
        return value
    raise TypeError(f"{op}(): argument '{name}' must be float, not {type(value).__name__}")


def tensor_input(x, op, name="input"):
    """`x` if it is a Tensor, else PyTorch's TypeError naming the op and what it got (a list or a
    numpy array is not converted for the op: minitensor.tensor(data) makes a tensor)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__} (minitensor.tensor(data) makes one)")
    return x


def operator_method(cls: Any, name: str, reflected: bool = False,
                    check: Callable[[Any, Any], None] | None = None,
                    prepare: Callable[[Any, Any], tuple[Any, Any]] | None = None,
                    elementwise: bool = True) -> Callable[[Tensor, Any], Tensor]:
    """`tensor (op) other`, or with `reflected` `other (op) tensor`, as `cls.apply` on the two, after
    `check(a, b)` (the op's argument checks, which PyTorch makes before it computes) and
    `prepare(a, b)` (the operands in the op's dtype) when given. An `elementwise` op that can't
    broadcast its operands raises PyTorch's error naming both shapes (`apply_elementwise`).

    A Tensor or a Python float or int (the common cases) goes to `cls.apply` as it is; `operand`
    turns anything else into one or refuses it with a clear error.
    """
    apply = cls.apply

    def method(self: Tensor, other: TensorOrNumber) -> Tensor:
        other = other if type(other) in _PLAIN else operand(other, name)
        a, b = (other, self) if reflected else (self, other)
        if check is not None:
            check(a, b)
        if prepare is not None:
            a, b = prepare(a, b)
        try:
            return apply(a, b)
        except ValueError:
            if elementwise:
                broadcast_shapes(name, np.shape(raw(a)), np.shape(raw(b)))
            raise
    method.__name__ = method.__qualname__ = f"__r{name}__" if reflected else f"__{name}__"
    return method


def apply_elementwise(cls: Any, name: str, a: Any, b: Any) -> Tensor:
    """`cls.apply(a, b)` for an elementwise op: where numpy can't broadcast the two, PyTorch's error
    naming both shapes (checked only after a failure, so the common case costs nothing)."""
    try:
        return cls.apply(a, b)
    except ValueError:
        broadcast_shapes(name, np.shape(raw(a)), np.shape(raw(b)))
        raise


def binary_method(fn: Callable[[Any, Any], Tensor]) -> Callable[[Tensor, TensorOrNumber], Tensor]:
    """`tensor (op) other` as `fn(tensor, other)`: the operator of a public function that checks its operands."""
    def method(self: Tensor, other: TensorOrNumber) -> Tensor:
        return fn(self, other)

    method.__name__ = method.__qualname__ = fn.__name__
    return method


def reflected_method(fn: Callable[[Any, Any], Tensor]) -> Callable[[Tensor, TensorOrNumber], Tensor]:
    """`other (op) tensor` as `fn(other, tensor)`: the reflected operator of a public function."""
    def method(self: Tensor, other: TensorOrNumber) -> Tensor:
        return fn(other, self)

    method.__name__ = method.__qualname__ = f"reflected_{fn.__name__}"
    return method


_PLAIN = {Tensor, float, int}  # operands passed as they are (a Parameter goes through `operand`, which returns it)


def broadcast_shapes(op, *shapes):
    """The broadcast shape, or an error naming the op and every shape."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        if len(shapes) == 2:  # the op, PyTorch's sentence for two operands (their first clash, from the last
            a, b = (tuple(s) for s in shapes)  # dim on: what a search for the error finds), then both shapes
            n = max(len(a), len(b))
            for dim in reversed(range(n)):
                sa = a[dim - n + len(a)] if dim - n + len(a) >= 0 else 1
                sb = b[dim - n + len(b)] if dim - n + len(b) >= 0 else 1
                if sa != sb and 1 not in (sa, sb):
                    raise RuntimeError(f"{op}: The size of tensor a ({sa}) must match the size of tensor b ({sb}) "
                                       f"at non-singleton dimension {dim} (shapes {a} and {b})") from None
        listed = " and ".join(str(tuple(s)) for s in shapes)
        raise RuntimeError(f"{op}: shapes {listed} cannot be broadcast together") from None


def in_common_dtype(*operands, dtype=None):
    """The operands' data converted to one dtype (PyTorch's promoted dtype unless `dtype` is given),
    and that dtype. PyTorch converts every operand before it computes, and so does this: computed in
    a wider dtype and cast after, int32 0 <= a 0-d int64 2^63 - 1 would be True, where PyTorch
    compares 0 with the int32 it casts to (-1) and says False. Python floats and bools stay numbers
    (numpy converts them to an array's dtype as PyTorch does); Python ints wrap into an integer dtype.
    """
    arrays = [raw(x) for x in operands]
    want = _dtype.result_dtype(*arrays) if dtype is None else dtype
    return [_converted(x, want) for x in arrays], want


def _converted(x, dtype):
    if isinstance(x, np.ndarray):
        return x if x.dtype == dtype else x.astype(dtype)
    if type(x) is int:
        return _dtype.wrapped_int(x, dtype)
    return x


def unbroadcast(g, shape):
    r"""The adjoint of broadcasting `shape` up to `g.shape`: sum `g` over every broadcast dimension.

    Broadcasting copies an input along new leading dims and along its size-1 dims, so each copy's
    gradient flows back to the one element it came from: sum over those dims, keep the rest.
    `g` is a Tensor (a recorded VJP) or an ndarray or numpy scalar (a first-order VJP written in numpy).
    """
    shape = tuple(shape)
    in_numpy = not isinstance(g, Tensor)
    g_shape = g.shape if in_numpy else g._array.shape  # (a Tensor's .shape makes a Size)
    if g_shape == shape:
        return g
    dims = broadcast_dims(shape, g_shape)
    if dims:
        g = g.sum(axis=dims, keepdims=True) if in_numpy else g.sum(dim=dims, keepdim=True)
    return g.reshape(shape) if g.shape != shape else g


def fits_broadcast(shape, target):
    """Whether `shape` broadcasts up to exactly `target` (what `expand` allows)."""
    try:
        return np.broadcast_shapes(tuple(shape), tuple(target)) == tuple(target)
    except ValueError:
        return False


def finite_max(x, axis, keep_posinf=False):
    """The max of ndarray `x` over `axis` (kept as size 1), with a non-finite max replaced by 0.

    Softmax, logsumexp, cross-entropy and attention subtract it before `exp`, so nothing
    overflows; a row that is all -inf then stays -inf instead of becoming -inf - (-inf) = nan
    (and a NaN stays where it was). With `keep_posinf` a +inf max stays, so that a row holding
    +inf becomes inf - inf = NaN: PyTorch's softmax (its logsumexp instead takes the max as 0).
    """
    if x.size == 0:  # nothing to subtract from (and numpy's max of nothing is an error)
        return np.zeros(np.sum(x, axis=axis, keepdims=True).shape, x.dtype)
    return finite_part(x.max(axis=axis, keepdims=True), keep_posinf)


def finite_part(m, keep_posinf=False):
    """`finite_max`'s second step: the maxima `m` with the non-finite ones (but +inf, with `keep_posinf`) 0."""
    if not np.isfinite(m).all():
        keep = np.isfinite(m) | (m == np.inf) if keep_posinf else np.isfinite(m)
        m = np.where(keep, m, 0).astype(m.dtype, copy=False)
    return m


def norm_dims(dim, ndim, op):
    """`dim` (None, an int or a sequence) as a sorted tuple of non-negative dims."""
    if ndim == 0:  # a 0-d tensor accepts dim 0 or -1 (as PyTorch) and has no axis to reduce
        if dim is not None:
            for d in (dim if isinstance(dim, (list, tuple)) else (dim,)):
                _wrap_dim(d, ndim, op)
        return ()
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        dims = tuple(sorted({_wrap_dim(_int_dim(d, op), ndim, op) for d in dim}))
        if len(dims) != len(dim):
            raise RuntimeError(f"{op}: dim {_repeated(dim, ndim)} appears more than once in dim={dim!r}")
        return dims or tuple(range(ndim))  # PyTorch reads dim=() as "every dim"
    return (_wrap_dim(_int_dim(dim, op), ndim, op),)


def _int_dim(d, op):
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"{op}: dim must be an int or a tuple of ints, got {d!r} ({type(d).__name__})")
    return d


def _repeated(dims, ndim):
    seen = set()
    for d in dims:
        if d % ndim in seen:
            return d
        seen.add(d % ndim)


def float_only(x, op):
    if _dtype.kind(x._array.dtype) != "f":
        raise RuntimeError(f"{op}: expected a floating point tensor, got dtype {x.dtype}")


def float_kernel(x, op):
    """The dtype check of an op whose PyTorch kernel exists for floating dtypes only: an integer or bool
    tensor is PyTorch's NotImplementedError (its dispatcher finds no kernel), not a RuntimeError."""
    if _dtype.kind(x._array.dtype) != "f":
        if not x._array.size:  # (PyTorch runs no kernel on an empty tensor; the refusal stays a RuntimeError)
            raise RuntimeError(f"{op}: expected a floating point tensor, got dtype {x.dtype}")
        raise NotImplementedError(f"{op}: not implemented for dtype {x.dtype} (it needs a floating point tensor)")


def no_bool(x, op, error=NotImplementedError):
    """The dtype check of an op that PyTorch has no bool form of: its class (NotImplementedError where the
    dispatcher finds no kernel, RuntimeError where the op checks it itself) as PyTorch raises it."""
    if x._array.dtype == np.bool_:
        raise error(f"{op}: not implemented for bool tensors")


def running_inplace_check(self, op, dim, *, dtype=None):
    """`cumsum_`/`cumprod_`'s own checks, as PyTorch's order: the dim, then a `dtype` other than the
    tensor's (its in-place form can't change the dtype), then a bool tensor, which its kernels lack (a
    NotImplementedError, where the out-of-place op would count in int64)."""
    tensor_input(self, op)
    _wrap_dim(dim, self.ndim, op)
    if dtype is not None and _dtype.as_dtype(dtype, op) != self._array.dtype:
        raise RuntimeError(f"{op}: bad in-place call: the tensor's dtype {self.dtype} and the output dtype "
                           f"{_dtype.public(_dtype.as_dtype(dtype))} should match")
    no_bool(self, op)


def integers_as_int64(x):
    """`x` in int64 if it holds integers or bools: sum and cumsum add them in int64, as PyTorch does
    (an int8 sum does not wrap at 127)."""
    return x.to(_dtype.int64) if x._array.dtype.kind in "biu" else x


def return_type(cls: Any, name: str) -> None:
    """Name a (values, indices)-style NamedTuple as PyTorch names its result, and print it as PyTorch does:
    `torch.return_types.max(` then each field on its own line (`values=tensor(...)`), then `)`, with
    "minitensor" for "torch" outside the runner (see `Size.shown_as`)."""
    cls.__name__ = cls.__qualname__ = name

    def __repr__(self: Any) -> str:
        fields = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"{_dtype.shown_as()}.return_types.{name}(\n{fields})"

    cls.__repr__ = __repr__
