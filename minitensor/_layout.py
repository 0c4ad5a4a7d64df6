"""PyTorch's layout and memory-format objects (`minitensor.strided`, `minitensor.contiguous_format` ...).

minitensor's tensors are dense numpy arrays read in row-major order, so every tensor's layout is
`strided`, and a memory format is accepted where PyTorch takes one and changes nothing (an op's
result is row-major whatever is asked). They exist so code that names or compares them runs. This
module imports nothing of minitensor: the ops (a tensor's `.layout`) and the package both read it.
"""
from __future__ import annotations


class _Named:
    """A constant known by its name: printed as `minitensor.<name>`, pickled as a reference to it."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"minitensor.{self._name}"

    def __reduce__(self) -> str:
        return self._name


class layout(_Named):
    """How a tensor's elements are stored: minitensor has one, `strided` (dense)."""

    __slots__ = ()


class memory_format(_Named):
    """An order of a 4-d/5-d tensor's dims in memory: accepted by minitensor, which stores row-major only."""

    __slots__ = ()


strided = layout("strided")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = memory_format("legacy_contiguous_format")
