"""`torch.nn.modules.fold`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..conv import Fold, Unfold

__all__ = ["Fold", "Unfold"]
