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

import functools
import inspect as _inspect
import warnings
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import _dtype, factories as F
from ..autograd import api, grad_mode
from ..tensor import Tensor
from . import (  # (h-names29: binning, differences, householder, lowrank, mapped, segments)
    arithmetic as A,
    binning as Bin,
    compare as C,
    conversion as V,
    counting as Cnt,
    decompositions as Dec,
    differences as Dif,
    householder as HH,
    indexing as I,
    inplace,
    joining as J,
    linalg as L,
    lowrank as LR,
    mapped as Map,
    matrix as Mx,
    namespace as NS,
    order as Ord,
    reduce as R,
    scans as Sc,
    scatter as Sct,
    segments as Seg,
    selection as Sel,
    shape as S,
    softmax as Soft,
    special as SP,
    storage as St,
    unary as U,
)
from ._util import binary_method, operator_method, reflected_method, tensor_input


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


def inplace_only(name: str, fn: Callable[..., Any]) -> Row:
    """`Tensor.<name>_` only, derived from fn: for an op whose other forms another row already makes."""
    return Row(name, fn, (), method=False, function=False, inplace=True)


def operators(name: str, cls: type, check: Callable[[Any, Any], None] | None = None,
              prepare: Callable[[Any, Any], tuple[Any, Any]] | None = None, elementwise: bool = True) -> list[Row]:
    """`x (op) y` and `y (op) x`: the two dunder methods of a binary op node class, each running the
    op's argument checks `check(a, b)` and bringing the operands to the op's dtype with
    `prepare(a, b)` first when given (both live outside forward)."""
    return [method(f"__{name}__", operator_method(cls, name, False, check, prepare, elementwise)),
            method(f"__r{name}__", operator_method(cls, name, True, check, prepare, elementwise))]


def checked_operators(name: str, fn: Callable[..., Any]) -> list[Row]:
    """`x (op) y` and `y (op) x` through the public function `fn`, which checks its operands first."""
    return [method(f"__{name}__", binary_method(fn)), method(f"__r{name}__", reflected_method(fn))]


OPS: list[Row] = [
    # ---- arithmetic (ops/arithmetic.py) ---------------------------------------------------------
    op("add", A.add, inplace=True),
    op("sub", A.sub, "subtract", inplace=True),
    op("mul", A.mul, "multiply", inplace=True),
    op("div", A.div, "divide", inplace=True),
    op("true_divide", A.true_divide, inplace=True),  # (h-sig29b: div without rounding_mode, as PyTorch's)
    op("pow", A.pow, inplace=True),
    op("floor_divide", A.floor_divide, inplace=True),
    op("remainder", A.remainder, inplace=True),
    op("fmod", A.fmod, inplace=True),
    op("maximum", A.maximum),
    op("minimum", A.minimum),
    op("lerp", A.lerp, inplace=True),
    op("addcmul", A.addcmul, inplace=True),
    op("addcdiv", A.addcdiv, inplace=True),
    *operators("add", A.Add, prepare=A.prepare_addition), *operators("mul", A.Mul, prepare=V.prepare_operands),
    *operators("truediv", A.Div, prepare=V.prepare_division),
    *operators("sub", A.Sub, prepare=A.prepare_subtraction), *operators("pow", A.Pow, check=A.check_power),
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
    op("transpose", S.transpose),
    op("swapaxes", S.swapaxes),  # (h-sig29b: numpy's argument names, axis0 and axis1, as PyTorch's swapaxes)
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
    function("split", S.split),
    method("split", S.split_method),  # (h-sig29b: Tensor.split's own names, split_size)
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
    op("tril", I.tril, inplace=True),  # (tril_ and triu_: issue 29)
    op("triu", I.triu, inplace=True),
    function("where", I.where),
    # ---- linear algebra (ops/linalg.py) ----------------------------------------------------------
    op("matmul", L.matmul),
    *operators("matmul", L.Matmul, check=L.check_matmul, elementwise=False),
    op("mm", L.mm),
    op("bmm", L.bmm),
    op("dot", L.dot),
    op("outer", L.outer),
    function("einsum", L.einsum),
    # ---- issue 29, linear algebra and reductions (ops/linalg.py, decompositions.py, matrix.py, scans.py,
    # order.py, reduce.py): BLAS-like products, decompositions, scans and order statistics ------------
    op("addmm", L.addmm, inplace=True),
    op("addmv", L.addmv, inplace=True),
    op("addbmm", L.addbmm, inplace=True),
    op("baddbmm", L.baddbmm, inplace=True),
    op("addr", L.addr, inplace=True),
    op("mv", L.mv),
    op("ger", L.outer),
    op("inner", L.inner),
    op("vdot", L.vdot),
    function("tensordot", L.tensordot),
    function("chain_matmul", L.chain_matmul),
    op("trace", L.trace),
    op("det", Dec.torch_det),
    op("logdet", Dec.logdet),
    op("slogdet", Dec.torch_slogdet),
    op("inverse", Mx.inverse),
    op("pinverse", Mx.pinverse),
    op("cholesky", Mx.cholesky),
    op("cholesky_solve", Mx.cholesky_solve),
    op("cholesky_inverse", Mx.cholesky_inverse),
    op("qr", Mx.torch_qr),
    op("svd", Mx.torch_svd),
    op("lu_solve", Mx.torch_lu_solve),
    op("triangular_solve", Mx.triangular_solve),
    op("matrix_power", Mx.torch_matrix_power),
    op("matrix_exp", Dec.torch_matrix_exp),
    op("cross", Mx.torch_cross),
    function("cdist", Mx.cdist),
    op("dist", Mx.dist),
    function("pdist", Mx.pdist),
    op("cov", Mx.cov),
    op("corrcoef", Mx.corrcoef),
    op("renorm", Mx.renorm, inplace=True),
    function("frobenius_norm", Mx.frobenius_norm),
    function("nuclear_norm", Mx.nuclear_norm),
    function("vander", Mx.torch_vander),
    op("cumprod", Sc.cumprod, inplace=True),
    op("cummax", Sc.cummax),
    op("cummin", Sc.cummin),
    op("logcumsumexp", Sc.logcumsumexp),
    op("diff", Sc.diff),
    function("trapezoid", Sc.trapezoid, "trapz"),
    function("cumulative_trapezoid", Sc.cumulative_trapezoid),
    op("nansum", R.nansum),
    op("nanmean", R.nanmean),
    op("aminmax", R.aminmax),
    function("std_mean", R.std_mean),
    function("var_mean", R.var_mean),
    op("median", Ord.median),
    op("nanmedian", Ord.nanmedian),
    op("kthvalue", Ord.kthvalue),
    op("mode", Ord.mode),
    op("quantile", Ord.quantile),
    op("nanquantile", Ord.nanquantile),
    op("msort", Ord.msort),
    # ---- end of issue 29's rows -------------------------------------------------------------------
    # ---- softmax (ops/softmax.py) ----------------------------------------------------------------
    op("softmax", Soft.softmax),
    op("log_softmax", Soft.log_softmax),
    # ---- selection and sampling (ops/selection.py) -----------------------------------------------
    op("sort", Sel.sort),
    op("argsort", Sel.argsort),
    op("topk", Sel.topk),
    op("cumsum", Sel.cumsum),
    op("multinomial", Sel.multinomial),
    # ---- issue 29: shape, joining, indexing and counting ops PyTorch has ---------------------------
    # shape (ops/shape.py)
    op("roll", S.roll),
    op("rot90", S.rot90),
    op("fliplr", S.fliplr),
    op("flipud", S.flipud),
    op("tile", S.tile),
    function("repeat_interleave", S.repeat_interleave),  # (h-errs30c: the method wants repeats)
    method("repeat_interleave", S.repeat_interleave_method),
    op("ravel", S.ravel),
    op("narrow_copy", S.narrow_copy),
    op("select", S.select),
    op("diagonal", S.diagonal),
    op("diag", S.diag),
    op("diag_embed", S.diag_embed),
    op("diagflat", S.diagflat),
    method("unfold", S.unfold),
    op("as_strided", S.as_strided),
    op("moveaxis", S.movedim),
    op("swapdims", S.transpose),
    method("broadcast_to", S.broadcast_to),
    function("broadcast_tensors", S.broadcast_tensors),
    method("transpose_", S.transpose_, "swapdims_"),
    method("swapaxes_", S.swapaxes_),
    method("t_", S.t_),
    method("squeeze_", S.squeeze_),
    method("unsqueeze_", S.unsqueeze_),
    # joining and splitting (ops/joining.py)
    function("atleast_1d", J.atleast_1d),
    function("atleast_2d", J.atleast_2d),
    function("atleast_3d", J.atleast_3d),
    function("hstack", J.hstack),
    function("vstack", J.vstack),
    function("row_stack", J.row_stack),
    function("dstack", J.dstack),
    function("column_stack", J.column_stack),
    op("tensor_split", J.tensor_split),
    op("hsplit", J.hsplit),
    op("vsplit", J.vsplit),
    op("dsplit", J.dsplit),
    op("split_with_sizes", J.split_with_sizes),
    function("meshgrid", J.meshgrid),
    function("cartesian_prod", J.cartesian_prod),
    function("combinations", J.combinations),
    function("block_diag", J.block_diag),
    op("kron", J.kron),
    # gathering and scattering (ops/scatter.py)
    op("take", Sct.take),
    op("take_along_dim", Sct.take_along_dim),
    op("put", Sct.put, inplace=True),
    op("index_add", Sct.index_add, inplace=True),
    op("index_copy", Sct.index_copy, inplace=True),
    op("index_put", Sct.index_put, inplace=True),
    op("index_reduce", Sct.index_reduce, inplace=True),
    op("masked_scatter", Sct.masked_scatter, inplace=True),
    op("scatter_reduce", Sct.scatter_reduce, inplace=True),
    op("select_scatter", Sct.select_scatter),
    op("slice_scatter", Sct.slice_scatter),
    op("diagonal_scatter", Sct.diagonal_scatter),
    method("where", Sct.tensor_where),
    # counting, binning and searching (ops/counting.py)
    op("argwhere", Cnt.argwhere),
    op("unique", Cnt.unique),
    op("unique_consecutive", Cnt.unique_consecutive),
    op("bincount", Cnt.bincount),
    op("histc", Cnt.histc),
    op("histogram", Cnt.histogram),
    function("bucketize", Cnt.bucketize),
    function("searchsorted", Cnt.searchsorted),
    function("tril_indices", Cnt.tril_indices),
    function("triu_indices", Cnt.triu_indices),
    function("unravel_index", Cnt.unravel_index),
    # storage and in-place fills (ops/storage.py)
    method("resize_", St.resize_),
    method("resize_as_", St.resize_as_),
    method("new", St.new),
    method("random_", St.random_),
    method("fill_diagonal_", St.fill_diagonal_),
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
    # ---- issue 29 (h-torchns): the rest of torch's namespace and Tensor's methods (ops/namespace.py) ----
    op("angle", NS.angle),
    op("adjoint", NS.adjoint),
    method("H", property(NS.conj_transpose)),
    method("mH", property(NS.matrix_conj_transpose)),
    op("unsafe_chunk", NS.unsafe_chunk),
    op("unsafe_split", NS.unsafe_split),
    op("unsafe_split_with_sizes", NS.unsafe_split_with_sizes),
    op("nonzero_static", NS.nonzero_static),
    method("as_strided_", NS.as_strided_),
    op("as_strided_scatter", NS.as_strided_scatter),
    method("dim_order", NS.dim_order),
    method("resize", NS.resize),
    method("resize_as", NS.resize_as),
    method("new_empty_strided", NS.new_empty_strided),
    op("lu", NS.lu),
    function("lu_unpack", NS.lu_unpack),
    method("bernoulli_", NS.bernoulli_),
    method("cauchy_", NS.cauchy_),
    method("exponential_", NS.exponential_),
    method("geometric_", NS.geometric_),
    method("log_normal_", NS.log_normal_),
    function("binomial", NS.binomial),
    function("poisson", NS.poisson),
    method("apply_", NS.apply_),
    method("map_", NS.map_),
    method("map2_", NS.map2_),
    inplace_only("cumsum", Sel.cumsum),
    inplace_only("heaviside", A.heaviside),
    inplace_only("nextafter", A.nextafter),
    method("float_power_", NS.float_power_),
    method("bfloat16", NS.bfloat16),
    method("const_data_ptr", NS.const_data_ptr),
    method("as_subclass", NS.as_subclass),
    method("module_load", NS.module_load),
    method("layout", NS.layout),
    method("is_mps", NS.is_mps),
    method("name", NS.name),
    method("grad_dtype", NS.grad_dtype),
    op("hash_tensor", NS.hash_tensor),
    # ---- end of h-torchns's rows ------------------------------------------------------------------
    # ---- issue 29 (h-names29): torch's last in-scope names, each a composite of the ops above --------
    op("geqrf", HH.geqrf),
    op("orgqr", HH.orgqr),
    op("ormqr", HH.ormqr),
    function("gradient", Dif.gradient),
    function("histogramdd", Bin.histogramdd),
    function("segment_reduce", Seg.segment_reduce),
    function("svd_lowrank", LR.svd_lowrank),
    function("pca_lowrank", LR.pca_lowrank),
    function("lobpcg", LR.lobpcg),
    function("from_file", Map.from_file),
    # ---- end of h-names29's rows -------------------------------------------------------------------
]


# ---- `out=`: the functions PyTorch lets write their result into a given tensor ----------------------
# A function row whose name (or alias) is here gets the keyword `out=` in minitensor's namespace
# (`minitensor.add(a, b, out=c)`; methods take no `out=`, as in PyTorch), made by `with_out` below
# and bound by scripts/gen_api.py; a row added later under one of these names gets it too. The
# names are PyTorch's functions that take `out=` (its factories' `out=` is left out: see
# docs/notes/misc_differences.md).
OUT_FORMS = frozenset({
    "abs", "absolute", "acos", "acosh", "add", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "all",
    "amax", "amin", "any", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "argmax",
    "argmin", "asin", "asinh", "atan", "atan2", "atanh", "baddbmm", "bernoulli", "bitwise_and",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "bmm", "bucketize",
    "cat", "ceil", "chain_matmul", "cholesky", "cholesky_inverse", "cholesky_solve", "clamp", "clamp_max",
    "clamp_min", "clip", "column_stack", "concat", "concatenate", "copysign", "cos", "cosh", "cross", "cummax",
    "cummin", "cumprod", "cumsum", "deg2rad", "diag", "diff", "digamma", "div", "divide", "dot", "dstack", "eq",
    "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "fix", "float_power", "floor", "floor_divide", "fmax", "fmin",
    "fmod", "frac", "frexp", "gather", "gcd", "ge", "ger", "greater", "greater_equal", "gt", "heaviside", "histc",
    "hstack", "hypot", "i0", "index_add", "index_select", "inner", "inverse", "isin", "isneginf", "isposinf",
    "kron", "kthvalue", "lcm", "ldexp", "le", "lerp", "less", "less_equal", "lgamma", "log", "log10", "log1p",
    "log2", "log_softmax", "logaddexp", "logaddexp2", "logcumsumexp", "logical_and", "logical_not", "logical_or",
    "logical_xor", "logit", "logsumexp", "lt", "masked_select", "matmul", "matrix_power", "max", "maximum", "mean",
    "median", "min", "minimum", "mm", "mode", "msort", "mul", "multinomial", "multiply", "mv", "mvlgamma",
    "nan_to_num", "nanmean", "nanmedian", "nanquantile", "nansum", "ne", "neg", "negative", "nextafter", "nonzero",
    "norm", "not_equal", "outer", "polygamma", "pow", "prod", "quantile", "rad2deg", "reciprocal", "remainder",
    "renorm", "round", "row_stack", "rsqrt", "scatter", "scatter_add", "searchsorted", "sgn", "sigmoid", "sign",
    "signbit", "sin", "sinc", "sinh", "softmax", "sort", "sqrt", "square", "stack", "std", "sub", "subtract", "sum",
    "take", "take_along_dim", "tan", "tanh", "topk", "tril", "triu", "true_divide", "trunc", "var", "vdot",
    "vstack", "where", "xlogy",
}) | frozenset({  # (h-sig29b: issue 29, the rest of PyTorch's functions with out=)
    "aminmax", "angle", "argsort", "frobenius_norm", "hash_tensor", "histogram", "igamma", "igammac", "index_copy",
    "index_reduce", "lu_solve", "lu_unpack", "narrow_copy", "nonzero_static", "nuclear_norm", "qr", "scatter_reduce",
    "slice_scatter", "slogdet", "svd", "tensordot", "triangular_solve",
}) | frozenset({  # (h-names29: issue 29's Householder QR pieces)
    "geqrf", "orgqr", "ormqr",
})


# ---- issue 29 (h-torchns): the in-place functions of PyTorch's namespace --------------------------
# PyTorch has `torch.abs_(t)` (which is `t.abs_()`) for some of its in-place methods only: these are
# the names it has (a fact about PyTorch, like OUT_FORMS; tests/minitensor/test_torch_namespace_ops.py
# checks the set against torch). scripts/gen_api.py binds each in `minitensor/__init__.py` to the
# Tensor method of that name, the in-place method a row above derives (or an in-place-only method).
NAMESPACE_INPLACE = frozenset({
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
    "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
    "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_",
    "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "resize_as_", "round_", "rsqrt_",
    "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_",
})


# What no function of the namespace takes as its first argument (a tensor, a number or a sequence of tensors):
# refused up front with PyTorch's TypeError rather than an AttributeError from inside the op
NOT_AN_INPUT = (str, bytes, dict, set, type(None))


def _refuse_non_input(name: str, args: tuple[Any, ...]) -> None:
    if args and isinstance(args[0], NOT_AN_INPUT):
        tensor_input(args[0], name)  # its TypeError names the op and what it got


def tensor_first(namespace: dict[str, Any], *names: str) -> dict[str, Callable[..., Any]]:
    """{name: the function `namespace[name]`} (minitensor/__init__.py rebinds them), each refusing a first argument
    no op takes (NOT_AN_INPUT) with PyTorch's TypeError; the op is `__wrapped__`, its signature unchanged."""
    def guarded(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            _refuse_non_input(name, args)
            return fn(*args, **kwargs)
        return checked
    return {name: guarded(name, namespace[name]) for name in names}


def with_out(name: str, fn: Callable[..., Any], tensor_first: bool = True) -> Callable[..., Any]:
    """`fn` taking PyTorch's `out=`: with `out=None` it is `fn`; else the result is written into the
    tensor `out` (a tuple of them for an op with several results, such as `max(x, dim)`), which is
    returned. The rules are PyTorch's: no autograd through `out=`, the result's dtype must cast to
    out's without dropping a category (float into int64 is refused), and an `out` of another shape
    is resized (with PyTorch's warning when it held elements). Nothing is written when a check fails."""

    @functools.wraps(fn)
    def fn_with_out(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if tensor_first:  # (a factory's first argument is a size)
            _refuse_non_input(name, args)
        if out is None:
            return fn(*args, **kwargs)
        outs = (out,) if isinstance(out, Tensor) else tuple(out) if isinstance(out, (tuple, list)) else None
        if not outs or not all(isinstance(o, Tensor) for o in outs):
            raise TypeError(f"{name}(): argument 'out' must be a Tensor (a tuple of Tensors for an op with several "
                            f"results), not {type(out).__name__}")
        if grad_mode.modes.grad_enabled and any(t.requires_grad for t in _tensors((args, kwargs, outs))):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        result = fn(*args, **kwargs)
        results = (result,) if isinstance(result, Tensor) else tuple(result)
        if len(results) != len(outs):
            raise TypeError(f"{name}(): out= takes {len(results)} tensor(s) for this call, got {len(outs)}")
        for r, o in zip(results, outs):
            if not _dtype.can_cast(r.dtype, o.dtype):
                raise RuntimeError(f"{name}(): result type {_dtype.scalar_name(r.dtype)} can't be cast to the desired "
                                   f"output type {_dtype.scalar_name(o.dtype)}")
        for r, o in zip(results, outs):
            _write_into(o, r._array)
        return out

    sig = _inspect.signature(fn)
    params = list(sig.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    params.insert(at, _inspect.Parameter("out", _inspect.Parameter.KEYWORD_ONLY, default=None,
                                         annotation="Tensor | tuple[Tensor, ...] | None"))
    fn_with_out.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return fn_with_out


# ---- issue 29 (h-sig29b): `out=` on the factories, as PyTorch's take it ---------------------------------
# A factory writing into `out` makes values of out's dtype unless `dtype=` says otherwise
# (`zeros(2, out=long_tensor)` fills it with int64 zeros), then writes them as with_out does.

FACTORY_OUT_FORMS = ("arange", "empty", "eye", "full", "linspace", "logspace", "normal", "ones", "rand", "randint",
                     "randn", "randperm", "range", "zeros")


def factory_with_out(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """The factory `fn` taking PyTorch's `out=` (see with_out); `out`'s dtype is the default dtype."""
    written = with_out(name, fn, tensor_first=False)

    @functools.wraps(written)
    def factory(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if isinstance(out, Tensor) and kwargs.get("dtype") is None and not (
                name == "normal" and any(isinstance(a, Tensor) for a in args)):  # (normal(mean_tensor) keeps its dtype)
            kwargs["dtype"] = out.dtype
        return written(*args, out=out, **kwargs)

    factory.__signature__ = written.__signature__  # type: ignore[attr-defined]
    return factory


def _tensors(obj: Any) -> list[Tensor]:
    """The tensors in args, kwargs and lists of them (`cat([a, b], out=c)`)."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (tuple, list)):
        return [t for item in obj for t in _tensors(item)]
    return []


def _write_into(out: Tensor, values: np.ndarray[Any, Any]) -> None:
    if out.shape == values.shape:
        np.copyto(out._array, values, casting="unsafe")
    else:
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(values.shape)}. PyTorch deprecates "
                          "this: resize the out tensor to zero elements first (t.resize_(0) in PyTorch).",
                          UserWarning, stacklevel=3)
        out._array = values.astype(out.dtype, copy=True)
    out._bump_version()


def out_functions(*names: str) -> tuple[Callable[..., Any], ...]:
    """The namespace functions under `names` (each in OUT_FORMS), taking `out=` (minitensor/__init__.py binds them)."""
    fns = {name: row.fn for row in OPS if row.function for name in row.names()}
    return tuple(with_out(name, fns[name]) for name in names)


def methods() -> dict[str, Callable[..., Any] | property]:
    """{name: what Tensor gets under it}, every alias and derived in-place method included."""
    out: dict[str, Callable[..., Any] | property] = {}
    for row in OPS:
        if not (row.method or row.inplace):
            continue
        for name in row.names():
            if row.method:
                out[name] = row.fn
            if row.inplace:
                assert callable(row.fn)
                out[name + "_"] = inplace.inplace_method(name + "_", row.fn)
    return out


def attach() -> None:
    """Give Tensor its methods, once (minitensor/ops/__init__.py calls it)."""
    for name, fn in methods().items():
        setattr(Tensor, name, fn)
