"""The op table: every method `Tensor` gets from the ops, and every op in `minitensor`'s namespace.

One row an op. `op(name, fn, *aliases)` makes `fn` both `Tensor.<name>` and `minitensor.<name>`
(`x.exp()` and `minitensor.exp(x)` are one function); `method(...)` makes it a method only,
`function(...)` a function only. `inplace=True` derives the in-place method `<name>_`: it runs
`fn` and writes the result into the tensor, recorded in the graph (see `inplace.py`). Aliases get
every form their name has (`clip`, `clip_` and `minitensor.clip` for `clamp`).

`attach()` (run once, by `minitensor/ops/__init__.py`) sets the methods on `Tensor`. The same rows
are read by `scripts/gen_api.py`, which writes the type stub `minitensor/tensor.pyi` and the op
imports and `__all__` of `minitensor/__init__.py`; CI runs it with `--check`. So a new op is its
`Function` and its public function in an op module, one row here, and one row in the test op
table (`tests/minitensor/test_ops.py`): see docs/contributing.md.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from .. import _dtype, factories as F
from ..autograd import api
from ..tensor import Tensor
from . import (
    arithmetic as A,
    compare as C,
    conversion as V,
    indexing as I,
    inplace,
    linalg as L,
    reduce as R,
    selection as Sel,
    shape as S,
    softmax as Soft,
    special as SP,
    unary as U,
)
from ._util import binary_method, operator_method, reflected_method


class Row(NamedTuple):
    name: str
    fn: Callable[..., Any] | property
    aliases: tuple[str, ...] = ()
    method: bool = True  # Tensor.<name>
    function: bool = True  # minitensor.<name>
    inplace: bool = False  # Tensor.<name>_, derived from fn

    def names(self) -> tuple[str, ...]:
        return (self.name,) + self.aliases


def op(name: str, fn: Callable[..., Any], *aliases: str, inplace: bool = False) -> Row:
    return Row(name, fn, aliases, inplace=inplace)


def method(name: str, fn: Callable[..., Any] | property, *aliases: str, inplace: bool = False) -> Row:
    return Row(name, fn, aliases, function=False, inplace=inplace)


def function(name: str, fn: Callable[..., Any], *aliases: str) -> Row:
    return Row(name, fn, aliases, method=False)


def operators(name: str, cls: type, check: Callable[[Any, Any], None] | None = None) -> list[Row]:
    """`x (op) y` and `y (op) x`: the two dunder methods of a binary op node class, each running the
    op's argument checks `check(a, b)` first when given (they live outside forward)."""
    return [method(f"__{name}__", operator_method(cls, name, check=check)),
            method(f"__r{name}__", operator_method(cls, name, reflected=True, check=check))]


def checked_operators(name: str, fn: Callable[..., Any]) -> list[Row]:
    """`x (op) y` and `y (op) x` through the public function `fn`, which checks its operands first."""
    return [method(f"__{name}__", binary_method(fn)), method(f"__r{name}__", reflected_method(fn))]


OPS: list[Row] = [
    # ---- arithmetic (ops/arithmetic.py) ---------------------------------------------------------
    op("add", A.add, inplace=True),
    op("sub", A.sub, "subtract", inplace=True),
    op("mul", A.mul, "multiply", inplace=True),
    op("div", A.div, "divide", "true_divide", inplace=True),
    op("pow", A.pow, inplace=True),
    op("floor_divide", A.floor_divide, inplace=True),
    op("remainder", A.remainder, inplace=True),
    op("fmod", A.fmod, inplace=True),
    op("maximum", A.maximum),
    op("minimum", A.minimum),
    op("lerp", A.lerp, inplace=True),
    op("addcmul", A.addcmul, inplace=True),
    op("addcdiv", A.addcdiv, inplace=True),
    *operators("add", A.Add), *operators("mul", A.Mul), *operators("truediv", A.Div),
    *operators("sub", A.Sub, check=A.check_subtraction), *operators("pow", A.Pow, check=A.check_power),
    *checked_operators("mod", A.remainder), *checked_operators("floordiv", A.floor_divide),
    # ---- unary math (ops/unary.py) ---------------------------------------------------------
    op("neg", U.neg, "negative", inplace=True),
    op("abs", U.abs, "absolute", inplace=True),
    op("exp", U.exp, inplace=True),
    op("log", U.log, inplace=True),
    op("log1p", U.log1p, inplace=True),
    op("sqrt", U.sqrt, inplace=True),
    op("rsqrt", U.rsqrt, inplace=True),
    op("sin", U.sin, inplace=True),
    op("cos", U.cos, inplace=True),
    op("tanh", U.tanh, inplace=True),
    op("sigmoid", U.sigmoid, inplace=True),
    op("relu", U.relu, inplace=True),
    op("erf", U.erf, inplace=True),
    op("gelu", U.gelu),
    op("sign", U.sign, "sgn", inplace=True),
    op("square", U.square, inplace=True),
    op("reciprocal", U.reciprocal, inplace=True),
    op("clamp", U.clamp, "clip", inplace=True),
    method("__neg__", U.neg),
    method("__abs__", U.abs),
    # ---- conversions (ops/conversion.py) --------------------------------------------------------
    op("clone", V.clone),
    method("to", V.to),
    method("type", V.type_),
    method("type_as", V.type_as),
    method("float", V.converter("float", _dtype.float32)),
    method("double", V.converter("double", _dtype.float64)),
    method("half", V.converter("half", _dtype.float16)),
    method("long", V.converter("long", _dtype.int64)),
    method("int", V.converter("int", _dtype.int32)),
    method("short", V.converter("short", _dtype.int16)),
    method("char", V.converter("char", _dtype.int8)),
    method("bool", V.converter("bool", _dtype.bool_)),
    method("byte", V.converter("byte", _dtype.uint8)),
    # ---- comparison and logic (ops/compare.py): bool results, no gradient -------------------------
    op("eq", C.eq),
    op("ne", C.ne, "not_equal"),
    op("lt", C.lt, "less"),
    op("le", C.le, "less_equal"),
    op("gt", C.gt, "greater"),
    op("ge", C.ge, "greater_equal"),
    op("logical_and", C.logical_and),
    op("logical_or", C.logical_or),
    op("logical_xor", C.logical_xor),
    op("logical_not", C.logical_not),
    op("bitwise_and", C.bitwise_and),
    op("bitwise_or", C.bitwise_or),
    op("bitwise_xor", C.bitwise_xor),
    op("bitwise_not", C.bitwise_not),
    op("isnan", C.isnan),
    op("isinf", C.isinf),
    op("isfinite", C.isfinite),
    op("equal", C.equal),
    op("allclose", C.allclose),
    op("isclose", C.isclose),
    method("__eq__", C.equality(C.eq)),
    method("__ne__", C.equality(C.ne)),
    method("__lt__", C.lt),
    method("__le__", C.le),
    method("__gt__", C.gt),
    method("__ge__", C.ge),
    method("__and__", C.bitwise_and),
    method("__or__", C.bitwise_or),
    method("__xor__", C.bitwise_xor),
    method("__invert__", C.bitwise_not),
    method("__rand__", reflected_method(C.bitwise_and)),
    method("__ror__", reflected_method(C.bitwise_or)),
    method("__rxor__", reflected_method(C.bitwise_xor)),
    # ---- reductions (ops/reduce.py) --------------------------------------------------------------
    op("sum", R.sum),
    op("mean", R.mean),
    op("var", R.var),
    op("std", R.std),
    op("prod", R.prod),
    op("amax", R.amax),
    op("amin", R.amin),
    op("max", R.max),
    op("min", R.min),
    op("argmax", R.argmax),
    op("argmin", R.argmin),
    op("logsumexp", R.logsumexp),
    op("norm", R.norm),
    op("all", R.all),
    op("any", R.any),
    op("count_nonzero", R.count_nonzero),
    # ---- shape (ops/shape.py) --------------------------------------------------------------------
    op("reshape", S.reshape),
    method("view", S.view),
    method("view_as", S.view_as),
    method("reshape_as", S.reshape_as),
    op("flatten", S.flatten),
    op("unflatten", S.unflatten),
    op("squeeze", S.squeeze),
    op("unsqueeze", S.unsqueeze),
    op("permute", S.permute),
    op("transpose", S.transpose, "swapaxes"),
    op("t", S.t),
    method("T", property(S.reversed_dims)),
    method("mT", property(S.matrix_transpose)),
    op("movedim", S.movedim),
    op("expand", S.expand),
    method("expand_as", S.expand_as),
    function("broadcast_to", S.broadcast_to),
    method("sum_to_size", S.sum_to_size),
    method("contiguous", S.contiguous),
    op("repeat", S.repeat),
    op("flip", S.flip),
    op("narrow", S.narrow),
    op("split", S.split),
    op("chunk", S.chunk),
    op("unbind", S.unbind),
    function("cat", S.cat, "concat", "concatenate"),
    function("stack", S.stack),
    # ---- indexing and masking (ops/indexing.py) --------------------------------------------------
    method("__getitem__", I.getitem),
    method("__setitem__", inplace.setitem),
    op("gather", I.gather),
    op("index_select", I.index_select),
    op("index_fill", I.index_fill, inplace=True),
    op("masked_fill", I.masked_fill, inplace=True),
    op("masked_select", I.masked_select),
    op("scatter", I.scatter, inplace=True),
    op("scatter_add", I.scatter_add, inplace=True),
    op("nonzero", I.nonzero),
    op("tril", I.tril),
    op("triu", I.triu),
    function("where", I.where),
    # ---- linear algebra (ops/linalg.py) ----------------------------------------------------------
    op("matmul", L.matmul),
    *operators("matmul", L.Matmul, check=L.check_matmul),
    op("mm", L.mm),
    op("bmm", L.bmm),
    op("dot", L.dot),
    op("outer", L.outer),
    function("einsum", L.einsum),
    # ---- softmax (ops/softmax.py) ----------------------------------------------------------------
    op("softmax", Soft.softmax),
    op("log_softmax", Soft.log_softmax),
    # ---- selection and sampling (ops/selection.py) -----------------------------------------------
    op("sort", Sel.sort),
    op("argsort", Sel.argsort),
    op("topk", Sel.topk),
    op("cumsum", Sel.cumsum),
    op("multinomial", Sel.multinomial),
    # ---- in place only (ops/inplace.py) ----------------------------------------------------------
    method("fill_", inplace.fill_),
    method("zero_", inplace.zero_),
    method("copy_", inplace.copy_),
    method("uniform_", inplace.uniform_),
    method("normal_", inplace.normal_),
    method("__iadd__", inplace.augmented("__iadd__", lambda t, o: t + o)),
    method("__isub__", inplace.augmented("__isub__", lambda t, o: t - o)),
    method("__imul__", inplace.augmented("__imul__", lambda t, o: t * o)),
    method("__itruediv__", inplace.augmented("__itruediv__", lambda t, o: t / o)),
    method("__ifloordiv__", inplace.augmented("__ifloordiv__", lambda t, o: t // o)),
    method("__imod__", inplace.augmented("__imod__", lambda t, o: t % o)),
    # ---- issue 29: the rest of PyTorch's pointwise ops (ops/unary.py, arithmetic.py, compare.py, special.py) ----
    op("tan", U.tan, inplace=True),
    op("asin", U.asin, "arcsin", inplace=True),
    op("acos", U.acos, "arccos", inplace=True),
    op("atan", U.atan, "arctan", inplace=True),
    op("sinh", U.sinh, inplace=True),
    op("cosh", U.cosh, inplace=True),
    op("asinh", U.asinh, "arcsinh", inplace=True),
    op("acosh", U.acosh, "arccosh", inplace=True),
    op("atanh", U.atanh, "arctanh", inplace=True),
    op("exp2", U.exp2, inplace=True),
    op("expm1", U.expm1, inplace=True),
    op("log2", U.log2, inplace=True),
    op("log10", U.log10, inplace=True),
    op("floor", U.floor, inplace=True),
    op("ceil", U.ceil, inplace=True),
    op("trunc", U.trunc, "fix", inplace=True),
    op("round", U.round, inplace=True),
    op("frac", U.frac, inplace=True),
    op("positive", U.positive),
    op("deg2rad", U.deg2rad, inplace=True),
    op("rad2deg", U.rad2deg, inplace=True),
    op("logit", U.logit, inplace=True),
    op("nan_to_num", U.nan_to_num, inplace=True),
    op("clamp_min", U.clamp_min, inplace=True),
    op("clamp_max", U.clamp_max, inplace=True),
    op("frexp", U.frexp),
    op("atan2", A.atan2, "arctan2", inplace=True),
    op("hypot", A.hypot, inplace=True),
    op("logaddexp", A.logaddexp),
    op("logaddexp2", A.logaddexp2),
    op("copysign", A.copysign, inplace=True),
    op("fmax", A.fmax),
    op("fmin", A.fmin),
    op("xlogy", A.xlogy, inplace=True),
    op("float_power", A.float_power),
    op("ldexp", A.ldexp, inplace=True),
    function("rsub", A.rsub),
    op("nextafter", A.nextafter),
    op("heaviside", A.heaviside),
    op("gcd", A.gcd, inplace=True),
    op("lcm", A.lcm, inplace=True),
    op("bitwise_left_shift", C.bitwise_left_shift, inplace=True),
    op("bitwise_right_shift", C.bitwise_right_shift, inplace=True),
    op("signbit", C.signbit),
    op("isposinf", C.isposinf),
    op("isneginf", C.isneginf),
    op("isreal", C.isreal),
    function("isin", C.isin),
    op("erfc", SP.erfc, inplace=True),
    op("erfinv", SP.erfinv, inplace=True),
    op("lgamma", SP.lgamma, inplace=True),
    op("digamma", SP.digamma, inplace=True),
    function("polygamma", SP.polygamma),
    method("polygamma", SP.polygamma_method, inplace=True),
    op("mvlgamma", SP.mvlgamma, inplace=True),
    op("i0", SP.i0, inplace=True),
    op("sinc", SP.sinc, inplace=True),
    op("igamma", SP.igamma, inplace=True),
    op("igammac", SP.igammac, inplace=True),
    # the in-place comparisons: x.eq_(y) writes 1 or 0 in x's dtype, with a zero gradient (see compare.Compared)
    *[method(name + "_", C.in_place(name + "_", fn)) for name, fn in (
        ("eq", C.eq), ("ne", C.ne), ("not_equal", C.ne), ("lt", C.lt), ("less", C.lt), ("le", C.le),
        ("less_equal", C.le), ("gt", C.gt), ("greater", C.gt), ("ge", C.ge), ("greater_equal", C.ge),
        ("logical_and", C.logical_and), ("logical_or", C.logical_or), ("logical_xor", C.logical_xor),
        ("logical_not", C.logical_not), ("bitwise_and", C.bitwise_and), ("bitwise_or", C.bitwise_or),
        ("bitwise_xor", C.bitwise_xor), ("bitwise_not", C.bitwise_not))],
    # ---- factories and autograd that are methods too ---------------------------------------------
    op("bernoulli", F.bernoulli),
    method("new_tensor", F.new_tensor),
    method("new_zeros", F.new_zeros),
    method("new_ones", F.new_ones),
    method("new_empty", F.new_empty),
    method("new_full", F.new_full),
    method("backward", api.tensor_backward),
]


def methods() -> dict[str, Callable[..., Any] | property]:
    """{name: what Tensor gets under it}, every alias and derived in-place method included."""
    out: dict[str, Callable[..., Any] | property] = {}
    for row in OPS:
        if not row.method:
            continue
        for name in row.names():
            out[name] = row.fn
            if row.inplace:
                assert callable(row.fn)
                out[name + "_"] = inplace.inplace_method(name + "_", row.fn)
    return out


def attach() -> None:
    """Give Tensor its methods, once (minitensor/ops/__init__.py calls it)."""
    for name, fn in methods().items():
        setattr(Tensor, name, fn)
