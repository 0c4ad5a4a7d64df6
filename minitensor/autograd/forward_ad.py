r"""`torch.autograd.forward_ad`: dual tensors (primal + tangent) on a reverse-mode engine.

Inside `with dual_level():`, `make_dual(x, t)` marks a tensor with a tangent t, and for any y computed
from such duals `unpack_dual(y).tangent` is the directional derivative

    tangent(y) = sum_i J_i t_i,     J_i = dy/dd_i,  over the duals d_i of the current level y depends on,

or None when y depends on none. PyTorch carries the tangent along every op as it runs; minitensor has only
VJPs, so the tangent is computed when asked for, by the "double backward trick" (autograd/functional.py's
`_jvp_columns`): with u a dummy cotangent that requires grad, g(u) = u^T J is linear in u, so
d/du (g(u) . t) = J t exactly. Each `unpack_dual` of a non-dual tensor costs two backward passes.

How the graph is used:

- A dual is an alias of its primal recorded as a graph node of its own (`_Alias`). It requires grad so
  that the ops after it are recorded; a primal that does not require grad is first replaced by a hidden
  leaf that does (so the dual reports `requires_grad=True`, unlike PyTorch's).
- While a tangent is computed, the duals of the level are the inputs of the trick and every alias of the
  level is a *cut*: its VJP returns nothing, so only the paths from the duals to y count. In an ordinary
  backward an alias is the identity, so reverse mode through duals gives the usual `.grad`.
- `unpack_dual(y).primal` is a cut alias of y (or y detached, when nothing that requires grad is behind
  it): the same values, differentiable in reverse mode, with no tangent.
- A user's `Function` with a `jvp` staticmethod: when it is applied to an input with a tangent,
  `jvp(ctx, *input_tangents)` is called at once (zeros for tensor inputs without a tangent, None for the
  others) and its outputs become duals with the tangents it returned, its own node being a cut. Without a
  `jvp` the call raises PyTorch's error.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import grad_mode
from .function import Function
from .functional import _jvp_columns
from .grad_mode import enable_grad

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]


class _Level:
    """The one level that may be active: its duals and its cut nodes (both by node id)."""

    def __init__(self) -> None:
        self.duals: dict[int, tuple[Tensor, Tensor]] = {}  # node id -> (the dual tensor, its tangent)
        self.cuts: dict[int, Any] = {}  # node id -> node: VJPs that return nothing while a tangent is computed
        self.computing = False  # inside the double backward trick


_active: _Level | None = None


class _Alias(Function):
    r"""out = x, sharing x's memory;   VJP: gx = g, or nothing while its level computes a tangent (a cut)."""
    saves_values = False
    is_view = True
    level: _Level | None = None
    hidden = False  # x is a leaf made here only so the ops after the alias are recorded

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> np.ndarray:
        return x._array.view()

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Any:
        return None if ctx.level is not None and ctx.level.computing else g


def _alias(x: Tensor, level: _Level) -> Tensor:
    """A cut alias of x (see `_Alias`); x is replaced by a hidden leaf when it doesn't require grad."""
    hidden = not x.requires_grad
    with enable_grad():
        out = _Alias.apply(x.detach().requires_grad_(True) if hidden else x)
    node: Any = out.grad_fn  # (an _Alias)
    node.level, node.hidden = level, hidden
    level.cuts[id(node)] = node
    return out


# ---- levels ----------------------------------------------------------------------------------------------

def enter_dual_level() -> int:
    """Start the level of forward AD (0); PyTorch supports one level at a time, so a second one raises."""
    global _active
    if _active is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _active = _Level()
    grad_mode.modes.forward_ad = _after_user_function
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """End the level: its duals become plain tensors (their tangents are forgotten)."""
    global _active
    if level is None:
        if _active is None:
            raise RuntimeError("Dual level must be a positive number.")
    elif _active is None or level != 0:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    _active = None
    grad_mode.modes.forward_ad = None


class dual_level:
    """`with dual_level():` (or as a decorator): a level of forward AD for the duration; yields its number, 0."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with dual_level():
                return fn(*args, **kwargs)
        return wrapped


def _level_for(level: int | None, where: str) -> _Level | None:
    if level is not None and (_active is None or level != 0):
        raise RuntimeError(f"Invalid level given to {where}")
    return _active


# ---- dual tensors ----------------------------------------------------------------------------------------

class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal (the values, without tangent) and the tangent (or None)."""
    primal: Any
    tangent: Any


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A tensor with `tensor`'s values whose tangent is `tangent` (same shape; kept as given). In reverse
    mode it is `tensor` itself: gradients flow through to it."""
    if _active is None and level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not tensor.is_floating_point():
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.is_floating_point():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    lvl = _level_for(level, "_make_dual")
    assert lvl is not None
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if _sources(tensor, lvl)[0]:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           "level 0 is not supported.")
    dual = _alias(tensor, lvl)
    # PyTorch's dual is a view of its primal (no node at all when the primal needs no gradient; here the
    # hidden leaf's alias takes the same name)
    dual.grad_fn.shown_as = "ViewBackward0"  # type: ignore[union-attr]
    lvl.duals[id(dual.grad_fn)] = (dual, tangent)
    return dual


def unpack_dual(tensor: Any, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of `tensor` at the level: tangent = sum of J_i t_i over the duals it depends on
    (None if none), computed by the double backward trick; the primal has the same values and no tangent."""
    if not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    lvl = _active
    found, real = _sources(tensor, lvl) if lvl is not None else ([], True)
    if not found:
        return UnpackedDualTensor(tensor, None)
    assert lvl is not None
    _level_for(level, "_fw_primal")  # (PyTorch checks the level only of a tensor with a tangent)
    primal = tensor.detach()
    if real:
        primal = _alias(tensor, lvl)
        primal.grad_fn.shown_as = "Identity"  # type: ignore[union-attr]  # (PyTorch's C++ node of _fw_primal)
    own = lvl.duals.get(id(tensor.grad_fn))
    if own is not None and own[0] is tensor:
        return UnpackedDualTensor(primal, own[1])
    return UnpackedDualTensor(primal, _tangent(tensor, found, real, lvl))


def _sources(y: Tensor, lvl: _Level) -> tuple[list[int], bool]:
    """(the duals of `lvl` that y depends on, by node id; whether a leaf requiring grad is behind y). The walk
    stops at the level's cuts, whose tangents are either given (duals) or none (primals)."""
    if not isinstance(y, Tensor) or y.grad_fn is None or _dtype.kind(y.dtype) != "f":
        return [], bool(isinstance(y, Tensor) and y.requires_grad)
    found: list[int] = []
    todo: list[Any] = [y.grad_fn]
    real, seen = False, set()
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if id(node) in lvl.duals:
            found.append(id(node))
        if id(node) in lvl.cuts:
            real = real or not node.hidden
            continue
        if getattr(node, "hidden", False):
            continue
        for edge in getattr(node, "edges", ()):
            target = edge[1]
            if isinstance(target, Tensor):
                real = True
            elif target is not None:
                todo.append(target)
    return found, real


def _tangent(y: Tensor, found: list[int], real: bool, lvl: _Level) -> Tensor:
    """J t for y, from the duals `found`: the double backward trick with the level's aliases cut."""
    duals = [lvl.duals[i] for i in found]
    inputs = tuple(d for d, _ in duals)
    tangents = tuple(t.to(d.dtype) for d, t in duals)
    # the tangent itself is differentiable when something requiring grad is behind y, as in PyTorch
    create_graph = real or any(t.requires_grad for t in tangents)
    lvl.computing = True
    try:
        with enable_grad():
            return _jvp_columns((y,), inputs, [tangents], create_graph, False)[0][0]
    finally:
        lvl.computing = False


# ---- a user's Function with a jvp ------------------------------------------------------------------------

_NO_JVP = "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."


def _after_user_function(op: type, ctx: Any, args: tuple[Any, ...], result: Any) -> Any:
    """Called by `Function.apply` after a user's Function ran inside a level: when an input has a tangent, the
    user's `jvp(ctx, *tangents)` gives the outputs' tangents; the outputs become duals and the node a cut."""
    lvl = _active
    if lvl is None or lvl.computing or not any(isinstance(a, Tensor) and _sources(a, lvl)[0] for a in args):
        return result
    jvp = getattr(op, "jvp", None)
    if jvp is None:
        raise NotImplementedError(_NO_JVP)
    tangents = []
    for a in args:
        if isinstance(a, Tensor):
            t = unpack_dual(a).tangent
            tangents.append(a.new_zeros(a.shape) if t is None else t)
        else:
            tangents.append(None)
    ctx._in_jvp = True  # (its saved_tensors are what it gave save_for_forward)
    try:
        out_tangents = jvp(ctx, *tangents)
    finally:  # (an output it kept would keep its node alive: they are needed once)
        ctx._in_jvp, ctx.saved_for_forward = False, None
    outs = result if isinstance(result, tuple) else (result,)
    out_tangents = out_tangents if isinstance(out_tangents, tuple) else (out_tangents,)
    if len(out_tangents) != len(outs):
        raise RuntimeError(f"function {op.__name__}Backward returned an incorrect number of forward gradients "
                           f"(expected {len(outs)} got {len(out_tangents)})")
    for o, t in zip(outs, out_tangents):
        if isinstance(o, Tensor) and t is not None and o.grad_fn is not None:
            lvl.duals[id(o.grad_fn)] = (o, t)
    if ctx.edges and id(ctx) not in lvl.cuts:
        _cut_node(ctx, lvl)
    return result


def _cut_node(node: Any, lvl: _Level) -> None:
    """Make `node`'s VJP return nothing while `lvl` computes a tangent (its outputs' tangents are given)."""
    inner = node.backward

    def backward(ctx: Any, *g: Any) -> Any:
        if lvl.computing:
            return (None,) * len(ctx.inputs)
        return inner(ctx, *g)

    node.backward = backward
    node.level, node.hidden = lvl, False
    lvl.cuts[id(node)] = node
