"""`default_collate` (samples -> a batch) and `default_convert` (numpy -> tensors), with PyTorch's rules.

default_collate merges samples position by position:

    samples (x0, y0), (x1, y1), ...  ->  [stack([x0, x1, ...]), stack([y0, y1, ...])]
"""
from __future__ import annotations

import collections.abc
from typing import Any, Sequence, cast

import numpy as np

from .... import _dtype
from ....factories import from_numpy, tensor
from ....ops.shape import stack
from ....tensor import Tensor


def _shapes_error(shapes):
    """PyTorch's message for samples of different shapes, naming the first one that differs."""
    first = shapes[0]
    for i, s in enumerate(shapes):
        if s != first:
            return RuntimeError(
                f"default_collate: stack expects each tensor to be equal size, but got {list(first)} at entry 0 "
                f"and {list(s)} at entry {i} (samples of different shapes need a collate_fn that pads them)"
            )
    return None


def _numpy_batch(batch):
    arrays = [np.asarray(a) for a in batch]
    for a in arrays:
        if _dtype.kind(a.dtype) not in "biufc":
            raise TypeError(
                "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                f"found numpy arrays of dtype {a.dtype}"
            )
    err = _shapes_error([a.shape for a in arrays])
    if err is not None:
        raise err
    return from_numpy(np.stack(arrays))


def default_collate(batch: Sequence[Any]) -> Any:
    """Merge a list of samples into a batch, position by position, as `torch.utils.data.default_collate`:

    tensors and numpy arrays are stacked along a new first dim (samples of different shapes: a
    RuntimeError naming both shapes); numpy scalars keep their dtype; a batch whose first sample is a
    Python float is float64; one starting with an int or bool is built as `tensor(batch)` would
    (ints -> int64, bools -> bool, bools and ints -> int64, ints and floats -> the default float dtype);
    str and bytes stay a list; dicts collate per key; namedtuples stay namedtuples; other sequences
    collate per position into a list (all of the same length).
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        err = _shapes_error([tuple(t.shape) for t in batch])
        if err is not None:
            raise err
        return stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        return _numpy_batch(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):  # (bools too: the batch's dtype is what tensor() infers, as PyTorch's)
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        merged = {key: default_collate([sample[key] for sample in batch]) for key in elem}
        if type(elem) is dict:
            return merged
        try:
            return cast(Any, type(elem))(merged)  # an OrderedDict (or another mapping type) stays one
        except TypeError:  # a mapping type that cannot be built from a dict
            return merged
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(default_collate(list(column)) for column in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of equal size")
        return [default_collate(list(column)) for column in zip(*batch)]
    raise TypeError(
        f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {type(elem)}"
    )


def default_convert(data: Any) -> Any:
    """Turn numpy arrays (and numpy number scalars) into tensors, recursively through dicts and sequences,
    leaving everything else as it is: the DataLoader's collate_fn when batch_size=None."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, (np.str_, np.bytes_)):
        arr = np.asarray(data)
        return from_numpy(np.array(arr)) if _dtype.kind(arr.dtype) in "biufc" else data
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        return [default_convert(d) for d in data]
    return data
