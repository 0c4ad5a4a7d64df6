"""`torch.nn.modules.normalization`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..extras import CrossMapLRN2d
from ..layers import LayerNorm
from ..normalization import GroupNorm, LocalResponseNorm, RMSNorm

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]
