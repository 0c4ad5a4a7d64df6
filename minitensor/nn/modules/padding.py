"""`torch.nn.modules.padding`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..misc import (  # noqa: F401  (_ConstantPadNd: the bases subclasses are written on)
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
    _ConstantPadNd,
)
from ..sampling import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad3d,
    ReflectionPad3d,
    ReplicationPad3d,
    ZeroPad3d,
)

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]
