"""Optimizers with PyTorch's update rules, parameter groups and state dicts, and lr schedulers."""
from . import lr_scheduler  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401

__all__ = ["lr_scheduler", "Adam", "AdamW", "Optimizer", "SGD"]
