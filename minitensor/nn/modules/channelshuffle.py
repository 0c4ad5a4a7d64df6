"""`torch.nn.modules.channelshuffle`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import ChannelShuffle  # noqa: F401

__all__ = ["ChannelShuffle"]
