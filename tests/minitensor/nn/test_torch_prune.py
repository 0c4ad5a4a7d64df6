"""torch.nn.utils.prune against PyTorch: one table of pruning programs run on both libraries over the same tiny
modules (a Linear, a Conv1d, a wider Linear), comparing the masks, the parameter / buffer / state_dict names,
the hooks, the forward output and the gradients reaching `weight_orig`, then the same after `remove`. The
deterministic methods must zero the same entries as PyTorch, with distinct magnitudes and with ties (where
PyTorch's choice is its CPU topk's); the random ones, drawing from minitensor's generator, the same number of
entries or channels. Plus the errors, and that a failed call leaves the module as it was.
"""
import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")
pytest.importorskip("torch.nn.utils.prune")  # (PyTorch's is not imported with torch)

RNG = np.random.default_rng(7)
SHAPES = {"lin": ((3, 4), (3,)), "conv": ((3, 2, 2), (3,)), "big": ((8, 16), (8,))}
INPUTS = {"lin": RNG.standard_normal((2, 4)), "conv": RNG.standard_normal((2, 2, 5)),
          "big": RNG.standard_normal((2, 16))}
UPSTREAM = {"lin": RNG.standard_normal((2, 3)), "conv": RNG.standard_normal((2, 3, 4)),
            "big": RNG.standard_normal((2, 8))}


def _weights(kind):
    """(weight, bias) arrays per module: distinct magnitudes, or few values (many ties, zeros among them)."""
    out = {}
    for key, shapes in SHAPES.items():
        arrays = [RNG.uniform(-1, 1, s) for s in shapes]
        if kind == "ties":
            arrays = [np.round(a * 2) / 2 for a in arrays]
        out[key] = [a.astype(np.float32) for a in arrays]
    return out


WEIGHTS = {"distinct": _weights("distinct"), "ties": _weights("ties")}


def _t(L, a):
    return L.tensor(np.array(a))


def _modules(L, kind):
    nn = L.nn
    ms = {"lin": nn.Linear(4, 3), "conv": nn.Conv1d(2, 3, 2), "big": nn.Linear(16, 8)}
    for key, m in ms.items():
        m.weight.data, m.bias.data = (_t(L, a) for a in WEIGHTS[kind][key])
    return ms


def _foobar(L):
    """The Pruning Tutorial's own method: every other entry of the flattened tensor."""
    class FooBarPruningMethod(L.nn.utils.prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask
    return FooBarPruningMethod


def _global(L, ms, **kw):
    P = L.nn.utils.prune
    P.global_unstructured([(ms["lin"], "weight"), (ms["conv"], "weight"), (ms["big"], "bias")],
                          pruning_method=P.L1Unstructured, **kw)


THIRDS = np.arange(128).reshape(8, 16) % 3  # a mask for the wide Linear's weight


# name -> fn(L, prune, modules): a pruning program written once for either library
PROGRAMS = {
    "l1 fraction": lambda L, P, ms: [P.l1_unstructured(m, "weight", amount=0.3) for m in ms.values()],
    "l1 count, bias": lambda L, P, ms: [P.l1_unstructured(m, "bias", amount=2) for m in ms.values()],
    "l1 few (heap path)": lambda L, P, ms: P.l1_unstructured(ms["big"], "weight", amount=2),
    "l1 importance": lambda L, P, ms: P.l1_unstructured(ms["lin"], "weight", amount=5,
                                                        importance_scores=_t(L, np.arange(12.).reshape(3, 4) % 5)),
    "ln 1 dim 0": lambda L, P, ms: [P.ln_structured(m, "weight", amount=1, n=1, dim=0) for m in ms.values()],
    "ln 2 dim -1": lambda L, P, ms: [P.ln_structured(m, "weight", amount=0.5, n=2, dim=-1) for m in ms.values()],
    "ln inf, -inf, fro": lambda L, P, ms: (P.ln_structured(ms["lin"], "weight", 1, n=float("inf"), dim=1),
                                          P.ln_structured(ms["conv"], "weight", 1, n=float("-inf"), dim=0),
                                          P.ln_structured(ms["big"], "weight", 3, n="fro", dim=0)),
    "ln nuc, -1": lambda L, P, ms: (P.ln_structured(ms["conv"], "weight", 1, n="nuc", dim=0),
                                    P.ln_structured(ms["big"], "weight", 2, n=-1, dim=0)),
    "ln importance": lambda L, P, ms: P.ln_structured(ms["lin"], "weight", 2, n=1, dim=1,
                                                      importance_scores=_t(L, np.arange(12.).reshape(3, 4))),
    "identity": lambda L, P, ms: P.identity(ms["lin"], "weight"),
    "custom mask": lambda L, P, ms: P.custom_from_mask(ms["lin"], "bias", mask=_t(L, [0, 1, 0])),
    "iterative": lambda L, P, ms: (P.l1_unstructured(ms["big"], "weight", amount=0.25),
                                   P.ln_structured(ms["big"], "weight", amount=2, n=2, dim=0),
                                   P.l1_unstructured(ms["big"], "weight", amount=10),
                                   P.custom_from_mask(ms["big"], "weight", mask=_t(L, THIRDS)),
                                   P.identity(ms["big"], "weight")),
    "global": lambda L, P, ms: _global(L, ms, amount=0.4),
    "global twice": lambda L, P, ms: (_global(L, ms, amount=6), _global(L, ms, amount=0.5)),
    "global importance": lambda L, P, ms: P.global_unstructured(
        [(ms["lin"], "weight"), (ms["lin"], "bias")], P.L1Unstructured, amount=7,
        importance_scores={(ms["lin"], "weight"): _t(L, np.arange(12.).reshape(3, 4) % 4)}),
    "custom class": lambda L, P, ms: (_foobar(L).apply(ms["lin"], "weight"),
                                      P.l1_unstructured(ms["lin"], "weight", amount=2)),
    "custom class global": lambda L, P, ms: P.global_unstructured([(ms["lin"], "weight"), (ms["big"], "weight")],
                                                                  _foobar(L)),
    "remove, prune again": lambda L, P, ms: (P.l1_unstructured(ms["big"], "weight", amount=0.5),
                                            P.remove(ms["big"], "weight"),
                                            P.l1_unstructured(ms["big"], "weight", amount=70)),
}


def _hooks(m):
    return [(type(h).__name__, [type(x).__name__ for x in h] if type(h).__name__ == "PruningContainer" else None)
            for h in m._forward_pre_hooks.values()]


def _snapshot(L, ms):
    """Everything a user sees of the modules, with the forward outputs and the gradients."""
    snap = {"pruned": [L.nn.utils.prune.is_pruned(m) for m in ms.values()]}
    for key, m in ms.items():
        for p in m.parameters():
            p.grad = None
        y = m(_t(L, INPUTS[key]).float())
        (y * _t(L, UPSTREAM[key]).float()).sum().backward()
        snap[key] = {
            "parameters": [(n, p.detach().numpy()) for n, p in m.named_parameters()],
            "buffers": [(n, b.numpy()) for n, b in m.named_buffers()],
            "state_dict": list(m.state_dict()),
            "hooks": _hooks(m),
            "out": y.detach().numpy(),
            "grads": [(n, p.grad.numpy()) for n, p in m.named_parameters()],
            "attr": [(n, getattr(m, n).detach().numpy(), type(getattr(m, n)).__name__)
                     for n in ("weight", "bias")],
        }
    return snap


def _assert_same(ours, theirs):
    assert ours["pruned"] == theirs["pruned"]
    for key in SHAPES:
        o, t = ours[key], theirs[key]
        for field in ("state_dict", "hooks"):
            assert o[field] == t[field], (key, field)
        for field in ("parameters", "buffers", "grads", "attr"):
            assert [x[0] for x in o[field]] == [x[0] for x in t[field]], (key, field)
            for a, b in zip(o[field], t[field]):
                np.testing.assert_allclose(a[1], b[1], rtol=1e-5, atol=1e-6, err_msg=f"{key} {field} {a[0]}")
                assert a[1].dtype == b[1].dtype, (key, field, a[0])
        np.testing.assert_allclose(o["out"], t["out"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("weights", ["distinct", "ties"])
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_pruning_programs_give_pytorchs_masks_names_hooks_outputs_and_gradients(program, weights):
    snaps = []
    for L in (mt, torch):
        ms = _modules(L, weights)
        PROGRAMS[program](L, L.nn.utils.prune, ms)
        before = _snapshot(L, ms)
        for m in ms.values():  # then make it permanent
            for name in [n[:-len("_orig")] for n, _ in m.named_parameters() if n.endswith("_orig")]:
                assert L.nn.utils.prune.remove(m, name) is m
        snaps.append((before, _snapshot(L, ms)))
    (ours, ours_removed), (theirs, theirs_removed) = snaps
    _assert_same(ours, theirs)
    _assert_same(ours_removed, theirs_removed)
    assert not any(ours_removed["pruned"])


def test_the_random_methods_prune_the_asked_number_of_entries_and_channels():
    mt.manual_seed(0)
    P = mt.nn.utils.prune
    m = _modules(mt, "distinct")["big"]
    P.random_unstructured(m, "weight", amount=0.25)
    assert (m.weight_mask == 0).sum().item() == 32 and (m.weight[m.weight_mask == 0] == 0).all()
    first = m.weight_mask.clone()
    P.random_structured(m, "weight", amount=3, dim=0)  # 3 of the 8 rows still in use, all of each
    rows_gone = (m.weight_mask.sum(dim=1) == 0)
    assert rows_gone.sum().item() == 3 and (m.weight_mask <= first).all()
    P.random_unstructured(m, "weight", amount=10)  # among the entries still kept only
    assert (m.weight_mask == 0).sum().item() == (first * (~rows_gone).float()[:, None] == 0).sum().item() + 10
    assert [type(h).__name__ for h in m._forward_pre_hooks[next(iter(m._forward_pre_hooks))]] == [
        "RandomUnstructured", "RandomStructured", "RandomUnstructured"]
    P.random_unstructured(m, "bias", amount=0.0)
    assert m.bias_mask.tolist() == [1.0] * 8


def test_the_method_objects_as_pytorchs():
    ours, theirs = mt.nn.utils.prune, torch.nn.utils.prune
    w = WEIGHTS["ties"]["lin"][0]
    for lib, P in ((mt, ours), (torch, theirs)):
        pruned = P.L1Unstructured(amount=5).prune(_t(lib, w))
        masked = P.LnStructured(1, n=1, dim=0).prune(_t(lib, w), default_mask=_t(lib, np.ones((3, 4), np.float32)))
        first = P.Identity()
        first._tensor_name = "weight"
        c = P.PruningContainer(first)
        assert len(c) == 1 and type(c[0]).__name__ == "Identity"
        with pytest.raises(TypeError):
            c.add_pruning_method(object())
        other = P.Identity()
        other._tensor_name = "bias"
        with pytest.raises(ValueError):
            c.add_pruning_method(other)
        if lib is mt:
            ours_values = pruned.numpy(), masked.numpy()
    np.testing.assert_array_equal(ours_values[0], pruned.numpy())
    np.testing.assert_array_equal(ours_values[1], masked.numpy())


# name -> (the program that raises, PyTorch's exception type)
ERRORS = {
    "amount < 0": (lambda L, P, ms: P.l1_unstructured(ms["lin"], "weight", amount=-1), ValueError),
    "amount > 1.0": (lambda L, P, ms: P.random_unstructured(ms["lin"], "weight", amount=1.5), ValueError),
    "amount not a number": (lambda L, P, ms: P.l1_unstructured(ms["lin"], "weight", amount="half"), TypeError),
    "amount > size": (lambda L, P, ms: P.l1_unstructured(ms["lin"], "weight", amount=13), ValueError),
    "amount > channels": (lambda L, P, ms: P.ln_structured(ms["lin"], "weight", amount=5, n=1, dim=1), ValueError),
    "not an attribute": (lambda L, P, ms: P.l1_unstructured(ms["lin"], "weights", amount=1), AttributeError),
    "structured on 1-D": (lambda L, P, ms: P.random_structured(ms["lin"], "bias", amount=1, dim=0), ValueError),
    "nuc of a matrix's rows": (lambda L, P, ms: P.ln_structured(ms["lin"], "weight", 1, n="nuc", dim=0), RuntimeError),
    "dim out of range": (lambda L, P, ms: P.ln_structured(ms["lin"], "weight", amount=1, n=2, dim=2), IndexError),
    "scores of another shape": (lambda L, P, ms: P.l1_unstructured(ms["lin"], "weight", 1,
                                                                   importance_scores=_t(L, np.ones(3))),
                                AssertionError),
    "mask of another shape": (lambda L, P, ms: P.custom_from_mask(ms["lin"], "weight", mask=_t(L, np.ones(4))),
                              AssertionError),
    "remove unpruned": (lambda L, P, ms: P.remove(ms["lin"], "weight"), ValueError),
    "global structured": (lambda L, P, ms: P.global_unstructured([(ms["lin"], "weight")], P.RandomStructured,
                                                                 amount=1), TypeError),
    "global scores not a dict": (lambda L, P, ms: P.global_unstructured([(ms["lin"], "weight")], P.L1Unstructured,
                                                                        importance_scores=[1], amount=1), TypeError),
    "pruned, then too much": (lambda L, P, ms: P.l1_unstructured(ms["lin"], "weight", amount=13), ValueError),
    "a buffer": (lambda L, P, ms: P.identity(L.nn.BatchNorm1d(3), "running_mean"), TypeError),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_are_pytorchs_and_leave_the_module_as_it_was(case):
    call, error = ERRORS[case]
    for L in (mt, torch):
        ms = _modules(L, "distinct")
        P = L.nn.utils.prune
        if case == "pruned, then too much":
            P.l1_unstructured(ms["lin"], "weight", amount=3)
        m = ms["lin"]
        before = ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()], _hooks(m), set(vars(m)))
        with pytest.raises(error):
            call(L, P, ms)
        if L is mt:  # (PyTorch itself puts a parameter back last, and drops an earlier hook on the way)
            assert ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()], _hooks(m),
                    set(vars(m))) == before
