"""Utilities with PyTorch's names: `data` (datasets and the DataLoader)."""
from . import data  # noqa: F401

__all__ = ["data"]
