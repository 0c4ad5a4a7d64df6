r"""A differential sweep against PyTorch of the rest of the elementwise family and of the factories:

- rounded division and remainders (`floor_divide`, `fmod`, `remainder`, `divide` with every
  rounding mode, `true_divide`, `subtract` with alpha) and the comparison aliases (`greater`,
  `less_equal`, `not_equal` ..., `isclose`, `allclose`, `equal`), as functions and methods: integer
  and float dtypes, negative operands, division by zero (PyTorch's "ZeroDivisionError" for
  integers, inf and NaN for floats);
- the in-place forms (`exp_`, `neg_`, `relu_`, `sigmoid_`, `sqrt_`, `tanh_`, `zero_`, `clamp_`,
  `clip_`, `fmod_`, `remainder_`, `floor_divide_`): values and gradients through a non-leaf, the
  error for a leaf that requires grad and for a float result written into an integer tensor, the
  version counter (one bump per successful call, none for a failed one, the tensor unchanged);
- factories and dtype inference: `arange`, `linspace`, `eye`, `full`, `full_like`, the `*_like`
  factories, `as_tensor`, `from_numpy`, `tensor` of nested Python numbers, `randint`, `randperm`,
  `multinomial`, `bernoulli`, `normal` (shapes, dtypes and errors: the draws differ by design),
  `new_*`, conversions (`.long()`, `.half()` ...), `element_size`, `nelement`, `ndimension`.

The harness is the `torch_sweep` fixture (tests/minitensor/conftest.py): strided operands, the same
random upstream weight on both sides, PyTorch's dtypes and values, and PyTorch's exception types.
Skipped where PyTorch is not installed.
"""
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import minitensor

# a differential sweep against PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch")

SEEDS = st.integers(0, 2 ** 16)
FEW = settings(deadline=None, max_examples=25)


# ---- out-of-place: rounded division, remainders, and the aliases --------------------------------

BINARY = {
    "floor_divide": lambda lib, a, b: lib.floor_divide(a, b),
    "floor_divide_method": lambda lib, a, b: a.floor_divide(b),
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "fmod_method": lambda lib, a, b: a.fmod(b),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "remainder_method": lambda lib, a, b: a.remainder(b),
    "true_divide": lambda lib, a, b: lib.true_divide(a, b),
    "divide": lambda lib, a, b: lib.divide(a, b),
    "divide_trunc": lambda lib, a, b: lib.divide(a, b, rounding_mode="trunc"),
    "divide_floor": lambda lib, a, b: a.divide(b, rounding_mode="floor"),
    "subtract": lambda lib, a, b: lib.subtract(a, b),
    "subtract_alpha": lambda lib, a, b: a.subtract(b, alpha=2),
    "greater": lambda lib, a, b: lib.greater(a, b),
    "greater_method": lambda lib, a, b: a.greater(b),
    "greater_equal": lambda lib, a, b: a.greater_equal(b),
    "less": lambda lib, a, b: a.less(b),
    "less_equal": lambda lib, a, b: lib.less_equal(a, b),
    "not_equal": lambda lib, a, b: a.not_equal(b),
    "isclose": lambda lib, a, b: lib.isclose(a, b),
    "isclose_nan": lambda lib, a, b: a.isclose(b, rtol=0.1, atol=0.5, equal_nan=True),
    "allclose": lambda lib, a, b: lib.allclose(a, b),
    "allclose_nan": lambda lib, a, b: a.allclose(b, rtol=0.1, atol=0.5, equal_nan=True),
    "equal": lambda lib, a, b: lib.equal(a, b),
    "equal_method": lambda lib, a, b: a.equal(b),
}
# the ones whose second operand may be a Python number (PyTorch's function forms take a number
# only there; `torch.equal(t, 2)` and `torch.isclose(t, 2)` are TypeErrors)
NUMBER_SECOND = {"floor_divide", "floor_divide_method", "fmod", "fmod_method", "remainder", "remainder_method",
                 "true_divide", "divide", "divide_trunc", "divide_floor", "subtract", "subtract_alpha", "greater",
                 "greater_method", "greater_equal", "less", "less_equal", "not_equal"}
# `//`-like ops: a gradient here, PyTorch's backward raises (a documented difference)
NO_GRADIENT = {"floor_divide", "floor_divide_method"}


def _divisor_values(dtype):
    """Divisors: often 0 (an integer 0 is PyTorch's ZeroDivisionError), negative, +-inf, NaN."""
    if dtype.kind in "iu":
        return st.one_of(st.integers(max(-3, np.iinfo(dtype).min), 3),
                         st.sampled_from([0, 0, int(np.iinfo(dtype).max)]))
    if dtype.kind == "f":
        return st.one_of(st.floats(-4, 4, width=32), st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan]))
    return None


@pytest.mark.parametrize("name", sorted(BINARY))
@FEW
@given(data=st.data())
def test_binary_aliases_match_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    a_shape, b_shape = data.draw(sw.broadcast_shapes(2))
    a = data.draw(sw.tensors(a_shape))
    b = data.draw(sw.tensors(b_shape, values=_divisor_values))
    if name in NUMBER_SECOND and data.draw(st.integers(0, 3)) == 0:
        b = data.draw(st.one_of(sw.scalars(), st.sampled_from([0, -2, 0.0]).map(lambda v: sw.Operand(value=v))))
    sw.check(name, BINARY[name], [a, b], data.draw(SEEDS), grads=name not in NO_GRADIENT)


# ---- in place ------------------------------------------------------------------------------------

INPLACE_UNARY = {
    "exp_": lambda x: x.exp_(),
    "log1p_": lambda x: x.log1p_(),
    "neg_": lambda x: x.neg_(),
    "relu_": lambda x: x.relu_(),
    "sigmoid_": lambda x: x.sigmoid_(),
    "sqrt_": lambda x: x.sqrt_(),
    "tanh_": lambda x: x.tanh_(),
    "zero_": lambda x: x.zero_(),
    "clamp_": lambda x: x.clamp_(-1, 2),
    "clamp_min_": lambda x: x.clamp_(min=0.5),
    "clip_": lambda x: x.clip_(max=1),
}
INPLACE_BINARY = {
    "fmod_": lambda x, b: x.fmod_(b),
    "remainder_": lambda x, b: x.remainder_(b),
    "floor_divide_": lambda x, b: x.floor_divide_(b),
    "div_floor_": lambda x, b: x.div_(b, rounding_mode="floor"),
    "div_trunc_": lambda x, b: x.div_(b, rounding_mode="trunc"),
}
INPLACE = {**{k: (lambda f: lambda x, *_: f(x))(f) for k, f in INPLACE_UNARY.items()}, **INPLACE_BINARY}


def _on_clone(op):
    """op applied to a copy of the operand (a non-leaf, as x.clone() in a model), which is returned."""
    return lambda lib, x, *b: op(x.clone(), *b)


def _on_view_of_clone(op):
    """op applied to x.clone()[..., ::2] (or the 0-d tensor itself): a view of a non-leaf."""
    def fn(lib, x, *b):
        y = x.clone()
        op(y[..., ::2] if y.ndim else y, *b)
        return y
    return fn


@pytest.mark.parametrize("name", sorted(INPLACE))
@FEW
@given(data=st.data())
def test_inplace_matches_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    a_shape, b_shape = data.draw(sw.broadcast_shapes(2))
    x = data.draw(sw.tensors(a_shape))
    ops = [x]
    if name in INPLACE_BINARY:
        ops.append(data.draw(st.one_of(sw.scalars(), sw.tensors(b_shape, values=_divisor_values))))
    sw.check(name, _on_clone(INPLACE[name]), ops, data.draw(SEEDS), grads=name not in ("floor_divide_", "div_floor_"))


@pytest.mark.parametrize("name", sorted(INPLACE))
@FEW
@given(data=st.data())
def test_inplace_on_a_view_matches_pytorch_or_refuses(torch_sweep, name, data):
    """Of a view of a tensor the graph tracks PyTorch rewrites the base's graph; minitensor
    refuses (a documented difference) with a RuntimeError that says so. Where nothing requires
    grad both give the same values."""
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1, min_side=1))[0]
    x = data.draw(sw.tensors(shape, layouts=("contiguous", "transposed")))
    ops = [x] + ([data.draw(sw.scalars())] if name in INPLACE_BINARY else [])
    fn = _on_view_of_clone(INPLACE[name])
    if x.leaf.dtype.kind == "f":
        got = sw.run(minitensor, fn, ops, 0)
        if isinstance(got[0], type):
            assert got[0] is RuntimeError and "view" in got[1], got
            return
    sw.check(name, fn, ops, data.draw(SEEDS), grads=name not in ("floor_divide_", "div_floor_"))


def _inplace_call(lib, name, x, b):
    """(x's version before and after `name` on it, the exception or None)."""
    before = x._version
    try:
        INPLACE[name](x, b)
    except (RuntimeError, TypeError, ValueError, ZeroDivisionError) as e:
        return before, x._version, type(e), str(e)
    return before, x._version, None, None


@pytest.mark.parametrize("name", sorted(INPLACE))
@FEW
@given(data=st.data())
def test_inplace_errors_and_versions_match_pytorch(torch_sweep, name, data):
    """On a leaf that requires grad, on an integer tensor given a float result, on an integer
    division by zero: PyTorch's error, the tensor unchanged and its version not bumped; otherwise
    one bump per call."""
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1))[0]
    x = data.draw(sw.tensors(shape, layouts=("contiguous",)))
    b = data.draw(st.one_of(sw.scalars(), sw.tensors((), layouts=("contiguous",), values=_divisor_values)))
    leaf_requires_grad = x.leaf.dtype.kind == "f" and data.draw(st.booleans())
    results = {}
    for lib in (torch, minitensor):
        t = lib.tensor(x.leaf.copy(), requires_grad=leaf_requires_grad)
        operand, _ = b.make(lib)
        if isinstance(operand, lib.Tensor):
            operand = operand.detach()
        call = _inplace_call(lib, name, t, operand)
        results[lib.__name__] = call, t.detach().numpy().copy()
    (want, want_values), (got, got_values) = results["torch"], results["minitensor"]
    where = f"{name} of {x!r} by {b!r} (requires grad: {leaf_requires_grad})"
    assert (got[2] is None) == (want[2] is None), f"{where}: minitensor {got}, PyTorch {want}"
    if want[2] is not None:
        assert got[2] is want[2] or (want[2], got[2]) in sw.COMPATIBLE, (
            f"{where}: minitensor raises {got[2].__name__}: {got[3]}; PyTorch {want}")
        assert name.split("_")[0] in got[3], f"{where}: the message {got[3]!r} names no op"
        np.testing.assert_array_equal(got_values, x.leaf, err_msg=f"{where}: a failed call changed the tensor")
    assert got[1] - got[0] == want[1] - want[0], f"{where}: version {got[:2]}, PyTorch's {want[:2]}"
    if got_values.dtype.kind == "f":  # (transcendental functions round differently by an ulp or so)
        rtol, atol = sw.tolerance(got_values.dtype)
        np.testing.assert_allclose(got_values, want_values, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(got_values, want_values, err_msg=where)


# ---- factories and dtype inference ----------------------------------------------------------------

DTYPE_NAMES = st.sampled_from([None, "float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"])


def _dtype(lib, name):
    return None if name is None else getattr(lib, name)


def _factory(make):
    """An op of no operand for the harness: make(lib) (a tensor, or a Python value)."""
    return lambda lib: make(lib)


def _int_or_float(small=5):
    return st.one_of(st.integers(-small, small), st.floats(-small, small, width=32),
                     st.sampled_from([0.5, -0.5, 0.1, 1e-3]))


@st.composite
def arange_arguments(draw):
    """(args, dtype name): arange's start/end/step, ints or floats (no float argument with an
    integer dtype: PyTorch then truncates start, end and step at different points)."""
    n = draw(st.integers(1, 3))
    dtype = draw(DTYPE_NAMES)
    numbers = st.integers(-6, 6) if dtype not in (None, "float32", "float64") else _int_or_float()
    args = [draw(numbers) for _ in range(n)]
    if n == 3 and draw(st.integers(0, 3)) == 0:
        args[2] = draw(st.sampled_from([0, 0.0, math.inf, math.nan]))  # PyTorch's errors
    if draw(st.integers(0, 7)) == 0:
        args[-1 if n < 3 else 1] = draw(st.sampled_from([math.inf, -math.inf, math.nan]))
    return args, dtype


@FEW
@given(data=st.data())
def test_arange_matches_pytorch(torch_sweep, data):
    args, dtype = data.draw(arange_arguments())
    if dtype in ("uint8", "int8"):
        args = [abs(a) for a in args]  # (PyTorch wraps a negative uint8 start as a C cast does)
    torch_sweep.check(f"arange{tuple(args)} dtype={dtype}",
                      _factory(lambda lib: lib.arange(*args, dtype=_dtype(lib, dtype))), [], 0)


@FEW
@given(start=_int_or_float(), end=_int_or_float(), steps=st.one_of(st.integers(-1, 6), st.just(2.0)),
       dtype=st.sampled_from([None, "float32", "float64", "int64", "bool"]))
def test_linspace_matches_pytorch(torch_sweep, start, end, steps, dtype):
    if dtype not in (None, "float32", "float64", "bool"):  # (integer: PyTorch's rounding of the step)
        start, end = int(start), int(end)
    torch_sweep.check(f"linspace({start}, {end}, {steps}) dtype={dtype}",
                      _factory(lambda lib: lib.linspace(start, end, steps, dtype=_dtype(lib, dtype))), [], 0)


@FEW
@given(n=st.integers(-1, 4), m=st.one_of(st.none(), st.integers(-1, 4)), dtype=DTYPE_NAMES)
def test_eye_matches_pytorch(torch_sweep, n, m, dtype):
    def make(lib):
        return lib.eye(n, dtype=_dtype(lib, dtype)) if m is None else lib.eye(n, m, dtype=_dtype(lib, dtype))
    torch_sweep.check(f"eye({n}, {m}) dtype={dtype}", make, [], 0)


FILL_VALUES = st.one_of(st.booleans(), st.integers(-300, 300), st.floats(-300, 300),
                        st.sampled_from([0.5, -1.5, 255, 256, -1, 1e300, math.inf, -math.inf, math.nan]))
SIZES = st.one_of(st.lists(st.integers(0, 3), max_size=3).map(tuple), st.sampled_from([(-1,), (2, -1)]))


@FEW
@given(size=SIZES, value=FILL_VALUES, dtype=DTYPE_NAMES)
def test_full_matches_pytorch(torch_sweep, size, value, dtype):
    """Filled with a value of another kind than the dtype: an int into float, a float with dtype=int
    (PyTorch checks that it fits), a bool; the dtype inferred from the value when none is given."""
    torch_sweep.check(f"full({size}, {value!r}) dtype={dtype}",
                      _factory(lambda lib: lib.full(size, value, dtype=_dtype(lib, dtype))), [], 0)


LIKE = {
    "zeros_like": lambda lib, x, dtype: lib.zeros_like(x, dtype=dtype),
    "ones_like": lambda lib, x, dtype: lib.ones_like(x, dtype=dtype),
    "full_like": lambda lib, x, dtype: lib.full_like(x, 7, dtype=dtype),
    "full_like_float": lambda lib, x, dtype: lib.full_like(x, -2.5, dtype=dtype),
    "empty_like": lambda lib, x, dtype: lib.empty_like(x, dtype=dtype).shape,
    "new_zeros": lambda lib, x, dtype: x.new_zeros(2, 3, dtype=dtype),
    "new_ones": lambda lib, x, dtype: x.new_ones((2,), dtype=dtype),
    "new_empty": lambda lib, x, dtype: x.new_empty((0, 2), dtype=dtype).shape,
    "new_full": lambda lib, x, dtype: x.new_full((2,), 3, dtype=dtype),
    "new_tensor": lambda lib, x, dtype: x.new_tensor([[1.5, -2], [True, 0]], dtype=dtype),
    "new_tensor_of_tensor": lambda lib, x, dtype: x.new_tensor(x, dtype=dtype),
    "long": lambda lib, x, dtype: x.long(),
    "double": lambda lib, x, dtype: x.double(),
    "half": lambda lib, x, dtype: x.half(),
    "byte": lambda lib, x, dtype: x.byte(),
    "char": lambda lib, x, dtype: x.char(),
    "short": lambda lib, x, dtype: x.short(),
    "int": lambda lib, x, dtype: x.int(),
    "bool": lambda lib, x, dtype: x.bool(),
    "float": lambda lib, x, dtype: x.float(),
    "element_size": lambda lib, x, dtype: x.element_size(),
    "nelement": lambda lib, x, dtype: x.nelement(),
    "ndimension": lambda lib, x, dtype: x.ndimension(),
}
# conversions of float values an integer dtype can't hold are undefined behaviour in PyTorch
TO_INTEGER = {"long", "byte", "char", "short", "int"}


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")  # PyTorch's, for new_tensor(tensor)
@pytest.mark.parametrize("name", sorted(LIKE))
@FEW
@given(data=st.data())
def test_like_factories_and_conversions_match_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1))[0]
    values = None
    if name in TO_INTEGER:
        values = lambda dtype: st.floats(-100, 100, width=32) if dtype.kind == "f" else None  # noqa: E731
    x = data.draw(sw.tensors(shape, values=values))
    dtype = data.draw(DTYPE_NAMES)
    sw.check(f"{name} dtype={dtype}", lambda lib, x: LIKE[name](lib, x, _dtype(lib, dtype)), [x], data.draw(SEEDS))


# Random draws differ by design: their shapes, dtypes, whether they require grad, and errors are compared
RANDOM = {
    "rand_like": lambda lib, x, k: lib.rand_like(x),
    "randn_like": lambda lib, x, k: lib.randn_like(x, dtype=lib.float64 if k > 0 else None),
    "randint": lambda lib, x, k: lib.randint(k, k + 3, tuple(x.shape), dtype=x.dtype),
    "randint_high": lambda lib, x, k: lib.randint(k, tuple(x.shape)),
    "randint_uint8_bounds": lambda lib, x, k: lib.randint(-k, 250 + 3 * k, (2,), dtype=lib.uint8),
    "randperm": lambda lib, x, k: lib.randperm(k, dtype=x.dtype),
    "randperm_int8": lambda lib, x, k: lib.randperm(126 + k, dtype=lib.int8),
    "multinomial": lambda lib, x, k: lib.multinomial(x, k),
    "multinomial_replacement": lambda lib, x, k: lib.multinomial(x, k + 1, replacement=True),
    "bernoulli": lambda lib, x, k: lib.bernoulli(x),
    "bernoulli_p": lambda lib, x, k: lib.bernoulli(x, p=k / 2),
    "bernoulli_method": lambda lib, x, k: x.bernoulli(),
    "normal_numbers": lambda lib, x, k: lib.normal(float(k), 1.0, tuple(x.shape)),
    "normal_negative_std": lambda lib, x, k: lib.normal(0.0, float(k), tuple(x.shape)),
    "normal_tensor_mean": lambda lib, x, k: lib.normal(x, 1.0),
    "normal_tensor_std": lambda lib, x, k: lib.normal(0.5, x),
    "normal_tensors": lambda lib, x, k: lib.normal(x, x),
    "rand": lambda lib, x, k: lib.rand(*x.shape, dtype=x.dtype),
    "randn": lambda lib, x, k: lib.randn(tuple(x.shape), dtype=x.dtype if k > 0 else None),
    "normal_": lambda lib, x, k: x.clone().normal_(1.0, float(k)),  # a negative std: an error
    "uniform_": lambda lib, x, k: x.clone().uniform_(float(k), 2.0),  # from > to: an error
}


def _kind(lib, fn, x, k):
    """fn's result as (shape, dtype name, requires_grad), or its exception type."""
    try:
        out = fn(lib, x, k)
    except (RuntimeError, TypeError, ValueError) as e:
        return RuntimeError if isinstance(e, NotImplementedError) else type(e)
    return tuple(out.shape), str(out.dtype).split(".")[-1]


def _empty(result):
    return isinstance(result, tuple) and 0 in result[0]


@pytest.mark.parametrize("name", sorted(RANDOM))
@FEW
@given(data=st.data())
def test_random_factories_match_pytorch_in_shape_dtype_and_errors(torch_sweep, name, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1, max_dims=2))[0]
    probabilities = lambda dtype: st.floats(0, 1, width=32) if dtype.kind == "f" else None  # noqa: E731
    values = probabilities if data.draw(st.integers(0, 3)) else None
    x = data.draw(sw.tensors(shape, values=values))
    k = data.draw(st.integers(-1, 3))
    results = []
    for lib in (torch, minitensor):
        operand, _ = x.make(lib)
        results.append(_kind(lib, RANDOM[name], operand.detach(), k))
    if results[1] is RuntimeError and _empty(results[0]):
        return  # PyTorch runs no kernel on an empty tensor, so it skips the kernel's dtype check (as in the harness)
    assert results[1] == results[0], f"{name} of {x!r}, k={k}: minitensor {results[1]}, PyTorch {results[0]}"


def _python_numbers():
    leaf = st.one_of(st.booleans(), st.integers(-300, 300), st.floats(-300, 300),
                     st.sampled_from([2 ** 63 - 1, 2 ** 63, -2 ** 63 - 1, 2 ** 64, 1e300, math.inf, math.nan]))
    return leaf


@st.composite
def nested_lists(draw):
    """Nested lists (rectangular, sometimes ragged or empty) of mixed Python numbers and bools."""
    shape = draw(st.lists(st.integers(0, 3), max_size=3))
    number = _python_numbers()

    def build(dims):
        if not dims:
            return draw(number)
        return [build(dims[1:]) for _ in range(dims[0])]
    data = build(shape)
    if shape and shape[0] > 1 and len(shape) > 1 and shape[1] > 1 and draw(st.integers(0, 5)) == 0:
        # ragged, the first row kept non-empty (after an empty one PyTorch reads the shape (n, 0) and
        # no further: a documented difference)
        data[0] = data[0][:-1]
    return data


@FEW
@given(data=nested_lists(), dtype=DTYPE_NAMES)
def test_tensor_of_python_numbers_matches_pytorch(torch_sweep, data, dtype):
    torch_sweep.check(f"tensor({data!r}, dtype={dtype})",
                      _factory(lambda lib: lib.tensor(data, dtype=_dtype(lib, dtype))), [], 0)


def _leaves(values):
    """The numbers of a nested list, ragged or not, in order."""
    for v in values:
        if isinstance(v, list):
            yield from _leaves(v)
        else:
            yield v


@FEW
@given(values=nested_lists(), dtype=st.sampled_from([None, "float32", "float64"]))
def test_tensor_of_0d_tensors_matches_pytorch(torch_sweep, values, dtype):
    """A list of 0-d tensors (a loop's losses, `torch.tensor(losses)`): their dtypes promote."""
    flat = list(_leaves(values)) if isinstance(values, list) else []
    assume(all(isinstance(v, (bool, int, float)) and -2 ** 63 <= v < 2 ** 63 for v in flat))

    def make(lib):
        kinds = [lib.float64, lib.float32, lib.int64, lib.bool]
        return lib.tensor([lib.tensor(v, dtype=kinds[i % 4] if not isinstance(v, float) or i % 4 < 2 else None)
                           for i, v in enumerate(flat)], dtype=_dtype(lib, dtype))
    torch_sweep.check(f"tensor of 0-d tensors {flat!r} dtype={dtype}", make, [], 0)


NUMPY_DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("how", ["from_numpy", "as_tensor", "as_tensor_dtype", "tensor"])
@FEW
@given(data=st.data())
def test_from_numpy_and_as_tensor_keep_dtype_and_share_memory_as_pytorch(torch_sweep, how, data):
    """The dtype kept (or converted with dtype=), and memory shared exactly when PyTorch shares it:
    from_numpy and as_tensor of an array of the wanted dtype share, tensor() and a conversion copy."""
    dtype = data.draw(st.sampled_from(NUMPY_DTYPES))
    shape = data.draw(st.lists(st.integers(0, 3), max_size=3))
    base = np.arange(int(np.prod(shape))).astype(dtype).reshape(shape)  # (numpy's arange of bool stops at 2)
    layout = data.draw(st.sampled_from(["contiguous", "transposed", "stepped", "big-endian"]))
    if layout == "transposed":
        base = base.T
    elif layout == "stepped" and base.ndim:
        base = base[..., ::2]
    elif layout == "big-endian":
        base = base.astype(base.dtype.newbyteorder(">"))
    target = data.draw(st.sampled_from(["float32", "int64"]))

    def make(lib, array):
        if how == "from_numpy":
            return lib.from_numpy(array)
        if how == "as_tensor":
            return lib.as_tensor(array)
        if how == "as_tensor_dtype":
            return lib.as_tensor(array, dtype=getattr(lib, target))
        return lib.tensor(array)

    results = []
    for lib in (torch, minitensor):
        array = base.copy()
        try:
            t = make(lib, array)
        except (TypeError, ValueError, RuntimeError) as e:
            results.append(type(e))
            continue
        before = t.detach().numpy().copy()
        if array.size:
            array.flat[0] = 1  # through numpy: seen by the tensor exactly when memory is shared
        results.append((str(t.dtype).split(".")[-1], t.detach().numpy().tolist(), before.tolist()))
    assert results[1] == results[0], f"{how} of {base!r}: minitensor {results[1]}, PyTorch {results[0]}"


# ---- the defects this sweep found, each pinned down as one case ---------------------------------

# (written as the keyword arguments of the harness's Operand, which the test makes: the table is
# built at import, before the fixture exists)
def _t(values, dtype=None):
    """A contiguous leaf holding `values`."""
    return dict(leaf=np.array(values, dtype=dtype), view=lambda t: t, layout="contiguous")


F32, F64 = "float32", "float64"
FOUND = [  # (what, fn(lib, *operands), operands)
    ("greater is a Tensor method", lambda lib, a, b: a.greater(b), [_t([1, 2]), _t([2, 1])]),
    ("greater_equal is a Tensor method", lambda lib, a, b: a.greater_equal(b), [_t([1, 2]), _t([2, 1])]),
    ("less is a Tensor method", lambda lib, a, b: a.less(b), [_t([1.0]), _t([2.0])]),
    ("less_equal is a Tensor method", lambda lib, a, b: a.less_equal(b), [_t([1.0]), _t([1.0])]),
    ("not_equal is a Tensor method", lambda lib, a, b: a.not_equal(b), [_t([1]), _t([1])]),
    ("isclose of float32 and float64", lambda lib, a, b: lib.isclose(a, b), [_t([1.0], F32), _t([1.0])]),
    ("allclose of float32 and float64", lambda lib, a, b: lib.allclose(a, b), [_t([1.0], F32), _t([1.0])]),
    ("isclose with a Python number", lambda lib, a: lib.isclose(a, 1.0), [_t([1.0])]),
    ("isclose with a negative rtol", lambda lib, a: lib.isclose(a, a, rtol=-1.0), [_t([1.0])]),
    ("allclose of shapes that don't broadcast", lambda lib, a, b: lib.allclose(a, b), [_t([1.0, 2.0]), _t([1.0] * 3)]),
    ("arange running the wrong way", lambda lib: lib.arange(1, 0, 1), []),
    ("arange of a negative end", lambda lib: lib.arange(-1.5), []),
    ("arange to inf", lambda lib: lib.arange(0, math.inf), []),
    ("arange to NaN", lambda lib: lib.arange(0, math.nan), []),
    ("arange of bool", lambda lib: lib.arange(0, 2, dtype=lib.bool), []),
    ("arange to a 0-d int tensor is int64", lambda lib, n: lib.arange(n), [_t(3)]),
    ("linspace of -1 steps", lambda lib: lib.linspace(0, 1, -1), []),
    ("linspace of 2.5 steps", lambda lib: lib.linspace(0, 1, 2.5), []),
    ("linspace of bool", lambda lib: lib.linspace(0, 1, 3, dtype=lib.bool), []),
    ("linspace of bool, one step", lambda lib: lib.linspace(2, 1, 1, dtype=lib.bool), []),
    ("eye(-1)", lambda lib: lib.eye(-1), []),
    ("eye(2, -1)", lambda lib: lib.eye(2, -1), []),
    ("full of a negative size", lambda lib: lib.full((2, -1), 1.0), []),
    ("full of an int size", lambda lib: lib.full(2, 1.0), []),
    ("full 1e300 of the default float32 (no numpy warning)", lambda lib: lib.full((), 1e300), []),
    ("zeros(-1)", lambda lib: lib.zeros(-1), []),
    ("ones(2, -1)", lambda lib: lib.ones(2, -1), []),
    ("tensor of 2^63", lambda lib: lib.tensor([2 ** 63]), []),
    ("tensor of -2^63 - 1", lambda lib: lib.tensor([-2 ** 63 - 1]), []),
    ("tensor of 0 and 2^63 (numpy: float64)", lambda lib: lib.tensor([[0], [2 ** 63]]), []),
    ("tensor of 0 and 2^63 as int32", lambda lib: lib.tensor([0, 2 ** 63], dtype=lib.int32), []),
    ("tensor of 1.5 and 2^63 is float", lambda lib: lib.tensor([1.5, 2 ** 63]), []),
    ("tensor of 0.0 and 2^63 as int64 (wrapped silently)", lambda lib: lib.tensor([0.0, 2 ** 63], dtype=lib.int64), []),
    ("tensor of 2^63 as bool", lambda lib: lib.tensor(2 ** 63, dtype=lib.bool), []),
    ("tensor of 0.0 and 2^63 - 1 as int64 (numpy's float64 rounded it)",
     lambda lib: lib.tensor([0.0, 2 ** 63 - 1], dtype=lib.int64), []),
    ("tensor of 2^64 as float32", lambda lib: lib.tensor([2 ** 64], dtype=lib.float32), []),
    ("tensor of 300 as int8", lambda lib: lib.tensor([300], dtype=lib.int8), []),
    ("tensor of inf as int64", lambda lib: lib.tensor([math.inf], dtype=lib.int64), []),
    ("tensor of an int -2 wraps into uint8, among floats", lambda lib: lib.tensor([1.5, -2], dtype=lib.uint8), []),
    ("tensor of a float -2.0 into uint8", lambda lib: lib.tensor([1.5, -2.0], dtype=lib.uint8), []),
    ("tensor of 1e300 is inf (no numpy warning)", lambda lib: lib.tensor([1e300, 1.0]), []),
    ("new_tensor of 300 into int8", lambda lib, a: a.new_tensor([300]), [_t([1], "int8")]),
    ("tensor of float64 0-d tensors is float64", lambda lib, a, b: lib.tensor([a.detach(), b.detach()]),
     [_t(1.0), _t(2.0)]),
    ("tensor of an int and a float32 0-d tensor", lambda lib, a, b: lib.tensor([a, b.detach()]), [_t(1), _t(2.5, F32)]),
    ("short()", lambda lib, a: a.short(), [_t([1, 70000])]),
    ("char()", lambda lib, a: a.char(), [_t([1, 200])]),
]


@pytest.mark.parametrize("what, fn, ops", FOUND, ids=[case[0] for case in FOUND])
def test_defects_the_sweep_found(torch_sweep, what, fn, ops):
    torch_sweep.check(what, fn, [torch_sweep.Operand(**op) for op in ops], seed=0)


FOUND_RANDOM = [  # (what, fn(lib, x, k), x, k): shapes, dtypes and errors of random factories
    ("rand_like of int64", RANDOM["rand_like"], np.array([1, 2]), 0),
    ("randn_like of int64", RANDOM["randn_like"], np.array([1, 2]), 0),
    ("randint with low == high", lambda lib, x, k: lib.randint(5, 5, (2,)), None, 0),
    ("randint with low == high, empty", lambda lib, x, k: lib.randint(5, 5, (0,)), None, 0),
    ("randint beyond uint8", lambda lib, x, k: lib.randint(0, 257, (2,), dtype=lib.uint8), None, 0),
    ("randint below uint8", lambda lib, x, k: lib.randint(-1, 3, (2,), dtype=lib.uint8), None, 0),
    ("randint up to 256 in uint8", lambda lib, x, k: lib.randint(0, 256, (2,), dtype=lib.uint8), None, 0),
    ("randint with an int size", lambda lib, x, k: lib.randint(0, 5, -1), None, 0),
    ("randperm(-1)", lambda lib, x, k: lib.randperm(-1), None, 0),
    ("randperm of bool", lambda lib, x, k: lib.randperm(3, dtype=lib.bool), None, 0),
    ("randperm(129) in int8", lambda lib, x, k: lib.randperm(129, dtype=lib.int8), None, 0),
    ("randperm(128) in int8", lambda lib, x, k: lib.randperm(128, dtype=lib.int8), None, 0),
    ("multinomial of 0 samples", RANDOM["multinomial"], np.array([0.5, 0.5], F32), 0),
    ("multinomial of int64 weights", RANDOM["multinomial"], np.array([1, 2]), 1),
    ("multinomial drawing a zero-weight category", RANDOM["multinomial"], np.array([1.0, 0.0], F32), 2),
    ("multinomial of no category", RANDOM["multinomial_replacement"], np.zeros(0, F32), 0),
    ("bernoulli of int64 probabilities", RANDOM["bernoulli"], np.array([0, 1]), 0),
    ("bernoulli with p on int64 is int64", RANDOM["bernoulli_p"], np.array([0, 1]), 1),
    ("bernoulli with p = 1.5", RANDOM["bernoulli_p"], np.array([0.5], F32), 3),
    ("bernoulli of a probability 1.5", RANDOM["bernoulli"], np.array([1.5], F32), 0),
    ("Tensor.bernoulli", RANDOM["bernoulli_method"], np.array([0.5], F32), 0),
    ("normal with a negative std", RANDOM["normal_negative_std"], np.zeros(2, F32), -1),
    ("normal with a float64 mean is float64", RANDOM["normal_tensor_mean"], np.zeros(2), 0),
    ("normal with a float64 std is float64", RANDOM["normal_tensor_std"], np.ones(2), 0),
    ("normal of numbers without a size", lambda lib, x, k: lib.normal(0.0, 1.0), None, 0),
    ("normal of tensors with a size", lambda lib, x, k: lib.normal(x, x, size=(2,)), np.ones(2, F32), 0),
    ("rand() without a size", lambda lib, x, k: lib.rand(), None, 0),
    ("randn() without a size", lambda lib, x, k: lib.randn(), None, 0),
    ("zeros() without a size", lambda lib, x, k: lib.zeros(), None, 0),
    ("zeros(()) is 0-d", lambda lib, x, k: lib.zeros(()), None, 0),
    ("full((), 2.0) is 0-d", lambda lib, x, k: lib.full((), 2.0), None, 0),
    ("new_zeros() without a size", lambda lib, x, k: x.new_zeros(), np.zeros(2, F32), 0),
    ("normal_ of int64", RANDOM["normal_"], np.array([1, 2]), 1),
    ("normal_ with a negative std", RANDOM["normal_"], np.zeros(2, F32), -1),
    ("uniform_ of bool", RANDOM["uniform_"], np.array([True]), 0),
    ("uniform_ from 3 to 2", RANDOM["uniform_"], np.zeros(2, F32), 3),
]


@pytest.mark.parametrize("what, fn, x, k", FOUND_RANDOM, ids=[case[0] for case in FOUND_RANDOM])
def test_random_factory_defects_the_sweep_found(what, fn, x, k):
    got, want = (_kind(lib, fn, None if x is None else lib.tensor(x), k) for lib in (minitensor, torch))
    assert got == want, f"{what}: minitensor {got}, PyTorch {want}"


def test_clip_names_itself_in_its_errors():
    with pytest.raises(RuntimeError, match="clip_: result type"):
        minitensor.tensor([True]).clip_(max=2)


@pytest.mark.parametrize("how", ["tensor", "as_tensor", "from_numpy"])
def test_arrays_of_another_byte_order_are_refused_as_pytorch(how):
    array = np.arange(3.0).astype(">f8")
    for lib in (torch, minitensor):
        with pytest.raises(ValueError):
            getattr(lib, how)(array)
