"""Optimizers with PyTorch's update rules, parameter groups and state dicts, and lr schedulers."""
from . import lr_scheduler  # noqa: F401
from ._stateless import swap_in_optimizer_params_and_state  # noqa: F401  (h-optim2)
from .adadelta import Adadelta  # noqa: F401
from .adafactor import Adafactor  # noqa: F401  (h-optim2)
from .adagrad import Adagrad  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .adamax import Adamax  # noqa: F401
from .asgd import ASGD  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .muon import Muon  # noqa: F401  (h-optim2)
from .nadam import NAdam  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .radam import RAdam  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .rprop import Rprop  # noqa: F401
from .sgd import SGD  # noqa: F401

__all__ = ["lr_scheduler", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "ASGD", "LBFGS", "NAdam", "Optimizer",
           "RAdam", "RMSprop", "Rprop", "SGD"]
__all__ += ["Adafactor", "Muon", "swap_in_optimizer_params_and_state"]  # h-optim2
