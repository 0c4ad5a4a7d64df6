"""`torch.nn.modules.distance`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..loss import CosineSimilarity, PairwiseDistance

__all__ = ["PairwiseDistance", "CosineSimilarity"]
