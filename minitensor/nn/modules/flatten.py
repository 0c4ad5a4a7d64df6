"""`torch.nn.modules.flatten`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..misc import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
