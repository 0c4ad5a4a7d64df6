"""fast/fuse.py: the replayed step's kernels and backward give what the plain replay gives, bit for bit."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.fast import Replay, fuse

VOCAB, D, T = 7, 8, 5


class Block(nn.Module):
    """The ops fuse.py has kernels for (Linear, LayerNorm with and without affine, tanh-GELU, Add),
    beside ops it leaves alone (an exact GELU, softmax, a view)."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D, elementwise_affine=False)
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        self.mix = nn.Linear(D, D, bias=False)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, idx):
        x = self.tok(idx)
        x = x + self.fc2(F.gelu(self.fc1(self.ln1(x)), approximate="tanh"))
        x = x + F.gelu(self.mix(self.ln2(x)))  # exact GELU: no kernel
        att = F.softmax(x @ x.transpose(-2, -1), dim=-1)
        return self.head(att @ x)


def train(data, fused, dtype, monkeypatch, hook=False):
    monkeypatch.setattr(fuse, "ENABLED", fused)
    mt.manual_seed(0)
    model = Block().to(dtype)
    opt = mt.optim.AdamW(model.parameters(), lr=1e-2)
    seen = []
    if hook:  # a hook on a leaf: the engine's backward runs the replay's graph
        model.head.weight.register_hook(lambda g: seen.append(1))

    def loss_fn(x, y):
        return F.cross_entropy(model(mt.from_numpy(x)).reshape(-1, VOCAB), mt.from_numpy(y.reshape(-1)))

    step = Replay(loss_fn)
    losses = []
    for x, y in data:
        opt.zero_grad(set_to_none=True)
        losses.append(step(x, y).item())
        opt.step()
    used = sum(k is not None for k in step.kernels)
    return losses, [p.detach().numpy().copy() for p in model.parameters()], used, len(seen)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64])
@pytest.mark.parametrize("hook", [False, True])
def test_a_fused_replay_trains_as_the_plain_replay_bit_for_bit(monkeypatch, dtype, hook):
    rng = np.random.default_rng(1)
    data = [(rng.integers(0, VOCAB, (3, T)), rng.integers(0, VOCAB, (3, T))) for _ in range(5)]
    want_losses, want, unused, want_seen = train(data, False, dtype, monkeypatch, hook)
    losses, got, used, seen = train(data, True, dtype, monkeypatch, hook)
    assert unused == 0 and used == 9  # 4 Linear, 2 LayerNorm, 1 tanh GELU, 2 Add
    assert losses == want_losses  # the recording, the checked step and three replays
    assert seen == want_seen == (5 if hook else 0)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def _entry(op_fn, *args):
    """The tape entry Replay records for one op call: (op, node, arguments, output, True)."""
    from minitensor.autograd import grad_mode
    grad_mode.modes.recorder = ops = []
    try:
        op_fn(*args)
    finally:
        grad_mode.modes.recorder = None
    op, ctx, call_args, out_t = ops[-1]
    return op, ctx, call_args, out_t, out_t.grad_fn is ctx


@pytest.mark.parametrize("case", ["gelu", "layer_norm", "layer_norm_inf", "linear", "add"])
def test_each_kernel_is_its_ops_forward_and_keeps_what_backward_reads(case):
    rng = np.random.default_rng(0)
    x = mt.tensor(rng.standard_normal((2, 3, 4)), dtype=mt.float32, requires_grad=True)
    if case == "layer_norm_inf":
        x = mt.tensor(np.array([[1.0, np.inf, 2.0, 3.0], [1e30, -1e30, 0.5, 2.0]]), dtype=mt.float32,
                      requires_grad=True)
    w = mt.tensor(rng.standard_normal((5, 4)), dtype=mt.float32, requires_grad=True)
    b = mt.tensor(rng.standard_normal(5), dtype=mt.float32, requires_grad=True)
    ln_w = mt.tensor(rng.standard_normal(4), dtype=mt.float32, requires_grad=True)
    calls = {"gelu": lambda: _entry(F.gelu, x, "tanh"),
             "layer_norm": lambda: _entry(F.layer_norm, x, (4,), ln_w, b[:4]),
             "layer_norm_inf": lambda: _entry(F.layer_norm, x, (4,), ln_w, b[:4]),
             "linear": lambda: _entry(F.linear, x, w, b),
             "add": lambda: _entry(lambda a, c: a + c, x, x * 2)}
    op, ctx, args, out, is_node = calls[case]()
    [kernel] = fuse.forward_kernels([(op, ctx, args, out, is_node)])
    assert kernel is not None
    saved = {name: getattr(ctx, name).copy() for name in ("step", "xhat", "rstd") if hasattr(ctx, name)}
    for _ in range(2):  # the second call reuses the first one's buffers
        probe = type(ctx).__new__(type(ctx))
        got = kernel(probe, args)
        np.testing.assert_array_equal(got, out._array)
        for name, want in saved.items():
            np.testing.assert_array_equal(getattr(probe, name), want)


def test_a_kernel_that_does_not_reproduce_the_op_is_not_used(monkeypatch):
    x = mt.tensor(np.ones((2, 3)), dtype=mt.float32, requires_grad=True)
    entry = _entry(lambda a, c: a + c, x, x * 2)
    monkeypatch.setitem(fuse.MAKERS, entry[0], lambda args, out: lambda ctx, args: out + 1)
    assert fuse.forward_kernels([entry]) == [None]
