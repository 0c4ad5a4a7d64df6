"""`fast.Replay` trains exactly as the eager step does, and refuses a step it cannot follow."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.fast import Replay

VOCAB, D, T = 7, 8, 5


class TinyLM(nn.Module):
    """Embeddings, causal self-attention written out (masked_fill, softmax, dropout), LayerNorm,
    a tanh-GELU MLP written with pow, a head: the ops a tutorial model is made of."""

    def __init__(self, dropout):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, D), nn.Embedding(T, D)
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        self.head = nn.Linear(D, VOCAB, bias=False)
        self.drop = nn.Dropout(dropout)
        self.register_buffer("causal", mt.tril(mt.ones(T, T)).bool())

    def forward(self, idx):
        B, L = idx.shape
        x = self.tok(idx) + self.pos(mt.arange(L))
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
        att = (q @ k.transpose(-2, -1)) * D ** -0.5
        att = self.drop(F.softmax(att.masked_fill(~self.causal[:L, :L], float("-inf")), dim=-1))
        x = x + self.drop(self.proj(att @ v))
        h = self.fc1(self.ln2(x))
        h = 0.5 * h * (1 + mt.tanh((2 / np.pi) ** 0.5 * (h + 0.044715 * mt.pow(h, 3.0))))
        return self.head(x + self.fc2(h))


def setup(dropout=0.1, dtype=mt.float64):
    mt.manual_seed(0)
    model = TinyLM(dropout).to(dtype)
    opt = mt.optim.AdamW(model.parameters(), lr=1e-2)

    def loss_fn(x, y):
        logits = model(mt.from_numpy(x))
        return F.cross_entropy(logits.reshape(-1, VOCAB), mt.from_numpy(y.reshape(-1)))

    return model, opt, loss_fn


def batches(n, batch=4, seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.integers(0, VOCAB, (batch, T)), rng.integers(0, VOCAB, (batch, T))) for _ in range(n)]


def train(data, replay, dropout=0.1):
    """Losses and final parameters of a few AdamW steps, eager or through a Replay."""
    model, opt, loss_fn = setup(dropout)
    step = Replay(loss_fn) if replay else None
    losses = []
    for x, y in data:
        opt.zero_grad(set_to_none=True)
        if step is None:
            loss = loss_fn(x, y)
            loss.backward()
        else:
            loss = step(x, y)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_a_replayed_training_equals_the_eager_one_bit_for_bit(dropout):
    data = batches(6)
    eager_losses, eager_params = train(data, replay=False, dropout=dropout)
    losses, params = train(data, replay=True, dropout=dropout)
    assert losses == eager_losses  # every step: the recording, the checked one, and four replays
    for got, want in zip(params, eager_params):
        np.testing.assert_array_equal(got, want)
    assert eager_losses[0] != eager_losses[-1]  # it did train


def test_another_shape_records_afresh_and_stays_equal():
    data = batches(3, batch=4) + batches(3, batch=2, seed=2) + batches(3, batch=4, seed=3)
    (losses, params), (eager_losses, eager_params) = train(data, replay=True), train(data, replay=False)
    assert losses == eager_losses
    for got, want in zip(params, eager_params):
        np.testing.assert_array_equal(got, want)


def test_the_gradients_it_leaves_are_those_of_backward():
    model, opt, loss_fn = setup(dropout=0.0)
    step = Replay(loss_fn)
    for x, y in batches(4):
        opt.zero_grad()
        loss = step(x, y)
        replayed = [p.grad.numpy().copy() for p in model.parameters()]
        opt.zero_grad()
        eager = loss_fn(x, y)
        eager.backward()
        assert loss.item() == eager.item() and not loss.requires_grad
        for got, p in zip(replayed, model.parameters()):
            np.testing.assert_array_equal(got, p.grad.numpy())


def test_a_step_that_reads_its_inputs_outside_the_ops_is_refused_and_changes_nothing():
    model, opt, _ = setup(dropout=0.0)

    def copies_its_input(x, y):  # mt.tensor copies: a replay would keep the first batch
        logits = model(mt.tensor(x))
        return F.cross_entropy(logits.reshape(-1, VOCAB), mt.from_numpy(y.reshape(-1)))

    step = Replay(copies_its_input)
    (x0, y0), (x1, y1) = batches(2)
    step(x0, y0)
    before = [p.grad.numpy().copy() for p in model.parameters()]
    state = mt.get_rng_state()
    with pytest.raises(RuntimeError, match=r"op 0 \(Index\) of the replayed forward differs from the eager run's"):
        step(x1, y1)
    for got, want in zip([p.grad.numpy() for p in model.parameters()], before):
        np.testing.assert_array_equal(got, want)
    assert mt.get_rng_state() == state


def test_a_step_that_branches_on_its_data_is_refused():
    model, _, loss_fn = setup(dropout=0.0)

    def branches(x, y):
        loss = loss_fn(x, y)
        return loss * 2 if x.sum() > 40 else loss

    step = Replay(branches)
    low, high = np.zeros((4, T), np.int64), np.full((4, T), 6)
    step(low, low)
    with pytest.raises(RuntimeError, match="another path"):
        step(high, high)


@pytest.mark.parametrize("fn, message", [
    (lambda x: mt.ones(2, requires_grad=True) * 2, "one-element loss"),
    (lambda x: mt.tensor(1.0) * 2, "one-element loss"),
])
def test_it_needs_a_scalar_loss_with_a_graph(fn, message):
    with pytest.raises(RuntimeError, match=message):
        Replay(fn)(np.zeros(3))


def test_it_needs_grad_mode():
    _, _, loss_fn = setup()
    x, y = batches(1)[0]
    with mt.no_grad(), pytest.raises(RuntimeError, match="grad mode on"):
        Replay(loss_fn)(x, y)


def test_its_program_lists_every_op_and_every_vjp_by_name():
    model, _, loss_fn = setup(dropout=0.0)
    step = Replay(loss_fn, names=dict(model.named_parameters()))
    assert "nothing recorded" in step.program()
    x, y = batches(1)[0]
    loss = loss_fn(x, y)
    step(x, y)
    forward, backward = step.program().split("backward")
    assert forward.count(" = ") == len(step.tape)
    assert "Index(tok.weight, (x,))" in forward and "Linear(" in forward and "qkv.weight" in forward
    assert "CrossEntropy(" in forward and ", y," in forward
    nodes = {id(n): n for n in _graph(loss)}
    assert backward.count("Backward(g_t") == len(nodes)
    assert "g_head.weight += LinearBackward(" in backward


def _graph(loss):
    seen, stack = [], [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, mt.Tensor) or any(node is s for s in seen):
            continue
        seen.append(node)
        stack.extend(child for _, child, _, _ in node.edges)
    return seen


class Encoder(nn.Module):
    """PyTorch's own layers, as a tutorial uses them: TransformerEncoder with a causal mask, and MultiheadAttention."""

    def __init__(self, layers):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, 2, 2 * D, dropout=0.1, batch_first=True), layers)
        self.att = nn.MultiheadAttention(D, 2, dropout=0.1, batch_first=True)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, idx):
        mask = nn.Transformer.generate_square_subsequent_mask(idx.shape[1])
        h = self.enc(self.tok(idx), mask=mask, is_causal=True)
        a, _ = self.att(h, h, h, need_weights=True)
        return self.head(a)


def test_the_library_layers_replay_bit_for_bit():
    runs = []
    for replay in (False, True):
        mt.manual_seed(0)
        model = Encoder(layers=2).double()
        opt = mt.optim.Adam(model.parameters(), lr=1e-2)

        def loss_fn(x, y):
            return F.cross_entropy(model(mt.from_numpy(x)).reshape(-1, VOCAB), mt.from_numpy(y.reshape(-1)))

        step, losses = Replay(loss_fn) if replay else None, []
        for x, y in batches(5):
            opt.zero_grad()
            if step is None:
                loss = loss_fn(x, y)
                loss.backward()
            else:
                loss = step(x, y)
            opt.step()
            losses.append(loss.item())
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    (eager_losses, eager_params), (losses, params) = runs
    assert losses == eager_losses
    for got, want in zip(params, eager_params):
        np.testing.assert_array_equal(got, want)
