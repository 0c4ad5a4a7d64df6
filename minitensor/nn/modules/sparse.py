"""`torch.nn.modules.sparse`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import Embedding, EmbeddingBag  # noqa: F401

__all__ = ["Embedding", "EmbeddingBag"]
