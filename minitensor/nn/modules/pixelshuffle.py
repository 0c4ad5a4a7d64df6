"""`torch.nn.modules.pixelshuffle`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..misc import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
