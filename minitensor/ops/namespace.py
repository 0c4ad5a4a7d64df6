r"""The rest of PyTorch's tensor ops and methods (issue 29, h-torchns): each a composite of minitensor's
existing ops (so it needs no backward of its own) or a method about a tensor's storage, layout and
random in-place fills.

- real-valued twins of complex ops: `angle` (0 or pi), `adjoint`, `H`, `mH` (the transposes, since
  minitensor has no complex dtype),
- `unsafe_*` splits (PyTorch's versions that skip a check a numpy-backed split never needs),
- `nonzero_static`, `as_strided_`, `as_strided_scatter`, the legacy `resize` / `resize_as`,
- `lu` / `lu_unpack` (torch's older LU interface, on `linalg.lu_factor`),
- the in-place random fills PyTorch has (`bernoulli_`, `cauchy_`, `exponential_`, `geometric_`,
  `log_normal_`) and the draws `binomial` and `poisson`,
- the per-element Python callbacks `apply_`, `map_`, `map2_`, and small layout questions
  (`dim_order`, `layout`, `is_mps` ...).
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from .. import _dtype
from .._layout import strided
from ..random import Generator, _gen
from ..tensor import Tensor, _size_arg, _wrap_dim
from . import decompositions as D, joining as J, shape as S
from ._util import float_arg, int_arg, return_type
from .decompositions import pivots_to_permutation
from .indexing import tril, triu, where
from .inplace import _filled, inplace

# ---- real-valued twins of the complex ops --------------------------------------------------------


def angle(input: Tensor) -> Tensor:
    """The argument of each element: for a real x, pi where x < 0, else 0 (NaN stays NaN; -0.0 gives 0).
    An integer or bool input gives the default float dtype. Its gradient is 0 (a step function).

    forward: out = pi where x < 0, else 0 (NaN where x is NaN)
    VJP:     gx = 0 (g where x is NaN)
    """
    x = input if _dtype.kind(input.dtype) == "f" else input.to(_dtype.get_default_dtype())
    steps = Tensor._make(np.where(x._array < 0, np.pi, 0.0).astype(x.dtype))
    return where(x != x, x, steps)  # (through `where`, the result stays in x's graph with a zero gradient)


def _matrices(input: Tensor, what: str) -> None:
    if input.ndim < 2:
        raise RuntimeError(f"tensor.{what}() is only supported on matrices or batches of matrices. "
                           f"Got {input.ndim}-D tensor.")


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims, a view: the transpose for minitensor's real dtypes.

    forward: out = x^T over the last two dims (a view)
    VJP:     gx = g^T
    """
    if input.ndim == 0:  # PyTorch still takes a 0-d tensor (itself), with a deprecation warning
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return input
    _matrices(input, "adjoint")
    return S.transpose(input, -2, -1)


def conj_transpose(self: Tensor) -> Tensor:
    """`x.H`: a matrix's conjugate transpose (the transpose for real dtypes); 2-d tensors only, as in PyTorch.

    forward: out = x^T
    VJP:     gx = g^T
    """
    if self.ndim not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor."
                           + (" For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""))
    return S.transpose(self, 0, 1) if self.ndim == 2 else self


def matrix_conj_transpose(self: Tensor) -> Tensor:
    """`x.mH`: the conjugate transpose of the last two dims (their transpose for real dtypes).

    forward: out = x^T over the last two dims
    VJP:     gx = g^T
    """
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
    return S.transpose(self, -2, -1)


# ---- the unchecked splits: PyTorch's unsafe_* skip a view check; here they are the splits ------------

def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """`chunk` (PyTorch's unsafe version skips a check of in-place use of the pieces, which minitensor's
    copies never need).

    forward: out_i = x's i-th chunk along dim
    VJP:     gx = the g_i joined along dim (0 for a piece not used)
    """
    return S.chunk(input, chunks, dim)


def unsafe_split(input: Tensor, split_size: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """`split` (see `unsafe_chunk`).

    forward: out_i = x's i-th piece along dim
    VJP:     gx = the g_i joined along dim
    """
    return S.split(input, split_size, dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """`split_with_sizes` (see `unsafe_chunk`).

    forward: out_i = x's i-th piece along dim
    VJP:     gx = the g_i joined along dim
    """
    return J.split_with_sizes(input, split_sizes, dim)


# ---- indices and strides --------------------------------------------------------------------------

def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """`nonzero(input)` with exactly `size` rows: cut to its first `size` rows, or padded with rows of
    `fill_value` (a shape known before the values are, which is what PyTorch's compilers need).

    forward: out = the indices of x's non-zeros, cut or padded to `size` rows
    VJP:     none (integer indices)
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be a non-negative integer, got {size!r}")
    found = np.stack(np.nonzero(input._array), axis=-1).astype(np.int64) if input.ndim else \
        np.zeros((int(bool(input._array)), 0), np.int64)
    out = np.full((int(size), input.ndim), fill_value, np.int64)
    n = min(int(size), len(found))
    out[:n] = found[:n]
    return Tensor._make(out)


def as_strided_(self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """In place: self becomes `as_strided(self, size, stride, storage_offset)` (takes the new shape).

    forward: self = as_strided(self, size, stride, storage_offset)
    VJP:     as_strided's: gx[p] += g at each position p read
    """
    return S._reshaped_inplace(self, "as_strided_", S.as_strided, size, stride, storage_offset)


def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],
                       storage_offset: int | None = None) -> Tensor:
    """A copy of input whose elements at `as_strided(input, size, stride, storage_offset)`'s positions
    are src's: the gradient goes to src there, to input elsewhere (an index_put on the flat input).

    forward: out = x, with out.flat[p_k] = src.flat[k] at as_strided's positions p_k
    VJP:     gx = g, 0 at the positions p_k;  gsrc.flat[k] = g.flat[p_k]
    """
    size_t = _size_arg(tuple(size), "as_strided_scatter")
    if tuple(src.shape) != size_t:
        raise RuntimeError(f"as_strided_scatter: expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(size_t)}")
    positions = S.as_strided(Tensor._make(np.arange(input.numel())), size, stride, storage_offset)
    flat = S.reshape(input, (-1,)).index_put((positions.reshape(-1),), S.reshape(src, (-1,)).to(input.dtype))
    return S.reshape(flat, tuple(input.shape))


def dim_order(self: Tensor, *, ambiguity_check: bool | list[Any] = False) -> tuple[int, ...]:
    """The dims from outermost to innermost in memory (by decreasing stride; ties keep their order).

    forward: a tuple of dims
    VJP:     none (not a tensor)
    """
    strides = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))


def resize(self: Tensor, *sizes: Any) -> Tensor:
    """PyTorch's deprecated out-of-place `resize`: a reshape to `sizes` that must keep the number of elements.

    forward: out = x reshaped to sizes
    VJP:     gx = g reshaped to x's shape
    """
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = _size_arg(sizes, "resize")
    if math.prod(shape) != self.numel():
        raise RuntimeError(f"requested resize to {'x'.join(map(str, shape))} ({math.prod(shape)} elements in total), "
                           f"but the given tensor has a size of {'x'.join(map(str, self.shape))} ({self.numel()} "
                           "elements). autograd's resize can only change the shape of a given tensor, while "
                           "preserving the number of elements.")
    if not sizes:  # (PyTorch's checks the count first, then calls view, whose parser refuses no size)
        raise TypeError('resize() missing 1 required positional arguments: "size"')
    return S.reshape(self, shape)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    """PyTorch's deprecated out-of-place `resize_as`: `resize` to tensor's shape.

    forward: out = x reshaped to tensor's shape
    VJP:     gx = g reshaped to x's shape
    """
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    if tensor.numel() != self.numel():
        raise RuntimeError(f"resize_as: the given tensor has {self.numel()} elements, the template "
                           f"{tensor.numel()}: resize_as can only change the shape, keeping the number of elements")
    return S.reshape(self, tuple(tensor.shape))


def new_empty_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                      device: Any = None, requires_grad: bool = False, layout: Any = None,
                      pin_memory: bool = False) -> Tensor:
    """A new tensor of `size` in self's dtype (unless given): zeros here (PyTorch's are uninitialized);
    minitensor's tensors are row-major, so `stride` is checked for sign only.

    forward: out = zeros of `size`
    VJP:     none (a new tensor)
    """
    from ..factories import empty_strided
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype, device=device,
                         requires_grad=requires_grad)


# ---- torch.lu and lu_unpack: the packed LU of linalg.lu_factor -------------------------------------

def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple[Tensor, ...]:
    """(LU, pivots), plus infos (zeros: a singular A still factors) with get_infos: `linalg.lu_factor`'s.

    forward: (LU, pivots) = lu_factor(A), A = P L U
    VJP:     lu_factor's
    """
    packed, piv = D.lu_factor(A, pivot=pivot)
    if get_infos:
        return packed, piv, Tensor._make(np.zeros(A.shape[:-2], np.int32))
    return packed, piv


class lu_unpack_result(NamedTuple):
    P: Tensor
    L: Tensor
    U: Tensor


return_type(lu_unpack_result, "lu_unpack")  # printed as PyTorch prints it


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> lu_unpack_result:
    """(P, L, U) from lu_factor's packing: A = P L U, L unit lower (m, k), U upper (k, n); L and U are
    slices of LU_data (so gradients reach it). An unpacked part not asked for is an empty tensor.

    forward: L = tril(LU, -1) + I, U = triu(LU), P from the pivots
    VJP:     gLU = tril(gL, -1) + triu(gU) (slices of LU_data); none for P
    """
    if LU_data.ndim < 2:
        raise RuntimeError(f"lu_unpack: LU_data must have at least 2 dimensions, got {LU_data.ndim}")
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = Tensor._make(np.zeros((0,), LU_data.dtype))
    P = L = U = empty
    if unpack_pivots:
        if LU_pivots.shape[-1] != k:
            raise RuntimeError(f"lu_unpack: LU_pivots.size(-1) must be min(m, n) = {k}, got {LU_pivots.shape[-1]}")
        perm = pivots_to_permutation(LU_pivots._array.astype(np.int64), m)
        p = np.zeros(LU_data._array.shape[:-2] + (m, m), LU_data.dtype)
        np.put_along_axis(p, perm[..., :, None], 1, axis=-1)
        P = Tensor._make(np.swapaxes(p, -1, -2).copy())
    if unpack_data:
        L = tril(LU_data[..., :, :k], -1) + Tensor._make(np.eye(m, k, dtype=LU_data.dtype))
        U = triu(LU_data[..., :k, :])
    return lu_unpack_result(P, L, U)


# ---- random fills in place, and the draws binomial / poisson ---------------------------------------
# Each draws from numpy's generator (minitensor's, or the one given): the values are not PyTorch's for
# the same seed (its generator is its own), the distributions are.

def _draw_into(self: Tensor, op: str, values: np.ndarray) -> Tensor:
    return inplace(self, op, _filled, Tensor._make(np.asarray(values).astype(self.dtype)))


def bernoulli_(self: Tensor, p: float | Tensor = 0.5, *, generator: Generator | None = None) -> Tensor:
    """In place: 1 with probability p (a number, or a tensor broadcast to self's shape), else 0.

    forward: out = 1 with probability p, else 0   (drawn)
    VJP:     gx = 0
    """
    if not isinstance(p, Tensor):  # (its type first, as PyTorch's parser)
        p = float_arg(p, "bernoulli_", "p")
    prob = p._array if isinstance(p, Tensor) else np.asarray(p, np.float64)
    if np.any((prob < 0) | (prob > 1)) or np.any(prob != prob):
        raise RuntimeError(f"bernoulli_: expects 0 <= p <= 1, got p = {p}")
    return _draw_into(self, "bernoulli_", _gen(generator).random(self.shape) < np.broadcast_to(prob, self.shape))


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """In place: draws of Cauchy(median, sigma), median + sigma tan(pi (u - 1/2)) for u ~ U(0, 1).

    forward: out = median + sigma tan(pi (u - 1/2)),  u ~ U(0, 1)   (drawn)
    VJP:     gx = 0
    """
    _dtype.for_draws(self.dtype, "cauchy_")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_: expects sigma > 0.0, but found sigma={sigma}")
    return _draw_into(self, "cauchy_", median + sigma * _gen(generator).standard_cauchy(self.shape))


def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """In place: draws of Exponential(rate lambd).

    forward: out = -ln(1 - u) / lambd,  u ~ U(0, 1)   (drawn)
    VJP:     gx = 0
    """
    _dtype.for_draws(self.dtype, "exponential_")
    if not lambd > 0:
        raise RuntimeError(f"exponential_: expects lambda > 0.0, but found lambda={lambd}")
    return _draw_into(self, "exponential_", _gen(generator).exponential(1.0 / lambd, self.shape))


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """In place: draws of Geometric(p), the number of trials up to the first success (1, 2, ...).

    forward: out = trials up to the first success of probability p   (drawn)
    VJP:     gx = 0
    """
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_: p must be > 0 and < 1, but got p={p}")
    return _draw_into(self, "geometric_", _gen(generator).geometric(p, self.shape))


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Generator | None = None) -> Tensor:
    """In place: draws of exp(N(mean, std^2)).

    forward: out = exp(mean + std z),  z ~ N(0, 1)   (drawn)
    VJP:     gx = 0
    """
    mean, std = float_arg(mean, "log_normal_", "mean"), float_arg(std, "log_normal_", "std")
    _dtype.for_draws(self.dtype, "log_normal_")
    if not std > 0:
        raise RuntimeError(f"log_normal_: expects std > 0.0, but found std={std}")
    return _draw_into(self, "log_normal_", _gen(generator).lognormal(mean, std, self.shape))


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Draws of Binomial(count, prob), element by element (count and prob broadcast), in prob's float dtype.

    forward: out ~ Binomial(count, prob)   (drawn)
    VJP:     none (PyTorch has none either)
    """
    for name, t in (("count", count), ("prob", prob)):
        if not isinstance(t, Tensor) or _dtype.kind(t.dtype) != "f":
            raise RuntimeError(f"binomial: {name} must be a floating point tensor, got "
                               f"{t.dtype if isinstance(t, Tensor) else type(t).__name__}")
    p = prob._array
    if np.any((p < 0) | (p > 1)):
        raise RuntimeError("binomial: prob must be in [0, 1]")
    drawn = _gen(generator).binomial(count._array.astype(np.int64), p)
    return Tensor._make(np.asarray(drawn).astype(prob.dtype))


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Draws of Poisson(rate) for each element's rate, in input's float dtype.

    forward: out ~ Poisson(rate)   (drawn)
    VJP:     none (PyTorch has none either)
    """
    if _dtype.kind(input.dtype) != "f":
        raise NotImplementedError(f"poisson: not implemented for dtype {input.dtype}; the rates must be floating point")
    if np.any(input._array < 0):
        raise RuntimeError("poisson: invalid Poisson rate, expected rate to be non-negative")
    return Tensor._make(np.asarray(_gen(generator).poisson(input._array)).astype(input.dtype))


# ---- per-element Python callbacks (CPU tensors in PyTorch too): no gradient -------------------------

def _call_each(self: Tensor, op: str, fn: Callable[..., Any], *others: Tensor) -> Tensor:
    if self.requires_grad:
        raise RuntimeError(f"{op}: can't call it on a tensor that requires grad (it runs Python per element "
                           "outside the graph)")
    arrays = [np.broadcast_to(o._array, self.shape) for o in others]
    out = self._array.copy()
    for idx in np.ndindex(*self.shape):
        out[idx] = fn(self._array[idx].item(), *(a[idx].item() for a in arrays))
    np.copyto(self._array, out)
    self._bump_version()
    return self


def apply_(self: Tensor, callable: Callable[[Any], Any]) -> Tensor:  # noqa: A002 - PyTorch's parameter name
    """In place: each element becomes callable(element) (a Python number in, one out).

    forward: self[i] = callable(self[i])
    VJP:     none (refused for a tensor that requires grad)
    """
    return _call_each(self, "apply_", callable)


def map_(self: Tensor, other: Tensor, callable: Callable[[Any, Any], Any]) -> Tensor:  # noqa: A002
    """In place: each element becomes callable(element, other's element) (other broadcast to self).

    forward: self[i] = callable(self[i], other[i])
    VJP:     none (refused for a tensor that requires grad)
    """
    return _call_each(self, "map_", callable, other)


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable[[Any, Any, Any], Any]) -> Tensor:  # noqa: A002
    """In place: each element becomes callable(element, x's, y's) (x and y broadcast to self).

    forward: self[i] = callable(self[i], x[i], y[i])
    VJP:     none (refused for a tensor that requires grad)
    """
    return _call_each(self, "map2_", callable, x, y)


# ---- the in-place twins whose rules differ from the derived ones ------------------------------------

def float_power_(self: Tensor, exponent: Tensor | float) -> Tensor:
    """In place: `float_power(self, exponent)`, whose result is float64, so self must be float64.

    forward: self = self ** exponent in float64
    VJP:     float_power's: gx = g e x^(e - 1);  ge = g x^e ln x
    """
    from .arithmetic import float_power
    if self.dtype != np.float64:
        raise RuntimeError(f"float_power_: the base given to float_power_ has dtype {_dtype.scalar_name(self.dtype)} "
                           "but the operation's result requires dtype Double")
    return inplace(self, "float_power_", float_power, exponent)


# ---- small questions about a tensor -------------------------------------------------------------

def bfloat16(self: Tensor, memory_format: Any = None) -> Tensor:
    """self as a bfloat16 tensor (`x.to(bfloat16)`), with the optional package ml_dtypes installed;
    refused without it (see `_dtype.StoragelessDType`).

    forward: out = x rounded to bfloat16
    VJP:     gx = g in x's dtype
    """
    if not _dtype.has_bfloat16:
        raise TypeError(f"bfloat16: {_dtype.bfloat16.refusal()}")
    return self.to(_dtype.bfloat16)


def const_data_ptr(self: Tensor) -> int:
    """`data_ptr()`, for code that promises not to write through it.

    forward: an int, the address of the first element
    VJP:     none (not a tensor)
    """
    return self.data_ptr()


def as_subclass(self: Tensor, cls: Any) -> Tensor:
    """self's data as an instance of `cls` (a subclass of Tensor), without calling its `__init__`: an
    alias (`view_as(self)`), in self's graph.

    forward: out = x as an instance of cls (a view)
    VJP:     gx = g
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass: cls must be a subclass of Tensor, got {cls!r}")
    alias = S.squeeze(S.unsqueeze(self, 0), 0)  # a recorded view (a same-shape view_as would be self itself)
    out = object.__new__(cls)
    for slot in ("_array", "_rg", "_grad", "grad_fn", "_version_counter", "_base", "_base_grad_fn", "_hooks"):
        if hasattr(alias, slot):
            setattr(out, slot, getattr(alias, slot))
    return out


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """How `load_state_dict` turns `other` into self's new value: other detached with assign, else other
    copied into a tensor of self's shape and dtype (PyTorch's `self.copy_(other).detach()`, with its
    broadcasting and its errors, without changing self here).

    forward: out = other, detached (broadcast to self's shape, in self's dtype, unless assign)
    VJP:     none (detached)
    """
    if assign:
        return other.detach()
    return self.detach().clone().copy_(other.detach() if isinstance(other, Tensor) else other)


def _layout(self: Tensor) -> Any:
    """`minitensor.strided`: every tensor is dense."""
    return strided


def _is_mps(self: Tensor) -> bool:
    """False: minitensor runs on the CPU."""
    return False


def _name(self: Tensor) -> None:
    """None: minitensor has no named tensors."""
    return None


def _grad_dtype(self: Tensor) -> Any:
    """The dtype a gradient of this tensor has: its own."""
    return self.dtype


layout = property(_layout)
is_mps = property(_is_mps)
name = property(_name)
grad_dtype = property(_grad_dtype)


def hash_tensor(input: Tensor, dim: int | Sequence[int] = (), *, keepdim: bool = False, mode: int = 0) -> Tensor:
    """A uint64 hash of the elements (over `dim`, all of them by default): each element widened to its
    64-bit kind (float64, or int64 for integers and bool), its bits read as uint64, then xor-reduced.
    No gradient (bits, not values).

    forward: out = xor of the elements' 64-bit patterns
    VJP:     none (bits, not values)
    """
    mode = int_arg(mode, "hash_tensor", "mode")  # (its type first, as PyTorch's parser)
    if mode != 0:
        raise RuntimeError(f"hash_tensor: mode {mode} is not supported; only mode=0 (xor reduction) exists")
    wide = input._array.astype(np.float64 if _dtype.kind(input.dtype) == "f" else np.int64)
    dims = tuple(range(input.ndim)) if dim in ((), []) else ((dim,) if isinstance(dim, int) else tuple(dim))
    for d in dims:  # (out of range: PyTorch's IndexError)
        _wrap_dim(d, input.ndim, "hash_tensor")
    axes = tuple(d % max(input.ndim, 1) for d in dims)
    xor: Any = np.bitwise_xor  # (numpy's stubs give its reduce no overload for a tuple of axes)
    bits = xor.reduce(wide.view(np.uint64), axis=axes, keepdims=bool(keepdim))
    return Tensor._make(np.asarray(bits, np.uint64))
