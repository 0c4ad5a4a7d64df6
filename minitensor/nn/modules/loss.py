"""`torch.nn.modules.loss`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..ctc import CTCLoss
from ..extras import MultiLabelMarginLoss, NLLLoss2d, TripletMarginWithDistanceLoss
from ..layers import (  # noqa: F401  (_Loss, _WeightedLoss: the bases subclasses are written on)
    CrossEntropyLoss,
    MSELoss,
    NLLLoss,
    _Loss,
    _WeightedLoss,
)
from ..linear_ce import LinearCrossEntropyLoss
from ..loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)

__all__ = [
    "L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss", "BCELoss",
    "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss",
    "SoftMarginLoss", "CrossEntropyLoss", "LinearCrossEntropyLoss", "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss", "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "CTCLoss",
]
