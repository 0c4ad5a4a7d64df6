"""Neural-network building blocks with PyTorch's names: Module, Parameter, layers, init, utils."""
from . import functional, init, utils  # noqa: F401
from .module import Module  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .layers import (  # noqa: F401
    GELU, CrossEntropyLoss, Dropout, Embedding, Identity, LayerNorm, Linear, LogSoftmax, ModuleDict, ModuleList,
    MSELoss, NLLLoss, ParameterList, ReLU, Sequential, Sigmoid, SiLU, Softmax, Tanh,
)

__all__ = [
    "functional", "init", "utils", "Module", "Parameter",
    "CrossEntropyLoss", "Dropout", "Embedding", "GELU", "Identity", "LayerNorm", "Linear", "LogSoftmax", "ModuleDict",
    "ModuleList", "MSELoss", "NLLLoss", "ParameterList", "ReLU", "Sequential", "Sigmoid", "SiLU", "Softmax", "Tanh",
]
