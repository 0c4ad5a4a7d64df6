"""`torch.nn.modules.batchnorm`: the same classes as `minitensor.nn`, under the path PyTorch defines them in.

SyncBatchNorm: not in minitensor.
"""
from .. import BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d  # noqa: F401
from ..normalization import _BatchNorm, _NormBase  # noqa: F401  (the base classes subclasses are written on)

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d"]
