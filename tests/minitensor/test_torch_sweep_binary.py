r"""A differential sweep against PyTorch: binary and ternary ops (arithmetic, powers, comparisons,
logic, rounded division, where, clamp with tensor bounds, masked_fill, matmul, in-place forms)
and unary ops on views and on integer and bool tensors: forward and gradient, on operands that
broadcast against each other.

Each tensor operand has one of the dtypes PyTorch's promotion handles (float32, float64, int64,
int32, int16, int8, uint8, bool), 0-d and empty shapes included, and is a contiguous leaf or a
strided view of one (transposed, sliced with a step, expanded, flipped); a Python bool, int or
float may take an operand's place. Values mix ordinary numbers with the dtypes' extremes and, for
floats, +-0, +-inf, NaN, subnormals, 1e-30 and 1e30. The harness (the `torch_sweep` fixture,
tests/minitensor/conftest.py) compares shapes, dtypes, values and the gradient of every float leaf
under the same random upstream weight, and errors. Skipped where PyTorch is not installed.
"""
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

# a differential sweep against PyTorch: the full suite (and CI) runs it, `make test-fast` leaves it out
pytestmark = pytest.mark.slow

pytest.importorskip("torch")

SEEDS = st.integers(0, 2 ** 16)


BINARY = {
    "add": lambda lib, a, b: a + b,
    "add_alpha": lambda lib, a, b: lib.add(a, b, alpha=2),
    "sub": lambda lib, a, b: a - b,
    "sub_alpha": lambda lib, a, b: lib.sub(a, b, alpha=3),
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
    "div_trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
    "floordiv": lambda lib, a, b: a // b,
    "remainder": lambda lib, a, b: a % b,
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "pow": lambda lib, a, b: a ** b,
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "eq": lambda lib, a, b: a == b,
    "ne": lambda lib, a, b: a != b,
    "lt": lambda lib, a, b: a < b,
    "le": lambda lib, a, b: a <= b,
    "gt": lambda lib, a, b: a > b,
    "ge": lambda lib, a, b: a >= b,
    "logical_and": lambda lib, a, b: lib.logical_and(a, b),
    "logical_or": lambda lib, a, b: lib.logical_or(a, b),
    "logical_xor": lambda lib, a, b: lib.logical_xor(a, b),
    "bitwise_and": lambda lib, a, b: a & b,
    "bitwise_or": lambda lib, a, b: a | b,
    "bitwise_xor": lambda lib, a, b: a ^ b,
    "clamp_min_tensor": lambda lib, a, b: lib.clamp(a, min=b),
    "clamp_max_tensor": lambda lib, a, b: lib.clamp(a, max=b),
}
# PyTorch's function forms take a Python number only as the second operand (`torch.fmod(t, 2)`),
# and these not even there (`torch.maximum(t, 2.0)` is a TypeError; minitensor accepts the number)
SCALAR_SECOND_ONLY = {"fmod", "add_alpha", "sub_alpha", "div_trunc", "div_floor"}
TENSORS_ONLY = {"maximum", "minimum", "logical_and", "logical_or", "logical_xor", "clamp_min_tensor",
                "clamp_max_tensor"}


def _divisors(name):
    """Values for the second operand: no divisor b with 0 < |b| < 1e-18 for `/` (a documented
    difference: PyTorch's gradient -g a / b^2 underflows b^2 to 0 there, minitensor's -g a / b / b doesn't)."""
    if name != "div":
        return None
    floats = st.one_of(st.floats(-4, 4, width=32).filter(lambda v: v == 0 or abs(v) >= 1e-18),
                       st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1e30]))
    return lambda dtype: floats if dtype.kind == "f" else None


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(deadline=None)
@given(data=st.data())
def test_binary_matches_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    a_shape, b_shape = data.draw(sw.broadcast_shapes(2))
    a, b = data.draw(sw.tensors(a_shape)), data.draw(sw.tensors(b_shape, values=_divisors(name)))
    if name not in TENSORS_ONLY and data.draw(st.integers(0, 3)) == 0:  # a quarter: a Python number
        # (PyTorch 2.13 fails an internal assert on a Python bool base: `False ** t`)
        if name in SCALAR_SECOND_ONLY or name == "pow" or data.draw(st.booleans()):
            b = data.draw(sw.scalars())
        else:
            a = data.draw(sw.scalars())
    # documented differences (docs/pytorch_compatibility.md): `//`, `number % tensor` and a float
    # to a bool tensor's power have gradients here, where PyTorch's backward raises ("derivative ...
    # is not implemented"; its pow backward subtracts 1 from the bool exponent)
    grads = name != "floordiv" and not (name == "remainder" and a.leaf is None) and not (
        name == "pow" and b.leaf is not None and b.leaf.dtype == bool)
    sw.check(name, BINARY[name], [a, b], data.draw(SEEDS), grads=grads)


def _where(lib, c, a, b):
    return lib.where(c, a, b)


def _masked_fill(lib, a, mask, value):
    return a.masked_fill(mask, value)


def _masked_fill_(lib, a, mask, value):
    return a.clone().masked_fill_(mask, value)


TERNARY = {
    "where": (_where, ("bool", "bool", "bool", "uint8", "float32")),  # a non-bool condition: PyTorch's error
    "clamp": (lambda lib, a, lo, hi: lib.clamp(a, lo, hi), None),
    "clip": (lambda lib, a, lo, hi: a.clip(lo, hi), None),  # clamp's alias, as a method
    "lerp_": (lambda lib, a, b, w: a.clone().lerp_(b, w), None),
    "addcmul_": (lambda lib, a, b, c: a.clone().addcmul_(b, c, value=0.5), None),
    "addcdiv_": (lambda lib, a, b, c: a.clone().addcdiv_(b, c, value=2), None),
}


@pytest.mark.filterwarnings("ignore:where received a uint8 condition")  # PyTorch's deprecation, for the uint8 case
@pytest.mark.parametrize("name", sorted(TERNARY))
@settings(deadline=None)
@given(data=st.data())
def test_ternary_matches_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    fn, first_dtypes = TERNARY[name]
    shapes = data.draw(sw.broadcast_shapes(3))
    if name in ("clamp", "clip"):
        # PyTorch's clamp backward combines masks such as [x >= lo] and [x <= hi] in place: it fails
        # unless every pair of them broadcasts to the result's shape. So x has that shape
        shapes = [np.broadcast_shapes(*shapes[1:])] + list(shapes[1:])
    ops = [data.draw(sw.tensors(s, first_dtypes if i == 0 and first_dtypes else sw.DTYPES))
           for i, s in enumerate(shapes)]
    if name == "where":
        ops = ops[1:] + ops[:1]  # the condition first
    # PyTorch's addcdiv backward fails for an integer tensor2 ("result type Float can't be cast to
    # the desired output type Long"): its forward only, there
    grads = not (name == "addcdiv_" and ops[2].leaf.dtype.kind in "biu")
    sw.check(name, fn, ops, data.draw(SEEDS), grads=grads)


@pytest.mark.parametrize("inplace", [False, True], ids=["masked_fill", "masked_fill_"])
@settings(deadline=None)
@given(data=st.data())
def test_masked_fill_matches_pytorch(torch_sweep, inplace, data):
    sw = torch_sweep
    a_shape, mask_shape = data.draw(sw.broadcast_shapes(2))
    a = data.draw(sw.tensors(a_shape))
    mask = data.draw(sw.tensors(mask_shape, ("bool", "bool", "bool", "uint8")))
    value = data.draw(st.one_of(sw.scalars(), sw.tensors((), layouts=("contiguous",))))
    sw.check("masked_fill_" if inplace else "masked_fill", _masked_fill_ if inplace else _masked_fill,
             [a, mask, value], data.draw(SEEDS))


INPLACE = {
    "add_": lambda lib, a, b: a.clone().add_(b),
    "sub_": lambda lib, a, b: a.clone().sub_(b, alpha=2),
    "mul_": lambda lib, a, b: a.clone().mul_(b),
    "div_": lambda lib, a, b: a.clone().div_(b),
    "pow_": lambda lib, a, b: a.clone().pow_(b),
    "iadd": lambda lib, a, b: _iadd(a.clone(), b),
    "copy_": lambda lib, a, b: a.clone().copy_(b),
    "clamp_": lambda lib, a, b: a.clone().clamp_(min=b),
}


def _iadd(a, b):
    a += b
    return a


@pytest.mark.parametrize("name", sorted(INPLACE))
@settings(deadline=None)
@given(data=st.data())
def test_inplace_matches_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    a_shape, b_shape = data.draw(sw.broadcast_shapes(2))
    a = data.draw(sw.tensors(a_shape))
    b = data.draw(st.one_of(sw.scalars(), sw.tensors(b_shape))) if name != "clamp_" else data.draw(sw.scalars())
    sw.check(name, INPLACE[name], [a, b], data.draw(SEEDS))


def _matmul_shapes():
    """Shape pairs `a @ b` accepts (1-D on either side, broadcast batch dims) and some it refuses."""
    valid = hnp.mutually_broadcastable_shapes(signature="(m?,n),(n,p?)->(m?,p?)", max_dims=2, min_side=0,
                                              max_side=3).map(lambda s: s.input_shapes)
    anything = st.tuples(*[hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3)] * 2)
    return st.one_of(valid, valid, valid, anything)


@pytest.mark.parametrize("form", ["operator", "function"])
@settings(deadline=None)
@given(data=st.data())
def test_matmul_matches_pytorch(torch_sweep, form, data):
    sw = torch_sweep
    a_shape, b_shape = data.draw(_matmul_shapes())
    dtypes = data.draw(st.sampled_from([sw.FLOATS, ("float32",), ("float64",), ("int64",), sw.DTYPES]))
    # (no 1e30: 1e30 * 1e30 + -inf is NaN or -inf in float32 as the BLAS fuses the multiply-add or not)
    floats = st.one_of(st.floats(-4, 4, width=32), st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30]))
    values = lambda dtype: floats if dtype.kind == "f" else None  # noqa: E731
    a, b = data.draw(sw.tensors(a_shape, dtypes, values=values)), data.draw(sw.tensors(b_shape, dtypes, values=values))
    fn = (lambda lib, x, y: x @ y) if form == "operator" else (lambda lib, x, y: lib.matmul(x, y))
    sw.check("matmul", fn, [a, b], data.draw(SEEDS), tol=lambda d: (1e-4, 1e-5) if d == "float32" else (1e-9, 1e-11))


def _last(x):
    return -1 if x.ndim else 0


# unary ops, reductions and shape ops, on views and on every dtype: name -> fn(lib, x)
UNARY = {
    "abs": lambda lib, x: x.abs(),
    "neg": lambda lib, x: -x,
    "sign": lambda lib, x: x.sign(),
    "relu": lambda lib, x: lib.relu(x),
    "exp": lambda lib, x: x.exp(),
    "log": lambda lib, x: x.log(),
    "log1p": lambda lib, x: x.log1p(),
    "sqrt": lambda lib, x: x.sqrt(),
    "rsqrt": lambda lib, x: x.rsqrt(),
    "sin": lambda lib, x: x.sin(),
    "cos": lambda lib, x: x.cos(),
    "tanh": lambda lib, x: x.tanh(),
    "sigmoid": lambda lib, x: x.sigmoid(),
    "erf": lambda lib, x: x.erf(),
    "square": lambda lib, x: x.square(),
    "reciprocal": lambda lib, x: x.reciprocal(),
    "pow2": lambda lib, x: x ** 2,
    "pow_half": lambda lib, x: x ** 0.5,
    "rpow": lambda lib, x: 2 ** x,
    "clamp": lambda lib, x: x.clamp(-1, 2),
    "clamp_float": lambda lib, x: x.clamp(min=0.5),
    "logical_not": lambda lib, x: x.logical_not(),
    "bitwise_not": lambda lib, x: ~x,
    "isnan": lambda lib, x: x.isnan(),
    "isinf": lambda lib, x: x.isinf(),
    "isfinite": lambda lib, x: x.isfinite(),
    "sum": lambda lib, x: x.sum(),
    "sum_dim": lambda lib, x: x.sum(dim=_last(x), keepdim=True),
    "mean": lambda lib, x: x.mean(),
    "mean_dim": lambda lib, x: x.mean(dim=0 if x.ndim else None),
    "prod": lambda lib, x: x.prod(),
    # (of a 0-d NaN PyTorch's Bessel-corrected variance has gradient inf: correction 0 there)
    "var": lambda lib, x: x.var(dim=_last(x), correction=1 if x.ndim else 0),
    "std": lambda lib, x: x.std(),
    "norm": lambda lib, x: x.norm(),
    "norm0": lambda lib, x: x.norm(p=0),
    "norm1": lambda lib, x: x.norm(p=1, dim=_last(x)),
    "norm_inf": lambda lib, x: x.norm(p=float("inf")),
    "logsumexp": lambda lib, x: x.logsumexp(dim=_last(x)),
    "amax": lambda lib, x: x.amax(dim=_last(x)),
    "amin": lambda lib, x: x.amin(),
    "argmax": lambda lib, x: x.argmax(),
    "argmin_dim": lambda lib, x: x.argmin(dim=_last(x), keepdim=True),
    "all": lambda lib, x: x.all(),
    "any_dim": lambda lib, x: x.any(dim=_last(x)),
    "count_nonzero": lambda lib, x: lib.count_nonzero(x),
    "cumsum": lambda lib, x: x.cumsum(dim=0),
    "softmax": lambda lib, x: x.softmax(dim=_last(x)),
    "log_softmax": lambda lib, x: x.log_softmax(dim=0),
    "reshape": lambda lib, x: x.reshape(-1),
    "view": lambda lib, x: x.view(-1),
    "flatten": lambda lib, x: x.flatten(),
    "contiguous": lambda lib, x: x.contiguous() * 1,
    "clone": lambda lib, x: x.clone(),
    "t": lambda lib, x: x.t() if x.ndim <= 2 else x.mT,
    "transpose": lambda lib, x: x.transpose(0, -1),
    "unsqueeze": lambda lib, x: x.unsqueeze(-1),
    "squeeze": lambda lib, x: x.squeeze(),
    "getitem": lambda lib, x: x[..., 1:] if x.ndim else x[None],
    "getitem_mask": lambda lib, x: x[x > 0] if x.dtype != lib.bool else x[x],
    "flip": lambda lib, x: x.flip(-1) if x.ndim else x.flip(()),
    "tril": lambda lib, x: x.tril(),
    "repeat": lambda lib, x: x.repeat(*([2] * max(x.ndim, 1))),
    "cat": lambda lib, x: lib.cat([x, x], dim=-1) if x.ndim else lib.stack([x, x]),
    "stack": lambda lib, x: lib.stack([x, x * 2], dim=0),
    "chunk": lambda lib, x: x.chunk(2, dim=-1) if x.ndim else x,
    "sort": lambda lib, x: x.sort(dim=-1, stable=True),
    "to_float64": lambda lib, x: x.to(lib.float64),
    "to_int32": lambda lib, x: x.to(lib.int32),
    "float": lambda lib, x: x.float(),
}
# Values some ops draw from instead: a float -> int cast of inf or NaN is undefined behaviour in
# PyTorch (platform-dependent), so to_int32 draws finite floats; PyTorch's 2-norm returns |x| for
# one element but squares several (norm([1e-30]) is 1e-30 in float32, norm([1e-30, 0]) is 0), its
# own quirk (see test_torch_sweep.py); prod's gradient where an element is +-inf or NaN, or the
# product overflows, is PyTorch's result / x (NaN, inf), minitensor's the product of the others
# (docs/pytorch_compatibility.md)
VALUES = {
    "to_int32": st.floats(-100, 100, width=32),
    "prod": st.one_of(st.floats(-4, 4, width=32), st.sampled_from([0.0, -0.0, 1e-30])),
}


@pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")  # PyTorch's, for n <= correction
@pytest.mark.parametrize("name", sorted(UNARY))
@settings(deadline=None)
@given(data=st.data())
def test_unary_on_views_and_dtypes_matches_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    shape = data.draw(sw.broadcast_shapes(1))[0]
    if name in VALUES:
        x = data.draw(sw.tensors(shape, sw.FLOATS, values=VALUES[name]))
    else:
        x = data.draw(sw.tensors(shape))
    if name == "sort" and x.leaf.dtype.kind == "f":
        # tied values: which index is first is PyTorch's choice
        assume(len(set(x.leaf.ravel().tolist())) == x.leaf.size)
    sw.check(name, UNARY[name], [x], data.draw(SEEDS))


# A Python number put into a tensor of a given dtype: PyTorch converts it with an overflow check
# (an int8 tensor can't be filled with 1000, a float32 one not with 1e300), except where it wraps
# (arithmetic: `int8 + 1000` wraps)
SCALAR_INTO = {
    "fill_": lambda lib, x, v: x.clone().fill_(v),
    "masked_fill": lambda lib, x, v: x.masked_fill(x != x, v) if x.ndim else x.masked_fill(lib.tensor(True), v),
    "masked_fill_": lambda lib, x, v: x.clone().masked_fill_(lib.ones(x.shape, dtype=lib.bool), v),
    "clamp_min": lambda lib, x, v: x.clamp(min=v),
    "clamp_max": lambda lib, x, v: x.clamp(max=v),
    "clamp_": lambda lib, x, v: x.clone().clamp_(min=v),
    "where": lambda lib, x, v: lib.where(x == x, x, v),
    "full": lambda lib, x, v: lib.full(tuple(x.shape), v, dtype=x.dtype),
    "new_full": lambda lib, x, v: x.new_full((2,), v),
    "setitem": lambda lib, x, v: _setitem(x.clone(), v),
    "index_fill": lambda lib, x, v: x.index_fill(0, lib.tensor([0]), v) if x.ndim else x,
    "add": lambda lib, x, v: x + v,
    "mul": lambda lib, x, v: x * v,
    "eq": lambda lib, x, v: x == v,
    "lt": lambda lib, x, v: x < v,
    "pow": lambda lib, x, v: x ** v,
}


def _setitem(x, v):
    x[...] = v
    return x


EDGE_FLOATS = [0.0, -0.0, float("inf"), -float("inf"), float("nan")]


def _big_numbers():
    """Python numbers of every size: near and beyond each dtype's range, beyond 64 bits, floats
    beyond float32's range, inf and NaN, bools."""
    ints = st.one_of(st.integers(-300, 300), st.integers(-2 ** 64, 2 ** 64),
                     st.sampled_from([127, 128, -128, -129, 255, 256, -255, -256, 2 ** 31, 2 ** 63 - 1, 2 ** 63,
                                      -2 ** 63, -2 ** 63 - 1, 2 ** 64 - 1, 2 ** 64]))
    floats = st.one_of(st.floats(-300, 300), st.sampled_from([1e300, -1e300, 3.5e38, -3.5e38, 1e-50, 127.9, 128.0,
                                                              -128.9, -0.5, 255.5, 9.3e18, 1e10]),
                       st.sampled_from(EDGE_FLOATS))
    return st.one_of(ints, floats, st.booleans())


@pytest.mark.parametrize("name", sorted(SCALAR_INTO))
@settings(deadline=None)
@given(data=st.data())
def test_python_numbers_into_dtypes_match_pytorch(torch_sweep, name, data):
    sw = torch_sweep
    x = data.draw(sw.tensors(data.draw(st.sampled_from([(), (2,), (2, 3)])), layouts=("contiguous", "transposed")))
    v = data.draw(_big_numbers())
    # PyTorch reads an int from 2^63 on as uint64, which it can't promote with bool
    assume(not (x.leaf.dtype == bool and type(v) is int and v >= 2 ** 63))
    sw.check(name, SCALAR_INTO[name], [x, sw.Operand(value=v)], data.draw(SEEDS))


# ---- the defects this sweep found, each pinned down as one case (with a few neighbours the ---
# ---- fixes must keep right: a bool tensor to a Python bool power, uint8 fill_(-1) ...) ---------

# The table is built at import, before the harness's fixture exists: each operand is written as
# the keyword arguments of the harness's Operand, which the test makes.
def _t(values, dtype=None, constant=False):
    """A contiguous leaf holding `values` (seen through detach() when `constant`)."""
    leaf = np.array(values, dtype=dtype)
    return dict(leaf=leaf, view=(lambda t: t.detach()) if constant else (lambda t: t), layout="contiguous")


def _s(value):
    return dict(value=value)


def _setitem_all(x, v):
    x[...] = v
    return x


F64, F32, I64 = "float64", "float32", "int64"
FOUND = [  # (what, fn(lib, *operands), operands)
    # binary ops compute in PyTorch's promoted dtype, the operands converted first
    ("int32 <= a 0-d int64 compares in int32", lambda lib, a, b: a <= b, [_t([0], "int32"), _t(2 ** 63 - 1)]),
    ("float32 == a 0-d float64 compares in float32", lambda lib, a, b: a == b, [_t([0.1], F32), _t(0.1)]),
    ("minimum of int64 0-d and int32 in int32", lambda lib, a, b: lib.minimum(a, b),
     [_t(2 ** 63 - 1), _t([0], "int32")]),
    ("clamp of int8 at a 0-d int64 in int8", lambda lib, a, b: a.clamp(min=b), [_t([1], "int8"), _t(1000)]),
    ("float32 + 2 * int64 max scales in float32", lambda lib, a, b: lib.add(a, b, alpha=2),
     [_t(0.0, F32), _t(2 ** 63 - 1)]),
    ("a Python int wraps into uint8 in a comparison", lambda lib, a, b: a >= b, [_t([0, 5], "uint8"), _s(-1)]),
    ("a Python int from 2^63 wraps as uint64", lambda lib, a, b: a == b, [_t([1], "int8"), _s(2 ** 63 + 1)]),
    ("a Python int beyond 64 bits", lambda lib, a, b: a + b, [_t([1], "int8"), _s(2 ** 64 + 3)]),
    ("uint8 // -1 wraps the divisor", lambda lib, a, b: a // b, [_t([6], "uint8"), _s(-1)]),
    ("an empty dividend is not divided by an integer 0", lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
     [_t(np.zeros(0, np.int64)), _t(False)]),
    # bool arithmetic PyTorch refuses, and accepts
    ("bool - bool", lambda lib, a, b: a - b, [_t([True]), _t([False])]),
    ("float - True", lambda lib, a, b: a - b, [_t([1.0], F32), _s(True)]),
    ("-bool", lambda lib, a: -a, [_t([True])]),
    ("bool + bool * alpha 2 stays bool", lambda lib, a, b: lib.add(a, b, alpha=2), [_t([True]), _t([False])]),
    ("int + alpha 2.5", lambda lib, a, b: lib.add(a, b, alpha=2.5), [_t([1]), _t([1])]),
    ("float & float", lambda lib, a, b: a & b, [_t([1.0]), _t([1.0])]),
    ("3 ^ int tensor", lambda lib, a: 3 ^ a, [_t([3])]),
    ("relu of bool", lambda lib, a: lib.relu(a), [_t([True])]),
    ("sign of bool", lambda lib, a: a.sign(), [_t([True, False])]),
    ("abs of bool", lambda lib, a: a.abs(), [_t([True])]),
    ("square of bool is int64", lambda lib, a: a.square(), [_t([True])]),
    ("argmax of bool", lambda lib, a: a.argmax(), [_t([True, False])]),
    ("all of uint8 is uint8", lambda lib, a: a.all(), [_t([1, 2], "uint8")]),
    ("any of uint8 over a dim is uint8", lambda lib, a: a.any(dim=1), [_t([[1, 0]], "uint8")]),
    # powers
    ("int ** negative int tensor", lambda lib, a, b: a ** b, [_t([2, 1, -1, 0]), _t([-1, -2, -1, -1])]),
    ("2 ** int8 tensor with -1", lambda lib, a: 2 ** a, [_t([-1, 3], "int8")]),
    ("int ** -1", lambda lib, a: a ** -1, [_t([2])]),
    ("int8 ** 200", lambda lib, a: a ** 200, [_t([2], "int8")]),
    ("bool ** bool tensor", lambda lib, a, b: a ** b, [_t([True]), _t([False])]),
    ("bool ** False", lambda lib, a: a ** False, [_t([True, False])]),
    ("float32 0 ** 5e-324 keeps the exponent", lambda lib, a: a ** 5e-324, [_t([0.0, 0.5], F32)]),
    ("int 0 ** 1e-50 keeps the exponent", lambda lib, a: a ** 1e-50, [_t([0, 2])]),
    ("(-inf) ** 0.5 and -0 ** -0.5", lambda lib, a: (a ** 0.5, a ** -0.5), [_t([-np.inf, -0.0, 4.0], F32)]),
    ("an int exponent beyond float32's integers keeps its parity", lambda lib, a: a ** -16777216,
     [_t([-1.0, -0.0, 2.0], F32)]),
    ("b * a^(b-1) overflows first", lambda lib, a, b: a ** b, [_t(1.390625, F32), _t(255, "uint8")]),
    ("the exponent's gradient in float64 for an int base", lambda lib, a, b: a ** b, [_t(2), _t(0.0)]),
    ("x ** False has PyTorch's NaN slope at 0", lambda lib, a: a ** False, [_t([0.0, 2.0])]),
    # a Python number put into a tensor must fit its dtype
    ("int8 fill_(1000)", lambda lib, a: a.clone().fill_(1000), [_t([0], "int8")]),
    ("uint8 fill_(-1)", lambda lib, a: a.clone().fill_(-1), [_t([0], "uint8")]),
    ("float32 fill_(1e300)", lambda lib, a: a.clone().fill_(1e300), [_t([0.0], F32)]),
    ("int8 fill_ with a 0-d 1.5", lambda lib, a, b: a.clone().fill_(b), [_t([0], "int8"), _t(1.5, F32, constant=True)]),
    ("int8 clamp(min=-1000)", lambda lib, a: a.clamp(min=-1000), [_t([1], "int8")]),
    ("uint8 clamp(min=-1)", lambda lib, a: a.clamp(min=-1), [_t([1, 5], "uint8")]),
    ("float32 clamp(min=1e300)", lambda lib, a: a.clamp(min=1e300), [_t([0.0], F32)]),
    ("bool clamp between two tensors", lambda lib, a, b, c: lib.clamp(a, b, c), [_t([True]), _t([False]), _t([True])]),
    ("int8 masked_fill 1000", lambda lib, a: a.masked_fill(a == 0, 1000), [_t([0, 1], "int8")]),
    ("uint8 masked_fill -1", lambda lib, a: a.masked_fill(a == 0, -1), [_t([0, 1], "uint8")]),
    ("int8 masked_fill with a 0-d 1.5", lambda lib, a, b: a.masked_fill(a == 0, b),
     [_t([0, 1], "int8"), _t(1.5, F32, constant=True)]),
    ("int32 masked_fill with a 0-d int64 max", lambda lib, a, b: a.masked_fill(a == 0, b),
     [_t([0], "int32"), _t(2 ** 63 - 1)]),
    ("int masked_fill with a value that requires grad", lambda lib, a, b: a.masked_fill(a == 0, b), [_t([0]), _t(0.5)]),
    ("where with a float condition", lambda lib, c, a, b: lib.where(c, a, b), [_t([1.0]), _t([1]), _t([2])]),
    ("where with 1000 for int8", lambda lib, a: lib.where(a == 0, a, 1000), [_t([0], "int8")]),
    ("full int8 1000", lambda lib: lib.full((2,), 1000, dtype=lib.int8), []),
    ("full uint8 -1", lambda lib: lib.full((2,), -1, dtype=lib.uint8), []),
    ("x[...] = 1000 for int8", lambda lib, a: _setitem_all(a.clone(), 1000), [_t([0], "int8")]),
    ("x[...] = 2^63", lambda lib, a: _setitem_all(a.clone(), 2 ** 63), [_t([0])]),
    ("index_fill int8 1000", lambda lib, a: a.index_fill(0, lib.tensor([0]), 1000), [_t([0, 1], "int8")]),
    ("scatter value 1000 into int8", lambda lib, a: a.scatter(0, lib.tensor([0]), value=1000), [_t([0, 1], "int8")]),
    # reductions
    ("logsumexp of int", lambda lib, a: a.logsumexp(0), [_t([1, 2, 3])]),
    ("norm(p=0) is differentiable, its gradient undefined", lambda lib, a: a.norm(p=0), [_t([1.0, 0.0, -2.0])]),
    ("1-norm of an int tensor", lambda lib, a: a.norm(p=1), [_t([1, 2])]),
    ("inf norm of an empty tensor", lambda lib, a: a.norm(p=float("inf")), [_t(np.zeros(0))]),
    ("inf norm with a NaN", lambda lib, a: a.norm(p=float("inf")), [_t([np.nan, 1.0], F32)]),
    ("norm of one float32 1e30", lambda lib, a: a.norm(), [_t([1e30], F32)]),
    ("norm of one float32 1e-30", lambda lib, a: a.norm(), [_t([1e-30], F32)]),
    ("norm of one float32 subnormal", lambda lib, a: a.norm(), [_t(1.28e-43, F32)]),
    # indexing, views, matmul
    ("a 0-d tensor's mask read", lambda lib, a: a[a > 0], [_t(0.5)]),
    ("view of a transposed tensor", lambda lib, a: a.t().view(-1), [_t([[1.0, 2.0], [3.0, 4.0]])]),
    ("add_ on an expanded view", lambda lib, a: a.detach().expand(2, 2).add_(1), [_t([[1.0, 2.0]])]),
    ("view after contiguous", lambda lib, a: a.t().contiguous().view(-1), [_t([[1.0, 2.0], [3.0, 4.0]])]),
    ("float32 @ float64", lambda lib, a, b: a @ b, [_t([[1.0, 2.0]], F32), _t([[1.0], [2.0]])]),
    ("bool @ bool", lambda lib, a, b: a @ b, [_t([[True]]), _t([[True]])]),
    # lerp, addcmul, addcdiv
    ("lerp at weight 1 to inf", lambda lib, a, b, w: a.clone().lerp_(b, w),
     [_t([1.0, 2.0, -np.inf]), _t([3.0, np.inf, 1.0]), _t([0.5, 1.0, 0.0])]),
    ("lerp with a float64 weight for float32", lambda lib, a, b, w: a.clone().lerp_(b, w),
     [_t([1.0], F32), _t([3.0], F32), _t([0.5])]),
    ("addcmul_ of ints with value 0.5", lambda lib, a, b, c: a.clone().addcmul_(b, c, value=0.5),
     [_t([1, 2]), _t([3, 4]), _t([1, 1])]),
    ("addcdiv_ of ints", lambda lib, a, b, c: a.clone().addcdiv_(b, c), [_t([1.0, 2.0]), _t([3, 4]), _t([2, 2])]),
    ("addcmul of an empty result", lambda lib, a, b, c: lib.addcmul(a, b, c), [_t(np.zeros(0)), _t(0.0), _t(np.inf)]),
]


@pytest.mark.filterwarnings("ignore:where received a uint8 condition")
@pytest.mark.parametrize("what, fn, ops", FOUND, ids=[case[0] for case in FOUND])
def test_defects_the_sweep_found(torch_sweep, what, fn, ops):
    torch_sweep.check(what, fn, [torch_sweep.Operand(**op) for op in ops], seed=0)
