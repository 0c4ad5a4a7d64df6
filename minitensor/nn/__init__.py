"""Neural-network building blocks with PyTorch's names: Module, Parameter, layers, init, utils."""
from . import activation as _activation, functional, init, loss as _loss, utils  # noqa: F401
from .activation import *  # noqa: F401,F403
from .layers import (  # noqa: F401
    GELU,
    CrossEntropyLoss,
    Dropout,
    Embedding,
    Identity,
    LayerNorm,
    Linear,
    LogSoftmax,
    ModuleDict,
    ModuleList,
    MSELoss,
    NLLLoss,
    ParameterList,
    ReLU,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from .loss import *  # noqa: F401,F403
from .module import Module  # noqa: F401
from .multihead import MultiheadAttention  # noqa: F401
from .parameter import Parameter  # noqa: F401
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .transformer import (  # noqa: F401
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "functional", "init", "utils", "Module", "Parameter",
    "CrossEntropyLoss", "Dropout", "Embedding", "GELU", "Identity", "LayerNorm", "Linear", "LogSoftmax", "ModuleDict",
    "ModuleList", "MSELoss", "NLLLoss", "ParameterList", "ReLU", "Sequential", "Sigmoid", "SiLU", "Softmax", "Tanh",
    "MultiheadAttention",
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer",
    "GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase",
    *_activation.MODULES, *_loss.MODULES,
]
