"""`torch.func.rearrange` (issue 29, h-names29): einops' `rearrange`, a reshape-permute-reshape named by a pattern.

    rearrange(x, "b (h w) c -> b c h w", h=4)

Each side lists the dims by name; a parenthesised group is several names sharing one dim (the product of
their lengths), `...` stands for the dims the pattern does not name, and `1` or `()` is a dim of size 1.
The left side cuts x's dims into the named axes (a group's unknown length is the dim divided by the others,
which `axes_lengths` gives), the names are put in the right side's order, and the right side's groups are
joined. It is a `reshape`, a `permute` and a `reshape`, so its gradient is theirs. A list of tensors is
stacked first along a new leading dim.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from .ops.shape import stack
from .tensor import Tensor

_ELLIPSIS = "..."
_BARE = "...,"  # a bare `...` (its dims stay apart), told from `(...)` (its dims joined into one)


def rearrange(tensor: Tensor | Sequence[Tensor], pattern: str, **axes_lengths: int) -> Tensor:
    """x's dims renamed, regrouped and reordered as `pattern` ("left -> right") says."""
    x = stack(list(tensor)) if isinstance(tensor, (list, tuple)) else tensor
    if not isinstance(x, Tensor):
        raise TypeError(f"rearrange: expected a Tensor or a list of Tensors, got {type(tensor).__name__}")
    if pattern.count("->") != 1:
        raise ValueError(f"Pattern must contain a single '->' separator: {pattern!r}")
    left_text, right_text = pattern.split("->")
    left, right = _parse(left_text), _parse(right_text)
    left, right = _expand_ellipsis(left, right, x.ndim)
    left_names = [n for group in left for n in group]
    right_names = [n for group in right for n in group]
    only_one_side = set(left_names) ^ set(right_names)
    if only_one_side:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): "
                         f"{ {n for n in only_one_side} }")
    for name in axes_lengths:
        if name not in left_names:
            raise ValueError(f"rearrange: axis {name!r} of axes_lengths is not in the pattern {pattern!r}")
    lengths = _lengths(left, tuple(x.shape), axes_lengths)
    y = x.reshape([lengths[n] for n in left_names])
    y = y.permute([left_names.index(n) for n in right_names])
    return y.reshape([math.prod(lengths[n] for n in group) for group in right])


def _parse(side: str) -> list[list[str]]:
    """One side's dims: a list of groups, each a list of names (empty for a dim of size 1)."""
    groups: list[list[str]] = []
    current: list[str] | None = None
    for token in side.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            if current is not None:
                raise ValueError(f"Axis composition is one-level (brackets inside brackets not allowed): {side!r}")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError(f"Brackets are not balanced: {side!r}")
            groups.append(current)
            current = None
        elif token == "1":
            if current is None:
                groups.append([])
        elif token == _ELLIPSIS or token.isidentifier():
            if current is not None:
                current.append(token)
            else:
                groups.append([_BARE if token == _ELLIPSIS else token])
        else:
            raise ValueError(f"Invalid axis identifier: {token!r} in {side!r}")
    if current is not None:
        raise ValueError(f"Brackets are not balanced: {side!r}")
    names = [n for group in groups for n in group]
    repeated = {n for n in names if names.count(n) > 1}
    if repeated:
        raise ValueError(f"Indexing expression contains duplicate dimension {sorted(repeated)[0]!r}: {side!r}")
    return groups


def _expand_ellipsis(left: list[list[str]], right: list[list[str]],
                     ndim: int) -> tuple[list[list[str]], list[list[str]]]:
    """`...` replaced on both sides by the names of the dims it covers (one group each on the left)."""
    has = [any(_ELLIPSIS in g or _BARE in g for g in side) for side in (left, right)]
    if has[0] != has[1]:
        raise ValueError("Ellipsis found in one side of the pattern only: it must be on both or neither")
    if not has[0]:
        if len(left) != ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the number of "
                             f"dimensions in the tensor ({ndim})")
        return left, right
    if [_BARE] not in left:
        raise ValueError("Ellipsis inside parenthesis in the left side is not allowed")
    covered = ndim - (len(left) - 1)
    if covered < 0:
        raise ValueError(f"Number of dimensions in pattern ({len(left) - 1} and an ellipsis) is more than the "
                         f"number of dimensions in the tensor ({ndim})")
    dots = [f"...{i}" for i in range(covered)]
    i = left.index([_BARE])
    left = left[:i] + [[d] for d in dots] + left[i + 1:]
    new_right: list[list[str]] = []
    for group in right:
        if group == [_BARE]:
            new_right.extend([d] for d in dots)
        else:
            new_right.append([n for name in group for n in (dots if name == _ELLIPSIS else [name])])
    return left, new_right


def _lengths(left: list[list[str]], shape: tuple[int, ...], given: dict[str, Any]) -> dict[str, int]:
    lengths: dict[str, int] = {}
    for group, size in zip(left, shape):
        known = [n for n in group if n in given]
        unknown = [n for n in group if n not in given]
        product = math.prod(int(given[n]) for n in known)
        if len(unknown) > 1:
            raise ValueError(f"Could not infer sizes for {set(unknown)}: give all but one in axes_lengths")
        if not group and size != 1:
            raise ValueError(f"rearrange: a dim of size 1 in the pattern is {size} in the tensor")
        if unknown:
            if product == 0 or size % product:
                raise ValueError(f"Shape mismatch, can't divide axis of length {size} in chunks of {product}")
            lengths[unknown[0]] = size // product
        elif group and product != size:
            raise ValueError(f"Shape mismatch, {product} != {size}")
        lengths.update({n: int(given[n]) for n in known})
    return lengths
