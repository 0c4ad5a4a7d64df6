"""`torch.nn.modules.linear`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import Bilinear, Identity, LazyLinear, Linear  # noqa: F401

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
