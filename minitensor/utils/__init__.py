"""Utilities with PyTorch's names: `data` (datasets and the DataLoader), `hooks` (hook handles)."""
from . import data, hooks  # noqa: F401  (hooks: PyTorch imports torch.utils.hooks with torch)

__all__ = ["data"]
