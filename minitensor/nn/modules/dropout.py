"""`torch.nn.modules.dropout`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..extras import Dropout3d, FeatureAlphaDropout
from ..layers import Dropout
from ..misc import AlphaDropout, Dropout1d, Dropout2d, _DropoutNd  # noqa: F401  (_DropoutNd: the bases subclasses are written on)

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
