"""`torch.nn.modules.upsampling`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..misc import Upsample
from ..sampling import UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
