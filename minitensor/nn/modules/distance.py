"""`torch.nn.modules.distance`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import CosineSimilarity, PairwiseDistance  # noqa: F401

__all__ = ["PairwiseDistance", "CosineSimilarity"]
