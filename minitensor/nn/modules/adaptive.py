"""`torch.nn.modules.adaptive`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..adaptive import AdaptiveLogSoftmaxWithLoss

__all__ = ["AdaptiveLogSoftmaxWithLoss"]
