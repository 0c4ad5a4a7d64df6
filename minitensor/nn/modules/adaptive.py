"""`torch.nn.modules.adaptive`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import AdaptiveLogSoftmaxWithLoss  # noqa: F401

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
