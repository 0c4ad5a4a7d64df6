"""`torch.nn.modules.container`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..extras import Container
from ..layers import ModuleDict, ModuleList, ParameterList, Sequential
from ..misc import ParameterDict

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
