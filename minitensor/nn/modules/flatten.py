"""`torch.nn.modules.flatten`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import Flatten, Unflatten  # noqa: F401

__all__ = ["Flatten", "Unflatten"]
