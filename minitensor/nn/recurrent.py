r"""Recurrent layers with PyTorch's names, shapes, defaults and init: `RNN`, `GRU`, `LSTM` and the
one-step cells `RNNCell`, `GRUCell`, `LSTMCell`.

Everything here is composed of minitensor ops (`F.linear`, `sigmoid`, `tanh`, `chunk`, `stack`),
so backpropagation through time is nothing special: a sequence's graph is its steps' graphs
chained by the hidden state, and the engine walks it backwards like any other graph.

A layer is its cell applied along the time axis:

    h_0 given (zeros by default)
    for t = 1 .. L:   h_t = cell(x_t, h_{t-1})      output = [h_1, ..., h_L],  h_n = h_L

With `num_layers=2`, layer 2 reads layer 1's outputs as its x_t (after dropout, in training).
With `bidirectional=True` each layer has a second set of weights (names ending `_reverse`) run
from t = L down to 1; the two directions' outputs are joined feature-wise, forward first.

Shapes, as PyTorch (D = 2 if bidirectional else 1, H_out = proj_size or hidden_size):
    input   (L, N, H_in), or (N, L, H_in) with batch_first=True, or (L, H_in) unbatched
    h_0     (D * num_layers, N, H_out), or (D * num_layers, H_out) unbatched
    output  (L, N, D * H_out) (batch_first: (N, L, D * H_out)), or (L, D * H_out) unbatched
    h_n     like h_0; the LSTM's c_n like h_0 with hidden_size features

Parameters of layer k (suffix `_reverse` for the backward direction), gates stacked by rows in
PyTorch's order, so a state dict moves between the two libraries by name:
    weight_ih_l{k}  (G * hidden_size, H_in or D * H_out)   weight_hh_l{k}  (G * hidden_size, H_out)
    bias_ih_l{k}    (G * hidden_size,)                     bias_hh_l{k}    (G * hidden_size,)
    weight_hr_l{k}  (proj_size, hidden_size), LSTM with proj_size > 0 only
with G = 1 for RNN, 3 for GRU (r, z, n) and 4 for LSTM (i, f, g, o). Every parameter starts
uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)].
"""
from __future__ import annotations

import math
import numbers
import warnings

from ..ops.shape import cat, stack
from ..ops.unary import relu, sigmoid, tanh
from ..tensor import Tensor
from ..types import DeviceLike, DTypeLike
from . import functional as F, init
from .layers import _empty
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

# ---- the cells' math: one time step ----------------------------------------------------------------

def rnn_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None, nonlinearity="tanh"):
    r"""One step of an Elman RNN:

        h' = tanh(W_ih x + b_ih + W_hh h + b_hh)        (relu instead of tanh if nonlinearity='relu')
    """
    act = tanh if nonlinearity == "tanh" else relu
    return act(F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh))


def gru_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    r"""One step of a GRU (W_ih = [W_ir; W_iz; W_in] and W_hh = [W_hr; W_hz; W_hn], stacked by rows):

        r  = sigmoid(W_ir x + b_ir + W_hr h + b_hr)          reset gate
        z  = sigmoid(W_iz x + b_iz + W_hz h + b_hz)          update gate
        n  = tanh(W_in x + b_in + r * (W_hn h + b_hn))       candidate state
        h' = (1 - z) * n + z * h

    The reset gate scales W_hn h + b_hn, bias included (PyTorch's and cuDNN's form; the original
    paper applies r to h before the product).
    """
    x_r, x_z, x_n = F.linear(x, w_ih, b_ih).chunk(3, -1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r = sigmoid(x_r + h_r)
    z = sigmoid(x_z + h_z)
    n = tanh(x_n + r * h_n)
    return (1 - z) * n + z * h


def lstm_cell(x, h, c, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
    r"""One step of an LSTM (W_ih = [W_ii; W_if; W_ig; W_io] and W_hh likewise, stacked by rows);
    returns (h', c'):

        i  = sigmoid(W_ii x + b_ii + W_hi h + b_hi)      input gate
        f  = sigmoid(W_if x + b_if + W_hf h + b_hf)      forget gate
        g  = tanh(W_ig x + b_ig + W_hg h + b_hg)         candidate cell
        o  = sigmoid(W_io x + b_io + W_ho h + b_ho)      output gate
        c' = f * c + i * g
        h' = o * tanh(c')                               (times W_hr on the left if proj_size > 0)
    """
    gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
    x_i, x_f, x_g, x_o = gates.chunk(4, -1)
    i = sigmoid(x_i)
    f = sigmoid(x_f)
    g = tanh(x_g)
    o = sigmoid(x_o)
    c_next = f * c + i * g
    h_next = o * tanh(c_next)
    if w_hr is not None:
        h_next = F.linear(h_next, w_hr)
    return h_next, c_next


# ---- argument checks shared by the layers and the cells --------------------------------------------

def _check_sizes(name, input_size, hidden_size):
    for what, n in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"{what} should be of type int, got: {type(n).__name__}")
    if input_size < 0:
        raise ValueError(f"{name}: input_size must be at least 0, got {input_size}")


def _check_tensor(name, what, t):
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: {what} must be a Tensor, got {type(t).__name__}")


def _check_dtype(name, input, weight, error=ValueError):
    """PyTorch's RNN/LSTM/GRU check this themselves (ValueError); its cells meet their matmul's RuntimeError."""
    if input.dtype != weight.dtype:
        raise error(
            f"{name}: input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). "
            f"Convert the input: input.to({weight.dtype}), or the model: model.to({input.dtype})"
        )


# ---- the layers --------------------------------------------------------------------------------------

class RNNBase(Module):
    """What RNN, GRU and LSTM share: the per-layer, per-direction weights and the loop over time.

    `mode` is 'RNN_TANH', 'RNN_RELU', 'GRU' or 'LSTM', as in PyTorch. Subclasses say how one step
    updates the state (`_step`); the state is h, or the pair (h, c) for the LSTM.
    """

    _gates = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(mode, mode)
        if mode not in self._gates:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        _check_sizes(name, input_size, hidden_size)
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if not isinstance(num_layers, int) or isinstance(num_layers, bool):
            raise TypeError(f"num_layers should be of type int, got: {type(num_layers).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero "
                          f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", UserWarning, stacklevel=3)
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_rows = self._gates[mode] * hidden_size
        h_out = proj_size or hidden_size
        directions = 2 if bidirectional else 1
        self._all_weights = []  # per (layer, direction): its parameters' names, in PyTorch's order
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else h_out * directions
            for direction in range(directions):
                sfx = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes: dict[str, tuple[int, ...]] = {f"weight_ih{sfx}": (gate_rows, layer_in),
                                                      f"weight_hh{sfx}": (gate_rows, h_out)}
                if bias:
                    shapes.update({f"bias_ih{sfx}": (gate_rows,), f"bias_hh{sfx}": (gate_rows,)})
                if proj_size > 0:
                    shapes[f"weight_hr{sfx}"] = (proj_size, hidden_size)
                for pname, shape in shapes.items():
                    setattr(self, pname, _empty(shape, dtype, device, name))
                self._all_weights.append(list(shapes))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters, one list per (layer, direction): [w_ih, w_hh, b_ih, b_hh(, w_hr)]."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch packs the weights into one buffer for cuDNN; there is no cuDNN here."""

    def _state_sizes(self):
        """The feature size of each part of the state: (H_out,) or, for the LSTM, (H_out, hidden_size)."""
        return (self.proj_size or self.hidden_size,)

    def _weights(self, k):
        """(w_ih, w_hh, b_ih, b_hh, w_hr) of the k-th (layer, direction); None for what it doesn't have."""
        layer, direction = divmod(k, 2 if self.bidirectional else 1)
        sfx = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        return tuple(self._parameters.get(n + sfx)
                     for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _step(self, x, state, w):
        """The state after one time step: a tuple (h,), or (h, c) for the LSTM; `w` as `_weights` gives it."""
        raise NotImplementedError

    # (no `forward` here: as PyTorch's, a bare RNNBase is Module's, which raises NotImplementedError; RNN, GRU
    # and LSTM each have one, all calling this shared driver)
    def _forward(self, input: Tensor,
                 hx: Tensor | tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor | tuple[Tensor, ...]]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        name = type(self).__name__
        directions = 2 if self.bidirectional else 1
        # 1. check, and bring the input to (L, N, H_in) and each part of the state to (D * layers, N, size)
        _check_tensor(name, "input", input)
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        batched = input.ndim == 3
        self._check_input_size(input)
        if not batched:
            x = input.unsqueeze(1)  # (L, 1, H_in): a batch of one
        elif self.batch_first:
            x = input.transpose(0, 1)  # (N, L, H_in) -> (L, N, H_in)
        else:
            x = input
        steps, batch = x.shape[0], x.shape[1]
        if steps == 0:
            raise RuntimeError(f"{name}: Expected sequence length to be larger than 0 in RNN")
        state = self._initial_state(hx, input, batched, batch, directions)
        x, last = self._layers(x, state, [batch] * steps)
        if not batched:
            x, last = x.squeeze(1), tuple(part.squeeze(1) for part in last)
        elif self.batch_first:
            x = x.transpose(0, 1)
        return x, (last if len(last) > 1 else last[0])

    def _check_input_size(self, input):
        name = type(self).__name__
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input.size(-1) must be equal to input_size. "
                               f"Expected {self.input_size}, got {input.shape[-1]}")
        _check_dtype(name, input, self.weight_ih_l0)

    def _layers(self, x, state, sizes):
        """Run every layer and direction over time. x is (L, N, H_in), or for a packed input its data (sum of
        sizes, H_in) whose step t holds the sizes[t] sequences still running; returns the output in x's layout
        and the final state parts (D * layers, N, size)."""
        directions = 2 if self.bidirectional else 1
        packed = x.ndim == 2
        steps, batch = len(sizes), sizes[0]
        finals = []
        for layer in range(self.num_layers):
            xs = x.split(sizes) if packed else x.unbind(0)  # L tensors (sizes[t], features)
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction  # this layer and direction's row in h_0 and h_n
                w = self._weights(k)
                s = tuple(part[k] for part in state)  # (h,) or (h, c), each (N, size)
                times = reversed(range(steps)) if direction == 1 else range(steps)
                hs = []  # the output at each step, in the order the steps ran
                for t in times:
                    n = sizes[t]
                    if n == batch:
                        s = self._step(xs[t], s, w)
                    else:  # a packed step: only the first n sequences are still running; the others keep their state
                        ran = self._step(xs[t], tuple(part[:n] for part in s), w)
                        s = tuple(cat([new, part[n:]]) for new, part in zip(ran, s))
                    hs.append(s[0][:n] if n < batch else s[0])  # the output at time t is the new h
                hs = hs[::-1] if direction == 1 else hs  # in time order
                outputs.append(cat(hs) if packed else stack(hs))  # (L, N, H_out), or packed (sum of sizes, H_out)
                finals.append(s)
            x = outputs[0] if directions == 1 else cat(outputs, -1)  # (L, N, D * H_out)
            if layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, self.training)

        # h_n (and c_n): the last state of every layer and direction, in the order of h_0
        return x, tuple(stack([s[i] for s in finals]) for i in range(len(state)))

    def _forward_packed(self, input, hx):
        """A PackedSequence in, a PackedSequence out: the state of sequence b stops changing after its own last
        step, so h_n holds each sequence's state at its own length. hx and h_n are in the batch's original order."""
        name = type(self).__name__
        data, sizes = input.data, [int(n) for n in input.batch_sizes.tolist()]
        _check_tensor(name, "input", data)
        if data.ndim != 2:
            raise ValueError(f"{name}: Expected the packed data to be 2D, got {data.ndim}D instead")
        self._check_input_size(data)
        directions = 2 if self.bidirectional else 1
        state = self._initial_state(hx, data.unsqueeze(0), True, sizes[0], directions)
        if input.sorted_indices is not None:  # the packed batch is sorted longest first; hx is in the user's order
            state = tuple(part.index_select(1, input.sorted_indices) for part in state)
        out, last = self._layers(data, state, sizes)
        if input.unsorted_indices is not None:
            last = tuple(part.index_select(1, input.unsorted_indices) for part in last)
        packed = PackedSequence(out, input.batch_sizes, input.sorted_indices, input.unsorted_indices)
        return packed, (last if len(last) > 1 else last[0])

    def _initial_state(self, hx, input, batched, batch, directions):
        """The parts of h_0 (h, or h and c) as (D * num_layers, N, size) tensors; zeros when hx is None."""
        name, sizes = type(self).__name__, self._state_sizes()
        rows = self.num_layers * directions
        if hx is None:
            return tuple(input.new_zeros((rows, batch, n)) for n in sizes)
        if len(sizes) == 1:
            _check_tensor(name, "hx", hx)
            parts = (hx,)
        else:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"{name}: hx must be a tuple (h_0, c_0) of two Tensors, got {type(hx).__name__}")
            for i, part in enumerate(hx):
                _check_tensor(name, f"hx[{i}]", part)
            parts = tuple(hx)
        dims = 3 if batched else 2
        if any(p.ndim != dims for p in parts):
            got = ", ".join(f"{p.ndim}-D" for p in parts)
            what = "hx" if len(parts) == 1 else "hx and cx"
            raise RuntimeError(f"{name}: For {'batched 3-D' if batched else 'unbatched 2-D'} input, {what} should "
                               f"also be {dims}-D but got ({got}) tensor{'s' if len(parts) > 1 else ''}")
        out = []
        for i, (p, n) in enumerate(zip(parts, sizes)):
            expected = (rows, batch, n) if batched else (rows, n)
            if tuple(p.shape) != expected:
                which = "hidden" if len(parts) == 1 else f"hidden[{i}]"
                raise RuntimeError(f"{name}: Expected {which} size {expected}, got {list(p.shape)}")
            if p.dtype != input.dtype:
                raise RuntimeError(f"{name}: {'hx' if i == 0 else 'cx'} has dtype {p.dtype} but the input has "
                                   f"{input.dtype}; they must be the same")
            out.append(p if batched else p.unsqueeze(1))
        return tuple(out)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _no_proj(name, proj_size):
    if proj_size:
        raise ValueError(f"{name}: proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(RNNBase):
    r"""A multi-layer Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) (or relu).

    forward(input, h_0=None) -> (output, h_n). Shapes and parameter names: see this module's docstring.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None, *, proj_size: int = 0) -> None:
        _no_proj("RNN", proj_size)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity

    def _step(self, x, state, w):
        return (rnn_cell(x, state[0], *w[:4], nonlinearity=self.nonlinearity),)

    def forward(self, input: Tensor, hx: Tensor | None = None
                ) -> tuple[Tensor, Tensor]:
        return self._forward(input, hx)  # type: ignore[return-value]


class GRU(RNNBase):
    r"""A multi-layer gated recurrent unit; each step is `gru_cell`:

        r_t = sigmoid(W_ir x_t + b_ir + W_hr h_{t-1} + b_hr)
        z_t = sigmoid(W_iz x_t + b_iz + W_hz h_{t-1} + b_hz)
        n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn))
        h_t = (1 - z_t) * n_t + z_t * h_{t-1}

    forward(input, h_0=None) -> (output, h_n). Shapes and parameter names: see this module's docstring.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None, *, proj_size: int = 0) -> None:
        _no_proj("GRU", proj_size)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         0, device, dtype)

    def _step(self, x, state, w):
        return (gru_cell(x, state[0], *w[:4]),)

    def forward(self, input: Tensor, hx: Tensor | None = None
                ) -> tuple[Tensor, Tensor]:
        return self._forward(input, hx)  # type: ignore[return-value]


class LSTM(RNNBase):
    r"""A multi-layer long short-term memory; each step is `lstm_cell`:

        i_t = sigmoid(W_ii x_t + b_ii + W_hi h_{t-1} + b_hi)
        f_t = sigmoid(W_if x_t + b_if + W_hf h_{t-1} + b_hf)
        g_t = tanh(W_ig x_t + b_ig + W_hg h_{t-1} + b_hg)
        o_t = sigmoid(W_io x_t + b_io + W_ho h_{t-1} + b_ho)
        c_t = f_t * c_{t-1} + i_t * g_t
        h_t = o_t * tanh(c_t)                    (h_t = W_hr (o_t * tanh(c_t)) with proj_size > 0)

    forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n)).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def _state_sizes(self):
        return (self.proj_size or self.hidden_size, self.hidden_size)

    def _step(self, x, state, w):
        h, c = state
        return lstm_cell(x, h, c, *w)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        return self._forward(input, hx)  # type: ignore[return-value]


# ---- the cells -----------------------------------------------------------------------------------------

class RNNCellBase(Module):
    """What the cells share: weight_ih (G * hidden, input), weight_hh (G * hidden, hidden), the biases,
    PyTorch's init, and the checks of one step's input and state."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        super().__init__()
        name = type(self).__name__
        _check_sizes(name, input_size, hidden_size)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = _empty((num_chunks * hidden_size, input_size), dtype, device, name)
        self.weight_hh = _empty((num_chunks * hidden_size, hidden_size), dtype, device, name)
        if bias:
            self.bias_ih = _empty((num_chunks * hidden_size,), dtype, device, name)
            self.bias_hh = _empty((num_chunks * hidden_size,), dtype, device, name)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _weights(self) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def _inputs(self, input, states):
        """Check one step's input and state parts (None: zeros); return them batched, and whether input was."""
        name = type(self).__name__
        _check_tensor(name, "input", input)
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input has inconsistent input_size: got {input.shape[-1]} "
                               f"expected {self.input_size}")
        _check_dtype(name, input, self.weight_ih, RuntimeError)
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        out = [x]
        for i, h in enumerate(states):
            if h is None:
                out.append(x.new_zeros((x.shape[0], self.hidden_size)))
                continue
            _check_tensor(name, f"hidden{i}", h)
            if h.ndim != input.ndim:
                raise RuntimeError(f"{name}: Expected hidden{i} to be {input.ndim}D like the input, "
                                   f"got {h.ndim}D (shape {tuple(h.shape)})")
            if h.shape[-1] != self.hidden_size:
                raise RuntimeError(f"{name}: hidden{i} has inconsistent hidden_size: got {h.shape[-1]}, "
                                   f"expected {self.hidden_size}")
            if batched and h.shape[0] != input.shape[0]:
                raise RuntimeError(f"{name}: Input batch size {input.shape[0]} doesn't match hidden{i} "
                                   f"batch size {h.shape[0]}")
            if h.dtype != input.dtype:
                raise RuntimeError(f"{name}: hidden{i} has dtype {h.dtype} but the input has {input.dtype}; "
                                   "they must be the same")
            out.append(h if batched else h.unsqueeze(0))
        return out, batched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    r"""One step of an Elman RNN: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu).

    forward(input (N, input_size) or (input_size,), hx=None) -> h' of hx's shape (zeros when None).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: DeviceLike | None = None, dtype: DTypeLike | None = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        (x, h), batched = self._inputs(input, [hx])
        h = rnn_cell(x, h, *self._weights(), nonlinearity=self.nonlinearity)
        return h if batched else h.squeeze(0)


class GRUCell(RNNCellBase):
    r"""One step of a GRU (`gru_cell`): gates r, z and candidate n stacked in that order in each weight.

    forward(input (N, input_size) or (input_size,), hx=None) -> h' of hx's shape (zeros when None).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        (x, h), batched = self._inputs(input, [hx])
        h = gru_cell(x, h, *self._weights())
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    r"""One step of an LSTM (`lstm_cell`): gates i, f, g, o stacked in that order in each weight.

    forward(input (N, input_size) or (input_size,), (h, c)=None) -> (h', c') (zeros when None).
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: DeviceLike | None = None,
                 dtype: DTypeLike | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a tuple (h, c) of two Tensors, got {type(hx).__name__}")
        (x, h, c), batched = self._inputs(input, [None, None] if hx is None else list(hx))
        h, c = lstm_cell(x, h, c, *self._weights())
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))
