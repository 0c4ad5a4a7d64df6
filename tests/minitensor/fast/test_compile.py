"""`minitensor.compile` replays a module's or a function's ops and trains exactly as eagerly, and runs
eagerly (without an error) where a replay could differ, as PyTorch falls back at a graph break."""

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from attention.lm import DecoderLM
from benchmarks._timing import load_user_file
from minitensor.fast.compile import OptimizedModule
from minitensor.run import torch_is_minitensor

from .test_replay import Encoder  # (PyTorch's own layers as a tutorial uses them; its VOCAB and D are these)

VOCAB, T, D = 7, 5, 8


def batches(n, batch=4, seed=1):
    rng = np.random.default_rng(seed)
    return [(mt.from_numpy(rng.integers(0, VOCAB, (batch, T))), mt.from_numpy(rng.integers(0, VOCAB, (batch, T))))
            for _ in range(n)]


def client_gpt():
    """benchmarks/client_gpt.py, written for PyTorch, imported under minitensor.run's mapping (as bench_client)."""
    with torch_is_minitensor():
        return load_user_file("client_gpt_compiled", "client_gpt.py")


def lm_loss(out, y):
    return F.cross_entropy(out.reshape(-1, VOCAB), y.reshape(-1))


MODELS = {
    "attention's DecoderLM": lambda: DecoderLM(VOCAB, T, n_layer=1, n_head=2, d_model=D, dropout=0.1),
    "TransformerEncoder + MultiheadAttention": lambda: Encoder(layers=1),
}


def train(make, compiled, data, loss_of=lm_loss, **compile_args):
    """Losses and final parameters of a few seeded AdamW steps (dropout on), eager or compiled."""
    mt.manual_seed(0)
    model = make()
    opt = mt.optim.AdamW(model.parameters(), lr=1e-2)
    step = mt.compile(model, **compile_args) if compiled else model
    losses = []
    for x, y in data:
        opt.zero_grad()
        loss = loss_of(step(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()], step


def assert_same_training(a, b):
    assert a[0] == b[0]
    for got, want in zip(a[1], b[1]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", list(MODELS))
def test_a_compiled_model_trains_bit_for_bit_as_the_eager_one(name):
    data = batches(5)
    eager, compiled = train(MODELS[name], False, data), train(MODELS[name], True, data)
    assert_same_training(compiled, eager)
    assert compiled[2].reason is None and compiled[2]._compiled.latest.checked  # it did replay
    assert eager[0][0] != eager[0][-1]


def test_a_tutorial_gpt_written_for_pytorch_trains_bit_for_bit_compiled():
    gpt, data = client_gpt(), batches(4, batch=3)
    runs = []
    for compiled in (False, True):
        model, opt = gpt.build(VOCAB, T, n_layer=1, n_head=2, n_embd=D)
        with torch_is_minitensor():  # the user's own line, as under `python -m minitensor.run`
            import torch
            model = torch.compile(model) if compiled else model
        losses = [gpt.train_step(model, opt, x, y) for x, y in data]  # the file's own step: model(x, y), AdamW, clip
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    assert_same_training(runs[1], runs[0])
    assert model.reason is None and model._compiled.latest.checked


def test_new_shapes_record_again_and_past_the_limit_run_eagerly():
    data = batches(2) + batches(2, batch=2, seed=2) + batches(2, seed=3)
    make = MODELS["attention's DecoderLM"]
    eager, compiled = train(make, False, data), train(make, True, data)
    assert_same_training(compiled, eager)
    assert len(compiled[2]._compiled.recordings) == 2
    limited = train(make, True, data, recompile_limit=1)  # batch 4 replays, batch 2 runs eagerly
    assert_same_training(limited, eager)
    assert len(limited[2]._compiled.recordings) == 1 and limited[2].reason is None


class Branchy(nn.Module):
    def __init__(self, how):
        super().__init__()
        self.lin, self.how = nn.Linear(3, 2), how

    def forward(self, x):
        h = self.lin(x)
        if self.how == "item":  # a data-dependent branch
            return h * 2 if x.sum().item() > 0 else h
        return h + mt.tensor(float(x.numpy().mean()))  # a value read out of the graph


@pytest.mark.parametrize("how", ["item", "numpy"])
def test_a_value_read_out_of_the_graph_makes_it_run_eagerly_without_an_error(how):
    xs = [mt.full((4, 3), v) for v in (1.0, -1.0, 2.0, -3.0)]
    runs = []
    for compiled in (False, True):
        mt.manual_seed(0)
        model = Branchy(how)
        step = mt.compile(model) if compiled else model
        outs = []
        for x in xs:
            model.zero_grad()
            out = step(x)
            (out * mt.arange(2.0)).sum().backward()
            outs.append((out.detach().numpy().copy(), model.lin.weight.grad.numpy().copy()))
        runs.append(outs)
    for (a, ga), (b, gb) in zip(*runs):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(ga, gb)
    assert "differs" in step.reason and "eagerly" in step.program()
    with pytest.raises(RuntimeError, match="fullgraph=True"):
        strict = mt.compile(Branchy(how), fullgraph=True)
        for x in xs[:2]:
            strict(x)


def test_a_check_on_the_recordings_own_data_is_done_again_on_other_data():
    model = Branchy("numpy")
    step = mt.compile(model)
    x = mt.ones(4, 3)
    for _ in range(3):  # the same batch: the check can't see the copy made outside the ops
        np.testing.assert_array_equal(step(x).detach().numpy(), model(x).detach().numpy())
    assert step.reason is None
    y = mt.full((4, 3), 5.0)
    np.testing.assert_array_equal(step(y).detach().numpy(), model(y).detach().numpy())
    assert "differs" in step.reason


def test_modes_parameters_and_requires_grad_are_part_of_the_key():
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2))
    step = mt.compile(model)
    x = mt.randn(5, 3)

    def same(**kw):
        state = mt.get_rng_state()
        got = step(x)
        mt.set_rng_state(state)
        want = model(x)
        np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
        assert got.requires_grad == want.requires_grad
        return got

    for _ in range(3):
        same()
    model.eval()
    same()
    with mt.no_grad():
        assert not same().requires_grad
    model[0].weight = nn.Parameter(mt.randn(4, 3))  # a parameter replaced
    same()
    model[2].weight.requires_grad_(False)
    same().sum().backward()
    assert model[2].weight.grad is None and model[0].weight.grad is not None
    assert len(step._compiled.recordings) == 5 and step.reason is None


def test_gradients_reach_an_input_that_requires_grad_and_kept_outputs_keep_their_values():
    mt.manual_seed(0)
    emb, block = nn.Embedding(VOCAB, D), nn.Sequential(nn.Linear(D, D), nn.Tanh())
    step = mt.compile(block)
    kept, grads = [], []
    for x, _ in batches(4):
        for f in (step, block):
            emb.zero_grad()
            out = f(emb(x))
            (out * out).sum().backward()
            grads.append(emb.weight.grad.numpy().copy())
            kept.append((out, out.detach().numpy().copy()))
    for a, b in zip(grads[::2], grads[1::2]):
        np.testing.assert_array_equal(a, b)
    for out, values in kept:
        np.testing.assert_array_equal(out.detach().numpy(), values)


def test_outputs_still_to_be_backpropagated_are_not_overwritten():
    mt.manual_seed(0)
    lin = nn.Linear(3, 2)
    step = mt.compile(lin)
    xs = [mt.randn(4, 3) for _ in range(4)]
    step(xs[0]).sum().backward(), step(xs[1]).sum().backward()  # recorded, checked
    lin.zero_grad()
    (step(xs[2]).pow(2).sum() + step(xs[3]).pow(2).sum()).backward()  # two calls, one backward
    replayed = lin.weight.grad.numpy().copy()
    lin.zero_grad()
    (lin(xs[2]).pow(2).sum() + lin(xs[3]).pow(2).sum()).backward()
    np.testing.assert_array_equal(replayed, lin.weight.grad.numpy())


def test_a_training_step_function_runs_eagerly_and_says_why():
    data = batches(4)
    runs = []
    for compiled in (False, True):
        mt.manual_seed(0)
        model = MODELS["attention's DecoderLM"]()
        opt = mt.optim.AdamW(model.parameters(), lr=1e-2)

        def train_step(x, y):
            opt.zero_grad()
            loss = lm_loss(model(x), y)
            loss.backward()
            opt.step()
            return loss

        step = mt.compile(train_step) if compiled else train_step
        runs.append(([step(x, y).item() for x, y in data], [p.detach().numpy().copy() for p in model.parameters()]))
    assert_same_training(runs[1], runs[0])
    assert "backward" in step.program() and step.__name__ == "train_step"


def test_a_loss_function_replays_and_is_keyed_on_the_module_it_names():
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2))

    def loss_fn(x, y):
        return F.cross_entropy(model(x), y)

    step = mt.compile(loss_fn)
    x, y = mt.randn(5, 3), mt.tensor([0, 1, 1, 0, 1])
    for training in (True, True, True, False, False):
        model.train(training)
        state = mt.get_rng_state()
        got = step(x, y).item()
        mt.set_rng_state(state)
        assert got == loss_fn(x, y).item()
    assert len(step.__replays__.recordings) == 2 and step.__replays__.reason is None


def test_running_statistics_and_hooks_run_eagerly():
    mt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    step = mt.compile(model)
    x = mt.randn(6, 3)
    step(x), step(x)
    assert "in place" in step.reason
    assert step._orig_mod[1].num_batches_tracked.item() == 2  # (PyTorch's wrapper has no [i] either)
    seen = []
    lin = nn.Linear(3, 2)
    lin.register_forward_hook(lambda m, a, out: seen.append(1))
    hooked = mt.compile(lin)
    for _ in range(4):
        hooked(x)
    assert len(seen) == 4 and not hooked._compiled.recordings


def test_the_wrapper_looks_like_pytorchs_and_module_compile_works_in_place():
    lin = nn.Linear(2, 3)
    c = mt.compile(lin)
    assert isinstance(c, OptimizedModule) and c._orig_mod is lin
    # PyTorch 2.13's OptimizedModule: its parameters and state_dict keys carry the `_orig_mod.` prefix
    assert list(c.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert [n for n, _ in c.named_parameters()] == ["_orig_mod.weight", "_orig_mod.bias"]
    assert c.in_features == 2 and c.weight is lin.weight
    c.eval()
    assert not lin.training
    assert mt.compile(lin, disable=True) is lin

    @mt.compile(mode="reduce-overhead")
    def double(x):
        return x * 2
    assert double.__name__ == "double" and double(mt.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="mode"):
        mt.compile(lin, mode="fastest")
    with pytest.raises(RuntimeError, match="both"):
        mt.compile(lin, mode="default", options={})
    with pytest.raises(RuntimeError, match="backend"):
        mt.compile(lin, backend="nope")
    with pytest.raises(AssertionError, match="callable"):
        mt.compile(3)

    mt.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    assert net.compile() is None and list(net.state_dict())[0] == "0.weight"
    x = mt.randn(5, 3)
    outs = [net(x).detach().numpy() for _ in range(3)]
    np.testing.assert_array_equal(outs[2], outs[0])
    assert "Tanh(t0)" in net.forward.program()


def test_its_program_lists_the_recorded_ops_for_a_learner():
    c = mt.compile(nn.Sequential(nn.Linear(3, 4), nn.ReLU()))
    assert "nothing recorded" in c.program()
    c(mt.randn(2, 3)).sum().backward()
    text = c.program()
    assert "t0 = Linear(input, 0.weight, 0.bias)" in text and "t1 = Relu(t0)" in text
    assert "from the gradients of the outputs t1" in text and "g_0.weight, g_0.bias += LinearBackward(g_t0)" in text
