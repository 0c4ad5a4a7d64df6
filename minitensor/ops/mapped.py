"""`from_file` (issue 29, h-names29): a 1-d tensor of a file's raw bytes read as `size` items of `dtype`.

shared=True maps the file into memory (numpy's memmap): writing into the tensor writes the file, as
PyTorch's shared mapping does. Otherwise the items are read into the tensor's own memory, and the file
is left alone. The file holds the items in the machine's byte order, with no header (what
`numpy.ndarray.tofile` or PyTorch's own storage files write).
"""
from __future__ import annotations

import os

import numpy as np

from .. import factories as F
from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike


def from_file(filename: str, shared: bool | None = None, size: int | None = 0, *, dtype: DTypeLike | None = None,
              layout: object = None, device: DeviceLike | None = None, pin_memory: bool | None = False,
              requires_grad: bool | None = False) -> Tensor:
    """`size` items of `dtype` (default: the default float dtype) from the start of file `filename`."""
    op = "from_file"
    d = F._float_dtype(dtype)
    count = int(size or 0)
    if count < 0:
        raise RuntimeError(f"{op}: size must be non-negative, got {count}")
    path = os.fspath(filename)
    if not os.path.isfile(path):
        mode = "read-write" if shared else "read-only"
        raise RuntimeError(f"unable to open file <{path}> in {mode} mode: No such file or directory")
    needed, have = count * d.itemsize, os.path.getsize(path)
    if have < needed:
        raise RuntimeError(f"file <{path}> size <{have}> is smaller than the required mapping size <{needed}>")
    if count == 0:
        arr = np.empty(0, dtype=d)
    elif shared:
        arr = np.memmap(path, dtype=d, mode="r+", shape=(count,))
    else:
        arr = np.fromfile(path, dtype=d, count=count)
    return F._finish(arr, requires_grad, device, op, layout, pin_memory)
