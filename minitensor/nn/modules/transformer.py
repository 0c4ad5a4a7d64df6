"""`torch.nn.modules.transformer`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer  # noqa: F401

__all__ = [
    "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer",
]
