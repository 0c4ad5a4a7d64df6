"""What an editor must know, written as `assert_type` checks for mypy (never run: type-checked only
by tests/typing/test_typecheck.py; `assert_type` fails the check unless the type is exactly that)."""
from typing import Iterator

from typing_extensions import assert_type

import attention
import minitensor
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor import Size, Tensor, optim
from minitensor.ops.reduce import max_result

x = minitensor.randn(4, 6, requires_grad=True)
assert_type(x.T, Tensor)
assert_type(x.mT, Tensor)
assert_type(x.sum(dim=1), Tensor)
assert_type(x.sum(), Tensor)
assert_type(x.softmax(-1), Tensor)
assert_type(x.view(2, -1), Tensor)
assert_type(x.reshape((2, 12)), Tensor)
assert_type(x.shape, Size)
assert_type(x.shape[0], int)
assert_type(x.size(), Size)
assert_type(x.size(1), int)
assert_type(x.item(), float)
assert_type(x.max(), Tensor)
assert_type(x.max(dim=1), max_result)
assert_type(x.max(dim=1).values, Tensor)
assert_type(x.split(2), tuple[Tensor, ...])
assert_type(x + 1, Tensor)
assert_type(2.0 * x, Tensor)
assert_type(x @ x.T, Tensor)
assert_type(x > 0, Tensor)
assert_type(x == x, Tensor)
assert_type(x[0, 1:], Tensor)
assert_type(x.grad, Tensor | None)
assert_type(x.requires_grad, bool)
assert_type(x.add_(1), Tensor)
assert_type(minitensor.exp(x), Tensor)
assert_type(minitensor.cat([x, x], dim=0), Tensor)
assert_type(minitensor.where(x > 0, x, 0.0), Tensor)
assert_type(minitensor.zeros(2, 3, dtype=minitensor.float64), Tensor)

w = nn.Parameter(minitensor.randn(3, 6))
assert_type(F.linear(x, w), Tensor)
assert_type(nn.Linear(6, 3)(x), Tensor)
assert_type(nn.Sequential(nn.Linear(6, 3), nn.ReLU()), nn.Sequential)
assert_type(w.requires_grad_(False), nn.Parameter)

model = nn.Linear(6, 3)
assert_type(model.parameters(), Iterator[nn.Parameter])
assert_type(model.train(), nn.Linear)
assert_type(model.state_dict(), dict[str, Tensor])
opt = optim.AdamW(model.parameters(), lr=1e-3)
assert_type(opt, optim.AdamW)
opt.zero_grad()

with minitensor.no_grad() as guard:
    assert_type(guard, minitensor.no_grad)
loss = F.cross_entropy(model(x), minitensor.tensor([0, 1, 2, 0]))
assert_type(loss, Tensor)
assert_type(loss.item(), float)

mha = attention.MultiHeadAttention(d_model=6, num_heads=2)
out, weights = mha(x.unsqueeze(0))
assert_type(out, Tensor)
assert_type(weights, Tensor | None)
assert_type(attention.TransformerBlock(6, 2)(x.unsqueeze(0)), Tensor)
assert_type(attention.causal_mask(4), Tensor)
assert_type(attention.attention_viewer_html(minitensor.rand(2, 4, 4), "abcd"), str)

seq = minitensor.randn(5, 2, 6)  # (L, N, E): PyTorch's sequence-first layout
torch_mha = nn.MultiheadAttention(6, 2)
assert_type(torch_mha(seq, seq, seq), tuple[Tensor, Tensor | None])
assert_type(nn.TransformerEncoder(nn.TransformerEncoderLayer(6, 2), num_layers=2)(seq), Tensor)
assert_type(nn.Transformer(6, 2, 1, 1, dim_feedforward=8)(seq, seq), Tensor)
assert_type(nn.Transformer.generate_square_subsequent_mask(5), Tensor)
assert_type(nn.GRU(6, 3)(seq), tuple[Tensor, Tensor])
assert_type(nn.LSTM(6, 3)(seq), tuple[Tensor, tuple[Tensor, Tensor]])
assert_type(nn.LSTMCell(6, 3)(x), tuple[Tensor, Tensor])
assert_type(nn.GRUCell(6, 3)(x), Tensor)


@minitensor.no_grad()
def evaluate(t: Tensor) -> float:
    return t.mean().item()


@minitensor.no_grad
def evaluate_bare(t: Tensor) -> float:
    return t.mean().item()


assert_type(evaluate(x), float)
assert_type(evaluate_bare(x), float)
