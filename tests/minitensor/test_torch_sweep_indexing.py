r"""A differential sweep against PyTorch: indexing (gather, index_select, masked_select, index_fill,
nonzero), scatters (scatter with a tensor src, a number value or reduce=, scatter_add; out of place
and in place), argsort, the matrix products (mm, bmm, dot, outer), einsum over a table of equations,
triu/tril, and the shape ops not swept elsewhere (narrow, movedim, swapaxes, unbind, unflatten,
sum_to_size, broadcast_to, expand_as, reshape_as, view_as, type_as, concat/concatenate).

Operands come from the harness (the `torch_sweep` fixture, tests/minitensor/conftest.py): every
dtype, 0-d and empty shapes, contiguous or strided views (transposed, stepped, expanded, flipped),
values with +-0, +-inf, NaN and subnormals. Index tensors are int64 or int32, now and then a float
tensor, out-of-range values, a wrong number of dims or a dim out of range: where PyTorch raises,
minitensor must raise a compatible exception type; an in-place call that fails must leave the
tensor and its version counter as they were. Values, gradients under the same random upstream
weight and dtypes are compared. Skipped where PyTorch is not installed.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minitensor

# a differential sweep against PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

pytest.importorskip("torch")

SEEDS = st.integers(0, 2 ** 16)
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)
# an index is int64 mostly, int32 often, and now and then a float tensor (PyTorch's error)
INDEX_DTYPES = st.sampled_from(["int64"] * 4 + ["int32"] * 2 + ["float32"])
# for sums of products (the matrix products, einsum): no 1e30, as 1e30 * 1e30 + -inf is NaN or -inf
# in float32 depending on whether the BLAS fuses the multiply-add (see test_torch_sweep_binary.py)
SUMMED = st.one_of(*[st.floats(-4, 4, width=32)] * 4,
                   st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30]))


def _summed(dtype):
    return SUMMED if dtype.kind == "f" else None


def _dim(data, ndim):
    """A dim of a tensor of `ndim` dims (negative ones too); one in seven is out of range."""
    n = max(ndim, 1)
    return data.draw(st.one_of(*[st.integers(-n, n - 1)] * 6, st.sampled_from([n, -n - 1])))


def _wrapped(dim, ndim):
    """`dim` as an index into the shape (0 for a dim out of range: that call raises anyway)."""
    n = max(ndim, 1)
    return dim % n if -n <= dim < n else 0


def _tensor_and_dim(data, sw):
    """(shape, x, dim, d): a tensor x of a drawn shape, a dim of it (`_dim`) and that dim as an
    index into the shape (`_wrapped`)."""
    shape = data.draw(SHAPES)
    x = data.draw(sw.tensors(shape))
    dim = _dim(data, len(shape))
    return shape, x, dim, _wrapped(dim, len(shape))


def _index(data, sw, shape, n, low=0):
    """An index Operand of `shape` into a dim of size `n`: values in [low, n), in one draw of five
    anywhere in [-n - 1, n] (out of range at both ends)."""
    valid = n > low and data.draw(st.integers(0, 4)) > 0
    values = st.integers(low, n - 1) if valid else st.integers(-n - 1, n)
    dtype = data.draw(INDEX_DTYPES)
    return data.draw(sw.tensors(shape, (dtype,), values=lambda d: values.map(float) if d.kind == "f" else values))


def _unchanged_on_error(call):
    """fn(lib, x, *rest) running the in-place `call(lib, y, *rest)` on y = x.clone(): where it raises,
    y's values and version counter must be what they were (nothing the user owns changed)."""
    def fn(lib, x, *rest):
        y = x.clone()
        before, version = y.detach().numpy().tobytes(), y._version
        try:
            return call(lib, y, *rest)
        except Exception:
            # (PyTorch's own scatter_ writes the positions before a bad index and then raises)
            if lib is minitensor:
                assert y.detach().numpy().tobytes() == before and y._version == version, (
                    "a failed in-place call changed the tensor")
            raise
    return fn


# ---- gather, index_select, masked_select, index_fill -------------------------------------------

@pytest.mark.parametrize("form", ["function", "method"])
@settings(deadline=None)
@given(data=st.data())
def test_gather_matches_pytorch(torch_sweep, form, data):
    sw = torch_sweep
    shape, x, dim, d = _tensor_and_dim(data, sw)
    sizes = list(shape) or [1]
    # the index: any size along dim, no larger than input elsewhere (now and then larger: an error)
    idx_shape = [data.draw(st.integers(0, 3)) if i == d
                 else data.draw(st.integers(0, n + (data.draw(st.integers(0, 6)) == 0)))
                 for i, n in enumerate(sizes)][:len(shape)]
    if data.draw(st.integers(0, 6)) == 0:  # a wrong number of dims
        idx_shape = idx_shape + [1] if data.draw(st.booleans()) or not idx_shape else idx_shape[1:]
    index = _index(data, sw, idx_shape, sizes[d])
    if form == "function":
        def fn(lib, x, i):
            return lib.gather(x, dim, i)
    else:
        def fn(lib, x, i):
            return x.gather(dim, i)
    sw.check(f"gather(dim={dim})", fn, [x, index], data.draw(SEEDS))


@settings(deadline=None)
@given(data=st.data())
def test_index_select_matches_pytorch(torch_sweep, data):
    sw = torch_sweep
    shape, x, dim, d = _tensor_and_dim(data, sw)
    n = (list(shape) or [1])[d]
    idx_shape = data.draw(st.sampled_from([(), (0,), (1,), (2,), (3,), (3,), (2, 1)]))  # (2, 1): PyTorch's error
    index = _index(data, sw, idx_shape, n)
    # an index out of range: PyTorch's CPU kernel raises an IndexError along some dims and a
    # RuntimeError along others (the last dim of a matrix, a middle dim); minitensor's IndexError
    # (a RuntimeError in an empty matrix, as PyTorch's) stands for both (docs/pytorch_compatibility.md)
    sw.check(f"index_select(dim={dim})", lambda lib, x, i: lib.index_select(x, dim, i), [x, index], data.draw(SEEDS),
             compatible={(RuntimeError, IndexError)})


@settings(deadline=None)
@given(data=st.data())
def test_masked_select_matches_pytorch(torch_sweep, data):
    sw = torch_sweep
    x_shape, mask_shape = data.draw(sw.broadcast_shapes(2))
    x = data.draw(sw.tensors(x_shape))
    mask = data.draw(sw.tensors(mask_shape, ("bool",) * 5 + ("uint8", "int64")))  # non-bool: PyTorch's error
    form = data.draw(st.sampled_from(["function", "method"]))
    fn = (lambda lib, x, m: lib.masked_select(x, m)) if form == "function" else (lambda lib, x, m: x.masked_select(m))
    sw.check("masked_select", fn, [x, mask], data.draw(SEEDS))


@pytest.mark.parametrize("inplace", [False, True], ids=["index_fill", "index_fill_"])
@settings(deadline=None)
@given(data=st.data())
def test_index_fill_matches_pytorch(torch_sweep, inplace, data):
    sw = torch_sweep
    shape, x, dim, d = _tensor_and_dim(data, sw)
    n = (list(shape) or [1])[d]
    # negative indices count from the end here; repeated ones fill the same place with the same value
    index = _index(data, sw, data.draw(st.sampled_from([(), (0,), (1,), (2,), (3,), (2, 1)])), n, low=-n)
    value = data.draw(st.one_of(sw.scalars(), sw.tensors((), layouts=("contiguous",)),
                                sw.tensors((2,), layouts=("contiguous",))))  # (2,): PyTorch's error
    if inplace:
        fn = _unchanged_on_error(lambda lib, y, i, v: y.index_fill_(dim, i, v))
    else:
        def fn(lib, x, i, v):
            return lib.index_fill(x, dim, i, v)
    # PyTorch's gradient of a 0-d value is g.index_select(dim, index).sum(), which fails for a 0-d
    # input and an index of other than one element, and for an empty input and an index out of range
    # (where the forward checks nothing): forward only there (docs/pytorch_compatibility.md)
    grads = len(shape) > 0 and 0 not in shape
    sw.check(f"index_fill{'_' if inplace else ''}(dim={dim})", fn, [x, index, value], data.draw(SEEDS), grads=grads)


# ---- scatter, scatter_add -------------------------------------------------------------------

def _scatter_operands(data, sw, unique):
    """(input, dim, index, src shape) for scatter: the index no larger than input apart from dim
    and no larger than src anywhere (now and then larger, or with a wrong number of dims: PyTorch's
    errors). With `unique` no position is written twice."""
    shape, x, dim, d = _tensor_and_dim(data, sw)
    sizes = list(shape) or [1]
    idx_shape = [data.draw(st.integers(0, n)) for n in sizes]
    bad = data.draw(st.integers(0, 7))
    if bad == 0:  # larger than input in some dim
        i = data.draw(st.integers(0, len(sizes) - 1))
        idx_shape[i] = sizes[i] + 1
    if len(shape) == 0 and data.draw(st.booleans()):
        idx_shape = []  # a 0-d index for a 0-d input
    if bad == 1:
        idx_shape = idx_shape + [1]
    src_shape = [k + data.draw(st.integers(0, 1)) for k in idx_shape]
    if bad == 2 and src_shape:
        src_shape[-1] = max(src_shape[-1] - 1, 0)  # (a smaller src than index: an error if the index is not empty)
    n = sizes[d]
    dtype = data.draw(INDEX_DTYPES)
    if unique and len(idx_shape) == len(sizes) and idx_shape[d] <= n:
        # each line of the index along dim: the first idx_shape[d] of a random order of range(n)
        rng = np.random.default_rng(data.draw(SEEDS))
        keys = rng.random(idx_shape[:d] + [n] + idx_shape[d + 1:])
        idx = np.argsort(keys, axis=d).take(range(idx_shape[d]), axis=d).astype(dtype)
        if data.draw(st.integers(0, 6)) == 0 and idx.size:  # out of range
            idx.flat[data.draw(st.integers(0, idx.size - 1))] = data.draw(st.sampled_from([-1, n]))
        index = sw.laid_out(idx.reshape(idx_shape), data.draw(st.sampled_from(sw.LAYOUTS)))
    else:  # positions may repeat: only for scatter_add, and for calls that raise anyway
        index = _index(data, sw, idx_shape, n)
    return x, dim, index, idx_shape, src_shape


def _src_fits(idx_shape, src):
    """Whether src (a number, or a tensor) is no larger than the index. PyTorch's gradient of a larger
    src has the index's shape, which its autograd refuses ("returned an invalid gradient"); minitensor's
    is zeros outside the index's corner (docs/pytorch_compatibility.md): forward only there."""
    return src.leaf is None or list(src.shape) == list(idx_shape)


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")  # PyTorch's deprecation of reduce=
@pytest.mark.parametrize("kind", ["src", "src_", "value", "value_", "reduce"])
@settings(deadline=None)
@given(data=st.data())
def test_scatter_matches_pytorch(torch_sweep, kind, data):
    sw = torch_sweep
    # PyTorch's scatter writing one position twice keeps one of the values, which one being its
    # implementation's choice: compared only where each position is written once (reduce= adds or
    # multiplies every value, so its positions repeat)
    x, dim, index, idx_shape, src_shape = _scatter_operands(data, sw, unique=kind != "reduce")
    if kind.startswith("value"):
        src = data.draw(sw.scalars())
    else:  # src of input's dtype, now and then of another (PyTorch's error)
        dtypes = (x.leaf.dtype.name,) * 5 + sw.DTYPES
        src = data.draw(sw.tensors(src_shape, dtypes))
    if kind == "reduce":
        how = data.draw(st.sampled_from(["add", "multiply"]))

        # (detached: PyTorch has no derivative of scatter with reduce=; minitensor refuses at the call,
        # a documented difference)
        def fn(lib, x, i, s):
            return x.detach().scatter(dim, i, s.detach(), reduce=how)
    elif kind == "src":
        def fn(lib, x, i, s):
            return lib.scatter(x, dim, i, s)
    elif kind == "value":
        def fn(lib, x, i, v):
            return x.scatter(dim, i, value=v)
    elif kind == "src_":
        fn = _unchanged_on_error(lambda lib, y, i, s: y.scatter_(dim, i, s))
    else:
        fn = _unchanged_on_error(lambda lib, y, i, v: y.scatter_(dim, i, value=v))
    sw.check(f"scatter {kind} (dim={dim})", fn, [x, index, src], data.draw(SEEDS), grads=_src_fits(idx_shape, src))


@pytest.mark.parametrize("inplace", [False, True], ids=["scatter_add", "scatter_add_"])
@settings(deadline=None)
@given(data=st.data())
def test_scatter_add_matches_pytorch(torch_sweep, inplace, data):
    sw = torch_sweep
    # repeated positions add up: PyTorch's sum too (in another order: float32 tolerance covers it)
    x, dim, index, idx_shape, src_shape = _scatter_operands(data, sw, unique=False)
    src = data.draw(sw.tensors(src_shape, (x.leaf.dtype.name,) * 5 + sw.DTYPES))
    if inplace:
        fn = _unchanged_on_error(lambda lib, y, i, s: y.scatter_add_(dim, i, s))
    else:
        def fn(lib, x, i, s):
            return lib.scatter_add(x, dim, i, s)
    sw.check(f"scatter_add{'_' if inplace else ''}(dim={dim})", fn, [x, index, src], data.draw(SEEDS),
             grads=_src_fits(idx_shape, src))


# ---- nonzero, argsort ---------------------------------------------------------------------------

@settings(deadline=None)
@given(data=st.data())
def test_nonzero_matches_pytorch(torch_sweep, data):
    sw = torch_sweep
    x = data.draw(sw.tensors(data.draw(SHAPES)))
    as_tuple = data.draw(st.booleans())
    if data.draw(st.booleans()):
        def fn(lib, x):
            return lib.nonzero(x, as_tuple=as_tuple)
    else:
        def fn(lib, x):
            return x.nonzero(as_tuple=as_tuple)
    sw.check(f"nonzero(as_tuple={as_tuple})", fn, [x], data.draw(SEEDS))


def _has_ties(values, dim):
    """Whether a line along `dim` holds two equal values (NaNs equal each other, 0 equals -0)."""
    if values.ndim == 0 or values.size == 0:
        return False
    lines = np.moveaxis(values, dim, -1).reshape(-1, values.shape[dim])
    for line in lines:
        nan = np.isnan(line) if line.dtype.kind == "f" else np.zeros(line.shape, bool)
        if nan.sum() > 1 or len(set(line[~nan].tolist())) < (~nan).sum():
            return True
    return False


@settings(deadline=None)
@given(data=st.data())
def test_argsort_matches_pytorch(torch_sweep, data):
    sw = torch_sweep
    _, x, dim, d = _tensor_and_dim(data, sw)
    descending, stable = data.draw(st.booleans()), data.draw(st.booleans())
    if not stable and _has_ties(_values(x), d):
        stable = True  # the order of equal values is PyTorch's choice unless stable=True
    if data.draw(st.booleans()):
        def fn(lib, x):
            return lib.argsort(x, dim=dim, descending=descending, stable=stable)
    else:
        def fn(lib, x):
            return x.argsort(dim=dim, descending=descending, stable=stable)  # (PyTorch: dim by keyword with stable)
    sw.check(f"argsort(dim={dim}, descending={descending}, stable={stable})", fn, [x], data.draw(SEEDS))


def _values(op):
    """The values an Operand tensor holds, as numpy (its view applied to its leaf)."""
    return op.make(minitensor)[0].detach().numpy()


# ---- matrix products and einsum -----------------------------------------------------------------

def _product_shapes(name):
    """Shape pairs the product takes, and (one draw in four) any pair of shapes."""
    k, n, m, b = (st.integers(0, 3) for _ in range(4))
    valid = {
        "mm": st.tuples(n, k, m).map(lambda s: ((s[0], s[1]), (s[1], s[2]))),
        "bmm": st.tuples(b, n, k, m).map(lambda s: ((s[0], s[1], s[2]), (s[0], s[2], s[3]))),
        "dot": k.map(lambda s: ((s,), (s,))),
        "outer": st.tuples(n, m).map(lambda s: ((s[0],), (s[1],))),
    }[name]
    return st.one_of(valid, valid, valid, st.tuples(SHAPES, SHAPES))


PRODUCTS = {
    "mm": lambda lib, a, b: lib.mm(a, b),
    "mm method": lambda lib, a, b: a.mm(b),
    "bmm": lambda lib, a, b: lib.bmm(a, b),
    "dot": lambda lib, a, b: lib.dot(a, b),
    "dot method": lambda lib, a, b: a.dot(b),
    "outer": lambda lib, a, b: lib.outer(a, b),
    "outer method": lambda lib, a, b: a.outer(b),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
@settings(deadline=None)
@given(data=st.data())
def test_products_match_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    a_shape, b_shape = data.draw(_product_shapes(name.split()[0]))
    dtypes = data.draw(st.sampled_from([("float32",), ("float64",), ("float32",), ("float64",), sw.FLOATS,
                                        ("int64",), sw.DTYPES]))
    a = data.draw(sw.tensors(a_shape, dtypes, values=_summed))
    b = data.draw(sw.tensors(b_shape, dtypes, values=_summed))
    sw.check(name, PRODUCTS[name], [a, b], data.draw(SEEDS),
             tol=lambda d: (1e-4, 1e-5) if d == "float32" else (1e-9, 1e-11))


# equation -> the operands' dims as letters; "." is an ellipsis dim (0 to 2 of them, broadcast)
EINSUM = [
    "ij,jk->ik",  # matmul
    "bij,bjk->bik",  # batched
    "bij,bkj->bik",  # batched, the second transposed
    "ij->ji",  # transpose
    "ijk->kji",
    "ba",  # implicit output: letters in alphabetical order ("ab"), a transpose
    "ij,jk",  # implicit: the letters seen once ("ik")
    "ii->i",  # diagonal
    "ii->",  # trace
    "i,j->ij",  # outer
    "i,i->",  # dot
    "ij,ij->ij",  # elementwise
    "ij->",  # sum of everything
    "ij->j",  # column sums
    "bi,ij,bj->b",  # bilinear
    "...ij,...jk->...ik",  # batched matmul over any batch dims
    "...i->...",
    "i...->...",
    "b...,b...->...",
]


def _einsum_shapes(data, equation):
    """A shape for each operand of `equation`, a size drawn for each letter; one draw in eight a
    letter's size differs in one operand (PyTorch's error unless one of the sizes is 1)."""
    terms = equation.split("->")[0].split(",")
    sizes = {c: data.draw(st.integers(0, 3)) for c in sorted(set("".join(terms)) - {"."})}
    batch = [data.draw(st.integers(0, 3)) for _ in range(data.draw(st.integers(0, 2)))]
    shapes = []
    for term in terms:
        shape = []
        for c in term.replace("...", "."):
            if c == ".":  # a suffix of the batch dims, some of them 1 (they broadcast)
                lead = batch[data.draw(st.integers(0, len(batch))):]
                shape += [n if data.draw(st.integers(0, 3)) else 1 for n in lead]
            else:
                shape.append(sizes[c])
        shapes.append(shape)
    mutated = data.draw(st.integers(0, 7)) == 0
    if mutated:
        which = data.draw(st.integers(0, len(shapes) - 1))
        if shapes[which]:
            shapes[which][data.draw(st.integers(0, len(shapes[which]) - 1))] += 1
    return shapes, mutated


@pytest.mark.parametrize("equation", EINSUM)
@settings(deadline=None)
@given(data=st.data())
def test_einsum_matches_pytorch(torch_sweep, equation, data):
    sw = torch_sweep
    shapes, mutated = _einsum_shapes(data, equation)
    # one dtype for all: operands of two dtypes promote here, as the elementwise ops do, where
    # PyTorch's einsum raises or promotes depending on the shapes (docs/pytorch_compatibility.md)
    dtype = data.draw(st.sampled_from(sw.FLOATS))
    # three operands, an empty dim, or a letter's size changed (one of size 1 may broadcast): finite
    # values. PyTorch contracts two operands at a time, and first sums a letter of size 1 that
    # broadcasts: an inf meets an empty sum (0) as 0 * inf = NaN, or a sum inf + 0 * inf is inf;
    # minitensor sums over every letter at once (docs/pytorch_compatibility.md)
    finite = len(shapes) > 2 or mutated or any(0 in s for s in shapes)
    values = st.floats(-4, 4, width=32) if finite else _summed
    ops = [data.draw(sw.tensors(s, (dtype,), values=values)) for s in shapes]
    if data.draw(st.booleans()):
        def fn(lib, *xs):
            return lib.einsum(equation, *xs)
    else:
        def fn(lib, *xs):
            return lib.einsum(equation, list(xs))
    # a size mismatch among three operands or more: PyTorch raises ValueError when opt_einsum is
    # installed (it plans the order), RuntimeError otherwise; minitensor RuntimeError, as for two
    sw.check(f"einsum({equation!r})", fn, ops, data.draw(SEEDS),
             tol=lambda d: (1e-4, 1e-5) if d == "float32" else (1e-9, 1e-11),
             compatible=((ValueError, RuntimeError),) if len(shapes) > 2 else ())


# ---- triu, tril ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["triu", "tril"])
@settings(deadline=None)
@given(data=st.data())
def test_triangles_match_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    x = data.draw(sw.tensors(data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3))))
    diagonal = data.draw(st.integers(-4, 4))
    if data.draw(st.booleans()):
        def fn(lib, x):
            return getattr(lib, name)(x, diagonal)
    else:
        def fn(lib, x):
            return getattr(x, name)(diagonal=diagonal)
    sw.check(f"{name}(diagonal={diagonal})", fn, [x], data.draw(SEEDS))


# ---- shape ops -----------------------------------------------------------------------------------

def _narrow(data, shape):
    dim = _dim(data, len(shape))
    n = (list(shape) or [0])[_wrapped(dim, len(shape))]
    start = data.draw(st.integers(-n - 1, n))  # negative starts count from the end
    length = data.draw(st.one_of(st.integers(0, max(n - start % max(n, 1), 0)), st.integers(-1, n + 1)))
    return f"narrow({dim}, {start}, {length})", lambda lib, x: x.narrow(dim, start, length)


def _movedim(data, shape):
    ndim = len(shape)
    if ndim and data.draw(st.booleans()):  # several dims at once
        k = data.draw(st.integers(1, ndim))
        source = data.draw(st.permutations(range(-ndim, 0)).map(lambda p: tuple(p[:k])))
        dest = data.draw(st.permutations(range(ndim)).map(lambda p: tuple(p[:k])))
        if data.draw(st.integers(0, 5)) == 0:
            dest = dest[:-1] + (dest[0],)  # repeated: PyTorch's error
    else:
        source, dest = _dim(data, ndim), _dim(data, ndim)
    return f"movedim({source}, {dest})", lambda lib, x: lib.movedim(x, source, dest)


def _swapaxes(data, shape):
    d0, d1 = _dim(data, len(shape)), _dim(data, len(shape))
    if data.draw(st.booleans()):
        return f"swapaxes({d0}, {d1})", lambda lib, x: lib.swapaxes(x, d0, d1)
    return f"x.swapaxes({d0}, {d1})", lambda lib, x: x.swapaxes(d0, d1)


def _unbind(data, shape):
    dim = _dim(data, len(shape))
    if data.draw(st.booleans()):
        return f"unbind({dim})", lambda lib, x: lib.unbind(x, dim)
    return f"x.unbind({dim})", lambda lib, x: x.unbind(dim)


def _unflatten(data, shape):
    dim = _dim(data, len(shape))
    n = (list(shape) or [1])[_wrapped(dim, len(shape))]
    divisors = [k for k in range(1, n + 1) if n % k == 0] or [0, 1, 2]
    first = data.draw(st.sampled_from(divisors))
    sizes = [first, n // first if first else data.draw(st.integers(0, 2))]
    how = data.draw(st.integers(0, 5))
    if how == 0:
        sizes[1] = -1  # inferred
    elif how == 1:
        sizes = [sizes[0] + 1, sizes[1]]  # the wrong number of elements: PyTorch's error
    elif how == 2:
        sizes = [n]
    sizes = tuple(sizes)
    return f"unflatten({dim}, {sizes})", lambda lib, x: x.unflatten(dim, sizes)


def _sum_to_size(data, shape):
    """A size `shape` is the broadcast of (now and then one that isn't)."""
    size = [n if data.draw(st.integers(0, 2)) else 1 for n in shape][data.draw(st.integers(0, len(shape))):]
    if data.draw(st.integers(0, 6)) == 0:
        size = [n + 1 for n in size] or [2]
    size = tuple(size)
    if data.draw(st.booleans()):
        return f"sum_to_size({size})", lambda lib, x: x.sum_to_size(size)
    return f"sum_to_size(*{size})", lambda lib, x: x.sum_to_size(*size)


def _broadcast_to(data, shape):
    """A shape `shape` broadcasts to (new leading dims, size-1 dims stretched; now and then one it doesn't)."""
    lead = [data.draw(st.integers(0, 3)) for _ in range(data.draw(st.integers(0, 2)))]
    target = lead + [data.draw(st.integers(0, 3)) if n == 1 else n for n in shape]
    if data.draw(st.integers(0, 6)) == 0 and target:
        target[-1] += 1
    target = tuple(target)
    return f"broadcast_to({target})", lambda lib, x: lib.broadcast_to(x, target)


SHAPE_OPS = {
    "narrow": _narrow,
    "movedim": _movedim,
    "swapaxes": _swapaxes,
    "unbind": _unbind,
    "unflatten": _unflatten,
    "sum_to_size": _sum_to_size,
    "broadcast_to": _broadcast_to,
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
@settings(deadline=None)
@given(data=st.data())
def test_shape_ops_match_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    shape = data.draw(SHAPES)
    x = data.draw(sw.tensors(shape))
    what, fn = SHAPE_OPS[name](data, shape)
    sw.check(what, fn, [x], data.draw(SEEDS))


# ops of two tensors: the second gives a shape or a dtype (and gets no gradient)
LIKE = {
    "expand_as": lambda lib, x, y: x.expand_as(y),
    "reshape_as": lambda lib, x, y: x.reshape_as(y),
    "view_as": lambda lib, x, y: x.view_as(y),
    "type_as": lambda lib, x, y: x.type_as(y),
    "concat": lambda lib, x, y: lib.concat([x, y], dim=-1 if x.ndim else 0),
    "concatenate": lambda lib, x, y: lib.concatenate((x, y), dim=0),
}


def _like_shape(data, name, shape):
    """The second operand's shape: one that fits the op mostly, any now and then."""
    if data.draw(st.integers(0, 4)) == 0:
        return data.draw(SHAPES)
    size = math.prod(shape)
    if name in ("reshape_as", "view_as"):
        return data.draw(st.sampled_from([(size,), tuple(reversed(shape)), (1,) + tuple(shape), tuple(shape)]))
    if name == "expand_as":
        lead = [data.draw(st.integers(0, 3)) for _ in range(data.draw(st.integers(0, 2)))]
        return tuple(lead + [data.draw(st.integers(0, 3)) if n == 1 else n for n in shape])
    if name.startswith("concat") and shape:
        d = len(shape) - 1 if name == "concat" else 0
        return tuple(data.draw(st.integers(0, 3)) if i == d else n for i, n in enumerate(shape))
    return tuple(shape)


@pytest.mark.parametrize("name", sorted(LIKE))
@settings(deadline=None)
@given(data=st.data())
def test_like_ops_match_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    shape = data.draw(SHAPES)
    x = data.draw(sw.tensors(shape))
    y = data.draw(sw.tensors(_like_shape(data, name, shape)))
    sw.check(name, LIKE[name], [x, y], data.draw(SEEDS))


# ---- the defects this sweep found, each pinned down as one case ---------------------------------

# Built at import, before the harness's fixture exists: each operand is written as the keyword
# arguments of the harness's Operand, which the test makes.
def _t(values, dtype=None):
    """A contiguous leaf holding `values`."""
    return dict(leaf=np.array(values, dtype=dtype), view=lambda t: t, layout="contiguous")


def _no_index():
    return _t(np.zeros(0, np.int64))


F32, I64 = "float32", "int64"
INT64_MIN = np.iinfo(np.int64).min
FOUND = [  # (what, fn(lib, *operands), operands)
    # gather, index_select, index_fill
    ("gather from a 0-d tensor", lambda lib, x, i: x.gather(0, i), [_t(3.0), _t([0, 0])]),
    ("gather with a 0-d index", lambda lib, x, i: x.gather(0, i), [_t([1.0, 2.0]), _t(1)]),
    ("gather's out-of-range index is a RuntimeError", lambda lib, x, i: x.gather(0, i), [_t([1.0, 2.0]), _t([2])]),
    ("index_select from a 0-d tensor", lambda lib, x, i: x.index_select(0, i), [_t(3.0), _t([0])]),
    ("index_select with a float index is a RuntimeError", lambda lib, x, i: x.index_select(0, i),
     [_t([1.0]), _t([0.0], F32)]),
    ("index_select from an empty dim of a matrix is a RuntimeError", lambda lib, x, i: x.index_select(0, i),
     [_t(np.zeros((0, 2))), _t([0])]),
    ("index_fill of an empty matrix checks no index", lambda lib, x, i: x.index_fill(0, i, 1.0),
     [_t(np.zeros((2, 0))), _t([5])]),
    ("index_fill of an empty dim is a RuntimeError", lambda lib, x, i: x.index_fill(0, i, 1.0),
     [_t(np.zeros(0)), _t([0])]),
    ("index_fill checks the value before the dim", lambda lib, x, i, v: x.index_fill(1, i, v),
     [_t([1.0]), _t([0]), _t([1.0, 2.0])]),
    ("index_fill converts the value before it checks the index", lambda lib, x, i: x.index_fill(0, i, math.inf),
     [_t(0), _t([1])]),
    ("index_fill of an empty tensor converts a 0-d value", lambda lib, x, i, v: x.index_fill(1, i, v),
     [_t(np.zeros((0, 1), np.int32)), _t(0), _t(2 ** 63 - 1)]),
    # scatter, scatter_add: an empty index writes nothing and checks nothing but src's dtype
    ("scatter with an empty index: src's gradient is zeros", lambda lib, x, i, s: x.scatter(0, i, s),
     [_t([1.0, 2.0]), _no_index(), _t(np.zeros(0))]),
    ("scatter checks the dim before the value", lambda lib, x, i: x.scatter(1, i, value=math.inf), [_t([0]), _t([0])]),
    ("scatter_add with an empty index: src's gradient is zeros", lambda lib, x, i, s: x.scatter_add(0, i, s),
     [_t([1.0, 2.0]), _no_index(), _t(np.zeros(0))]),
    ("scatter with reduce='multiply' of inf by 0",
     lambda lib, x, i, s: x.detach().scatter(0, i, s.detach(), reduce="multiply"),
     [_t([np.inf, 1.0]), _t([0, 1]), _t([0.0, 2.0])]),
    # descending order of an integer dtype's minimum (negating it wrapped it onto itself)
    ("argsort descending of int64's minimum", lambda lib, x: x.argsort(descending=True, stable=True),
     [_t([3, INT64_MIN, 1, 0], I64)]),
    ("sort descending of int8's minimum", lambda lib, x: x.sort(descending=True, stable=True),
     [_t([3, -128, 1], "int8")]),
    ("topk of int32's minimum", lambda lib, x: x.topk(2), [_t([-2 ** 31, 5], "int32")]),
    # products
    ("outer of a 0-d tensor", lambda lib, a, b: lib.outer(a, b), [_t(2.0), _t([1.0, 3.0])]),
    ("einsum ii->i (the diagonal)", lambda lib, a: lib.einsum("ii->i", a), [_t([[1.0, 2.0], [3.0, 4.0]])]),
    ("einsum ii-> (the trace)", lambda lib, a: lib.einsum("ii->", a), [_t([[1.0, 2.0], [3.0, 4.0]])]),
    ("einsum with broadcast ellipses", lambda lib, a, b: lib.einsum("...ij,...jk->...ik", a, b),
     [_t(np.arange(12.0).reshape(2, 1, 2, 3)), _t(np.arange(18.0).reshape(3, 3, 2))]),
    ("einsum i... (implicit output: the ellipsis first)", lambda lib, a: lib.einsum("i...", a),
     [_t(np.arange(6.0).reshape(2, 3))]),
    ("einsum ...i-> sums the ellipsis dims", lambda lib, a: lib.einsum("...i->", a),
     [_t(np.arange(6.0).reshape(2, 3))]),
    # shape ops
    ("movedim of several dims", lambda lib, x: lib.movedim(x, (0, 1), (2, 0)), [_t(np.arange(6.0).reshape(1, 2, 3))]),
    ("movedim to a repeated destination", lambda lib, x: lib.movedim(x, (0, 1), (0, 0)), [_t(np.zeros((1, 2)))]),
    ("narrow from a negative start", lambda lib, x: x.narrow(0, -2, 2), [_t([1.0, 2.0, 3.0])]),
    ("narrow past the end", lambda lib, x: x.narrow(0, 2, 2), [_t([1.0, 2.0, 3.0])]),
    ("narrow of a negative length", lambda lib, x: x.narrow(0, 0, -1), [_t([1.0, 2.0, 3.0])]),
    ("narrow of a 0-d tensor", lambda lib, x: x.narrow(0, 0, 1), [_t(1.0)]),
    ("unflatten of a 0-d tensor", lambda lib, x: x.unflatten(0, (1, -1)), [_t(1.0)]),
    ("unflatten of an empty tensor checks the sizes", lambda lib, x: x.unflatten(0, (2, 1)), [_t(np.zeros((1, 0)))]),
    ("view_as of a transposed matrix", lambda lib, x, y: x.t().view_as(y), [_t(np.ones((2, 2))), _t(np.ones(4))]),
    ("sum_to_size(()) of an int32 0-d tensor sums (to int64)", lambda lib, x: x.sum_to_size(()), [_t(2, "int32")]),
    ("sum_to_size without a size", lambda lib, x: x.sum_to_size(), [_t([1.0])]),
    ("cat of 0-d tensors", lambda lib, a, b: lib.cat([a, b]), [_t(1.0), _t(2.0)]),
    ("cat keeps a skipped 1-d empty tensor in the graph", lambda lib, a, b: lib.cat([a, b]),
     [_t(np.ones((2, 2))), _t(np.zeros(0))]),
    ("cat of an empty int and an empty float requires grad", lambda lib, a, b: lib.concat([a, b]),
     [_t(np.zeros(0, np.int64)), _t(np.zeros(0, np.float32))]),
]


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
@pytest.mark.parametrize("what, fn, ops", FOUND, ids=[case[0] for case in FOUND])
def test_defects_the_sweep_found(torch_sweep, what, fn, ops):
    torch_sweep.check(what, fn, [torch_sweep.Operand(**op) for op in ops], seed=0)


@pytest.mark.parametrize("index_dtype", ["int64", "float32"])
def test_scatter_with_an_empty_index_checks_nothing_else(index_dtype):
    """(Not through the harness, which lets minitensor raise a RuntimeError on empty tensors.) An empty
    index writes nothing: PyTorch checks neither the index's dtype nor that the value fits input's."""
    torch = pytest.importorskip("torch")
    for lib in (torch, minitensor):
        x = lib.zeros(2, dtype=lib.int8)
        none = lib.zeros(0, dtype=getattr(lib, index_dtype))
        assert x.scatter(0, none, value=1000).tolist() == [0, 0]
        assert x.float().scatter(0, none, lib.ones(0)).tolist() == [0.0, 0.0]


def test_einsum_promotes_operands_of_two_dtypes():
    """A deliberate difference (docs/pytorch_compatibility.md): PyTorch's einsum raises or promotes
    depending on the shapes; minitensor promotes, as its elementwise ops do (as it did before the
    sweep: a neighbour the einsum fixes must keep)."""
    a, b = minitensor.ones(2, 3), minitensor.ones(3, 4, dtype=minitensor.float64)
    out = minitensor.einsum("ij,jk->ik", a, b)
    assert out.dtype == minitensor.float64 and out.tolist() == [[3.0] * 4] * 2
