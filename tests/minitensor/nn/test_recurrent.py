"""Recurrent layers and cells: the equations written out in numpy, float64 gradient checks, shapes,
layouts, dropout, errors; and against PyTorch (where installed) values, h_n/c_n and every gradient
at 1e-10, with state dicts copied both ways."""
import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn as nn
from minitensor import run as runner
from minitensor.autograd import gradcheck
from minitensor.testing import assert_close


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


# ---- the equations in numpy: one step, then a whole multi-layer, bidirectional layer ----------------

def np_step(mode, x, state, w_ih, w_hh, b_ih, b_hh, w_hr=None):
    """One time step of `mode` written straight from PyTorch's documented equations."""
    b_ih = 0 if b_ih is None else b_ih
    b_hh = 0 if b_hh is None else b_hh
    h = state[0]
    gi, gh = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    if mode in ("tanh", "relu"):
        pre = gi + gh
        return (np.tanh(pre) if mode == "tanh" else np.maximum(pre, 0),)
    if mode == "gru":
        H = h.shape[-1]
        r = sigmoid(gi[..., :H] + gh[..., :H])
        z = sigmoid(gi[..., H:2 * H] + gh[..., H:2 * H])
        n = np.tanh(gi[..., 2 * H:] + r * gh[..., 2 * H:])
        return ((1 - z) * n + z * h,)
    c = state[1]
    H = c.shape[-1]
    pre = gi + gh
    i, f, g, o = (sigmoid(pre[..., :H]), sigmoid(pre[..., H:2 * H]), np.tanh(pre[..., 2 * H:3 * H]),
                  sigmoid(pre[..., 3 * H:]))
    c = f * c + i * g
    h = o * np.tanh(c)
    return (h if w_hr is None else h @ w_hr.T, c)


def np_layer(mode, module, x, state):
    """The layer over time-major batched x (L, N, F) from state parts (D * layers, N, size), in numpy."""
    D = 2 if module.bidirectional else 1
    sd = {k: v.numpy(force=True) for k, v in module.state_dict().items()}
    finals = []
    for layer in range(module.num_layers):
        outs = []
        for d in range(D):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w = [sd.get(n + sfx) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")]
            s = tuple(part[layer * D + d] for part in state)
            hs = [None] * len(x)
            for t in (reversed(range(len(x))) if d else range(len(x))):
                s = np_step(mode, x[t], s, *w)
                hs[t] = s[0]
            outs.append(np.stack(hs))
            finals.append(s)
        x = np.concatenate(outs, -1)
    return x, tuple(np.stack([s[i] for s in finals]) for i in range(len(state)))


MODES = {"tanh": (nn.RNN, {}), "relu": (nn.RNN, {"nonlinearity": "relu"}), "gru": (nn.GRU, {}), "lstm": (nn.LSTM, {})}


def make(mode, *args, **kw):
    cls, extra = MODES[mode]
    return cls(*args, **extra, **kw, dtype=mt.float64)


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def state_sizes(mode, m):
    out = m.proj_size or m.hidden_size
    return (out, m.hidden_size) if mode == "lstm" else (out,)


LAYOUTS = [(mode, layers, bidirectional, 0) for mode in MODES
           for layers, bidirectional in ((1, False), (2, False), (2, True))]


@pytest.mark.parametrize("mode, layers, bidirectional, proj", LAYOUTS + [("lstm", 2, True, 2)])
def test_layer_equals_the_equations(mode, layers, bidirectional, proj):
    m = make(mode, 3, 4, layers, bidirectional=bidirectional, **({"proj_size": proj} if proj else {}))
    D = 2 if bidirectional else 1
    x = rand(5, 2, 3)
    state = tuple(rand(layers * D, 2, n, seed=i + 1) for i, n in enumerate(state_sizes(mode, m)))
    hx = tuple(mt.tensor(s) for s in state)
    out, last = m(mt.tensor(x), hx if mode == "lstm" else hx[0])
    want_out, want_last = np_layer(mode, m, x, state)
    np.testing.assert_allclose(out.numpy(force=True), want_out, rtol=1e-12, atol=1e-12)
    last = last if mode == "lstm" else (last,)
    for got, want in zip(last, want_last, strict=True):
        np.testing.assert_allclose(got.numpy(force=True), want, rtol=1e-12, atol=1e-12)
    assert out.shape == (5, 2, D * (proj or 4)) and last[0].shape == (layers * D, 2, proj or 4)


@pytest.mark.parametrize("mode, cell", [("tanh", nn.RNNCell), ("gru", nn.GRUCell), ("lstm", nn.LSTMCell)])
def test_cell_equals_the_equations(mode, cell):
    c = cell(3, 4, dtype=mt.float64)
    x, h, cc = rand(2, 3), rand(2, 4, seed=1), rand(2, 4, seed=2)
    w = (c.weight_ih.numpy(force=True), c.weight_hh.numpy(force=True), c.bias_ih.numpy(force=True),
         c.bias_hh.numpy(force=True))
    want = np_step(mode, x, (h, cc), *w)
    got = c(mt.tensor(x), (mt.tensor(h), mt.tensor(cc)) if mode == "lstm" else mt.tensor(h))
    got = got if mode == "lstm" else (got,)
    for g, v in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(force=True), v, rtol=1e-12, atol=1e-12)


def test_rnncell_relu_and_no_bias():
    c = nn.RNNCell(3, 4, bias=False, nonlinearity="relu", dtype=mt.float64)
    x, h = rand(2, 3), rand(2, 4, seed=1)
    want = np.maximum(x @ c.weight_ih.numpy(force=True).T + h @ c.weight_hh.numpy(force=True).T, 0)
    np.testing.assert_allclose(c(mt.tensor(x), mt.tensor(h)).numpy(force=True), want, rtol=1e-12)
    assert c.bias_ih is None and [n for n, _ in c.named_parameters()] == ["weight_ih", "weight_hh"]


# ---- gradients by finite differences (no PyTorch needed) ---------------------------------------------

def grad_check_module(module, inputs, call):
    """gradcheck over the inputs and every parameter, the module called as call(module, *inputs)."""
    names = [n for n, p in module._parameters.items() if p is not None]
    params = [mt.tensor(module._parameters[n].numpy(force=True).copy(), requires_grad=True) for n in names]
    n_in = len(inputs)

    def fn(*args):
        store = module._parameters
        saved = dict(store)
        store.update(dict(zip(names, args[n_in:])))
        try:
            return call(module, *args[:n_in])
        finally:
            store.clear()
            store.update(saved)

    return gradcheck(fn, tuple(inputs) + tuple(params))


def req(*shape, seed=0):
    return mt.tensor(rand(*shape, seed=seed), requires_grad=True)


@pytest.mark.parametrize("cell", [nn.RNNCell, nn.GRUCell, nn.LSTMCell])
def test_cell_gradients_by_finite_differences(cell):
    c = cell(3, 4, dtype=mt.float64)
    x, h, cc = req(2, 3), req(2, 4, seed=1), req(2, 4, seed=2)
    if cell is nn.LSTMCell:
        assert grad_check_module(c, [x, h, cc], lambda m, x, h, cc: m(x, (h, cc)))
    else:
        assert grad_check_module(c, [x, h], lambda m, x, h: m(x, h))


@pytest.mark.slow  # finite differences through two GRU layers
def test_two_layer_gru_gradients_by_finite_differences():
    m = nn.GRU(2, 3, num_layers=2, bidirectional=True, dtype=mt.float64)
    assert grad_check_module(m, [req(3, 2, 2), req(4, 2, 3, seed=1)], lambda m, x, h: m(x, h))


def test_two_layer_lstm_with_projection_gradients_by_finite_differences():
    m = nn.LSTM(2, 3, num_layers=2, proj_size=2, batch_first=True, dtype=mt.float64)
    inputs = [req(2, 3, 2), req(2, 2, 2, seed=1), req(2, 2, 3, seed=2)]
    assert grad_check_module(m, inputs, lambda m, x, h, c: m(x, (h, c)))


def test_gradient_check_catches_a_wrong_gate_order():
    """The check can fail: GRU weights read with z and r swapped are not what the equations say."""
    m = make("gru", 3, 4)
    x = rand(4, 2, 3)
    swapped = {k: v.numpy(force=True).copy() for k, v in m.state_dict().items()}
    for k, v in swapped.items():
        v[:4], v[4:8] = v[4:8].copy(), v[:4].copy()
    out, _ = np_layer("gru", m, x, (np.zeros((1, 2, 4)),))
    m.load_state_dict(swapped)
    assert not np.allclose(m(mt.tensor(x))[0].numpy(force=True), out)


def test_outputs_depend_only_on_the_past_unless_bidirectional():
    for bidirectional in (False, True):
        m = make("lstm", 2, 3, 2, bidirectional=bidirectional)
        x = req(5, 1, 2)
        out, _ = m(x)
        out[2].sum().backward()
        future = np.abs(x.grad.numpy(force=True)[3:]).max()
        assert (future == 0) != bidirectional and np.abs(x.grad.numpy(force=True)[:3]).max() > 0


# ---- layouts, state, modes -------------------------------------------------------------------------

@pytest.mark.parametrize("mode", list(MODES))
def test_batch_first_and_unbatched_are_the_same_numbers(mode):
    m = make(mode, 3, 4, 2, bidirectional=True)
    x = rand(5, 2, 3)
    out, last = m(mt.tensor(x))
    m.batch_first = True
    out_bf, last_bf = m(mt.tensor(x.transpose(1, 0, 2).copy()))
    assert_close(out_bf, out.transpose(0, 1))
    for b in range(2):
        m.batch_first = b == 0  # an unbatched input is (L, H_in) whatever batch_first says
        out1, last1 = m(mt.tensor(x[:, b]))
        assert out1.shape == (5, 8)
        assert_close(out1, out[:, b])
        for got, whole in zip(*(p if mode == "lstm" else (p,) for p in (last1, last))):
            assert got.shape == (4, 4)
            assert_close(got, whole[:, b])
    for got, whole in zip(*(p if mode == "lstm" else (p,) for p in (last_bf, last))):
        assert_close(got, whole)  # h_n is never batch-first


def test_h0_defaults_to_zeros_and_is_used():
    m = make("gru", 3, 4, 2)
    x = mt.tensor(rand(5, 2, 3))
    out, h = m(x)
    assert_close(m(x, mt.zeros(2, 2, 4, dtype=mt.float64))[1], h)
    assert not np.allclose(m(x, mt.ones(2, 2, 4, dtype=mt.float64))[1].numpy(force=True), h.numpy(force=True))
    cell = nn.LSTMCell(3, 4, dtype=mt.float64)
    z = mt.zeros(2, 4, dtype=mt.float64)
    for a, b in zip(cell(x[0]), cell(x[0], (z, z))):
        assert_close(a, b)


def test_state_carries_from_one_call_to_the_next():
    """Running a sequence in two halves with h_n handed on equals running it whole (truncated BPTT's premise)."""
    m = make("lstm", 3, 4, 2)
    x = mt.tensor(rand(6, 2, 3))
    out, (h, c) = m(x)
    out1, state = m(x[:3])
    out2, (h2, c2) = m(x[3:], state)
    assert_close(mt.cat([out1, out2]), out)
    assert_close(h2, h) and assert_close(c2, c)


def test_dropout_between_layers_only_in_training():
    m = make("gru", 3, 4, 3, dropout=0.5)
    x = mt.tensor(rand(4, 2, 3))
    mt.manual_seed(0)
    train1 = m(x)[0].numpy(force=True)
    mt.manual_seed(1)
    train2 = m(x)[0].numpy(force=True)
    m.eval()
    evaluated = m(x)[0].numpy(force=True)
    plain = make("gru", 3, 4, 3)
    plain.load_state_dict(m.state_dict())
    np.testing.assert_array_equal(evaluated, plain(x)[0].numpy(force=True))
    assert not np.allclose(train1, evaluated) and not np.allclose(train1, train2)


def test_dropout_with_one_layer_warns_as_pytorch():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.LSTM(3, 4, 2, dropout=0.2)


def test_float32_agrees_with_float64():
    m64 = make("lstm", 3, 8, 2, bidirectional=True)
    m32 = nn.LSTM(3, 8, 2, bidirectional=True)
    m32.load_state_dict(m64.state_dict())
    x = rand(6, 2, 3)
    out32, (h32, _) = m32(mt.tensor(x, dtype=mt.float32))
    out64, (h64, _) = m64(mt.tensor(x))
    assert out32.dtype == mt.float32 and h32.dtype == mt.float32
    np.testing.assert_allclose(out32.numpy(force=True), out64.numpy(force=True), rtol=1e-4, atol=1e-5)


def test_module_double_converts_and_keeps_working():
    m = nn.GRU(3, 4)
    assert m.weight_ih_l0.dtype == mt.float32
    m.double()
    assert m(mt.tensor(rand(2, 1, 3)))[0].dtype == mt.float64


# ---- parameters ---------------------------------------------------------------------------------------

def test_parameter_names_shapes_and_order_are_pytorchs():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    want = []
    for layer, in_size in ((0, 3), (1, 4)):
        for sfx in ("", "_reverse"):
            want += [(f"weight_ih_l{layer}{sfx}", (20, in_size)), (f"weight_hh_l{layer}{sfx}", (20, 2)),
                     (f"bias_ih_l{layer}{sfx}", (20,)), (f"bias_hh_l{layer}{sfx}", (20,)),
                     (f"weight_hr_l{layer}{sfx}", (2, 5))]
    assert [(n, tuple(p.shape)) for n, p in m.state_dict().items()] == want
    assert [[tuple(p.shape) for p in group] for group in m.all_weights] == [
        [s for _, s in want[i:i + 5]] for i in range(0, 20, 5)]
    assert [n for n, _ in nn.GRU(3, 4, bias=False).named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    assert nn.GRU(3, 4).weight_ih_l0.shape == (12, 3) and nn.RNN(3, 4).weight_hh_l0.shape == (4, 4)
    assert nn.GRUCell(3, 4).weight_ih.shape == (12, 3) and nn.LSTMCell(3, 4).bias_hh.shape == (16,)


@pytest.mark.parametrize("module", [nn.GRU(2, 16, 2), nn.LSTMCell(2, 16)])
def test_init_is_uniform_within_one_over_sqrt_hidden(module):
    for name, p in module.named_parameters():
        a = p.numpy(force=True)
        assert np.abs(a).max() <= 0.25, name
        assert np.abs(a).max() > 0.2 and abs(a.mean()) < 0.1, name  # spread over the interval, centred


def test_flatten_parameters_is_a_no_op():
    m = nn.LSTM(3, 4)
    before = {k: v.numpy(force=True).copy() for k, v in m.state_dict().items()}
    assert m.flatten_parameters() is None
    assert all(np.array_equal(before[k], v.numpy(force=True)) for k, v in m.state_dict().items())


def test_reprs():
    assert repr(nn.RNN(3, 4)) == "RNN(3, 4)"
    assert repr(nn.GRU(3, 4, 2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)) == (
        "GRU(3, 4, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)")
    assert repr(nn.LSTM(3, 4, proj_size=2)) == "LSTM(3, 4, proj_size=2)"
    assert repr(nn.RNNCell(3, 4, bias=False, nonlinearity="relu")) == "RNNCell(3, 4, bias=False, nonlinearity=relu)"


# ---- errors -------------------------------------------------------------------------------------------

def f32(*shape):
    return mt.zeros(*shape)


BAD_CONSTRUCTORS = [
    ("RNN(3, 4, nonlinearity='sigmoid')", ValueError),
    ("RNNCell(3, 4, nonlinearity='sigmoid')", ValueError),
    ("GRU(3, 4, proj_size=2)", ValueError),
    ("LSTM(3, 4, proj_size=4)", ValueError),
    ("LSTM(3, 4, proj_size=-1)", ValueError),
    ("GRU(3, 0)", ValueError),
    ("GRU(3, 4, 0)", ValueError),
    ("GRU(3, 4.0)", TypeError),
    ("GRU(3, 4, dropout=1.5)", ValueError),
    ("GRU(3, 4, 2, dropout=True)", ValueError),
]

BAD_CALLS = [
    ("GRU(3, 4, 2)", "m(f32(5, 2, 7))", RuntimeError),
    ("GRU(3, 4, 2)", "m(f32(5, 2, 3, 1))", ValueError),
    ("GRU(3, 4, 2)", "m(f32(3))", ValueError),
    ("GRU(3, 4, 2)", "m(f32(5, 2, 3).double())", ValueError),
    ("GRU(3, 4, 2)", "m(f32(0, 2, 3))", RuntimeError),
    ("GRU(3, 4, 2)", "m(f32(5, 2, 3), f32(2, 3, 4))", RuntimeError),
    ("GRU(3, 4, 2)", "m(f32(5, 2, 3), f32(2, 4))", RuntimeError),
    ("GRU(3, 4, 2)", "m(f32(5, 3), f32(2, 1, 4))", RuntimeError),
    ("GRU(3, 4, 2)", "m(f32(5, 3), f32(2, 5))", RuntimeError),
    ("GRU(3, 4, 2)", "m(f32(5, 2, 3), f32(2, 2, 4).double())", RuntimeError),
    ("LSTM(3, 4, 2)", "m(f32(5, 2, 3), (f32(2, 2, 4), f32(2, 2, 5)))", RuntimeError),
    ("LSTM(3, 4, 2)", "m(f32(5, 2, 3), (f32(2, 2, 5), f32(2, 2, 4)))", RuntimeError),
    ("LSTM(3, 4, 2)", "m(f32(5, 2, 3), (f32(2, 4), f32(2, 4)))", RuntimeError),
    ("LSTM(3, 4, 2)", "m(f32(5, 3), (f32(2, 1, 4), f32(2, 1, 4)))", RuntimeError),
    ("GRUCell(3, 4)", "m(f32(2, 5))", RuntimeError),
    ("GRUCell(3, 4)", "m(f32(2, 3, 1))", ValueError),
    ("GRUCell(3, 4)", "m(f32(2, 3), f32(2, 5))", RuntimeError),
    ("GRUCell(3, 4)", "m(f32(2, 3), f32(3, 4))", RuntimeError),
    ("GRUCell(3, 4)", "m(f32(2, 3), f32(4))", RuntimeError),
    ("LSTMCell(3, 4)", "m(f32(2, 3), (f32(2, 4), f32(2, 5)))", RuntimeError),
    ("LSTMCell(3, 4)", "m(f32(2, 3), f32(2, 4))", TypeError),
]


@pytest.mark.parametrize("ctor, exc", BAD_CONSTRUCTORS)
def test_bad_constructor_arguments(ctor, exc):
    with pytest.raises(exc):
        eval("nn." + ctor)


@pytest.mark.parametrize("ctor, call, exc", BAD_CALLS)
def test_bad_inputs_raise_and_name_the_layer(ctor, call, exc):
    m = eval("nn." + ctor)
    before = {k: v.numpy(force=True).copy() for k, v in m.state_dict().items()}
    with pytest.raises(exc, match="^" + ctor.split("(")[0] + ": "):
        eval(call, {"m": m, "f32": f32})
    assert all(np.array_equal(before[k], v.numpy(force=True)) for k, v in m.state_dict().items())


def test_packed_sequences_import_under_the_runner():
    # (this test asserted that torch.nn.utils.rnn was missing; minitensor.nn.utils.rnn now provides it)
    with runner.torch_is_minitensor():
        import torch
        from torch.nn.utils.rnn import pad_sequence
        assert pad_sequence is torch.nn.utils.rnn.pad_sequence


# ---- against PyTorch ----------------------------------------------------------------------------------

CONFIGS = [  # (class, constructor kwargs, input shape, whether h0 is given)
    ("RNN", {}, (5, 2, 3), False),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}, (5, 2, 3), True),
    ("RNN", {"bidirectional": True, "batch_first": True}, (2, 5, 3), True),
    ("GRU", {}, (5, 2, 3), False),
    ("GRU", {}, (5, 2, 3), True),
    ("GRU", {"num_layers": 2}, (5, 2, 3), True),
    ("GRU", {"num_layers": 2, "bidirectional": True}, (5, 2, 3), False),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}, (2, 5, 3), True),
    ("GRU", {"num_layers": 2, "bidirectional": True}, (5, 3), True),
    ("GRU", {"bias": False, "batch_first": True}, (5, 3), False),
    ("LSTM", {}, (5, 2, 3), False),
    ("LSTM", {"num_layers": 2}, (5, 2, 3), True),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}, (2, 5, 3), True),
    ("LSTM", {"num_layers": 2, "bidirectional": True}, (5, 3), False),
    ("LSTM", {"num_layers": 2, "proj_size": 2, "bidirectional": True}, (5, 2, 3), True),
    ("LSTM", {"bias": False}, (5, 3), True),
    ("RNNCell", {}, (2, 3), True),
    ("RNNCell", {"nonlinearity": "relu", "bias": False}, (3,), False),
    ("GRUCell", {}, (2, 3), True),
    ("GRUCell", {}, (3,), True),
    ("GRUCell", {"bias": False}, (2, 3), False),
    ("LSTMCell", {}, (2, 3), True),
    ("LSTMCell", {}, (3,), False),
]


def config_id(c):
    return (f"{c[0]}-{'-'.join(f'{k}={v}' for k, v in c[1].items())}-{'x'.join(map(str, c[2]))}-"
            f"{'h0' if c[3] else 'noh0'}")


def state_shapes(name, m, x_shape):
    """Shapes of the state parts a PyTorch module of this config takes."""
    cell = name.endswith("Cell")
    batch = () if len(x_shape) == (1 if cell else 2) else (x_shape[0] if cell or m.batch_first else x_shape[1],)
    if cell:
        return [batch + (m.hidden_size,)] * (2 if name == "LSTMCell" else 1)
    rows = m.num_layers * (2 if m.bidirectional else 1)
    out = [(rows, *batch, m.proj_size or m.hidden_size)]
    return out + [(rows, *batch, m.hidden_size)] if name == "LSTM" else out


def flat(o):
    return [o] if not isinstance(o, tuple) else [t for part in o for t in flat(part)]


def run_both(torch, name, kw, x_shape, with_h0, source):
    """Build the module in both libraries (float64), copy `source`'s state dict into the other, run and
    backprop a randomly weighted sum; return each side's (outputs, input grads, parameter grads)."""
    ours, theirs = (getattr(nn, name)(3, 4, **kw, dtype=mt.float64),
                    getattr(torch.nn, name)(3, 4, **kw, dtype=torch.float64))
    if source == "ours":
        theirs.load_state_dict({k: torch.from_numpy(v.numpy(force=True).copy()) for k, v in ours.state_dict().items()})
    else:
        ours.load_state_dict({k: v.detach().numpy(force=True) for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(x_shape)] + ([rng.standard_normal(s) for s in state_shapes(name, theirs, x_shape)]
                                               if with_h0 else [])
    results = []
    for lib, m in ((mt, ours), (torch, theirs)):
        inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
        hx = None if not with_h0 else (tuple(inputs[1:]) if len(inputs) == 3 else inputs[1])
        outs = flat(m(inputs[0], hx) if hx is not None else m(inputs[0]))
        weights = np.random.default_rng(2)
        loss = sum((o * lib.tensor(weights.standard_normal(tuple(o.shape)))).sum() for o in outs)
        loss.backward()
        results.append(([o.detach().numpy(force=True) for o in outs], [i.grad.numpy(force=True) for i in inputs],
                         {n: p.grad.numpy(force=True) for n, p in m.named_parameters()}))
    return results


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
@pytest.mark.parametrize("source", ["ours", "theirs"])
def test_values_states_and_every_gradient_equal_pytorchs(config, source):
    torch = pytest.importorskip("torch")
    (outs, in_grads, p_grads), (t_outs, t_in_grads, t_p_grads) = run_both(torch, *config, source)
    assert [o.shape for o in outs] == [o.shape for o in t_outs]
    for a, b in zip(outs + in_grads, t_outs + t_in_grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    assert list(p_grads) == list(t_p_grads)
    for n in p_grads:
        np.testing.assert_allclose(p_grads[n], t_p_grads[n], rtol=1e-10, atol=1e-10, err_msg=n)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_state_dict_names_shapes_and_repr_equal_pytorchs(config):
    torch = pytest.importorskip("torch")
    name, kw = config[:2]
    ours, theirs = getattr(nn, name)(3, 4, **kw), getattr(torch.nn, name)(3, 4, **kw)
    assert [(k, tuple(v.shape), str(v.dtype).split(".")[-1]) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape), str(v.dtype).split(".")[-1]) for k, v in theirs.state_dict().items()]
    assert repr(ours) == repr(theirs)


def test_float32_matches_pytorch_float32():
    torch = pytest.importorskip("torch")
    ours, theirs = nn.GRU(3, 6, 2, bidirectional=True), torch.nn.GRU(3, 6, 2, bidirectional=True)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy(force=True).copy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((7, 2, 3)).astype(np.float32)
    out, h = ours(mt.tensor(x))
    t_out, t_h = theirs(torch.from_numpy(x))
    assert out.dtype == mt.float32
    np.testing.assert_allclose(out.numpy(force=True), t_out.detach().numpy(force=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy(force=True), t_h.detach().numpy(force=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ctor, exc", BAD_CONSTRUCTORS)
def test_bad_constructor_arguments_raise_what_pytorch_raises(ctor, exc):
    torch = pytest.importorskip("torch")
    if ctor.startswith("RNNCell"):
        pytest.skip("PyTorch accepts any nonlinearity here and raises at the first call (documented difference)")
    with pytest.raises(exc):
        eval("torch.nn." + ctor, {"torch": torch})


@pytest.mark.parametrize("ctor, call, exc", BAD_CALLS)
def test_bad_inputs_raise_what_pytorch_raises(ctor, call, exc):
    torch = pytest.importorskip("torch")
    with pytest.raises(exc):
        eval(call, {"m": eval("torch.nn." + ctor), "f32": lambda *s: torch.zeros(*s)})
