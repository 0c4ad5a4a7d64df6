"""grad_fn._saved_<name>, _raw_saved_<name>.register_hooks, and saved_tensors_hooks packing what PyTorch's
node saves (minitensor/autograd/saved_names.py), op by op against PyTorch: the saved values, the pack
hook's calls (which tensors, in which order), and gradients under hooks (float64, random-weighted)."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd.saved_names import SAVED

RNG = np.random.default_rng(7)
DATA = {"x": RNG.standard_normal((3, 4)), "w": RNG.standard_normal((3, 4)), "m": RNG.standard_normal((4, 5)),
        "b3": RNG.standard_normal((2, 3, 4)), "b3b": RNG.standard_normal((2, 4, 5)), "v": RNG.standard_normal(4),
        "lw": RNG.standard_normal((5, 4)), "lb": RNG.standard_normal(5), "g": RNG.standard_normal(4) + 1,
        "e": RNG.standard_normal((10, 4))}

# (label, op on the inputs, whether the pack hook's calls equal PyTorch's: False where PyTorch's node also
# keeps a tensor it computed in forward, which minitensor's node doesn't hold)
CASES = [
    ("add", lambda L, t: t["x"] + t["w"], True), ("sub", lambda L, t: t["x"] - t["w"], True),
    ("rsub", lambda L, t: 1 - t["x"], True),
    ("mul", lambda L, t: t["x"] * t["w"], True), ("mul_square", lambda L, t: t["x"] * t["x"], True),
    ("mul_number", lambda L, t: t["x"] * 2.0, True), ("mul_int", lambda L, t: t["x"] * 3, True),
    ("mul_const", lambda L, t: t["x"] * t["w"].detach(), True),
    ("mul_const_first", lambda L, t: t["w"].detach() * t["x"], True),
    ("div", lambda L, t: t["x"] / t["w"], True), ("div_number", lambda L, t: t["x"] / 2.0, True),
    ("div_const", lambda L, t: t["x"] / t["w"].detach(), True),
    ("div_by_x", lambda L, t: t["w"].detach() / t["x"], True),
    ("rdiv", lambda L, t: 2 / t["x"], False),
    ("pow_number", lambda L, t: t["x"] ** 2, True), ("pow_float", lambda L, t: t["x"].pow(2.5), True),
    ("pow_tensor", lambda L, t: t["x"].abs() ** t["w"], True), ("rpow", lambda L, t: 2 ** t["x"], True),
    ("exp", lambda L, t: t["x"].exp(), True), ("log", lambda L, t: t["x"].abs().log(), True),
    ("sin", lambda L, t: t["x"].sin(), True), ("cos", lambda L, t: t["x"].cos(), True),
    ("tanh", lambda L, t: t["x"].tanh(), True), ("sigmoid", lambda L, t: t["x"].sigmoid(), True),
    ("relu", lambda L, t: t["x"].relu(), True), ("sqrt", lambda L, t: t["x"].abs().sqrt(), True),
    ("abs", lambda L, t: t["x"].abs(), True), ("neg", lambda L, t: -t["x"], True),
    ("matmul", lambda L, t: t["x"] @ t["m"], True), ("mm", lambda L, t: L.mm(t["x"], t["m"]), True),
    ("mm_const", lambda L, t: L.mm(t["x"], t["m"].detach()), True),
    ("mv", lambda L, t: t["x"] @ t["v"], True), ("dot", lambda L, t: t["x"][0] @ t["v"], True),
    ("bmm", lambda L, t: L.bmm(t["b3"], t["b3b"]), True),
    ("linear", lambda L, t: L.nn.functional.linear(t["x"], t["lw"], t["lb"]), True),
    ("linear_const_x", lambda L, t: L.nn.functional.linear(t["x"].detach(), t["lw"], t["lb"]), True),
    ("linear_no_bias", lambda L, t: L.nn.functional.linear(t["x"], t["lw"]), True),
    ("sum", lambda L, t: t["x"].sum(), True), ("sum_dim", lambda L, t: t["x"].sum(1, keepdim=True), True),
    ("mean", lambda L, t: t["x"].mean(), True), ("mean_dim", lambda L, t: t["x"].mean(0), True),
    ("max", lambda L, t: t["x"].max(), True), ("min", lambda L, t: t["x"].min(), True),
    ("max_dim", lambda L, t: t["x"].max(1)[0], False), ("amax", lambda L, t: t["x"].amax(1), True),
    ("softmax", lambda L, t: t["x"].softmax(1), True), ("log_softmax", lambda L, t: t["x"].log_softmax(1), True),
    ("view", lambda L, t: t["x"].view(12), True), ("reshape", lambda L, t: t["x"].reshape(2, 6), True),
    ("transpose", lambda L, t: t["x"].transpose(0, 1), True), ("permute", lambda L, t: t["b3"].permute(2, 0, 1), True),
    ("expand", lambda L, t: t["x"][:, :1].expand(3, 4), True), ("cat", lambda L, t: L.cat([t["x"], t["w"]]), True),
    ("stack", lambda L, t: L.stack([t["x"], t["w"]]), True),
    ("index", lambda L, t: t["x"][L.tensor([0, 2])], False),
    ("gather", lambda L, t: t["x"].gather(1, L.tensor([[0, 1], [2, 3], [1, 1]])), False),
    ("where", lambda L, t: L.where(t["x"] > 0, t["x"], t["w"]), True),
    ("masked_fill", lambda L, t: t["x"].masked_fill(t["w"] > 0, 0.0), True),
    ("clamp", lambda L, t: t["x"].clamp(-0.5, 0.5), True), ("clamp_min", lambda L, t: t["x"].clamp(min=-0.5), True),
    ("layer_norm", lambda L, t: L.nn.functional.layer_norm(t["x"], (4,), t["g"], t["v"]), False),
    ("embedding", lambda L, t: L.nn.functional.embedding(L.tensor([1, 7, 1]), t["e"]), False),
    ("cross_entropy", lambda L, t: L.nn.functional.cross_entropy(t["x"], L.tensor([0, 1, 3])), False),
    ("dropout_eval", lambda L, t: L.nn.functional.dropout(t["x"], 0.5, training=False) * 1, True),
]
IDS = [c[0] for c in CASES]


def _inputs(L):
    return {k: L.tensor(v, requires_grad=True) for k, v in DATA.items()}


def _label(t, inputs):
    who = next((k for k, v in inputs.items() if t is v), None)
    return who or (tuple(t.shape), str(t.dtype).split(".")[-1])


def _run(L, op, hooks=None):
    """The op's output, its inputs, and the pack hook's log (who or which shape, in order)."""
    inputs, log = _inputs(L), []

    def pack(t):
        log.append(_label(t, inputs))
        return t.clone() if hooks == "clone" else t
    with L.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = op(L, inputs)
    return y, inputs, log


@pytest.mark.parametrize("label, op, exact", CASES, ids=IDS)
def test_pack_calls_as_pytorchs(label, op, exact):
    torch = pytest.importorskip("torch")
    ours, theirs = _run(mt, op)[2], _run(torch, op)[2]
    if exact:
        assert ours == theirs
    else:  # what minitensor packs, PyTorch packs too, in the same order (PyTorch's own extra tensors aside)
        it = iter(theirs)
        assert all(any(o == t for t in it) for o in ours) and len(ours) < len(theirs)


def _names(node):
    return sorted(a for a in dir(node) if a.startswith("_saved_"))


def _compare(a, b, inputs_a, inputs_b, where):
    if isinstance(b, (tuple, list)) and b and hasattr(b[0], "shape"):
        return
    if hasattr(b, "shape"):
        assert hasattr(a, "shape"), where
        wa, wb = _label(a, inputs_a), _label(b, inputs_b)
        assert (wa in DATA) == (wb in DATA) and (wa == wb or wb not in DATA), where  # the input itself, as PyTorch
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, err_msg=where)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], where
        assert a.requires_grad == b.requires_grad, where
    else:
        assert a == b, where


@pytest.mark.parametrize("label, op, exact", CASES, ids=IDS)
def test_saved_attributes_as_pytorchs(label, op, exact):
    """Every `_saved_*` minitensor's node gives equals PyTorch's (the input itself where PyTorch gives it)."""
    torch = pytest.importorskip("torch")
    (y, ins, _), (ty, tins, _) = _run(mt, op), _run(torch, op)
    given = 0
    for name in [a for a in dir(ty.grad_fn) if a.startswith("_saved_")]:
        try:
            ours = getattr(y.grad_fn, name)
        except AttributeError:
            continue
        given += 1
        _compare(ours, getattr(ty.grad_fn, name), ins, tins, f"{label}: {name}")
    assert given or not _names(ty.grad_fn) or label in ("transpose", "permute", "cat", "stack", "dropout_eval")


def test_the_table_covers_the_ops_a_tutorial_meets():
    for op in ["Add", "Sub", "Mul", "Div", "Pow", "Exp", "Log", "Sin", "Cos", "Tanh", "Sigmoid", "Relu", "Sqrt",
               "Abs", "Neg", "Matmul", "Linear", "Sum", "Mean", "Amax", "Amin", "Softmax", "LogSoftmax", "Reshape",
               "Permute", "Expand", "Cat", "Index", "Where", "Clamp", "LayerNorm", "CrossEntropy", "Dropout"]:
        assert op in SAVED


@pytest.mark.parametrize("label, op, exact", CASES, ids=IDS)
def test_gradients_under_hooks_as_pytorchs(label, op, exact):
    torch = pytest.importorskip("torch")
    weight = np.random.default_rng(3).standard_normal(np.shape(_run(mt, op)[0].detach().numpy()))

    def grads(L):
        y, inputs, _ = _run(L, op, hooks="clone")
        loss = (y * L.tensor(weight)).sum()
        return {k: None if v.grad is None else v.grad.numpy() for k, v in inputs.items()} if loss.backward() is None \
            else None
    ours, theirs = grads(mt), grads(torch)
    for k in DATA:
        if theirs[k] is None:
            assert ours[k] is None or not np.any(ours[k]), k
        else:
            np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-10, atol=1e-14, err_msg=k)


def _errors(L):
    out = []
    x = L.tensor(DATA["x"], requires_grad=True)
    w = L.tensor(DATA["w"], requires_grad=True)

    def attempt(fn):
        try:
            out.append(fn())
        except Exception as e:  # noqa: BLE001  (compared with PyTorch's type and words)
            out.append((type(e).__name__, str(e).split(" Invoked with")[0][:150]))
    y = x * w
    raw = y.grad_fn._raw_saved_self
    attempt(lambda: raw.register_hooks(lambda t: t, lambda t: t))
    attempt(lambda: raw.register_hooks(lambda t: t, lambda t: t))
    attempt(lambda: (x * w).grad_fn._raw_saved_self.register_hooks(1, lambda t: t))
    attempt(lambda: (x * w.detach()).grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t))
    attempt(lambda: (x * w.detach()).grad_fn._saved_self)
    attempt(lambda: x.sum().grad_fn._saved_self)
    y = x.exp()
    y.sum().backward()
    attempt(lambda: y.grad_fn._saved_result)
    attempt(lambda: y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t))
    y = x.view(12)
    y.sum().backward()
    attempt(lambda: y.grad_fn._saved_self_sym_sizes)
    with L.autograd.graph.saved_tensors_hooks(lambda t: "kept", lambda t: 5):
        y = x.exp()
    attempt(lambda: y.grad_fn._saved_result)
    with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x * w
    attempt(lambda: y.grad_fn._raw_saved_other.register_hooks(lambda t: t, lambda t: t))
    return out


def test_errors_as_pytorchs():
    torch = pytest.importorskip("torch")
    ours, theirs = _errors(mt), _errors(torch)
    assert ours == theirs


def _raw_hooks(L):
    log = []
    x = L.tensor(DATA["x"][0], requires_grad=True)
    y = x.pow(2)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: log.append(("pack", t.requires_grad)) or t * 4,
                                             lambda t: log.append("unpack") or t / 4)
    s = y.grad_fn._saved_self
    log.append((s is x, s.requires_grad, s.grad_fn is None, s.tolist()))
    (y * L.tensor(DATA["w"][0])).sum().backward()
    return log, x.grad.tolist()


def test_raw_saved_register_hooks_as_pytorchs():
    ours = _raw_hooks(mt)
    assert ours[0][:2] == [("pack", False), "unpack"] and ours[0][3:] == ["unpack"]  # pack now; each read unpacks
    torch = pytest.importorskip("torch")
    theirs = _raw_hooks(torch)
    assert ours[0][:2] == theirs[0][:2] and ours[0][3:] == theirs[0][3:]
    assert ours[0][2][:3] == theirs[0][2][:3]
    np.testing.assert_allclose(ours[0][2][3], theirs[0][2][3], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)


def _custom(L):
    log = []

    class ExpMul(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            y = (x * w).exp()
            ctx.save_for_backward(x, w, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, w, y = ctx.saved_tensors
            return g * y * w, g * y * x
    x = L.tensor(DATA["x"], requires_grad=True)
    w = L.tensor(DATA["w"], requires_grad=True)
    with L.autograd.graph.saved_tensors_hooks(lambda t: log.append(("pack", tuple(t.shape))) or t * 2,
                                              lambda t: log.append("unpack") or t / 2):
        y = ExpMul.apply(x, w)
    gx, gw = L.autograd.grad((y * L.tensor(DATA["x"])).sum(), [x, w], create_graph=True)
    gx2 = L.autograd.grad((gx * L.tensor(DATA["w"])).sum() + (gw * L.tensor(DATA["x"])).sum(), x)[0]
    return log, gx.detach().numpy(), gw.detach().numpy(), gx2.numpy()


def test_a_functions_saved_tensors_are_packed_one_by_one_as_pytorchs():
    ours = _custom(mt)
    assert ours[0] == [("pack", (3, 4))] * 3 + ["unpack"] * 6  # (the second grad unpacks again, as PyTorch)
    torch = pytest.importorskip("torch")
    theirs = _custom(torch)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-10)
