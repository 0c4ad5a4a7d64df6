"""`torch.nn.modules.linear`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..layers import Identity, Linear
from ..lazy import LazyLinear
from ..misc import Bilinear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
