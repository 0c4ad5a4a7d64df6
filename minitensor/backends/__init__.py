"""`minitensor.backends`: the accelerator back ends tutorials ask about; none is present."""
from . import cuda, cudnn, mps  # noqa: F401

__all__ = ["cuda", "cudnn", "mps"]
