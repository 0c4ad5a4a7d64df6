"""`torch.embedding_bag` and `torch.ctc_loss` (issue 29, h-names29): the C++ op's forms of two
`torch.nn.functional` functions, as thin wrappers over them (no math of their own). A module of its
own above nn, as `_nn_aliases.py` is, because the op layer may not import nn.

The differences from the functionals are PyTorch's: `embedding_bag(weight, indices, offsets, ...)` takes
the table first, the mode as an integer (0 sum, 1 mean, 2 max) and returns four tensors, the bags and
three index tensors its C++ backward keeps (which bag each index is in, each bag's size, and the row
that gave each max); `ctc_loss`'s reduction is the integer enum, none when left out.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ._nn_aliases import _reduction
from .nn import ctc as _ctc, extras as _extras
from .tensor import Tensor

_MODES = {0: "sum", 1: "mean", 2: "max"}


class _EmbeddingBag(NamedTuple):
    output: Tensor
    offset2bag: Tensor
    bag_size: Tensor
    max_indices: Tensor


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False, mode: int = 0,
                  sparse: bool = False, per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(output, offset2bag, bag_size, max_indices): `F.embedding_bag(indices, weight, offsets, ...)` and the
    index tensors PyTorch's kernel returns beside it (mode sum leaves them zero, or empty, as its kernel does)."""
    op = "embedding_bag"
    if isinstance(mode, bool) or mode not in _MODES:
        raise RuntimeError(f"{op}: mode must be 0 (sum), 1 (mean) or 2 (max), got {mode!r}")
    output = _extras.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                                   mode=_MODES[mode], sparse=sparse, per_sample_weights=per_sample_weights,
                                   include_last_offset=include_last_offset, padding_idx=padding_idx)
    idx = indices._array.reshape(-1).astype(np.int64)
    bags, _ = _extras._bags(op, indices._array, offsets, include_last_offset)
    which = np.zeros(idx.size, dtype=np.int64)
    for b, (s, e) in enumerate(bags):
        which[s:e] = b
    keep = np.ones(idx.size, dtype=bool) if padding_idx is None else idx != padding_idx % weight.shape[0]
    sizes = np.array([keep[s:e].sum() for s, e in bags], dtype=np.int64)
    n = len(bags)
    if mode == 0:  # PyTorch's sum kernel for 2-byte and 4-byte floats without padding_idx leaves offset2bag empty
        fast = padding_idx is None and weight._array.dtype != np.float64
        offset2bag = np.zeros(0, dtype=np.int64) if fast else which
        return _EmbeddingBag(output, *(Tensor._make(a) for a in (offset2bag, np.zeros(n, np.int64),
                                                                   np.zeros(n, np.int64))))
    if mode == 1:
        return _EmbeddingBag(output, Tensor._make(which), Tensor._make(sizes), Tensor._make(sizes.copy()))
    table = weight._array
    rows = np.zeros((n, table.shape[1]), dtype=np.int64)
    for b, (s, e) in enumerate(bags):
        members = idx[s:e][keep[s:e]]
        if members.size:
            rows[b] = members[np.argmax(table[members], axis=0)]
    return _EmbeddingBag(output, Tensor._make(which), Tensor._make(sizes), Tensor._make(rows))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
             target_lengths: Tensor | Sequence[int], blank: int = 0, reduction: int = 0,
             zero_infinity: bool = False) -> Tensor:
    """`F.ctc_loss` with the reduction as its integer (0 none, 1 mean, 2 sum; left out, none, as PyTorch 2.13's
    binding reads it)."""
    return _ctc.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                         reduction=_reduction(reduction, "ctc_loss"), zero_infinity=zero_infinity)
