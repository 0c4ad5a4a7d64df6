"""`torch.nn.modules.rnn`: the same classes as `minitensor.nn`, under the path PyTorch defines them in."""
from ..recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
