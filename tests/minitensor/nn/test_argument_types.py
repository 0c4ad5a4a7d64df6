"""A layer or functional called with something that is not a Tensor (a list, a numpy array, None,
a number) raises a TypeError naming the layer or function and what it got, as PyTorch raises a
TypeError, instead of an AttributeError from deep inside (`'list' object has no attribute '_array'`)."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F

NOT_TENSORS = [[[1.0, 2.0]], np.ones((1, 2), np.float32), None, 3.0]
LAYERS = {
    "Linear": lambda x: nn.Linear(2, 3)(x),
    "Embedding": lambda x: nn.Embedding(5, 2)(x),
    "LayerNorm": lambda x: nn.LayerNorm(2)(x),
    "Dropout": lambda x: nn.Dropout(0.1)(x),
    "ReLU": lambda x: nn.ReLU()(x),
    "GELU": lambda x: nn.GELU()(x),
    "Tanh": lambda x: nn.Tanh()(x),
    "Sigmoid": lambda x: nn.Sigmoid()(x),
    "SiLU": lambda x: nn.SiLU()(x),
    "Softmax": lambda x: nn.Softmax(-1)(x),
    "LogSoftmax": lambda x: nn.LogSoftmax(-1)(x),
    "CrossEntropyLoss": lambda x: nn.CrossEntropyLoss()(x, mt.tensor([1])),
    "NLLLoss": lambda x: nn.NLLLoss()(x, mt.tensor([1])),
    "MSELoss": lambda x: nn.MSELoss()(x, mt.ones(1, 2)),
}
FUNCTIONS = {
    "linear": lambda x: F.linear(x, mt.ones(3, 2)),
    "embedding": lambda x: F.embedding(x, mt.ones(5, 2)),
    "layer_norm": lambda x: F.layer_norm(x, (2,)),
    "dropout": lambda x: F.dropout(x),
    "relu": lambda x: F.relu(x),
    "gelu": lambda x: F.gelu(x),
    "silu": lambda x: F.silu(x),
    "softplus": lambda x: F.softplus(x),
    "softmax": lambda x: F.softmax(x, dim=-1),
    "log_softmax": lambda x: F.log_softmax(x, dim=-1),
    "nll_loss": lambda x: F.nll_loss(x, mt.tensor([1])),
    "mse_loss": lambda x: F.mse_loss(x, mt.ones(1, 2)),
    "exp": lambda x: mt.exp(x),
    "sigmoid": lambda x: mt.sigmoid(x),
}


@pytest.mark.parametrize("bad", NOT_TENSORS, ids=["list", "ndarray", "None", "float"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_name_themselves_and_what_they_got(name, bad):
    with pytest.raises(TypeError, match=rf"^{name}: input must be a Tensor, got {type(bad).__name__}"):
        LAYERS[name](bad)


@pytest.mark.parametrize("bad", NOT_TENSORS, ids=["list", "ndarray", "None", "float"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_functions_name_themselves_and_what_they_got(name, bad):
    with pytest.raises(TypeError, match=rf"^{name}: input must be a Tensor, got {type(bad).__name__}"):
        FUNCTIONS[name](bad)


def test_a_loss_names_a_target_that_is_no_tensor():
    with pytest.raises(TypeError, match=r"^CrossEntropyLoss: target must be a Tensor, got list"):
        nn.CrossEntropyLoss()(mt.ones(1, 2), [1])


@pytest.mark.parametrize("name", sorted(set(LAYERS) - {"Softmax", "LogSoftmax", "MSELoss"}))
def test_pytorch_raises_a_type_error_too(name):
    """(Its Softmax, LogSoftmax and MSELoss raise AttributeError: a documented difference.)"""
    torch = pytest.importorskip("torch")
    layers = {
        "Linear": lambda: torch.nn.Linear(2, 3), "Embedding": lambda: torch.nn.Embedding(5, 2),
        "LayerNorm": lambda: torch.nn.LayerNorm(2), "Dropout": lambda: torch.nn.Dropout(0.1),
        "ReLU": torch.nn.ReLU, "GELU": torch.nn.GELU, "Tanh": torch.nn.Tanh, "Sigmoid": torch.nn.Sigmoid,
        "SiLU": torch.nn.SiLU, "CrossEntropyLoss": torch.nn.CrossEntropyLoss, "NLLLoss": torch.nn.NLLLoss,
    }
    layer = layers[name]()
    args = ([[1.0, 2.0]],) + ((torch.tensor([1]),) if "Loss" in name else ())
    with pytest.raises(TypeError):
        layer(*args)
