"""Neural-network building blocks with PyTorch's names: Module, Parameter, layers, init, utils."""
# functional first: it re-exports the functions of the family modules below, which import its helpers
from . import functional, init, utils  # noqa: F401

# isort: split
from . import (
    activation as _activation,
    adaptive as _adaptive,
    conv as _conv,
    ctc as _ctc,
    extras as _extras,
    lazy as _lazy,
    linear_ce as _linear_ce,
    loss as _loss,
    misc as _misc,
    normalization as _normalization,
    pooling as _pooling,
)
from .activation import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403  (h-nnrest)
from .conv import *  # noqa: F401,F403
from .ctc import *  # noqa: F401,F403  (h-nnrest)
from .extras import *  # noqa: F401,F403  (h-nnrest)
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
from .lazy import *  # noqa: F401,F403  (h-nnrest)
from .linear_ce import *  # noqa: F401,F403  (h-nnrest)
from .loss import *  # noqa: F401,F403
from .misc import *  # noqa: F401,F403
from .module import Module  # noqa: F401
from .multihead import MultiheadAttention  # noqa: F401
from .normalization import *  # noqa: F401,F403
from .parameter import Parameter  # noqa: F401
from .pooling import *  # noqa: F401,F403
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
    *_activation.MODULES, *_loss.MODULES, *_normalization.MODULES, *_misc.MODULES, *_conv.MODULES,
    *_pooling.MODULES,
    *_extras.MODULES, *_ctc.MODULES, *_lazy.MODULES, *_adaptive.MODULES,  # h-nnrest
    *_linear_ce.MODULES,  # h-nnrest
]

# ---- issue 30, point 2 (nnconv helper): grid sampling, upsampling and the 3-D / circular padding modules ----
# isort: split
from . import sampling as _sampling  # noqa: E402
from .sampling import *  # noqa: E402, F401, F403

__all__ += _sampling.MODULES
# ---- end of the nnconv helper's block ----

# ---- h-param: torch.nn.utils.parametrize and .parametrizations (they need ModuleDict, so they load after it) ----
# isort: split
from .utils import parametrizations as _parametrizations, parametrize as _parametrize  # noqa: E402, F401

# ---- end of the h-param block ----

# ---- h-tut2: torch.nn.grad (a submodule, as PyTorch's: reached as nn.grad, never star-imported) ----
# isort: split
from . import grad  # noqa: E402, F401
