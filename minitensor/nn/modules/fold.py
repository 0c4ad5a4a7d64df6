"""`torch.nn.modules.fold`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import Fold, Unfold  # noqa: F401

__all__ = ["Fold", "Unfold"]
