"""`torch.nn.modules.channelshuffle`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..misc import ChannelShuffle

__all__ = ["ChannelShuffle"]
