"""`torch.nn.modules.container`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]
