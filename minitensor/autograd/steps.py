r"""Naming the steps of your math, so `explain()` and the graph pictures say which step each node is.

    from minitensor.autograd import step, name_step

    with step("scores = q k^T"):            # every node recorded inside is named "scores = q k^T"
        scores = q @ k.mT
    with step("scale 1/sqrt(d_k)", f"x {c:.4g}"):   # a second line shown under the name
        scores = scores * c
    p = name_step(scores.softmax(-1), "softmax")    # or name the node that made one tensor

A step is a label on the graph's nodes, nothing more: the ops compute and differentiate exactly as
without it. Outside a `step` block no node is named, and the only cost left in `Function.apply`
is one attribute read. Blocks nest: a node gets the innermost name. `detail` is shown under the
name; it may be any object whose `str()` is computed only when a report or a picture shows it
(`mask_grid(mask)` draws a mask as a small grid of 1 and . that way).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Literal, TypeVar

import numpy as np

from ..tensor import Tensor
from . import grad_mode

_F = TypeVar("_F", bound=Callable[..., Any])


class StepName:
    """The name of a step and what to show under it (`detail`: text, or an object turned into text when shown)."""

    __slots__ = ("text", "detail")

    def __init__(self, text: str, detail: Any = None) -> None:
        self.text, self.detail = str(text), detail

    def lines(self) -> list[str]:
        """The name, then the lines of the detail."""
        if self.detail is None:
            return [self.text]
        return [self.text] + [line for line in str(self.detail).splitlines() if line.strip()]

    def __repr__(self) -> str:
        return f"StepName({self.text!r})"


class step:
    """`with step(name, detail=None):` names every node recorded inside the block `name`; as a
    decorator, `@step(name)`, every node the function records. `explain()` prints the name beside
    each node's op, and `viz.to_dot` / `to_svg` write it, and the detail's lines, into its box."""

    __slots__ = ("name", "_prev")

    def __init__(self, name: str, detail: Any = None) -> None:
        if not isinstance(name, str):
            raise TypeError(f"step: the name must be a str, got {type(name).__name__}")
        self.name = StepName(name, detail)

    def __enter__(self) -> StepName:
        self._prev = grad_mode.modes.step
        grad_mode.modes.step = self.name
        return self.name

    def __exit__(self, *exc: object) -> Literal[False]:
        grad_mode.modes.step = self._prev
        return False

    def __call__(self, fn: _F) -> _F:
        name = self.name

        @functools.wraps(fn)
        def named(*args, **kwargs):
            prev, grad_mode.modes.step = grad_mode.modes.step, name
            try:
                return fn(*args, **kwargs)
            finally:
                grad_mode.modes.step = prev

        return named  # type: ignore[return-value]


def name_step(tensor: Tensor, name: str, detail: Any = None) -> Tensor:
    """Name the node that made `tensor` (as `step` would have) and return `tensor`; a tensor that no
    op of the graph made (a leaf, or one made without grad) is returned as it is."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"name_step: expected a Tensor, got {type(tensor).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"name_step: the name must be a str, got {type(name).__name__}")
    if tensor.grad_fn is not None:
        tensor.grad_fn._step_name = StepName(name, detail)
    return tensor


def step_name(node: Any) -> StepName | None:
    """The StepName of a graph node (`tensor.grad_fn`), None if no step named it."""
    return getattr(node, "_step_name", None)


GRID_UP_TO = 16  #: `mask_grid` draws masks of at most this many queries and keys


class mask_grid:
    """A mask drawn, when shown, as a grid: a row per query, `1` for a key it may attend to, `.`
    for a hidden one. `mask`: bool, True = may attend; or, with `additive=True`, a float added to
    the scores (0 = may attend, -inf = hidden; other numbers are a bias, not drawn). Only the last
    two dims are drawn: the first slice, saying so when the others differ."""

    __slots__ = ("mask", "additive")

    def __init__(self, mask: Any, additive: bool = False) -> None:
        self.mask, self.additive = mask, additive

    def __str__(self) -> str:
        m = self.mask.numpy(force=True) if isinstance(self.mask, Tensor) else np.asarray(self.mask)
        if self.additive:
            if not np.all((m == 0) | (m == -np.inf)):
                return f"+ a float mask of shape {m.shape}"
            m = m == 0
        m = np.asarray(m, dtype=bool).reshape((1,) * max(0, 2 - m.ndim) + m.shape)
        if m.shape[-2] > GRID_UP_TO or m.shape[-1] > GRID_UP_TO:
            return f"a mask of {m.shape[-2]} queries x {m.shape[-1]} keys (too big to draw)"
        flat = m.reshape((-1,) + m.shape[-2:])
        rows = [" ".join("1" if a else "." for a in row) for row in flat[0]]
        if m.ndim > 2 and not np.all(flat == flat[:1]):
            rows.append(f"(the first of {flat.shape[0]} different masks)")
        return "\n".join(rows)
