r"""`minitensor.nn.utils.rnn` (PyTorch's `torch.nn.utils.rnn`): batches of sequences of different lengths.

A padded batch (T, B, *) wastes steps on padding. A *packed* sequence stores only the real steps, time
step by time step, with the sequences sorted longest first:

    data        the rows of step 0 of every sequence, then step 1 of those still running, ...   (sum_t b_t, *)
    batch_sizes b_t = how many sequences are longer than t   (non-increasing, int64)
    sorted_indices / unsorted_indices   the permutation that sorted the batch by length, and its inverse

so the first b_t rows of the batch are exactly the sequences still running at step t; an RNN fed a
PackedSequence updates only those rows at step t, and each sequence's final state is the one at its own
last step. Every function here is built from indexing, cat and stack, so gradients flow through it.
"""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Sequence

import numpy as np

from ...ops.indexing import index_select
from ...ops.shape import cat, stack
from ...tensor import Tensor


def _int64(values: Any) -> np.ndarray:
    return np.asarray(values._array if isinstance(values, Tensor) else values, dtype=np.int64).reshape(-1)


class PackedSequence(namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """The steps of a batch of sequences, packed time step by time step (see the module's docstring).

    Made by pack_padded_sequence / pack_sequence, not by hand. A tuple (data, batch_sizes, sorted_indices,
    unsorted_indices); `.to(...)`, `.double()` ... convert `data` only, as in PyTorch.
    """

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise TypeError("PackedSequence: batch_sizes is required (build one with pack_padded_sequence)")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                         self.unsorted_indices)

    def double(self) -> PackedSequence:
        return self.to(dtype="float64")

    def float(self) -> PackedSequence:
        return self.to(dtype="float32")

    def cpu(self) -> PackedSequence:
        return self

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse permutation: out[permutation[i]] = i (None stays None)."""
    if permutation is None:
        return None
    perm = _int64(permutation)
    out = np.empty_like(perm)
    out[perm] = np.arange(perm.size, dtype=np.int64)
    return Tensor._make(out)


def pad_sequence(sequences: Tensor | Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of shapes (L_i, *) into (max L, B, *) (batch_first: (B, max L, *)), each padded with
    `padding_value` after its end (padding_side='right') or before its start ('left')."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', got {padding_side!r}")
    seqs = list(sequences.unbind(0) if isinstance(sequences, Tensor) else sequences)
    if not seqs:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        missing = longest - s.shape[0]
        if missing:
            fill = Tensor._make(np.full((missing,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype))
            s = cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def pack_padded_sequence(input: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (batch_first: (B, T, *)) whose sequence b has lengths[b] real steps.

    With enforce_sorted=True the lengths must be non-increasing (sorted_indices is then None); otherwise the
    batch is sorted longest first and the permutation kept, so pad_packed_sequence can undo it.
    """
    lens = _int64(lengths)
    batch_dim = 0 if batch_first else 1
    if lens.size != input.shape[batch_dim]:
        raise RuntimeError(f"pack_padded_sequence: expected {input.shape[batch_dim]} lengths (the batch size of an "
                           f"input of shape {tuple(input.shape)}), got {lens.size}")
    if enforce_sorted:
        if np.any(np.diff(lens) > 0):
            raise RuntimeError("pack_padded_sequence: `lengths` array must be sorted in decreasing order when "
                               f"`enforce_sorted` is True (got {lens.tolist()}); pass enforce_sorted=False to sort "
                               "the batch here")
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        sorted_indices = Tensor._make(order.astype(np.int64))
        lens = lens[order]
        input = index_select(input, batch_dim, sorted_indices)
    if lens.size and lens.min() <= 0:
        raise RuntimeError("pack_padded_sequence: Length of all samples has to be greater than 0, but found an "
                           f"element in 'lengths' that is <= 0 ({lens.tolist()})")
    if lens.size and lens[0] > input.shape[1 - batch_dim]:
        raise RuntimeError(f"pack_padded_sequence: a length of {lens[0]} is longer than the input's "
                           f"{input.shape[1 - batch_dim]} time steps")
    if batch_first:
        input = input.transpose(0, 1)
    batch_sizes = np.array([int(np.sum(lens > t)) for t in range(int(lens[0]) if lens.size else 0)], dtype=np.int64)
    data = cat([input[t, :n] for t, n in enumerate(batch_sizes.tolist())])
    return PackedSequence(data, Tensor._make(batch_sizes), sorted_indices, invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo pack_padded_sequence: (padded batch (T, B, *) or (B, T, *), lengths (B,) int64), in the batch's
    original order. total_length pads to that many steps (at least the longest sequence)."""
    data, sizes = sequence.data, _int64(sequence.batch_sizes).tolist()
    steps, batch = len(sizes), (sizes[0] if sizes else 0)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("pad_packed_sequence: Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max sequence length "
                             f"being {steps}")
    else:
        total_length = steps
    feature_shape = tuple(data.shape[1:])

    def filler(rows):
        return Tensor._make(np.full((rows,) + feature_shape, padding_value, dtype=data.dtype))

    rows, start = [], 0
    for n in sizes:  # step t: its n real rows, then padding for the sequences that have ended
        chunk = data[start:start + n]
        rows.append(cat([chunk, filler(batch - n)]) if n < batch else chunk)
        start += n
    rows += [filler(batch)] * (total_length - steps)
    padded = stack(rows) if rows else Tensor._make(np.full((0, batch) + feature_shape, padding_value, data.dtype))
    lengths = np.array([sum(1 for n in sizes if n > b) for b in range(batch)], dtype=np.int64)
    if sequence.unsorted_indices is not None:
        padded = index_select(padded, 1, sequence.unsorted_indices)
        lengths = lengths[_int64(sequence.unsorted_indices)]
    return (padded.transpose(0, 1) if batch_first else padded), Tensor._make(lengths)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences of shapes (L_i, *) (longest first, unless enforce_sorted=False)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor | Sequence[int], batch_first: bool = False
                   ) -> list[Tensor]:
    """The inverse of pad_sequence: the list of sequences, sequence b cut to its lengths[b] steps."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :n] for b, n in enumerate(_int64(lengths).tolist())]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The inverse of pack_sequence: the list of sequences, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = ["PackedSequence", "invert_permutation", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence"]
