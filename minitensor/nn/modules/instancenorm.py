"""`torch.nn.modules.instancenorm`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..extras import InstanceNorm3d
from ..lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d
from ..normalization import InstanceNorm1d, InstanceNorm2d, _InstanceNorm  # noqa: F401  (_InstanceNorm: the bases subclasses are written on)

__all__ = [
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]
