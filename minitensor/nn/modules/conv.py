"""`torch.nn.modules.conv`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..conv import (  # noqa: F401  (_ConvNd, _ConvTransposeNd: the bases subclasses are written on)
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    LazyConv1d,
    LazyConv2d,
    LazyConv3d,
    LazyConvTranspose1d,
    LazyConvTranspose2d,
    LazyConvTranspose3d,
    _ConvNd,
    _ConvTransposeNd,
)

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
    "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
]
