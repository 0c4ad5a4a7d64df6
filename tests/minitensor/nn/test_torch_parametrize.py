"""torch.nn.utils.parametrize and torch.nn.utils.parametrizations against PyTorch: the Parametrizations
Tutorial's Symmetric and Skew/matrix_exp on a Linear (values, gradients reaching `original`, the
ParametrizedLinear class and its repr, state_dict keys, cached(), assignment through right_inverse, chaining,
removal, errors), orthogonal (every map, PyTorch's values where the map is deterministic), weight_norm's
original0/original1 split and spectral_norm with PyTorch's start vectors copied in."""
import copy

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.utils.parametrizations as MPZ
import minitensor.nn.utils.parametrize as MP

torch = pytest.importorskip("torch")
import torch.nn.utils.parametrizations as TPZ  # noqa: E402
import torch.nn.utils.parametrize as TP  # noqa: E402

pytestmark = pytest.mark.slow

LIBS = {"mt": (mt, MP, MPZ), "torch": (torch, TP, TPZ)}
RNG = np.random.default_rng(7)
W33 = np.linspace(-1, 1, 9).reshape(3, 3).astype(np.float32)
G33 = RNG.standard_normal((3, 3)).astype(np.float32)  # an upstream weight for the gradient


def _classes(lib):
    """The tutorial's parametrizations, written against one library's nn.Module."""
    nn = lib.nn

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

    class MatrixExponential(nn.Module):
        def forward(self, X):
            return lib.matrix_exp(X)

    class Grow(nn.Module):  # changes the shape
        def forward(self, X):
            return lib.cat([X, X])

    class ToDouble(nn.Module):  # changes the dtype
        def forward(self, X):
            return X.double()

    return dict(Symmetric=Symmetric, Skew=Skew, MatrixExponential=MatrixExponential, Grow=Grow, ToDouble=ToDouble)


def _linear(lib, w=W33, dtype="float32"):
    layer = lib.nn.Linear(w.shape[1], w.shape[0]).to(getattr(lib, dtype))
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(w, dtype=getattr(lib, dtype)))
        layer.bias.copy_(lib.linspace(-0.1, 0.1, w.shape[0], dtype=getattr(lib, dtype)))
    return layer


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _node(t):
    """PyTorch's name of t's node (minitensor's node says it with torch_name())."""
    return getattr(t.grad_fn, "torch_name", t.grad_fn.name)()


def _repr(obj):
    return repr(obj).replace("minitensor", "torch")


# name -> the parametrizations registered in order on a Linear's weight
CHAINS = {"symmetric": ["Symmetric"], "skew_exp": ["Skew", "MatrixExponential"], "sym_sym": ["Symmetric", "Symmetric"]}


@pytest.mark.parametrize("chain", CHAINS)
def test_parametrized_linear_matches_pytorch(chain):
    seen = {}
    for name, (lib, P, _) in LIBS.items():
        classes = _classes(lib)
        layer = _linear(lib)
        for c in CHAINS[chain]:
            assert P.register_parametrization(layer, "weight", classes[c]()) is layer
        out = layer(lib.tensor(np.ones((2, 3), np.float32)))
        (out.sum() + (layer.weight * lib.tensor(G33)).sum()).backward()
        plist = layer.parametrizations.weight
        seen[name] = dict(
            weight=_np(layer.weight), out=_np(out), grad=_np(plist.original.grad), original=_np(plist.original),
            cls=type(layer).__name__, before=P.type_before_parametrizations(layer).__name__, repr=_repr(layer),
            keys=list(layer.state_dict()), params=[n for n, _ in layer.named_parameters()],
            flags=(P.is_parametrized(layer), P.is_parametrized(layer, "weight"), P.is_parametrized(layer, "bias")),
            plist=type(plist).__name__, n=len(plist))
    ours, theirs = seen["mt"], seen["torch"]
    for key in ("weight", "out", "grad", "original"):
        np.testing.assert_allclose(ours[key], theirs[key], rtol=1e-5, atol=1e-6, err_msg=key)
    for key in ("cls", "before", "repr", "keys", "params", "flags", "plist", "n"):
        assert ours[key] == theirs[key], key
    assert ours["cls"] == "ParametrizedLinear" and ours["keys"] == ["bias", "parametrizations.weight.original"]
    if chain == "skew_exp":  # orthogonal by construction
        np.testing.assert_allclose(ours["weight"].T @ ours["weight"], np.eye(3), atol=1e-6)


def test_only_the_parametrized_layer_changes_class_and_a_copy_keeps_it():
    classes = _classes(mt)
    a, b = _linear(mt), _linear(mt)
    MP.register_parametrization(a, "weight", classes["Symmetric"]())
    assert type(b) is mt.nn.Linear and isinstance(a, mt.nn.Linear) and type(a) is not mt.nn.Linear
    c = copy.deepcopy(a)
    assert type(c) is type(a) and np.array_equal(_np(c.weight), _np(a.weight))
    assert c.parametrizations.weight.original is not a.parametrizations.weight.original
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        mt.save(a, __import__("io").BytesIO())


def test_cached_computes_each_tensor_once_inside_the_block():
    counts = {}
    for name, (lib, P, _) in LIBS.items():
        calls = []

        class Noisy(lib.nn.Module):
            def forward(self, X):
                calls.append(1)
                return X * 1  # a new tensor at each computation

        layer = _linear(lib)
        P.register_parametrization(layer, "weight", Noisy())
        n0 = len(calls)  # (registration checks the shape once)
        layer.weight + layer.weight
        n1 = len(calls)
        with P.cached():
            same = layer.weight is layer.weight
            with P.cached():  # nested: still the same value
                same = same and layer.weight is layer.weight
        n2 = len(calls)
        with lib.no_grad():
            layer.parametrizations.weight.original.mul_(2)
        with P.cached():  # a new block computes anew: the values the first block kept are gone
            fresh = np.allclose(_np(layer.weight), 2 * W33)
        counts[name] = (n0, n1 - n0, n2 - n1, same, layer.weight is layer.weight, fresh)
    assert counts["mt"] == counts["torch"] == (1, 2, 1, True, False, True)


def test_assignment_goes_through_right_inverse():
    seen = {}
    for name, (lib, P, _) in LIBS.items():
        classes = _classes(lib)
        layer = _linear(lib)
        P.register_parametrization(layer, "weight", classes["Symmetric"]())
        original = layer.parametrizations.weight.original
        X = lib.tensor(W33 + W33.T)
        layer.weight = X
        assert layer.parametrizations.weight.original is original  # the same Parameter, new values
        chained = _linear(lib)
        P.register_parametrization(chained, "weight", classes["Skew"]())
        with pytest.raises(RuntimeError, match="does not implement right_inverse"):
            chained.weight = X
        seen[name] = _np(layer.weight), _np(original), _np(chained.weight)
    for ours, theirs in zip(seen["mt"], seen["torch"]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    np.testing.assert_allclose(seen["mt"][0], W33 + W33.T, rtol=1e-6)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    seen = {}
    for name, (lib, P, _) in LIBS.items():
        classes = _classes(lib)
        layer = _linear(lib)
        P.register_parametrization(layer, "weight", classes["Skew"]())
        P.register_parametrization(layer, "bias", classes["Grow"](), unsafe=True)
        original = layer.parametrizations.weight.original
        assert P.remove_parametrizations(layer, "weight", leave_parametrized=leave) is layer
        still = (type(layer).__name__, P.is_parametrized(layer), list(layer.state_dict()))
        P.remove_parametrizations(layer, "bias")
        assert layer.weight is original  # the Parameter an optimizer holds lives on
        seen[name] = (_np(layer.weight), _np(layer.bias), type(layer).__name__, still, _repr(layer),
                      [n for n, _ in layer.named_parameters()], hasattr(layer, "parametrizations"))
    ours, theirs = seen["mt"], seen["torch"]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    assert ours[2:] == theirs[2:] and ours[2] == "Linear" and ours[3][0] == "ParametrizedLinear"
    np.testing.assert_allclose(ours[0], (np.triu(W33, 1) - np.triu(W33, 1).T) if leave else W33, rtol=1e-6)


def _error_cases(lib, P, PZ):
    classes = _classes(lib)
    nn = lib.nn
    symmetric_twice = _linear(lib)
    P.register_parametrization(symmetric_twice, "weight", classes["Symmetric"]())
    weight_normed = PZ.weight_norm(_linear(lib))
    return {
        "not_a_tensor": lambda: P.register_parametrization(_linear(lib), "foo", classes["Symmetric"]()),
        "shape": lambda: P.register_parametrization(_linear(lib), "weight", classes["Grow"]()),
        "dtype": lambda: P.register_parametrization(_linear(lib), "weight", classes["ToDouble"]()),
        "chained_shape": lambda: P.register_parametrization(symmetric_twice, "weight", classes["Grow"]()),
        "not_parametrized": lambda: P.remove_parametrizations(_linear(lib), "weight"),
        "tuple_left_unparametrized": lambda: P.remove_parametrizations(weight_normed, "weight", False),
        "orthogonal_vector": lambda: PZ.orthogonal(nn.LayerNorm(3)),
        "orthogonal_map": lambda: PZ.orthogonal(_linear(lib), orthogonal_map="qr"),
        "orthogonal_no_name": lambda: PZ.orthogonal(_linear(lib), "nope"),
        "spectral_steps": lambda: PZ.spectral_norm(_linear(lib), n_power_iterations=0),
        "spectral_dim": lambda: PZ.spectral_norm(_linear(lib), dim=2),
    }


def test_errors_are_pytorchs():
    ours, theirs = _error_cases(*LIBS["mt"]), _error_cases(*LIBS["torch"])
    for case in ours:
        with pytest.raises(Exception) as theirs_raised:
            theirs[case]()
        with pytest.raises(type(theirs_raised.value)) as ours_raised:
            ours[case]()
        assert str(ours_raised.value).replace("minitensor", "torch") == str(theirs_raised.value), case


def test_a_failed_registration_changes_nothing():
    class Half(mt.nn.Module):  # right_inverse runs, then the shape check fails
        def forward(self, X):
            return X[:1]

        def right_inverse(self, X):
            return X * 2

    layer = _linear(mt)
    weight = layer.weight
    with pytest.raises(ValueError, match="may not change the shape"):
        MP.register_parametrization(layer, "weight", Half())
    assert type(layer) is mt.nn.Linear and layer.weight is weight and np.array_equal(_np(weight), W33)
    assert list(layer.state_dict()) == ["weight", "bias"]


def test_transfer_and_buffers():
    for lib, P, _ in LIBS.values():
        classes = _classes(lib)
        src, dst = _linear(lib), lib.nn.Linear(3, 3)
        P.register_parametrization(src, "weight", classes["Symmetric"]())
        assert P.transfer_parametrizations_and_params(src, dst) is dst
        assert dst.parametrizations.weight.original is src.parametrizations.weight.original
        assert type(dst).__name__ == "ParametrizedLinear" and np.array_equal(_np(dst.weight), _np(src.weight))
        norm = lib.nn.BatchNorm1d(3)
        P.register_parametrization(norm, "running_var", classes["Grow"](), unsafe=True)
        assert "parametrizations.running_var.original" in norm.state_dict() and norm.running_var.shape == (6,)


# (shape, map, use_trivialization): a tall or wide weight with the trivialization completes its base with random
# columns, so only Q (not its gradient) is PyTorch's there
ORTHO = [(s, m, t) for s in [(3, 3), (4, 2), (2, 4)] for m in [None, "matrix_exp", "cayley", "householder"]
         for t in (True, False) if not (m in ("matrix_exp", "cayley") and s != (3, 3) and not t)]


@pytest.mark.parametrize("shape, omap, triv", ORTHO)
def test_orthogonal_matches_pytorch(shape, omap, triv):
    w = RNG.standard_normal(shape)
    g = RNG.standard_normal(shape)
    seen = {}
    for name, (lib, _, PZ) in LIBS.items():
        layer = _linear(lib, w, "float64")
        assert PZ.orthogonal(layer, orthogonal_map=omap, use_trivialization=triv) is layer
        (layer.weight * lib.tensor(g)).sum().backward()
        plist = layer.parametrizations.weight
        seen[name] = _np(layer.weight), _np(plist.original), _np(plist.original.grad), list(layer.state_dict())
    Q = seen["mt"][0]
    np.testing.assert_allclose(Q.T @ Q if shape[0] >= shape[1] else Q @ Q.T, np.eye(min(shape)), atol=1e-12)
    np.testing.assert_allclose(Q, seen["torch"][0], atol=1e-12)
    np.testing.assert_allclose(seen["mt"][1], seen["torch"][1], atol=1e-12)
    if shape[0] == shape[1] or not triv:
        np.testing.assert_allclose(seen["mt"][2], seen["torch"][2], atol=1e-10)
    assert seen["mt"][3] == seen["torch"][3]


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_matches_pytorch(dim):
    w = RNG.standard_normal((4, 3)).astype(np.float32)
    g = RNG.standard_normal((4, 3)).astype(np.float32)
    seen = {}
    for name, (lib, P, PZ) in LIBS.items():
        layer = PZ.weight_norm(_linear(lib, w), dim=dim)
        (layer.weight * lib.tensor(g)).sum().backward()
        plist = layer.parametrizations.weight
        seen[name] = [_np(layer.weight), _np(plist.original0), _np(plist.original1), _np(plist.original0.grad),
                      _np(plist.original1.grad)], (list(layer.state_dict()), _node(layer.weight))
    for ours, theirs in zip(*(seen[k][0] for k in ("mt", "torch"))):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert seen["mt"][1] == seen["torch"][1]
    assert seen["mt"][1][0] == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]


def test_weight_norm_loads_the_older_keys_and_gradchecks():
    layer = MPZ.weight_norm(_linear(mt))
    old = {"weight_g": mt.tensor([[2.0], [3.0], [1.0]]), "weight_v": mt.tensor(W33 + 2), "bias": mt.zeros(3)}
    layer.load_state_dict(old)
    v = W33 + 2
    np.testing.assert_allclose(_np(layer.weight), v / np.linalg.norm(v, axis=1, keepdims=True) * [[2], [3], [1]],
                               rtol=1e-6)
    layer = MPZ.weight_norm(_linear(mt, dtype="float64"), dim=1)
    plist = layer.parametrizations.weight
    assert mt.autograd.gradcheck(lambda g, v: plist[0](g, v), (plist.original0, plist.original1))
    # (householder's forward takes the integer part of the diagonal: a step, no place for finite differences)
    orth = MPZ.orthogonal(_linear(mt, W33 + 2 * np.eye(3, dtype=np.float32), "float64"), orthogonal_map="cayley")
    assert mt.autograd.gradcheck(orth.parametrizations.weight[0], (orth.parametrizations.weight.original,))


def test_spectral_norm_with_pytorchs_start_vectors():
    w = RNG.standard_normal((4, 3))
    layers = {name: PZ.spectral_norm(_linear(lib, w, "float64")) for name, (lib, _, PZ) in LIBS.items()}
    ours, theirs = (layers[k].parametrizations.weight[0] for k in ("mt", "torch"))
    assert list(layers["mt"].state_dict()) == list(layers["torch"].state_dict())
    with mt.no_grad():
        ours._u.copy_(mt.tensor(theirs._u.numpy()))
        ours._v.copy_(mt.tensor(theirs._v.numpy()))
    for training in (True, True, False):  # each read in training mode is one power step
        for layer in layers.values():
            layer.train(training)
        np.testing.assert_allclose(_np(layers["mt"].weight), _np(layers["torch"].weight), rtol=1e-12)
        np.testing.assert_allclose(_np(ours._u), _np(theirs._u), rtol=1e-12)
    layers["mt"].train()
    for _ in range(10):
        W = _np(layers["mt"].weight)
    assert abs(np.linalg.norm(W, 2) - 1) < 1e-6
