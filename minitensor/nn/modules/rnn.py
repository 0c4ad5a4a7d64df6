"""`torch.nn.modules.rnn`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from .. import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
