"""torch.autograd.graph's GradientEdge, get_gradient_edge (with autograd.grad) and register_multi_grad_hook,
and the switches minitensor accepts and ignores, against PyTorch."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd import graph

A = np.array([0.5, -1.0, 2.0])
B = np.array([1.5, 0.25])
W = np.random.default_rng(0).standard_normal(3)


def _edges(lib):
    """autograd.grad with gradient edges as inputs and as an output, and the edges' fields."""
    g = lib.autograd.graph
    a = lib.tensor(A, requires_grad=True)
    b = a * 2.0
    loss = (b.exp() * lib.tensor(W)).sum()
    ea, eb = g.get_gradient_edge(a), g.get_gradient_edge(b)
    got = [lib.autograd.grad(loss, eb, retain_graph=True), lib.autograd.grad(loss, [ea, eb], retain_graph=True),
           lib.autograd.grad(loss, [a, eb], retain_graph=True),
           lib.autograd.grad([eb], [a], grad_outputs=[lib.tensor(W)], retain_graph=True)]
    second = lib.autograd.grad(loss, [eb], create_graph=True)[0]
    got.append(lib.autograd.grad((second * lib.tensor(W)).sum(), a))
    fields = (type(ea).__name__, ea._fields, type(ea.node).__name__, ea.output_nr, eb.node is b.grad_fn,
              eb.output_nr, eb == g.GradientEdge(b.grad_fn, 0), isinstance(ea, tuple))
    return [[t.detach().numpy() for t in r] for r in got], fields


def test_gradient_edges_in_grad_as_pytorchs():
    ours = _edges(mt)
    torch = pytest.importorskip("torch")
    theirs = _edges(torch)
    assert ours[1] == theirs[1]
    for o, t in zip(ours[0], theirs[0]):
        for x, y in zip(o, t):
            np.testing.assert_allclose(x, y, rtol=1e-12)


def _edge_errors(lib):
    g = lib.autograd.graph
    a = lib.tensor(A, requires_grad=True)
    b, d = a * 2.0, lib.tensor(B, requires_grad=True) * 3.0
    loss = (b * lib.tensor(W)).sum()
    out = []
    for call in (lambda: g.get_gradient_edge(lib.tensor(A)),
                 lambda: lib.autograd.grad([g.get_gradient_edge(b)], [a], retain_graph=True),
                 lambda: lib.autograd.grad(loss, [g.get_gradient_edge(d)], retain_graph=True, materialize_grads=True),
                 lambda: lib.autograd.grad(loss, [g.get_gradient_edge(d)], retain_graph=True, allow_unused=True),
                 lambda: lib.autograd.grad(loss, [g.get_gradient_edge(d)], retain_graph=True)):
        try:
            out.append(call())
        except RuntimeError as e:
            out.append(str(e)[:40])
    return out


def test_gradient_edge_errors_as_pytorchs():
    ours = _edge_errors(mt)
    assert ours[3] == (None,)
    assert ours[4].startswith("grad: The differentiated Tensor")  # (PyTorch's words, after the name)
    torch = pytest.importorskip("torch")
    theirs = _edge_errors(torch)
    assert ours[:4] == theirs[:4] and ("grad: " + theirs[4]).startswith(ours[4])


def _multi(lib):
    reg = lib.autograd.graph.register_multi_grad_hook
    a, b, c = (lib.tensor(v, requires_grad=True) for v in (A, B, B[:1]))
    log = []

    def lists(gs):
        return [None if g is None else g.tolist() for g in gs]
    h = reg((a, b, c), lambda gs: log.append(("all", lists(gs))))
    h2 = reg((a, b), lambda g: log.append(("any", g.tolist())), mode="any")
    w = lib.tensor(W)
    seen = []
    (a * w).sum().backward()
    seen.append(sorted(log)), log.clear()
    ((a * w).sum() + (b * 3).sum()).backward()
    seen.append(len(log)), seen.append(sorted(x for x in log if x[0] == "all")), log.clear()
    (c * 1).sum().backward()
    seen.append(sorted(log)), log.clear()
    x, y = a * 2, b * b
    reg([x, y], lambda gs: log.append(("nonleaf", lists(gs))))
    (x.sum() * y.sum()).backward(retain_graph=True)
    seen.append(sorted(x for x in log if x[0] != "any")), log.clear()
    try:
        lib.autograd.grad(x.sum() * y.sum(), [a], retain_graph=True)
    except RuntimeError as e:
        seen.append(str(e))
    log.clear()
    lib.autograd.grad(x.sum() * y.sum(), [x], retain_graph=True)
    seen.append(log[:]), log.clear()
    h.remove(), h2.remove()
    (a * b[:1]).sum().backward()
    seen.append(log[:])
    for args, kw in [(((a, b), print), dict(mode="some")), (((a, lib.ones(1)), print), {})]:
        try:
            reg(*args, **kw)
        except (ValueError, AssertionError) as e:
            seen.append((type(e).__name__, str(e)))
    return seen


def test_multi_grad_hook_as_pytorchs():
    ours = _multi(mt)
    assert ours[1] == 2 and ours[-3] == []
    torch = pytest.importorskip("torch")
    assert ours == _multi(torch)


def test_the_switches_and_the_budget_as_pytorchs():
    assert graph.set_warn_on_accumulate_grad_stream_mismatch(True) is None
    assert graph.set_override_stale_capture_stream(False) is None
    torch = pytest.importorskip("torch")
    for budget in (True, "x", 1.5, 0.5):
        errors = []
        for lib in (graph, torch.autograd.graph):
            with pytest.raises((TypeError, ValueError, RuntimeError)) as info:
                lib.region_activation_memory_budget(budget)
            errors.append((info.type, str(info.value)))
        assert errors[0] == errors[1]
