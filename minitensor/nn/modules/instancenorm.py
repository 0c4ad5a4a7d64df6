"""`torch.nn.modules.instancenorm`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import (  # noqa: F401
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
)
from ..normalization import _InstanceNorm  # noqa: F401  (the base classes subclasses are written on)

__all__ = [
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]
