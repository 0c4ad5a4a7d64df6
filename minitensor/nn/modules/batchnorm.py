"""`torch.nn.modules.batchnorm`: the same classes as `minitensor.nn`, under the path PyTorch defines them in.

SyncBatchNorm: not in minitensor.
"""
from ..extras import BatchNorm3d
from ..lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d
from ..normalization import BatchNorm1d, BatchNorm2d, _BatchNorm, _NormBase  # noqa: F401  (_BatchNorm, _NormBase: the bases subclasses are written on)

__all__ = ["BatchNorm1d", "LazyBatchNorm1d", "BatchNorm2d", "LazyBatchNorm2d", "BatchNorm3d", "LazyBatchNorm3d"]
