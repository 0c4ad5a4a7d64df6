"""`torch.nn.modules.normalization`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm  # noqa: F401

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]
