r"""In-place ops and setitem (`minitensor/ops/inplace.py`): PyTorch's values, versions and gradients.

Each case is one function of `lib` (minitensor or torch), run twice: `test_values` checks
minitensor's result against values worked out by hand (in numpy), so the file means something
without PyTorch; `test_same_as_torch` runs the very same code under torch (skipped where it is not
installed). Gradients are checked in float64 against a random upstream weight `U`, never only
through `.sum()`. Error cases raise under both libraries.
"""
import math

import numpy as np
import pytest

import minitensor as mt


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


rng = np.random.default_rng(20240601)
X3 = np.array([1.0, 2.0, 3.0])
A3 = np.array([0.5, -1.5, 2.0])
B3 = np.array([2.0, 0.25, -1.0])
U3 = rng.standard_normal(3)
U2 = rng.standard_normal(2)
U22 = rng.standard_normal((2, 2))
U23 = rng.standard_normal((2, 3))
X23 = np.array([[-1.5, 0.5, 2.0], [3.0, -0.25, 1.0]])
Y23 = rng.standard_normal((2, 3))
M23 = np.array([[True, False, True], [False, False, True]])
M3 = np.array([True, False, True])


def T(lib, values, grad=False):
    """A float64 tensor of `lib` (a leaf that requires grad with `grad=True`)."""
    return lib.tensor(np.array(values, dtype=np.float64), requires_grad=grad)


def B(lib, values):
    return lib.tensor(np.array(values, dtype=bool))


def arrays(fn, lib):
    """fn(lib)'s results (a tensor or a tuple of them, None allowed) as numpy arrays."""
    out = fn(lib)
    out = out if isinstance(out, tuple) else (out,)
    return [None if t is None else np.array(t.detach().numpy()) for t in out]


def assert_arrays(got, want, rtol=1e-12, atol=1e-12, what="result"):
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        assert (a is None) == (b is None), f"{what} {i}: {a} vs {b}"
        if a is None:
            continue
        b = np.asarray(b)
        assert a.shape == b.shape, f"{what} {i}: shape {a.shape} vs {b.shape}"
        assert a.dtype == b.dtype, f"{what} {i}: dtype {a.dtype} vs {b.dtype}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{what} {i}")




# ---- every in-place op on plain tensors: the value, the same object, one version bump -------------

def _setitem(t, key, value):
    t[key] = value
    return t


def _iop(op):
    def run(t, other):
        if op == "+":
            t += other
        elif op == "-":
            t -= other
        elif op == "*":
            t *= other
        else:
            t /= other
        return t
    return run


_iadd, _isub, _imul, _idiv = _iop("+"), _iop("-"), _iop("*"), _iop("/")

# name: (call(lib, x) -> result, expected numpy value from X23)
PLAIN = {
    "add_": (lambda lib, x: x.add_(T(lib, Y23)), X23 + Y23),
    "sub_": (lambda lib, x: x.sub_(T(lib, Y23)), X23 - Y23),
    "mul_": (lambda lib, x: x.mul_(T(lib, Y23)), X23 * Y23),
    "mul_scalar": (lambda lib, x: x.mul_(2.5), X23 * 2.5),
    "div_": (lambda lib, x: x.div_(T(lib, Y23)), X23 / Y23),
    "div_scalar": (lambda lib, x: x.div_(4), X23 / 4),
    "add_broadcast": (lambda lib, x: x.add_(T(lib, [1.0, 2.0, 3.0])), X23 + [1.0, 2.0, 3.0]),
    "clamp_": (lambda lib, x: x.clamp_(-1.0, 1.0), np.clip(X23, -1, 1)),
    "clamp_max_only": (lambda lib, x: x.clamp_(None, 1.0), np.minimum(X23, 1)),
    "clip_": (lambda lib, x: x.clip_(0.0, 1.0), np.clip(X23, 0, 1)),
    "relu_": (lambda lib, x: x.relu_(), np.maximum(X23, 0)),
    "neg_": (lambda lib, x: x.neg_(), -X23),
    "exp_": (lambda lib, x: x.exp_(), np.exp(X23)),
    "tanh_": (lambda lib, x: x.tanh_(), np.tanh(X23)),
    "sigmoid_": (lambda lib, x: x.sigmoid_(), 1 / (1 + np.exp(-X23))),
    "pow_": (lambda lib, x: x.pow_(2), X23 ** 2),
    "zero_": (lambda lib, x: x.zero_(), np.zeros_like(X23)),
    "fill_": (lambda lib, x: x.fill_(7.0), np.full_like(X23, 7.0)),
    "fill_0d_tensor": (lambda lib, x: x.fill_(T(lib, 3.0)), np.full_like(X23, 3.0)),
    "copy_": (lambda lib, x: x.copy_(T(lib, Y23)), Y23),
    "copy_broadcast_row": (lambda lib, x: x.copy_(T(lib, [4.0, 5.0, 6.0])), np.array([[4.0, 5.0, 6.0]] * 2)),
    "masked_fill_": (lambda lib, x: x.masked_fill_(B(lib, M23), -math.inf), np.where(M23, -np.inf, X23)),
    "masked_fill_row_mask": (lambda lib, x: x.masked_fill_(B(lib, [False, True, False]), 0.0),
                             X23 * [1, 0, 1]),
    "setitem_int": (lambda lib, x: _setitem(x, 0, 9.0), np.array([[9.0] * 3, X23[1]])),
    "setitem_column": (lambda lib, x: _setitem(x, (slice(None), 1), T(lib, [7.0, 8.0])),
                       np.array([[-1.5, 7.0, 2.0], [3.0, 8.0, 1.0]])),
    "setitem_bool_mask": (lambda lib, x: _setitem(x, B(lib, M23), 5.0), np.where(M23, 5.0, X23)),
    "setitem_int_list": (lambda lib, x: _setitem(x, [1, 0], T(lib, Y23)), Y23[[1, 0]]),
    "iadd": (lambda lib, x: _iadd(x, T(lib, Y23)), X23 + Y23),
    "isub": (lambda lib, x: _isub(x, 1.0), X23 - 1),
    "imul": (lambda lib, x: _imul(x, T(lib, Y23)), X23 * Y23),
    "idiv": (lambda lib, x: _idiv(x, 2.0), X23 / 2),
}


def _plain_case(name):
    call, _ = PLAIN[name]

    def case(lib):
        x = T(lib, X23)
        alias, version = x, x._version
        out = call(lib, x)
        assert out is x and alias is x  # the same tensor, changed in place (an augmented op rebinds x to itself)
        assert x._version == version + 1, f"{name}: version {version} -> {x._version}, expected one bump"
        assert not x.requires_grad and x.grad_fn is None
        return x
    return case


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_plain_in_place_op_values(name):
    assert_arrays(arrays(_plain_case(name), mt), [PLAIN[name][1]])


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_plain_in_place_op_same_as_torch(name, torch):
    assert_arrays(arrays(_plain_case(name), mt), arrays(_plain_case(name), torch))


# PyTorch's keyword spellings of the same ops (what tutorials and optimizers write)
KWARG_CALLS = {
    "add_alpha": (lambda lib, x: x.add_(T(lib, Y23), alpha=2), X23 + 2 * Y23),
    "sub_alpha": (lambda lib, x: x.sub_(T(lib, Y23), alpha=0.5), X23 - 0.5 * Y23),
    "clamp_min": (lambda lib, x: x.clamp_(min=0.0), np.maximum(X23, 0)),
    "clamp_max": (lambda lib, x: x.clamp_(max=1.0), np.minimum(X23, 1)),
    "clamp_min_max": (lambda lib, x: x.clamp_(min=-1.0, max=1.0), np.clip(X23, -1, 1)),
    "masked_fill_kw": (lambda lib, x: x.masked_fill_(mask=B(lib, M23), value=0.0), np.where(M23, 0, X23)),
    "mul_other": (lambda lib, x: x.mul_(other=T(lib, Y23)), X23 * Y23),
    "addcmul_value": (lambda lib, x: x.addcmul_(T(lib, Y23), T(lib, X23), value=0.5), X23 + 0.5 * Y23 * X23),
    "addcdiv_value": (lambda lib, x: x.addcdiv_(T(lib, X23), T(lib, Y23), value=2), X23 + 2 * X23 / Y23),
    "lerp_weight": (lambda lib, x: x.lerp_(T(lib, Y23), weight=0.25), X23 + 0.25 * (Y23 - X23)),
}


def _kwarg_case(name):
    call, _ = KWARG_CALLS[name]

    def case(lib):
        x = T(lib, X23)
        assert call(lib, x) is x
        assert x._version == 1
        return x
    return case


@pytest.mark.parametrize("name", sorted(KWARG_CALLS))
def test_in_place_ops_take_pytorchs_keyword_arguments(name):
    assert_arrays(arrays(_kwarg_case(name), mt), [KWARG_CALLS[name][1]])


@pytest.mark.parametrize("name", sorted(KWARG_CALLS))
def test_keyword_calls_are_valid_pytorch(name, torch):
    """What the case above expects is what PyTorch does (so the expectations are not made up)."""
    assert_arrays(arrays(_kwarg_case(name), torch), [KWARG_CALLS[name][1]])


def test_addcmul_addcdiv_lerp_with_their_default_weights():
    x = T(mt, X23)
    x.addcmul_(T(mt, Y23), T(mt, X23))
    x.addcdiv_(T(mt, X23), T(mt, Y23))
    x.lerp_(T(mt, Y23), 0.25)  # weight is positional-or-keyword in PyTorch
    want = X23 + Y23 * X23
    want = want + X23 / Y23
    want = want + 0.25 * (Y23 - want)
    assert_arrays([x.numpy()], [want])
    assert x._version == 3


# ---- gradients through recorded in-place ops ------------------------------------------------------

GRADS = []


def grad_case(expected, marks=()):
    """Register `fn(lib)` with `expected()`, the numpy values its results must have."""
    def register(fn):
        GRADS.append(pytest.param(fn, expected, id=fn.__name__, marks=marks))
        return fn
    return register


@grad_case(lambda: (U3 * B3, U3 * A3))
def mul_by_a_tensor_that_requires_grad(lib):
    """The issue's `c = a * 1; c.mul_(b)`: PyTorch gives a.grad = b and b.grad = a (times the upstream)."""
    a, b = T(lib, A3, True), T(lib, B3, True)
    c = a * 1
    c.mul_(b)
    assert c.grad_fn is not None and not c.is_leaf
    c.backward(T(lib, U3))
    return a.grad, b.grad


@grad_case(lambda: ((2 * X3 - A3) / B3 + A3, U3 * 2 / B3, U3 * (1 - 1 / B3), -U3 * (2 * X3 - A3) / B3 ** 2))
def add_sub_div_chain(lib):
    x, a, b = T(lib, X3, True), T(lib, A3, True), T(lib, B3, True)
    y = x * 2
    y.sub_(a)
    y.div_(b)
    y.add_(a)
    y.backward(T(lib, U3))
    return y, x.grad, a.grad, b.grad


@grad_case(lambda: ([3.0, 6.0, 7.0], 3 * U3 * [1, 1, 0]))
def clamp_recorded(lib):
    """The issue's `h.clamp_(max=7)` recorded (spelled positionally: see the keyword bug)."""
    x = T(lib, X3, True)
    h = x * 3
    h.clamp_(None, 7)
    h.backward(T(lib, U3))
    return h, x.grad


@grad_case(lambda: ([1.0, 1.0, 1.0], 6 * U3))
def clamp_under_no_grad(lib):
    """The issue's `with no_grad(): h.clamp_(max=1)`: not recorded, so h's node still says h = 3x,
    and (h * h) backward gives 2 h 3 = 6 (times the upstream) with the clamped h = 1."""
    x = T(lib, X3, True)
    h = x * 3
    with lib.no_grad():
        h.clamp_(None, 1)
    (h * h).backward(T(lib, U3))
    return h, x.grad


@grad_case(lambda: ([2.0, 0.0, 6.0], U3 * 2 * np.array([2.0, 0.0, 6.0]) * 2))
def relu_(lib):
    x = T(lib, [1.0, -2.0, 3.0], True)
    h = x * 2
    h.relu_()
    (h * h).backward(T(lib, U3))
    return h, x.grad


@grad_case(lambda: ([0.0, 4.0, 6.0], [0.0, 16 * U3[1], 24 * U3[2]]))
def setitem_a_number(lib):
    """The issue's `y[0] = 0` on a tensor in the graph: element 0 no longer depends on x."""
    x = T(lib, X3, True)
    y = x * 2
    y[0] = 0
    (y * y).backward(T(lib, U3))
    return y, x.grad


@grad_case(lambda: ([10.0, 4.0, 6.0], [0.0, U3[0] * 2 * 10 * 5 + U3[1] * 2 * 4 * 2, U3[2] * 2 * 6 * 2]))
def setitem_a_graph_value(lib):
    x = T(lib, X3, True)
    y = x * 2
    y[0] = x[1] * 5
    (y * y).backward(T(lib, U3))
    return y, x.grad


@grad_case(lambda: ([49.0, 4.0, 64.0], [0.0, 2 * U3[1], 0.0], [U3[0] * 14, U3[2] * 16]))
def setitem_bool_mask(lib):
    x, v = T(lib, X3, True), T(lib, [7.0, 8.0], True)
    y = x * 2
    y[B(lib, M3)] = v * v
    y.backward(T(lib, U3))
    return y, x.grad, v.grad


@grad_case(lambda: ([64.0, 4.0, 49.0], [0.0, 2 * U3[1], 0.0], [U3[2] * 14, U3[0] * 16]))
def setitem_int_list(lib):
    x, v = T(lib, X3, True), T(lib, [7.0, 8.0], True)
    y = x * 2
    y[[2, 0]] = v * v
    y.backward(T(lib, U3))
    return y, x.grad, v.grad


@grad_case(lambda: ([[2.0, 4.0], [3.0, 6.0]], 2 * U22[0] + 3 * U22[1]))
def buffer_rows_from_the_graph(lib):
    """The issue's `buf = zeros(2, 2); buf[0] = h * 2; buf[1] = h * 3`: the plain buffer joins the graph."""
    h = T(lib, [1.0, 2.0], True)
    buf = lib.zeros(2, 2, dtype=lib.float64)
    buf[0] = h * 2
    buf[1] = h * 3
    assert buf.requires_grad and buf.grad_fn is not None
    buf.backward(T(lib, U22))
    return buf, h.grad


@grad_case(lambda: ([[0.0, 1.0, 1.0], [0.0, 2.0, 4.0]], U23[:, 1] + 2 * np.array([1.0, 2.0]) * U23[:, 2]))
def buffer_columns_broadcast(lib):
    h = T(lib, [1.0, 2.0], True)
    buf = lib.zeros(2, 3, dtype=lib.float64)
    buf[:, 1] = h
    buf[:, 2:] = (h * h)[:, None]
    buf.backward(T(lib, U23))
    return buf, h.grad


@grad_case(lambda: ([[0.0, 5.0, 0.0], [0.0, 5.0, 0.0]], [0.0, 0.0]))
def buffer_value_overwritten(lib):
    """A value written and then overwritten passes back exactly zero (a gradient, not None)."""
    h = T(lib, [1.0, 2.0], True)
    buf = lib.zeros(2, 3, dtype=lib.float64)
    buf[:, 1] = h
    buf[:, 1] = 5.0
    buf.backward(T(lib, U23))
    return buf, h.grad


@grad_case(lambda: (3 * np.array([1.0, 2.0]), 3 * U2))
def accumulator_add_(lib):
    """The issue's `acc.add_(w * 3)` into a plain accumulator."""
    w = T(lib, [1.0, 2.0], True)
    acc = lib.zeros(2, dtype=lib.float64)
    acc.add_(w * 3)
    acc.backward(T(lib, U2))
    return acc, w.grad


@grad_case(lambda: (6 * (U3 * X3 ** 2).sum(), 12 * U3 * X3))
def total_plus_equals_loss(lib):
    """The issue's `total = zeros(()); total += loss` in a loop, then `total.backward()`."""
    x, u = T(lib, X3, True), T(lib, U3)
    total = lib.zeros((), dtype=lib.float64)
    for i in (1, 2, 3):
        loss = (x * x * u).sum() * i
        total += loss
    total.backward()
    return total, x.grad


@grad_case(lambda: (2 * X3 + 1, [3.0, 5.0], U3 * 2 * (2 * X3 + 1) * 2))
def plus_equals_changes_y_in_place(lib):
    """The issue's `y += 1` on a tensor in the graph: y changes in place (an alias and a view
    taken before see it) and the gradient is right."""
    x = T(lib, X3, True)
    y = x * 2
    z = y
    v = y[0:2]
    y += 1
    assert z is y
    (y * y).backward(T(lib, U3))
    return y, v, x.grad


@grad_case(lambda: ((X3 - A3) * B3 / 2, U3 * B3 / 2, -U3 * B3 / 2, U3 * (X3 - A3) / 2))
def augmented_operators(lib):
    x, a, b = T(lib, X3, True), T(lib, A3, True), T(lib, B3, True)
    y = x * 1
    y -= a
    y *= b
    y /= 2
    y.backward(T(lib, U3))
    return y, x.grad, a.grad, b.grad


@grad_case(lambda: ([2.5, 2.0, 2.5], U3 * ~M3, U3[M3].sum()))
def masked_fill_a_tensor_value(lib):
    x, v = T(lib, X3, True), T(lib, 2.5, True)
    y = x * 1
    y.masked_fill_(B(lib, M3), v)
    y.backward(T(lib, U3))
    return y, x.grad, v.grad


@grad_case(lambda: ([2.5, 2.5, 2.5], [0.0, 0.0, 0.0], (U3 * 2 * 2.5).sum()))
def fill_a_tensor_value(lib):
    x, v = T(lib, X3, True), T(lib, 2.5, True)
    y = x * 1
    y.fill_(v)
    (y * y).backward(T(lib, U3))
    return y, x.grad, v.grad


@grad_case(lambda: ([0.0, 0.0, 0.0], U3))
def zero_(lib):
    x = T(lib, X3, True)
    y = x * 2
    y.zero_()
    (y + x).backward(T(lib, U3))
    return y, x.grad


@grad_case(lambda: (np.array([[2.5], [-1.0]]) * X3, (U23 * [[2.5], [-1.0]]).sum(0), (U23 * X3).sum(1, keepdims=True)))
def copy_broadcasts_and_passes_the_gradient_to_src(lib):
    x, v = T(lib, X3, True), T(lib, [[2.5], [-1.0]], True)
    y = lib.zeros(2, 3, dtype=lib.float64)
    y.copy_(v * x)
    y.backward(T(lib, U23))
    return y, x.grad, v.grad


@grad_case(lambda: (np.exp(X3), U3 * np.exp(X3)))
def exp_(lib):
    x = T(lib, X3, True)
    y = x * 1
    y.exp_()
    y.backward(T(lib, U3))
    return y, x.grad


@grad_case(lambda: (np.array([2.0, 4.0], np.float32), 2 * U2.astype(np.float32).astype(np.float64)))
def float64_value_into_a_float32_buffer(lib):
    """The buffer keeps its dtype (PyTorch casts the result); the gradient reaches x in float64."""
    x = T(lib, [1.0, 2.0], True)
    buf = lib.zeros(2, dtype=lib.float32)
    buf.add_(x * 2)
    buf.backward(lib.tensor(U2.astype(np.float32)))
    return buf, x.grad


def _causal_attention_class(lib):
    """The causal attention of "Build a Large Language Model (From Scratch)" (ch. 3), as written
    there: it masks its scores in place with `masked_fill_` inside the graph."""
    nn = lib.nn

    class CausalAttention(nn.Module):
        def __init__(self, d_in, d_out, context_length, qkv_bias=False):
            super().__init__()
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.register_buffer("mask", lib.triu(lib.ones(context_length, context_length), diagonal=1))

        def forward(self, x):
            b, num_tokens, d_in = x.shape
            keys = self.W_key(x)
            queries = self.W_query(x)
            values = self.W_value(x)
            attn_scores = queries @ keys.transpose(1, 2)
            attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -math.inf)
            attn_weights = lib.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
            return attn_weights @ values

    return CausalAttention


ATT_X = rng.standard_normal((2, 5, 4))
ATT_U = rng.standard_normal((2, 5, 3))
ATT_W = {name: rng.standard_normal((3, 4)) for name in ("W_query", "W_key", "W_value")}


def _run_attention(lib, forward=None):
    module = _causal_attention_class(lib)(4, 3, 6).double()
    with lib.no_grad():
        for name, w in ATT_W.items():
            getattr(module, name).weight.copy_(lib.tensor(w))
    x = T(lib, ATT_X, True)
    out = module(x) if forward is None else forward(module, x)
    out.backward(lib.tensor(ATT_U))
    return (out, x.grad) + tuple(getattr(module, name).weight.grad for name in ATT_W)


def _out_of_place_attention(module, x):
    """The same computation with the out-of-place masked_fill (the reference)."""
    keys, queries, values = module.W_key(x), module.W_query(x), module.W_value(x)
    n = x.shape[1]
    scores = (queries @ keys.transpose(1, 2)).masked_fill(module.mask.bool()[:n, :n], -math.inf)
    return mt.softmax(scores / keys.shape[-1] ** 0.5, dim=-1) @ values


@grad_case(lambda: arrays(lambda lib: _run_attention(lib, _out_of_place_attention), mt))
def attention_scores_masked_fill_(lib):
    """The issue's `attn_scores.masked_fill_(mask, -inf)` then softmax inside a graph."""
    return _run_attention(lib)


@pytest.mark.parametrize("case, expected", GRADS)
def test_values(case, expected):
    assert_arrays(arrays(case, mt), _as_f64(expected()))


@pytest.mark.parametrize("case, expected", GRADS)
def test_same_as_torch(case, expected, torch):
    assert_arrays(arrays(case, mt), arrays(case, torch), rtol=1e-10, atol=1e-12)


def _as_f64(values):
    """Expected values given as lists or Python floats are float64; numpy arrays keep their dtype."""
    return [v if v is None or isinstance(v, np.ndarray) else np.asarray(v, dtype=np.float64) for v in values]


def test_the_issues_clamp_examples_with_sum():
    """The issue's numbers: [6, 6, 6] after a clamp under no_grad, [3, 3, 0] after a recorded clamp."""
    x = T(mt, X3, True)
    h = x * 3
    with mt.no_grad():
        h.clamp_(None, 1)
    (h * h).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0, 6.0]
    x = T(mt, X3, True)
    h = x * 3
    h.clamp_(None, 7)
    h.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 0.0]


def test_the_issues_clamp_examples_as_written():
    x = T(mt, X3, True)
    h = x * 3
    with mt.no_grad():
        h.clamp_(max=1)
    (h * h).backward(T(mt, U3))
    assert_arrays([x.grad.numpy()], [6 * U3])
    x = T(mt, X3, True)
    h = x * 3
    h.clamp_(max=7)
    h.backward(T(mt, U3))
    assert_arrays([x.grad.numpy()], [3 * U3 * [1, 1, 0]])


def test_in_place_op_rewrites_the_tensors_history():
    x = T(mt, X3, True)
    y = x * 2
    first = y.grad_fn
    y.add_(1)
    assert y.grad_fn is not first and y.grad_fn.name() == "AddBackward"
    assert not y.is_leaf and y.requires_grad and y._version == 1
    y.mul_(3)
    assert y.grad_fn.name() == "MulBackward" and y._version == 2


def test_plain_tensor_written_with_plain_values_stays_out_of_the_graph():
    x = T(mt, X3, True)
    buf = mt.zeros(3, dtype=mt.float64)
    buf[0] = 1.0
    buf.add_(T(mt, A3))
    with mt.no_grad():
        buf.add_(x)  # recorded nowhere
    assert not buf.requires_grad and buf.grad_fn is None
    assert_arrays([buf.numpy()], [A3 + X3 + [1, 0, 0]])


# ---- what raises ---------------------------------------------------------------------------------

ERRORS = []


def error_case(mt_match, torch_match, marks=()):
    """Register `setup(lib) -> go`, where `go()` must raise a RuntimeError (matching under each library)."""
    def register(fn):
        ERRORS.append(pytest.param(fn, mt_match, torch_match, id=fn.__name__, marks=marks))
        return fn
    return register


@error_case(r"modified by an inplace operation.*'MulBackward'", "modified by an inplace operation")
def recorded_change_of_a_tensor_a_mul_saved(lib):
    x = T(lib, X3, True)
    y = x * 2
    z = y * y  # saves y
    y.add_(1)
    return lambda: z.sum().backward()


@error_case(r"modified by an inplace operation.*its output.*'ExpBackward'", "modified by an inplace operation")
def recorded_change_of_an_exp_output(lib):
    x = T(lib, X3, True)
    y = x.exp()
    y.add_(1)  # exp's backward reads y
    return lambda: y.sum().backward()


@error_case(r"modified by an inplace operation.*'ExpBackward'", "modified by an inplace operation")
def exp_then_add_(lib):
    x = T(lib, X3, True)
    y = x * 1
    y.exp_()
    y.add_(1)
    return lambda: y.sum().backward()


@error_case(r"modified by an inplace operation.*'MulBackward'", "modified by an inplace operation")
def mul_by_itself_in_place(lib):
    """`h.mul_(h)`: the node reads h, which it then changes (PyTorch refuses at backward too)."""
    x = T(lib, X3, True)
    h = x * 1
    h.mul_(h)
    return lambda: h.sum().backward()


@pytest.mark.parametrize("setup, mt_match, torch_match", ERRORS)
def test_raises(setup, mt_match, torch_match):
    go = setup(mt)
    with pytest.raises(RuntimeError, match=mt_match):
        go()


@pytest.mark.parametrize("setup, mt_match, torch_match", ERRORS)
def test_torch_raises_too(setup, mt_match, torch_match, torch):
    go = setup(torch)
    with pytest.raises(RuntimeError, match=torch_match):
        go()


LEAF = "a leaf Variable that requires grad is being used in an in-place operation"
LEAF_OPS = {
    "add_": lambda lib, x: x.add_(1.0),
    "mul_tensor_requiring_grad": lambda lib, x: x.mul_(T(lib, A3, True)),
    "clamp_": lambda lib, x: x.clamp_(0.0, 1.0),
    "zero_": lambda lib, x: x.zero_(),
    "fill_": lambda lib, x: x.fill_(1.0),
    "copy_": lambda lib, x: x.copy_(T(lib, A3)),
    "masked_fill_": lambda lib, x: x.masked_fill_(B(lib, M3), 0.0),
    "normal_": lambda lib, x: x.normal_(),
    "setitem": lambda lib, x: _setitem(x, 0, 5.0),
    "iadd": lambda lib, x: _iadd(x, 1.0),
    "imul": lambda lib, x: _imul(x, 2.0),
}


@pytest.mark.parametrize("name", sorted(LEAF_OPS))
def test_leaf_that_requires_grad_refuses_in_place(name):
    x = T(mt, X3, True)
    with pytest.raises(RuntimeError, match=LEAF):
        LEAF_OPS[name](mt, x)
    assert x.numpy(force=True).tolist() == X3.tolist() and x._version == 0 and x.is_leaf and x.grad_fn is None
    with mt.enable_grad():  # inside no_grad's opposite too
        with pytest.raises(RuntimeError, match=LEAF):
            LEAF_OPS[name](mt, x)


@pytest.mark.parametrize("name", sorted(LEAF_OPS))
def test_leaf_that_requires_grad_refuses_in_place_in_torch_too(name, torch):
    x = T(torch, X3, True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        LEAF_OPS[name](torch, x)


def test_view_of_a_leaf_refuses_in_place_too():
    x = T(mt, X3, True)
    with pytest.raises(RuntimeError, match="in-place"):
        x[0:2].mul_(10)
    assert x.numpy(force=True).tolist() == X3.tolist() and x._version == 0


def test_leaf_error_advice_gives_pytorchs_result():
    """The message says to update under no_grad (or compute out of place); doing so gives what
    PyTorch gives: a training step, and a new value whose gradient reaches the leaf."""
    x = T(mt, X3, True)
    with pytest.raises(RuntimeError) as info:
        x.add_(1.0)
    message = str(info.value)
    assert "no_grad" in message and "x = x + 1" in message
    (x * x).backward(T(mt, U3))
    with mt.no_grad():  # the advice: the update is not recorded
        x.add_(x.grad * -0.1)
        x[0] = 10.0
        x *= 2
    assert x.is_leaf and x.requires_grad and x.grad_fn is None and x._version == 3
    want = (X3 - 0.1 * 2 * X3 * U3) * 2
    want[0] = 20.0
    assert_arrays([x.numpy(force=True)], [want])
    x.grad = None
    (x * x).backward(T(mt, U3))
    assert_arrays([x.grad.numpy()], [2 * want * U3])
    x2 = x + 1  # the other advice: a new value, out of place
    x2.backward(T(mt, U3))
    assert_arrays([x.grad.numpy()], [2 * want * U3 + U3])


def test_leaf_error_advice_gives_pytorchs_result_in_torch(torch):
    def run(lib):
        x = T(lib, X3, True)
        (x * x).backward(T(lib, U3))
        with lib.no_grad():
            x.add_(x.grad * -0.1)
            x[0] = 10.0
            x *= 2
        v = x._version
        x.grad = None
        (x * x).backward(T(lib, U3))
        (x + 1).backward(T(lib, U3))
        return x, x.grad, lib.tensor(float(v))
    assert_arrays(arrays(run, mt), arrays(run, torch))


VIEW_OPS = {
    "slice_mul_": lambda lib, y, h, buf: y[0:2].mul_(2),
    "row_fill_": lambda lib, y, h, buf: y[0].fill_(3.0),
    "row_plus_equals": lambda lib, y, h, buf: _row_iadd(y, 1.0),
    "transpose_add_": lambda lib, y, h, buf: y.T.add_(1.0),
    "row_mul_by_graph_tensor": lambda lib, y, h, buf: y[1].mul_(h),
    "reshaped_masked_fill": lambda lib, y, h, buf: y.reshape(-1).masked_fill_(lib.tensor([True, False, False, True]),
                                                                            -5.0),
    "reshaped_setitem_mask": lambda lib, y, h, buf: _masked_set(lib, y.reshape(4, 1)),
    "plain_buffer_row_copy_": lambda lib, y, h, buf: buf[0].copy_(h * 2),
    "plain_buffer_row_plus_equals": lambda lib, y, h, buf: _row_iadd(buf, h),
}


def _row_iadd(t, v):
    t[0] += v


def _masked_set(lib, view):
    view[lib.tensor([[False], [True], [True], [False]])] = -1.0  # (d2l's masked_softmax: X[~mask] = value)


@pytest.mark.parametrize("name", sorted(VIEW_OPS))
def test_in_place_through_a_view_rewrites_the_base_as_pytorch_does(name):
    """The base of a view changed in place gets a CopySlices node: its values, the view's, and every
    gradient (through the base and through the view afterwards) are PyTorch's."""
    def run(lib):
        x = T(lib, [[1.0, 2.0], [3.0, 4.0]], True)
        y = x * 2
        h = T(lib, [1.0, 2.0], True)
        buf = lib.zeros(2, 2, dtype=lib.float64)
        VIEW_OPS[name](lib, y, h, buf)
        node = y.grad_fn
        names = (type(node).__name__ if lib is not mt else node.torch_name(),)
        ((y * T(lib, U22)).sum() + (buf * T(lib, U22[::-1].copy())).sum() * 3).backward()
        return [y.detach(), buf.detach(), x.grad, h.grad if h.grad is not None else lib.zeros(2)], names
    ours, our_names = run(mt)
    assert ours[0].numpy().tolist() != [[2.0, 4.0], [6.0, 8.0]] or name.startswith("plain")  # (it did change)
    torch = pytest.importorskip("torch")
    theirs, their_names = run(torch)
    assert_arrays([t.numpy() for t in ours], [t.numpy() for t in theirs])
    assert our_names == their_names


def test_a_view_of_a_leaf_that_requires_grad_is_refused_in_place_and_nothing_changes():
    x = T(mt, [[1.0, 2.0], [3.0, 4.0]], True)
    with pytest.raises(RuntimeError, match="view of a leaf Variable that requires grad"):
        x[0].mul_(2)
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]] and x._version == 0


def test_an_older_view_of_a_base_changed_through_another_view_is_refused_not_wrong():
    x = T(mt, [[1.0, 2.0], [3.0, 4.0]], True)
    y = x * 2
    older = y[1]
    y[0].mul_(3)
    with pytest.raises(RuntimeError, match="take the view again"):
        older * 2
    (y[1] * 2).sum().backward()  # (a view taken again is current)
    assert x.grad.tolist() == [[0.0, 0.0], [4.0, 4.0]]


def test_view_error_advice_writing_into_the_base_gives_pytorchs_gradient():
    """The advice: `y[0] = v` instead of `y[0].copy_(v)`; the same gradient as PyTorch's view op."""
    x, h = T(mt, [[1.0, 2.0], [3.0, 4.0]], True), T(mt, [5.0, 6.0], True)
    y = x * 2
    y[0] = h * 3
    y.backward(T(mt, U22))
    assert_arrays([x.grad.numpy(), h.grad.numpy()], [2 * U22 * [[0], [1]], 3 * U22[0]])


def test_view_in_place_is_what_pytorch_computes_for_the_advice(torch):
    x, h = T(torch, [[1.0, 2.0], [3.0, 4.0]], True), T(torch, [5.0, 6.0], True)
    y = x * 2
    y[0].copy_(h * 3)  # PyTorch's own way, through the view
    y.backward(T(torch, U22))
    assert_arrays([x.grad.numpy(), h.grad.numpy()], [2 * U22 * [[0], [1]], 3 * U22[0]])


# ---- a failed in-place call changes nothing ------------------------------------------------------

FAILING = {
    "add_bad_shape": (lambda lib, y: y.add_(T(lib, [1.0, 2.0])), RuntimeError),
    "add_broadcast_grows": (lambda lib, y: y.add_(T(lib, np.ones((2, 3)))), RuntimeError),
    "mul_grad_value_bad_shape": (lambda lib, y: y.mul_(T(lib, [1.0, 2.0], True)), RuntimeError),
    "setitem_bad_index": (lambda lib, y: _setitem(y, 5, 1.0), IndexError),
    "setitem_bad_value_shape": (lambda lib, y: _setitem(y, slice(0, 2), T(lib, [1.0, 2.0, 3.0])), RuntimeError),
    "masked_fill_bad_mask_shape": (lambda lib, y: y.masked_fill_(B(lib, [True, False]), 0.0), RuntimeError),
    "masked_fill_int_mask": (lambda lib, y: y.masked_fill_(lib.tensor([1, 0, 1]), 0.0), RuntimeError),
    "masked_fill_1d_value": (lambda lib, y: y.masked_fill_(B(lib, M3), T(lib, [1.0, 2.0])), RuntimeError),
    "copy_bad_shape": (lambda lib, y: y.copy_(T(lib, np.ones(4))), RuntimeError),
    "fill_1d_tensor": (lambda lib, y: y.fill_(T(lib, [1.0, 2.0])), RuntimeError),
    "iadd_bad_shape": (lambda lib, y: _iadd(y, T(lib, np.ones((2, 3)))), RuntimeError),
    # a value that is no number: refused before anything is written or the version moves
    "fill_str": (lambda lib, y: y.fill_("abc"), TypeError),
    "copy_str": (lambda lib, y: y.copy_("abc"), TypeError),
    "setitem_str": (lambda lib, y: _setitem(y, 0, "a"), TypeError),
    "masked_fill_str": (lambda lib, y: y.masked_fill_(B(lib, M3), "a"), TypeError),
    "fill_none": (lambda lib, y: y.fill_(None), TypeError),
}


@pytest.mark.parametrize("name", sorted(FAILING))
def test_failed_in_place_call_on_a_graph_tensor_changes_nothing(name):
    call, error = FAILING[name]
    x = T(mt, X3, True)
    y = x * 2
    node = y.grad_fn
    with pytest.raises(error):
        call(mt, y)
    assert y.tolist() == (2 * X3).tolist() and y._version == 0 and y.grad_fn is node
    y.backward(T(mt, U3))  # still the graph of y = 2x
    assert_arrays([x.grad.numpy()], [2 * U3])


@pytest.mark.parametrize("name", sorted(FAILING))
def test_failed_in_place_call_on_a_plain_tensor_changes_nothing(name):
    call, error = FAILING[name]
    y = T(mt, X3)
    with pytest.raises(error):
        call(mt, y)
    assert y.tolist() == X3.tolist() and y._version == 0 and not y.requires_grad and y.grad_fn is None


@pytest.mark.parametrize("name", sorted(FAILING))
def test_failing_calls_fail_in_torch_too(name, torch):
    call, error = FAILING[name]
    y = T(torch, X3) * 1
    with pytest.raises((error, RuntimeError, IndexError)):
        call(torch, y)


def test_failed_write_of_a_graph_value_leaves_a_plain_buffer_plain():
    w = T(mt, [1.0, 2.0, 3.0], True)
    acc = mt.zeros(2, dtype=mt.float64)
    with pytest.raises(RuntimeError):
        acc.add_(w * 3)
    with pytest.raises(RuntimeError):
        acc[0] = w * 3
    assert acc.tolist() == [0.0, 0.0] and acc._version == 0 and not acc.requires_grad and acc.grad_fn is None


def test_float_result_into_an_integer_tensor_fails_and_changes_nothing():
    i = mt.tensor([1, 2])
    for call in (lambda: i.add_(0.5), lambda: i.mul_(T(mt, [1.5, 2.0], True)), lambda: _iadd(i, 0.5)):
        with pytest.raises(RuntimeError, match="can't be cast"):
            call()
    assert i.tolist() == [1, 2] and i._version == 0 and i.dtype == mt.int64


def test_integer_result_into_a_bool_tensor_fails_and_changes_nothing():
    b = mt.tensor([True, False])
    with pytest.raises(RuntimeError, match="can't be cast"):
        b.add_(1)
    assert b.tolist() == [True, False] and b._version == 0


def test_integer_result_into_a_bool_tensor_fails_in_torch(torch):
    b = torch.tensor([True, False])
    with pytest.raises(RuntimeError, match="can't be cast"):
        b.add_(1)


# ---- hooks and retain_grad across an in-place op --------------------------------------------------

def _retain_then_mul_(lib):
    x = T(lib, X3, True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * y).backward(T(lib, U3))
    return x.grad, y.grad


def test_retain_grad_then_in_place_gives_the_gradient_of_the_new_value():
    # y = 6x after mul_(3); loss = sum(U y^2): dloss/dy = 2 U y, dloss/dx = 6 * 2 U y
    y_now = 6 * X3
    assert_arrays(arrays(_retain_then_mul_, mt), [12 * U3 * y_now, 2 * U3 * y_now])


def test_retain_grad_then_in_place_in_torch(torch):
    y_now = 6 * X3
    assert_arrays(arrays(_retain_then_mul_, torch), [12 * U3 * y_now, 2 * U3 * y_now])


def _hook_then_mul_(lib):
    x = T(lib, X3, True)
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.detach().clone()))
    y.mul_(3)
    (y * y).backward(T(lib, U3))
    return x.grad, seen[0]


def test_hook_registered_before_in_place_sees_the_old_values_gradient():
    """As PyTorch: a hook registered before the in-place op gets the gradient of y before it."""
    y_now = 6 * X3
    assert_arrays(arrays(_hook_then_mul_, mt), [12 * U3 * y_now, 3 * 2 * U3 * y_now])


def test_hook_registered_before_in_place_same_as_torch(torch):
    assert_arrays(arrays(_hook_then_mul_, mt), arrays(_hook_then_mul_, torch))


def test_in_place_through_a_view_passes_gradcheck():
    """Finite differences agree with the gradients through CopySlices (float64, a random-weighted output)."""
    weight = mt.tensor(np.random.default_rng(5).standard_normal((3, 4)))
    mask = mt.tensor([True, False, True, False, False, True])

    def f(x, h):
        y = x * x
        y.reshape(6, 2)[mask] = h * 3       # through a reshaped view, as d2l's masked_softmax
        y[1:, 1:3].mul_(h[0])               # through a slice
        return (y.tanh() * weight).sum()
    rng = np.random.default_rng(6)
    x = mt.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    h = mt.tensor(rng.standard_normal(2), requires_grad=True)
    assert mt.autograd.gradcheck(f, (x, h))


def test_retain_grad_of_a_base_follows_it_through_an_in_place_change_of_its_view():
    def run(lib):
        x = T(lib, [[1.0, 2.0], [3.0, 4.0]], True)
        y = x * 2
        y.retain_grad()
        y[0].mul_(3)
        (y * T(lib, U22)).sum().backward()
        return [y.grad, x.grad]
    ours = run(mt)
    assert ours[0] is not None
    torch = pytest.importorskip("torch")
    assert_arrays([t.numpy() for t in ours], [t.numpy() for t in run(torch)])
