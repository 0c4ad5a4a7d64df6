"""`torch.nn.modules.sparse`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..extras import EmbeddingBag
from ..layers import Embedding

__all__ = ["Embedding", "EmbeddingBag"]
