"""`torch.nn.modules.dropout`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401
from ..misc import _DropoutNd  # noqa: F401  (the base classes subclasses are written on)

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
