"""Helpers of the data loader with PyTorch's module paths (`torch.utils.data._utils.collate`)."""
from . import collate  # noqa: F401
