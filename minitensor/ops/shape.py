r"""Shape ops: they move elements around without changing them, so each VJP moves `g` back.

reshape <-> reshape back, permute <-> inverse permutation, expand <-> unbroadcast (sum),
repeat <-> sum over the copies, cat <-> split, stack <-> select.
"""
from __future__ import annotations

import functools
import math
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from .. import _dtype
from ..autograd.formulas import with_formulas
from ..autograd.function import Function
from ..autograd.torch_names import shown_as
from ..tensor import Tensor, _size_arg, _wrap_dim
from ..types import Dims, SizeArg
from ._util import fits_broadcast, int_arg, unbroadcast
from .conversion import cast
from .indexing import Index


class Reshape(Function):
    r"""out = x with shape `shape` (same elements, row-major order)
    VJP: gx = reshape(g, x.shape)"""

    saves_values = False  # only x's shape
    is_view = True  # numpy reshapes without a copy whenever the strides allow it

    @staticmethod
    def forward(ctx, x, shape):
        return x._array.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        x = ctx.inputs[0]
        return g.reshape(x.shape), None


class Permute(Function):
    r"""out = x with its dims reordered: out.shape[i] = x.shape[dims[i]]
    VJP: gx = permute(g, argsort(dims))   (the inverse permutation)"""

    saves_values = False
    is_view = True

    @staticmethod
    def forward(ctx, x, dims):
        return x._array.transpose(dims)

    @staticmethod
    def backward(ctx, g):
        dims = ctx.inputs[1]
        inverse = tuple(sorted(range(len(dims)), key=dims.__getitem__))  # argsort(dims)
        return g.permute(inverse), None


class Expand(Function):
    r"""out = x broadcast to `shape` (a size-1 dim, or a new leading dim, is repeated)
    VJP: gx = unbroadcast(g, x.shape)   (sum over the repeated dims)"""

    saves_values = False
    is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        return np.broadcast_to(x._array, shape)

    @staticmethod
    def backward(ctx, g):
        return unbroadcast(g, ctx.inputs[0].shape), None


class Contiguous(Function):
    r"""out = x, its elements copied into row-major order (a transposed or expanded x's are not)
    VJP: gx = g"""

    saves_values = False

    @staticmethod
    def forward(ctx, x):
        return np.ascontiguousarray(x._array)

    @staticmethod
    def backward(ctx, g):
        return g


class Repeat(Function):
    r"""out = x tiled `reps` times along each dim (PyTorch's `repeat`, numpy's `tile`)
    VJP: gx = g viewed as (r0, n0, r1, n1, ...) and summed over every r_i"""

    @staticmethod
    def forward(ctx, x, reps):
        return np.tile(x._array, reps)

    @staticmethod
    def backward(ctx, g):
        x, reps = ctx.inputs
        shape = (1,) * (len(reps) - x.ndim) + tuple(x.shape)
        split = tuple(v for r, n in zip(reps, shape) for v in (r, n))
        return g.reshape(split).sum(dim=tuple(range(0, 2 * len(reps), 2))).reshape(x.shape), None


class Cat(Function):
    r"""out = [x_0, x_1, ...] joined along `dim`
    VJP: g_k = the slice of g that x_k occupies (`narrow`)"""

    @staticmethod
    def forward(ctx, dim, *xs):
        # a 1-d empty tensor is skipped whatever the others' shapes, as in PyTorch (it adds nothing)
        return np.concatenate([x._array for x in xs if x._array.shape != (0,)] or [xs[0]._array], axis=dim)

    @staticmethod
    def backward(ctx, g):
        dim, *xs = ctx.inputs
        grads, start = [], 0
        for x, need in zip(xs, ctx.needs_input_grad[1:]):
            n = x.shape[dim] if x.ndim == g.ndim else 0  # (a skipped 1-d empty tensor: its zero-size slice)
            grads.append(narrow(g, dim, start, n).reshape(x.shape) if need else None)
            start += n
        return (None, *grads)


# ---- the public functions -----------------------------------------------------------------------

@with_formulas(Reshape)
def reshape(input: Tensor, *sizes: SizeArg, shape: Sequence[int] | None = None) -> Tensor:
    """The same elements in a new shape; one dim may be -1."""
    return _reshape(input, _sizes_or(sizes, shape, "shape", "reshape"), "reshape")


def _sizes_or(sizes: tuple[Any, ...], keyword: Any, name: str, op: str) -> tuple[Any, ...]:
    """Sizes given positionally (`x.reshape(2, 3)`, `x.reshape((2, 3))`) or by PyTorch's keyword
    (`x.reshape(shape=(2, 3))`), as PyTorch takes either, never both, and never neither: `x.reshape()` is a
    missing argument (PyTorch's TypeError), where `x.reshape(())` is the 0-d shape."""
    if keyword is None:
        if not sizes:
            raise TypeError(f'{op}() missing 1 required positional arguments: "{name}"')
        return sizes
    if sizes:
        raise TypeError(f"{op}() got the {name} both positionally ({sizes!r}) and as {name}={keyword!r}")
    return (keyword,)


@with_formulas(Reshape)
def view(input: Tensor, *sizes: SizeArg, size: Sequence[int] | None = None, dtype: Any = None) -> Tensor:
    """`reshape` that never copies: the result shares input's memory, as PyTorch's view. Where the
    strides don't allow that (a transposed or expanded tensor flattened), it is PyTorch's error."""
    if dtype is not None:  # view(dtype=...): PyTorch's other overload, the same bytes read as dtype
        return view(input, *_sizes_or(sizes, dtype, "dtype", "view"))
    shape = _sizes_or(sizes, size, "size", "view")
    out = _reshape(input, shape, "view")
    if out is not input and out._array.size and out._base is None:  # (Reshape made a copy, not a view)
        raise RuntimeError(f"view: shape {list(out.shape)} is not compatible with the size and strides of input of "
                           f"shape {tuple(input.shape)} (its elements are not laid out in this order in memory); "
                           "use .reshape(...) instead, which copies")
    return out


@with_formulas(Reshape)
def view_as(input: Tensor, other: Tensor) -> Tensor:
    """`view` as other's shape (an error where that needs a copy)."""
    return view(input, other.shape)


@with_formulas(Reshape)
def reshape_as(input: Tensor, other: Tensor) -> Tensor:
    """`reshape` to other's shape."""
    return reshape(input, other.shape)


@with_formulas(Reshape)
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims start_dim..end_dim into one."""
    if input.ndim == 0:  # (its dims still in range for one dim, as PyTorch's)
        _wrap_dim(start_dim, 1, "flatten"), _wrap_dim(end_dim, 1, "flatten")
        return input.reshape(1)
    s = _wrap_dim(start_dim, input.ndim, "flatten")
    e = _wrap_dim(end_dim, input.ndim, "flatten")
    if s > e:
        raise RuntimeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} for "
                           f"shape {tuple(input.shape)}")
    shape = input.shape  # the merged size written out: a -1 can't be inferred when another dim is 0
    return input.reshape(shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


@with_formulas(Reshape)
def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dim `dim` into dims of the given `sizes` (the inverse of flatten)."""
    if not len(sizes):
        raise RuntimeError(f"unflatten: sizes must be non-empty, got {sizes!r}")
    d = _wrap_dim(dim, input.ndim, "unflatten")
    if input.ndim == 0:
        raise RuntimeError(f"unflatten: a 0-d tensor has no dim {dim} to unflatten")
    n, sizes = input.shape[d], list(sizes)
    known = -math.prod(sizes)  # with one -1: the product of the other sizes
    if sizes.count(-1) == 1 and known and n % known == 0:
        sizes[sizes.index(-1)] = n // known
    if math.prod(sizes) != n or min(sizes) < 0:  # (checked on the dim: the whole tensor may be empty)
        raise RuntimeError(f"unflatten: sizes {list(sizes)} don't multiply up to the size {n} of dim {d} of "
                           f"shape {tuple(input.shape)}")
    return input.reshape(input.shape[:d] + tuple(sizes) + input.shape[d + 1:])


@with_formulas(Reshape)
def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a size-1 dim at `dim`."""
    d = _wrap_dim(dim, input.ndim + 1, "unsqueeze")
    return shown_as(input.reshape(input.shape[:d] + (1,) + input.shape[d:]), "UnsqueezeBackward0")


@with_formulas(Reshape)
def squeeze(input: Tensor, dim: Dims | None = None) -> Tensor:
    """Remove size-1 dims (only `dim` when given; a dim that is not size 1 is left as it is)."""
    if dim is None:
        dims = {i for i, n in enumerate(input.shape) if n == 1}
    else:
        dims = {_wrap_dim(d, input.ndim, "squeeze") for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
        dims = {d for d in dims if d < input.ndim and input.shape[d] == 1}  # a 0-d tensor's dim 0 is no dim
    out = input.reshape(tuple(n for i, n in enumerate(input.shape) if i not in dims))
    overload = 0 if dim is None else 2 if isinstance(dim, (tuple, list)) else 1  # PyTorch's squeeze, squeeze.dim, .dims
    return shown_as(out, f"SqueezeBackward{overload}", input)


@with_formulas(Permute)
def permute(input: Tensor, *order: SizeArg, dims: Sequence[int] | None = None) -> Tensor:
    """Reorder the dims."""
    dims = _size_arg(_sizes_or(order, dims, "dims", "permute"), "permute")
    n = input._array.ndim
    if len(dims) == n:
        dims = tuple(d + n if d < 0 else d for d in dims)
        identity = tuple(range(n))
        if sorted(dims) == list(identity):
            return input if dims == identity else Permute.apply(input, dims)
    raise RuntimeError(f"permute: dims {list(dims)} are not a permutation of the {n} dims of "
                       f"shape {tuple(input.shape)}")


@with_formulas(Permute)
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dims."""
    n = input._array.ndim
    if n < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return input
    d0, d1 = _wrap_dim(dim0, n, "transpose"), _wrap_dim(dim1, n, "transpose")
    if d0 == d1:
        return input
    dims = list(range(n))
    dims[d0], dims[d1] = d1, d0
    return shown_as(Permute.apply(input, tuple(dims)), "TransposeBackward0")


@with_formulas(Permute)
def t(input: Tensor) -> Tensor:
    """Transpose of a matrix (0-d and 1-d tensors come back unchanged)."""
    if input.ndim > 2:
        raise RuntimeError(f"t: expects a tensor with <= 2 dims, got shape {tuple(input.shape)}")
    return input if input.ndim < 2 else shown_as(transpose(input, 0, 1), "TBackward0")


def reversed_dims(input: Tensor) -> Tensor:
    """`x.T`: every dim in reverse order (a tensor of fewer than 2 dims is itself)."""
    return permute(input, tuple(range(input.ndim))[::-1]) if input.ndim >= 2 else input


def matrix_transpose(input: Tensor) -> Tensor:
    """`x.mT`: the last two dims swapped (a batch of matrices, each transposed)."""
    if input.ndim < 2:
        raise RuntimeError(f"mT: expects a tensor with at least 2 dims, got shape {tuple(input.shape)}")
    return transpose(input, -2, -1)


@with_formulas(Permute)
def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """Move dim `source` to position `destination` (or each of several to its own), the others
    keeping their order."""
    n = input.ndim
    sources = [source] if isinstance(source, int) else list(source)
    places = [destination] if isinstance(destination, int) else list(destination)
    if len(sources) != len(places):
        raise RuntimeError(f"movedim: source {source} and destination {destination} must have the same number of dims")
    sources = [_wrap_dim(s, n, "movedim") for s in sources]
    places = [_wrap_dim(p, n, "movedim") for p in places]
    if len(set(sources)) < len(sources) or len(set(places)) < len(places):
        raise RuntimeError(f"movedim: repeated dim in source {source} or destination {destination}")
    rest = iter(i for i in range(n) if i not in sources)  # the other dims, in their order
    return permute(input, [sources[places.index(i)] if i in places else next(rest) for i in range(n)])


@with_formulas(Expand)
def expand(input: Tensor, *sizes: SizeArg, size: Sequence[int] | None = None, implicit: bool = False) -> Tensor:
    """Broadcast to `sizes` without copying; -1 keeps a dim's size (`implicit`, about PyTorch's tracing,
    changes nothing)."""
    sizes = _size_arg(_sizes_or(sizes, size, "size", "expand"), "expand")
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes {list(sizes)} must be >= the number of "
                           f"dims of {tuple(input.shape)}")
    for i, s in enumerate(sizes[:lead]):
        if s < 0:
            raise RuntimeError(f"expand: size {s} at index {i} of {list(sizes)} is a new leading dim of shape "
                               f"{tuple(input.shape)}, so it has no size to keep: give the size")
    shape = tuple(input.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes))
    if shape == input._array.shape:
        return input
    if not fits_broadcast(input._array.shape, shape):
        raise RuntimeError(f"expand: the shape {tuple(input.shape)} cannot be expanded to {list(sizes)}")
    return Expand.apply(input, shape)


@with_formulas(Expand)
def expand_as(input: Tensor, other: Tensor) -> Tensor:
    """`expand` to other's shape."""
    return expand(input, other.shape)


@with_formulas(Expand)
def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """`expand` to `size`."""
    return expand(input, size)


def sum_to_size(input: Tensor, *sizes: SizeArg, size: Sequence[int] | None = None) -> Tensor:
    """The adjoint of `expand`: sum over the dims that broadcasting `size` up to this shape created.

    forward: out = unbroadcast(x, size)   (a Sum node over those dims, then a Reshape to `size`)
    VJP:     gx = expand(g, x.shape)
    """
    given = _sizes_or(sizes, size, "size", "sum_to_size")
    if not given:
        raise TypeError("sum_to_size: missing the size (ints, or one tuple of ints)")
    size = given[0] if len(given) == 1 and type(given[0]) is tuple else _size_arg(given, "sum_to_size")
    if size == ():  # PyTorch's: the size () sums everything, a 0-d tensor too (sum's dtype then)
        return input.sum()
    if size == input._array.shape:
        return input
    if not fits_broadcast(size, input._array.shape):
        raise RuntimeError(f"sum_to_size: size {list(size)} is not expandable to the tensor's "
                           f"shape {tuple(input.shape)}")
    return unbroadcast(input, size)


@with_formulas(Contiguous)
def contiguous(input: Tensor, memory_format: object = None) -> Tensor:
    """The tensor itself when its memory is already row-major, else a row-major copy (as PyTorch),
    which `view` can then reshape without copying."""
    return input if input._array.flags.c_contiguous else Contiguous.apply(input)


@with_formulas(Repeat)
def repeat(input: Tensor, *sizes: SizeArg, repeats: Sequence[int] | None = None) -> Tensor:
    """Tile the tensor: out.shape[i] = shape[i] * sizes[i]."""
    reps = _size_arg(_sizes_or(sizes, repeats, "repeats", "repeat"), "repeat")
    if len(reps) < input.ndim:
        raise RuntimeError(f"repeat: the number of repeats {list(reps)} can't be smaller than the number of "
                           f"dims of {tuple(input.shape)}")
    return Repeat.apply(input, reps)


@with_formulas(Cat)
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dim; all other dims must match."""
    tensors = _tensors_arg(tensors, "cat")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated")
    joined = [t for t in tensors if tuple(t.shape) != (0,)] or tensors[:1]  # PyTorch skips 1-d empties
    ref = joined[0]
    d = _wrap_dim(dim, ref.ndim, "cat")
    for t in joined:
        if t.ndim != ref.ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, ref.shape)) if i != d):
            raise RuntimeError(
                f"cat: sizes of tensors must match except in dimension {d}; got shapes "
                f"{[tuple(x.shape) for x in tensors]}"
            )
    # a new tensor even for one input, as in PyTorch; the skipped empties too stay in the graph (gradient empty)
    return Cat.apply(d, *tensors)


@with_formulas(Cat)
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors of the same shape along a new dim: `cat` of each unsqueezed at `dim` (Reshape nodes)."""
    tensors = _tensors_arg(tensors, "stack")
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) != 1:
        raise RuntimeError("stack: expects each tensor to be equal size, got shapes "
                           f"{[tuple(t.shape) for t in tensors]}")
    d = _wrap_dim(dim, tensors[0].ndim + 1, "stack")
    return shown_as(cat([t.unsqueeze(d) for t in tensors], d), "StackBackward0", inputs=tensors)


@with_formulas(Index)
def narrow(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """The slice start:start+length along dim (differentiable through indexing); a negative start
    counts from the end, and the slice must fit in the dim."""
    if input.ndim == 0:
        raise RuntimeError("narrow: cannot be applied to a 0-d tensor")
    if length < 0:
        raise RuntimeError(f"narrow: length must be non-negative, got {length}")
    d = _wrap_dim(dim, input.ndim, "narrow")
    n, start = input.shape[d], int(start)  # (start may be a 0-d tensor, as in PyTorch)
    if not -n <= start <= n:
        raise IndexError(f"narrow: start {start} is out of range for dimension {d} of size {n} "
                         f"(expected to be in range of [{-n}, {n}])")
    start = start + n if start < 0 else start
    if start + length > n:
        raise RuntimeError(f"narrow: length {length} from start {start} does not fit in dimension {d} of size {n} "
                           f"of shape {tuple(input.shape)}")
    return input[(slice(None),) * d + (slice(start, start + length),)]


@with_formulas(Index)
def split(tensor: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of `split_size` along dim (the last may be smaller), or of the listed sizes."""
    input = tensor  # (PyTorch's name for it in torch.split)
    if input.ndim == 0:
        raise RuntimeError("split: expects at least a 1-dimensional tensor, got a 0-d one")
    d = _wrap_dim(dim, input.ndim, "split")
    n = input.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0:
            raise RuntimeError(f"split: split_size must be positive, got {step}")
        sizes = [min(step, n - s) for s in range(0, n, step)] or [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split: sizes {sizes} do not sum to {n}, the size of dim {d} of "
                               f"shape {tuple(input.shape)}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(input, d, start, s))
        start += s
    name = "SplitBackward0" if isinstance(split_size_or_sections, int) else "SplitWithSizesBackward0"
    return tuple([shown_as(t, name, input) for t in out])  # PyTorch's one node of several outputs


@with_formulas(Index)
def split_method(self: Tensor, split_size: int | Sequence[int], dim: int = 0) -> tuple[Tensor, ...]:
    """`x.split(split_size, dim)`: torch.split under the method's names, as PyTorch's Tensor.split."""
    return split(self, split_size, dim)


@with_formulas(Index)
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split into `chunks` pieces of size ceil(n / chunks) (fewer when it doesn't divide)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk: number of chunks must be positive, got {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk: expects at least a 1-dimensional tensor, got a 0-d one")
    n = input.shape[_wrap_dim(dim, input.ndim, "chunk")]
    if n == 0:  # any number of empty pieces sums to 0: PyTorch returns `chunks` of them
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


@with_formulas(Index)
def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices along `dim`, as a tuple (each one `input[..., i, ...]`, an Index node)."""
    d = _wrap_dim(dim, input.ndim, "unbind")
    return tuple(shown_as(input[(slice(None),) * d + (i,)], "UnbindBackward0") for i in range(input.shape[d]))


@with_formulas(Index)
def flip(input: Tensor, dims: Dims) -> Tensor:
    """The elements in reverse order along each of `dims` (a reversed slice, then a copy)."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    key = [slice(None)] * input.ndim
    for d in dims:
        d = _wrap_dim(d, input.ndim, "flip")
        if input.ndim:  # (a 0-d tensor's dim 0 or -1 is its one element: nothing to reverse, as in PyTorch)
            key[d] = slice(None, None, -1)
    return shown_as(input[tuple(key)].clone(), "FlipBackward0",
                    inputs=(input,))  # a copy, as PyTorch's flip (numpy's is a view)


# ---- edge cases and argument checks, named ------------------------------------------------------

def _reshape(input: Tensor, shape: tuple[SizeArg, ...], op: str) -> Tensor:
    """What reshape and view share: the shape checked against input's size (a -1 inferred), then one
    Reshape node (none when the shape is already input's)."""
    shape = _size_arg(shape, op)
    if shape == input._array.shape:
        return input
    size = input._array.size
    if min(shape, default=0) < 0:
        shape = _infer_size(shape, input, op)
    elif math.prod(shape) != size:
        raise RuntimeError(f"{op}: shape {list(shape)} is invalid for input of shape "
                           f"{tuple(input.shape)} ({size} elements)")
    return Reshape.apply(input, shape)


def _infer_size(shape, input, op):
    """`shape` with its one -1 replaced by what makes input's number of elements (PyTorch's rules: nothing below -1,
    at most one -1, and none when the other dims hold 0 elements, where any size would fit)."""
    if shape.count(-1) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred, got shape {list(shape)}")
    for i, n in enumerate(shape):
        if n < -1:
            raise RuntimeError(f"{op}: invalid shape dimension {n} at index {i} of shape {list(shape)}")
    size = input._array.size
    known = -math.prod(shape)  # the product of the other dims (the -1 flips the sign)
    if known == 0 and size == 0:
        raise RuntimeError(f"{op}: cannot reshape a tensor of 0 elements into shape {list(shape)}: the -1 could be "
                           "any size")
    if known == 0 or size % known:
        raise RuntimeError(f"{op}: shape {list(shape)} is invalid for input of shape "
                           f"{tuple(input.shape)} ({size} elements)")
    return tuple(size // known if n == -1 else n for n in shape)


def _tensors_arg(tensors, op):
    """cat's and stack's list of tensors, checked, each cast to their promoted dtype (as PyTorch)."""
    if isinstance(tensors, Tensor):  # iterating it would cut it into its rows: PyTorch refuses it
        raise TypeError(f"{op}: argument 'tensors' must be a tuple or list of Tensors, not a Tensor of shape "
                        f"{tuple(tensors.shape)}")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{op}: expected a non-empty list of Tensors")
    if not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{op}: expected a list of Tensors, got {[type(t).__name__ for t in tensors]}")
    dtype = functools.reduce(_dtype.promote_types, (t.dtype for t in tensors))
    return [cast(t, dtype) for t in tensors]


# ---- more shape ops (issue 29): composites of indexing, reshape, flip and cat ----------------------
# Each is exact as such a composite, so none has a backward of its own: the gradient is the
# composite's (an Index node scatters g back, a Reshape reshapes it back, a Cat splits it).

@with_formulas(Index)
def roll(input: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] = ()) -> Tensor:
    """Shift the elements along `dims` by `shifts`, wrapping around; without dims, of the flattened
    tensor (then the shape is restored). out[(i + s) % n] = x[i] along each dim: one Index node a dim."""
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    if dims is None or (isinstance(dims, (tuple, list)) and not dims):  # (PyTorch's default is (), None taken too)
        if len(shifts) != 1:
            raise RuntimeError(f"roll: without dims, shifts must be one int, got {shifts}")
        return shown_as(roll(input.reshape(-1), shifts[0], 0).reshape(input.shape), "RollBackward0")
    dims = [dims] if isinstance(dims, int) else list(dims)
    if not shifts or len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts {shifts} and dims {dims} must have the same (non-zero) length")
    out = input
    for s, dim in zip(shifts, dims):
        d = _wrap_dim(dim, input.ndim, "roll")
        n = input.shape[d] if input.ndim else 1
        if n == 0 or s % n == 0 or input.ndim == 0:
            continue
        out = out[(slice(None),) * d + ((np.arange(n) - s) % n,)]
    return shown_as(out if out is not input else input.clone(), "RollBackward0")  # a new tensor, as PyTorch's


@with_formulas(Index)
def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees k times in the plane of `dims`, from dims[0] towards dims[1] (flips and a transpose)."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (_wrap_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k %= 4
    if k == 1:
        return flip(input, d1).transpose(d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(input, d0).transpose(d0, d1)
    return input.clone()


@with_formulas(Index)
def fliplr(input: Tensor) -> Tensor:
    """Reverse the columns (dim 1) of a tensor of 2 or more dims."""
    if input.ndim < 2:
        raise RuntimeError(f"fliplr: input must be >= 2-d, got shape {tuple(input.shape)}")
    return flip(input, 1)


@with_formulas(Index)
def flipud(input: Tensor) -> Tensor:
    """Reverse the rows (dim 0) of a tensor of 1 or more dims."""
    if input.ndim < 1:
        raise RuntimeError("flipud: input must be >= 1-d, got a 0-d tensor")
    return flip(input, 0)


@with_formulas(Repeat)
def tile(input: Tensor, dims: Sequence[int]) -> Tensor:
    """`repeat`, with fewer reps than dims allowed: the missing ones (leading) are 1."""
    reps = _size_arg(tuple(dims), "tile")
    return repeat(input, (1,) * (input.ndim - len(reps)) + reps)


@with_formulas(Index)
def repeat_interleave(input: Tensor, repeats: Tensor | int | None = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element `repeats` times (one count for all, or one per element along `dim`), the copies
    next to each other; without dim, of the flattened tensor. With only a tensor of counts,
    `repeat_interleave(counts)` is the indices 0, 1, ... each repeated its count. One Index node."""
    if repeats is None and dim is not None:  # (PyTorch's overload of counts alone has no dim)
        raise TypeError(f"repeat_interleave(): got dim={dim!r} without repeats; the overload of the counts alone "
                        "takes no dim")
    if repeats is None:  # repeat_interleave(counts): arange(len(counts)) repeated
        counts = _repeat_counts(input, None, "repeat_interleave")
        return Tensor._make(np.repeat(np.arange(len(counts), dtype=input._array.dtype), counts))
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _wrap_dim(dim, input.ndim, "repeat_interleave")
    if x.ndim == 0:
        x = x.reshape(1)
    n = x.shape[d]
    if isinstance(repeats, Tensor):
        counts = _repeat_counts(repeats, n, "repeat_interleave")
    else:
        counts = np.full(n, repeats, np.int64)
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    if output_size is not None and output_size != counts.sum():
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {int(counts.sum())} but got "
                           f"{output_size}")
    return x[(slice(None),) * d + (np.repeat(np.arange(n), counts),)]


@with_formulas(Index)
def repeat_interleave_method(self: Tensor, repeats: Tensor | int | None = None, dim: int | None = None, *,
                             output_size: int | None = None) -> Tensor:
    """`Tensor.repeat_interleave`: each element repeated `repeats` times (see `repeat_interleave`). The
    counts-alone form is the function's only: as in PyTorch, the method wants `repeats`."""
    if repeats is None:
        raise TypeError(f"repeat_interleave(): Tensor.repeat_interleave needs repeats (an int or a tensor of "
                        f"counts), got none for a tensor of shape {tuple(self.shape)}; "
                        "minitensor.repeat_interleave(counts) is the counts-alone form")
    return repeat_interleave(self, repeats, dim, output_size=output_size)


repeat_interleave_method.__name__ = repeat_interleave_method.__qualname__ = "repeat_interleave"


def _repeat_counts(repeats, n, op):
    """A tensor of repeat counts as an int64 array of n (a 0-d one is one count for all)."""
    r = repeats._array
    if r.dtype.kind not in "iu":
        raise NotImplementedError(f"{op}: repeats must be an integer tensor, got dtype {r.dtype}")
    if r.ndim > 1:
        raise RuntimeError(f"{op}: repeats must be 0-dim or 1-dim tensor, got shape {r.shape}")
    if n is None:
        if r.ndim != 1:
            raise RuntimeError(f"{op}: repeats must be a 1-d tensor, got shape {r.shape}")
        if r.size and r.min() < 0:
            raise RuntimeError(f"{op}: repeats can not be negative")
        return r.astype(np.int64)
    if r.ndim == 0 or r.size == 1:
        return np.full(n, int(r.reshape(-1)[0]), np.int64)
    if r.size != n:
        raise RuntimeError(f"{op}: repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {r.size} and input.size({0}) = {n}")
    return r.astype(np.int64)


@with_formulas(Reshape)
def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-d tensor, in row-major order."""
    return input.reshape(-1)


@with_formulas(Index)
def narrow_copy(input: Tensor, dim: int, start: int, length: int) -> Tensor:
    """`narrow`, as a new tensor rather than a view."""
    if dim >= max(input.ndim, 1):  # (PyTorch's narrow_copy: a RuntimeError above the range, IndexError below)
        raise RuntimeError(f"narrow_copy: dim {dim} is out of range for a tensor of {input.ndim} dims")
    return narrow(input, dim, start, length).clone()


@with_formulas(Index)
def select(input: Tensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along `dim`, that dim removed: `x[:, index]` for dim=1."""
    index = int_arg(index, "select", "index")
    if input.ndim == 0:
        raise IndexError("select: cannot be applied to a 0-dim tensor")
    d = _wrap_dim(dim, input.ndim, "select")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select: index {index} out of range for tensor of size {list(input.shape)} at dimension {d}")
    return input[(slice(None),) * d + (index,)]


@with_formulas(Index)
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of the (dim1, dim2) planes, as the last dim: x[..., i, i + offset]. A copy (an
    Index node with integer arrays), where PyTorch's is a view."""
    d1, d2 = _wrap_dim(dim1, input.ndim, "diagonal"), _wrap_dim(dim2, input.ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal: dimensions cannot be identical {dim1}, {dim2}")
    x = movedim(input, (d1, d2), (-2, -1))
    return shown_as(x[(Ellipsis,) + _diagonal_key(x.shape[-2], x.shape[-1], offset)], "DiagonalBackward0")


_diagonal_of = diagonal  # (for diag, whose argument `diagonal` hides the function)


def _diagonal_key(rows, cols, offset):
    """(i, j) integer arrays of the elements of the diagonal `offset` of a rows x cols matrix."""
    n = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    i = np.arange(n) + max(0, -offset)
    return i, i + offset


@with_formulas(Index)
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose diagonal `offset`, in the (dim1, dim2) planes, holds input's last dim; zeros elsewhere."""
    from .indexing import IndexPut  # (indexing's writer: a node that puts the values in a zero tensor)
    nd = input.ndim + 1
    d1, d2 = _wrap_dim(dim1, nd, "diag_embed"), _wrap_dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    x = input.reshape(1) if input.ndim == 0 else input
    m = x.shape[-1] + abs(offset)
    zeros = Tensor._make(np.zeros(x.shape[:-1] + (m, m), x._array.dtype))
    out = IndexPut.apply(zeros, (Ellipsis,) + _diagonal_key(m, m, offset), x)
    return shown_as(movedim(out, (-2, -1), (d1, d2)), "DiagEmbedBackward0", inputs=(input,))


@with_formulas(Index)
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-d input: the square matrix with it on diagonal `diagonal`. A 2-d input: that diagonal, as a 1-d tensor."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:  # (PyTorch 2.13 names its node after the copying diagonal it runs)
        return shown_as(_diagonal_of(input, diagonal), "DiagonalBackward0_copy")
    raise RuntimeError(f"diag: expected a 1-d or 2-d input, got shape {tuple(input.shape)}")


@with_formulas(Index)
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The square matrix with input's elements (flattened) on diagonal `offset`."""
    return diag_embed(input.reshape(-1), offset, 0, 1)


@with_formulas(Index)
def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of `size` along `dimension`, `step` apart, as a new last dim of size `size`
    (the windowed dim becomes the number of windows). A copy (an Index node), where PyTorch's is a view;
    an element in two windows gets both their gradients."""
    x = input.reshape(1) if input.ndim == 0 else input
    d = _wrap_dim(dimension, input.ndim, "unfold")
    n = x.shape[d]
    if size > n:
        raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"unfold: size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"unfold: step is {step} but must be > 0")
    windows = np.arange((n - size) // step + 1)[:, None] * step + np.arange(size)
    out = movedim(x[(slice(None),) * d + (windows,)], d + 1, -1)
    return shown_as(out.reshape(out.shape[1:]) if input.ndim == 0 else out, "UnfoldBackward0")


@with_formulas(Index)
def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None) -> Tensor:
    """The elements at storage_offset + sum_i k_i * stride[i] for every index k of `size`, counted in
    input's elements in row-major order (its "storage", which is PyTorch's for a contiguous tensor that
    owns its memory; PyTorch reads a view's base storage instead). A copy (an Index node): overlapping
    windows read an element twice and its gradient adds up."""
    size, stride = _size_arg(tuple(size), "as_strided"), _size_arg(tuple(stride), "as_strided")
    if len(size) != len(stride):
        raise RuntimeError(f"as_strided: mismatch in length of strides and shape: {len(stride)} vs {len(size)}")
    if any(s < 0 for s in stride) or any(n < 0 for n in size):
        raise RuntimeError(f"as_strided: negative sizes or strides are not supported, got {list(size)} and "
                           f"{list(stride)}")
    offset = 0 if storage_offset is None else int(storage_offset)
    positions = np.full(size, offset, np.int64)
    for i, (n, s) in enumerate(zip(size, stride)):
        positions += (np.arange(n) * s).reshape((n,) + (1,) * (len(size) - i - 1))
    total = input.numel()
    if positions.size and positions.max() >= total:
        raise RuntimeError(f"as_strided: setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{offset} are out of bounds for storage of {total} elements")
    return input.reshape(-1)[positions]


@with_formulas(Expand)
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Each tensor expanded to the shape they broadcast to together (views, as `expand`)."""
    from ._util import broadcast_shapes
    shape = broadcast_shapes("broadcast_tensors", *(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


# ---- in-place shape changes: the tensor takes the new shape (metadata only, no value changes) -----

def _reshaped_inplace(self: Tensor, op: str, fn: Callable[..., Tensor], *args: Any) -> Tensor:
    """`self` becomes fn(self, *args) (a view of its memory in another shape), recorded as that op:
    as in `inplace.inplace`, the node's input is a stand-in for self as it was, so its backward
    sees the old shape."""
    from ..autograd import grad_mode
    if self._rg and self.grad_fn is None and grad_mode.modes.grad_enabled:
        raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an in-place operation.")
    old = Tensor._make(self._array)
    old.grad_fn, old._rg = self.grad_fn, self._rg
    out = fn(old, *args)
    if out is old:
        return self
    self._array = out._array
    if out.grad_fn is not None:
        self.grad_fn, self._rg = out.grad_fn, True
        out.grad_fn._out = weakref.ref(self)
    return self


@with_formulas(Permute)
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """numpy's name for `transpose`, with numpy's names for its arguments (as PyTorch's swapaxes)."""
    return transpose(input, axis0, axis1)


@with_formulas(Permute)
def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    """In place: swap two dims (self takes the new shape); `transpose_` under numpy's names."""
    return transpose_(self, axis0, axis1)


@with_formulas(Permute)
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    """In place: swap two dims (self takes the new shape)."""
    return _reshaped_inplace(self, "transpose_", transpose, dim0, dim1)


@with_formulas(Permute)
def t_(self: Tensor) -> Tensor:
    """In place: the matrix transposed (a tensor of fewer than 2 dims is unchanged)."""
    return _reshaped_inplace(self, "t_", t)


@with_formulas(Reshape)
def squeeze_(self: Tensor, dim: Dims | None = None) -> Tensor:
    """In place: remove size-1 dims (only `dim` when given)."""
    return _reshaped_inplace(self, "squeeze_", squeeze, dim)


@with_formulas(Reshape)
def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    """In place: insert a size-1 dim at `dim`."""
    return _reshaped_inplace(self, "unsqueeze_", unsqueeze, dim)
