r"""In-place ops: `add_`, `mul_`, `masked_fill_`, `x[key] = v`, `x += y` ... recorded in the graph, as in PyTorch.

An in-place op computes the new value with the ordinary (out-of-place) op, then writes it into the
tensor's own memory and bumps its version counter. When a gradient can flow through it, the
tensor's history is rewritten: its `grad_fn` becomes the op's node, whose input is the tensor as
it was *before* the change (a copy, so the node can still read the old values). So

    scores.masked_fill_(mask, -inf)   # scores.grad_fn is now the masking node
    buf[0] = h * 2                    # a plain buffer now carries h's graph
    x += 1                            # x itself changes: every alias of x sees it

all give PyTorch's gradients. Any node that saved the old value (e.g. `exp`, whose backward reads
its output) sees the new version and refuses to run backward, as in PyTorch.

Through a *view*, the base changes too (they share memory), so the base's history is rewritten as
well: its `grad_fn` becomes a `CopySlices` node, "the base as it was, with the view's region
replaced by the op's result". So d2l's masking of attention scores works as in PyTorch:

    X = scores.reshape(-1, n)         # a view of scores, which is in the graph
    X[~mask] = -1e6                   # X's node is the fill; scores' node is CopySlices

A leaf that requires grad can't change in place while recording, directly or through a view, as in
PyTorch (update it under `no_grad()`). Other views of the base taken before the change are out of
date afterwards: using them raises an error that says to take the view again (PyTorch replays them).
"""
from __future__ import annotations

import inspect
import weakref
from typing import Any, Callable

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..autograd.function import Function
from ..random import Generator, _gen
from ..tensor import Tensor
from ..types import Index, TensorOrNumber
from ._util import float_arg, operand, tensor_input
from .conversion import cast
from .indexing import IndexPut, _index_key, fill_value, where

#: the speed layer's slot (minitensor/fast/inplace.py, registered by `fast.plug_in`; None: the plain path
#: runs): `fast_in_place(self, op, args, kwargs)` writes op's result into self and returns True, when nothing
#: records the op and the case is its own; else it returns False and touches nothing.
fast_in_place: Callable[[Tensor, str, tuple[Any, ...], dict[str, Any]], bool] | None = None


def _any_requires_grad(values):
    for x in values:  # (a loop: `any` over a generator costs twice as much, and an optimizer's step runs this)
        if isinstance(x, Tensor) and x._rg:
            return True
    return False


def inplace(self: Tensor, op: str, compute: Callable[..., Tensor], *args: Any, **kwargs: Any) -> Tensor:
    """Run `compute(old, *args, **kwargs)`, the out-of-place op, and make its result `self`'s new value."""
    tensor_input(self, op)  # `minitensor.abs_("a")` calls this with whatever it was given
    if not self._array.flags.writeable:  # an expanded view: several of its elements are one memory location
        raise RuntimeError(
            f"{op}: unsupported operation: more than one element of the written-to tensor (shape "
            f"{tuple(self.shape)}, an expanded view) refers to a single memory location; clone() it first"
        )
    grad_on = grad_mode.modes.grad_enabled
    records = grad_on and (self._rg or _any_requires_grad(args) or _any_requires_grad(kwargs.values()))
    if grad_on and self._base is not None and not records and self._base._rg:
        raise RuntimeError(
            f"{op}: a view of a tensor that requires grad, taken under no_grad (so it is not part of the "
            "graph), is being changed in place with grad mode enabled: the base's graph would not know. "
            "Do the change under no_grad too, or take the view with grad mode enabled"
        )
    if records:
        if self._rg and self.grad_fn is None:
            raise RuntimeError(
                f"{op}: a leaf Variable that requires grad is being used in an in-place operation. To "
                "update its values without recording (a training step), do it under `with minitensor.no_grad():`; "
                "to compute a new value from it, use the out-of-place op (`x = x + 1`)"
            )
        region = None if self._base is None else _region_of(self._base, self, op)  # (refused: before any change)
        old = Tensor._make(self._array.copy())  # the value before the change, with its history
        old.grad_fn, old._rg = self.grad_fn, self._rg
        result = _named(op, compute, old, *args, **kwargs)
    elif fast_in_place is not None and fast_in_place(self, op, args, kwargs):  # (the speed layer: it wrote self)
        return self
    else:  # (nothing it reads requires grad, or grad mode is off: computing records no node)
        result = _named(op, compute, self, *args, **kwargs)
    if result._array.shape != self._array.shape:
        raise RuntimeError(  # (PyTorch's words after the op's name: the in-place tensor is the op's output)
            f"{op}: output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}")
    if result._array.dtype != self._array.dtype:
        # PyTorch's rule: no float into int, no int into bool
        if _KIND_RANK[result.dtype.kind] > _KIND_RANK[self.dtype.kind]:
            raise RuntimeError(f"{op}: result type {result.dtype} can't be cast to the "
                               f"in-place output type {self.dtype}")
        result = cast(result, self._array.dtype)  # PyTorch keeps the tensor's dtype
    np.copyto(self._array, result._array)
    self._bump_version()
    if records and result._rg:  # the node that made `result` now made `self`
        _now_made_by(result.grad_fn, self)
        if region is not None:  # a view: its base changed as well
            _rewrite_base(self, result, region)
    return self


def _now_made_by(node: Any, t: Tensor) -> None:
    """Make `node` the one that made `t` as it is now (t changed in place): its output, and t's grad_fn."""
    before = t.grad_fn
    node._out, node.output_version = weakref.ref(t), t._version
    if node.saves_values:
        node.saved_output = t.detach()
    if before is not None and before.retain:  # retain_grad() asked for t's gradient: the new value's
        node.retain, before.retain = True, False
    t.grad_fn, t._rg = node, True


def _region_of(base: Tensor, view: Tensor, op: str) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Where `view` lies in `base`'s memory, as `as_strided` takes it: (shape, strides, offset) in elements.
    Refuses a view of a leaf that requires grad (as PyTorch), and the views whose place it can't name."""
    if base._rg and base.grad_fn is None:
        raise RuntimeError(
            f"{op}: a view of a leaf Variable that requires grad is being used in an in-place operation. To "
            "update its values without recording, do it under `with minitensor.no_grad():`"
        )
    b, v = base._array, view._array
    offset = v.__array_interface__["data"][0] - b.__array_interface__["data"][0]
    item = b.itemsize
    if not b.flags.c_contiguous or v.dtype != b.dtype or offset % item or any(s % item for s in v.strides):
        raise RuntimeError(
            f"{op}: an in-place operation on this view (shape {tuple(view.shape)}) of a tensor whose gradient "
            "is tracked is not supported in minitensor (its base's memory is not laid out in order); write "
            "into the base tensor itself, or use the out-of-place op"
        )
    return tuple(v.shape), tuple(s // item for s in v.strides), offset // item


def _rewrite_base(view: Tensor, result: Tensor, region: tuple[tuple[int, ...], tuple[int, ...], int]) -> None:
    """The base of `view` now holds `result` in the view's region: its node becomes CopySlices of its old
    history and `result`, and the view, whose node is result's, stays current with it."""
    base = view._base
    assert base is not None
    before = Tensor._make(base._array)  # (the base's history; CopySlices reads no values)
    before.grad_fn, before._rg = base.grad_fn, base._rg
    node = CopySlices.apply(before, result, region).grad_fn
    _now_made_by(node, base)
    view._base_grad_fn = node


class CopySlices(Function):
    r"""A base whose view changed in place: new = before, with the view's region (shape, strides, offset:
    `region`) replaced by `values`.

    forward: new = before;  new[region] = values   (already written through the view)
    VJP:     g_before = g with the region zeroed;  g_values = g[region]
    """
    saves_values = False

    @staticmethod
    def forward(ctx, before, values, region):
        return before._array  # (the base's own memory, already written: only this node is kept, on the base)

    @staticmethod
    def backward(ctx, g):
        shape, strides, offset = ctx.inputs[2]
        outside = np.ones(g.shape, dtype=g._array.dtype)
        np.lib.stride_tricks.as_strided(outside.reshape(-1)[offset:], shape,
                                        tuple(s * outside.itemsize for s in strides))[...] = 0
        g = g.contiguous()
        return g * Tensor._make(outside), g.as_strided(shape, strides, offset), None


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}


def _named(op, compute, *args, **kwargs):
    """compute(*args, **kwargs), its errors naming the in-place op the user called."""
    try:
        return compute(*args, **kwargs)
    except RuntimeError as e:
        head, sep, rest = str(e).partition(": ")
        # 'add: ...' -> 'add_: ...', of the same class (a dtype refusal stays a NotImplementedError)
        raise type(e)(f"{op}: {rest if sep and ' ' not in head else e}") from None


def inplace_method(op: str, fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The in-place method `op` (e.g. `add_`) of the out-of-place op `fn`: `x.add_(y)` runs
    `add(x, y)` and writes the result into x (`inplace`). The op table derives one for each row
    marked `inplace=True`; its signature and formulas are fn's. An op whose in-place form refuses more
    than its result's dtype tells (`cumsum_` on bools) names the check as `fn.inplace_check`."""
    check = getattr(fn, "inplace_check", None)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        if check is not None:
            check(self, op, *args, **kwargs)
        return inplace(self, op, fn, *args, **kwargs)

    method.__name__ = method.__qualname__ = op
    method.__doc__ = (f"In place: `x.{op}(...)` makes x what `{fn.__name__}` would return (recorded in the "
                      f"graph).\n\n`{fn.__name__}`: " + inspect.cleandoc(fn.__doc__ or ""))
    first, *rest = inspect.signature(fn).parameters.values()
    method.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # what help() and the stub show
        [first.replace(name="self")] + rest, return_annotation="Self")
    return method


def _filled(t, value):
    """t's shape filled with `value` (a number or a 0-d/broadcastable tensor), as an op: the gradient
    reaches value, not t."""
    value = fill_value(operand(value, "fill_"), t.dtype, "fill_")  # t's dtype (a number must fit it), as in PyTorch
    return where(Tensor._make(np.ones((), dtype=bool)), value, t)


def fill_(self: Tensor, value: TensorOrNumber) -> Tensor:
    r"""In place: every element becomes `value` (a Where node that takes value everywhere).

    forward: out = value, broadcast to x's shape
    VJP:     gx = 0;  gvalue = \sum g   (when value is a tensor)
    """
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill_: only supports a 0-dimension value tensor, got one of shape {tuple(value.shape)}")
    return inplace(self, "fill_", _filled, value)


def zero_(self: Tensor) -> Tensor:
    """In place: every element becomes 0 (a Where node that takes 0 everywhere).

    forward: out = 0
    VJP:     gx = 0   (the old values no longer matter)
    """
    return inplace(self, "zero_", _filled, 0)


def copy_(self: Tensor, other: TensorOrNumber, non_blocking: bool = False) -> Tensor:
    """In place: the values of `other` (src below; broadcast to self's shape, cast to self's dtype); the gradient
    flows to src.

    forward: out = src, broadcast to x's shape
    VJP:     gx = 0;  gsrc = unbroadcast(g, src.shape)
    """
    src = operand(other, "copy_")
    if not isinstance(src, Tensor):  # a number becomes a tensor first, then converts like one (unchecked)
        src = Tensor._make(np.asarray(src))
    if src.dtype != self.dtype:
        src = cast(src, self._array.dtype)  # copy_ converts any dtype, as in PyTorch
    return inplace(self, "copy_", _filled, src)


def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """In place: values drawn uniformly from [from_, to).

    forward: out = u,  u ~ U[a, b)   (drawn, no input of the graph)
    VJP:     gx = 0
    """
    _dtype.for_draws(self.dtype, "uniform_")
    if not from_ <= to:
        raise RuntimeError(f"uniform_: expects to return a [from, to) range, but found from={from_} > to={to}")
    return inplace(self, "uniform_", _filled,
                   Tensor._make(_gen(generator).uniform(from_, to, self.shape).astype(self.dtype)))


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """In place: values drawn from N(mean, std^2).

    forward: out = z,  z ~ N(mean, std^2)   (drawn, no input of the graph)
    VJP:     gx = 0
    """
    mean, std = float_arg(mean, "normal_", "mean"), float_arg(std, "normal_", "std")
    _dtype.for_draws(self.dtype, "normal_")
    if not std >= 0:
        raise RuntimeError(f"normal_: expects std >= 0.0, but found std {std}")
    return inplace(self, "normal_", _filled,
                   Tensor._make(_gen(generator).normal(mean, std, self.shape).astype(self.dtype)))


def setitem(self: Tensor, index: Index, value: TensorOrNumber) -> None:
    """`x[index] = value`: recorded as IndexPut, so a value that requires grad keeps its graph."""
    key = _index_key(index)
    if isinstance(value, (bool, int, float)):
        if type(value) is int and not -2 ** 63 <= value < 2 ** 63:
            raise ValueError(f"__setitem__: overflow when unpacking long long: {value} does not fit in int64")
        value = _dtype.scalar_to(value, self.dtype, "__setitem__")  # it must fit self's dtype, as in PyTorch
    else:
        value = operand(value, "__setitem__")
    try:  # check first, so a bad index or value leaves the tensor (and its version) unchanged
        np.broadcast_to(value._array if isinstance(value, Tensor) else value, self._array[key].shape)
    except IndexError as e:
        raise IndexError(f"__setitem__: invalid index for a tensor of shape {tuple(self.shape)}: {e}") from None
    except ValueError:
        raise RuntimeError(
            f"__setitem__: a value of shape {tuple(np.shape(value))} can't be assigned to a selection of shape "
            f"{self._array[key].shape} of a tensor of shape {tuple(self.shape)}"
        ) from None
    if isinstance(value, Tensor) and value.dtype != self.dtype:
        value = cast(value, self._array.dtype)
    inplace(self, "__setitem__", lambda t, v: IndexPut.apply(t, key, v), value)




def augmented(op: str, compute: Callable[[Tensor, Any], Tensor]) -> Callable[[Tensor, TensorOrNumber], Tensor]:
    """`x += y` changes x in place (every alias of x sees it), recorded like `x.add_(y)`."""
    def method(self: Tensor, other: TensorOrNumber) -> Tensor:
        return inplace(self, op, compute, other)

    method.__name__ = method.__qualname__ = op
    return method


