"""`torch.nn.modules.pixelshuffle`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import PixelShuffle, PixelUnshuffle  # noqa: F401

__all__ = ["PixelShuffle", "PixelUnshuffle"]
