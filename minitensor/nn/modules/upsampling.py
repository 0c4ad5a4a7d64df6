"""`torch.nn.modules.upsampling`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
