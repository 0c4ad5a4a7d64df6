"""Issue 29 point 2: calls spelled as PyTorch's signatures allow (keyword-only markers, names, defaults,
the factories' layout=/pin_memory=/memory_format=/out=) run in minitensor and PyTorch alike, and the
calls PyTorch refuses (a dtype passed by position, an old parameter name) are refused by both."""
import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

X = [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]]


def x(lib):
    return lib.tensor(X)


# (id, call(lib) -> result); the same call is made on minitensor and on torch
CALLS = [
    ("sum-dtype-kw", lambda t: x(t).sum(0, False, dtype=t.float64)),
    ("sum-dtype-pos", lambda t: x(t).sum(0, False, t.float64)),
    ("mean-dtype-pos", lambda t: t.mean(x(t), 0, False, t.float64)),
    ("cumsum-dtype-pos", lambda t: t.cumsum(x(t), 0, t.float64)),
    ("sort-stable-kw", lambda t: t.sort(x(t), dim=1, descending=True, stable=True).values),
    ("sort-stable-pos", lambda t: t.sort(x(t), 1, True, True)),
    ("argsort-out", lambda t: t.argsort(x(t), stable=True, dim=1, out=t.empty(0, dtype=t.int64))),
    ("nonzero-as-tuple-pos", lambda t: t.nonzero(x(t), True)),
    ("add-alpha-pos", lambda t: t.add(x(t), x(t), 2)),
    ("add-alpha-kw", lambda t: x(t).add(x(t), alpha=2)),
    ("std-unbiased-pos", lambda t: t.std(x(t), 1, False)),
    ("std-correction", lambda t: x(t).var(1, correction=0)),
    ("std-both", lambda t: t.std(x(t), 1, unbiased=False, correction=0)),
    ("nan-to-num-default", lambda t: t.nan_to_num(t.tensor([float("nan"), float("inf"), 1.0]))),
    ("roll-flat", lambda t: t.roll(x(t), 1)),
    ("trapezoid-dx", lambda t: t.trapezoid(x(t), dx=2.0)),
    ("softmax-stacklevel", lambda t: t.softmax(x(t), 1, _stacklevel=5)),
    ("swapaxes-axis", lambda t: t.swapaxes(x(t), axis0=0, axis1=1)),
    ("swapaxes-dim", lambda t: t.swapaxes(x(t), dim0=0, dim1=1)),
    ("tensor-split-sections", lambda t: t.tensor_split(x(t), sections=2, dim=1)),
    ("tensor-split-old-name", lambda t: t.tensor_split(x(t), indices_or_sections=2)),
    ("hsplit-indices", lambda t: t.hsplit(x(t), indices=[1])),
    ("dot-tensor", lambda t: t.dot(x(t)[0], tensor=x(t)[1])),
    ("det-input", lambda t: t.det(input=x(t)[:, :2])),
    ("where-other", lambda t: x(t).where(x(t) > 0, other=x(t) * 0)),
    ("where-y", lambda t: x(t).where(x(t) > 0, y=x(t) * 0)),
    ("broadcast-to-size", lambda t: t.broadcast_to(x(t)[0], size=(2, 3))),
    ("uniform-to", lambda t: x(t).uniform_(1.0, to=1.0)),
    ("uniform-generator-pos", lambda t: x(t).uniform_(1.0, 1.0, None)),
    ("multinomial-gen-pos", lambda t: t.multinomial(x(t).abs(), 1, False, None)),
    ("zeros-layout", lambda t: t.zeros(2, 3, layout=t.strided, pin_memory=False)),
    ("zeros-pin-memory", lambda t: t.zeros(2, pin_memory=True)),
    ("zeros-layout-str", lambda t: t.zeros(2, layout="strided")),
    ("zeros-out-dtype", lambda t: t.zeros(2, 3, out=t.empty(0, dtype=t.int64))),
    ("arange-out", lambda t: t.arange(4, out=t.empty(4))),
    ("arange-dtype-pos", lambda t: t.arange(0, 4, 1, t.float64)),
    ("eye-dtype-pos", lambda t: t.eye(2, 2, t.float64)),
    ("full-dtype-pos", lambda t: t.full((2,), 3, t.float64)),
    ("ones-like-memory-format", lambda t: t.ones_like(x(t), memory_format=t.preserve_format)),
    ("zeros-like-dtype-pos", lambda t: t.zeros_like(x(t), t.float64)),
    ("new-zeros-size", lambda t: x(t).new_zeros(size=(2,))),
    ("new-full-dtype-pos", lambda t: x(t).new_full((2,), 1.0, t.float64)),
    ("linspace-out", lambda t: t.linspace(0, 1, 3, out=t.empty(0, dtype=t.float64))),
    ("tril-indices-pin", lambda t: t.tril_indices(3, 3, pin_memory=False)),
    ("qr-out", lambda t: t.qr(x(t)[:, :2], out=(t.empty(0), t.empty(0)))[1].abs()),
    ("split-tensor-kw", lambda t: t.split(tensor=x(t), split_size_or_sections=1)[0]),
    ("method-split-size-kw", lambda t: x(t).split(split_size=2, dim=1)[1]),
    ("method-split-old-kw", lambda t: x(t).split(split_size_or_sections=2)),
    ("reshape-shape-kw", lambda t: t.reshape(x(t), shape=(3, 2))),
    ("permute-dims-kw", lambda t: x(t).permute(dims=(1, 0))),
    ("repeat-repeats-kw", lambda t: x(t).repeat(repeats=(1, 2))),
    ("expand-size-kw", lambda t: x(t)[0].expand(size=(2, 3))),
    ("true-divide-rounding", lambda t: t.true_divide(x(t), 2, rounding_mode="floor")),
    ("true-divide-out", lambda t: t.true_divide(x(t), 2, out=t.empty(0))),
    ("hardshrink-out", lambda t: t.hardshrink(x(t), 1.0, out=t.empty(0))),
    ("clone-memory-format", lambda t: t.clone(x(t), memory_format=t.contiguous_format)),
    ("copy-other-kw", lambda t: x(t).copy_(other=x(t) * 2)),
    ("copy-src-kw", lambda t: x(t).copy_(src=x(t) * 2)),
    ("set-num-threads-kw", lambda t: t.set_num_threads(num=1)),
    ("backward-grad-variables", lambda t: t.autograd.backward(x(t), grad_variables=x(t))),
]


def _run(call, lib):
    try:
        return "ok", call(lib)
    except Exception as e:  # noqa: BLE001 - the error's type is what is compared
        return type(e).__name__, None


def _values(r):
    if isinstance(r, (tuple, list)):
        return [_values(v) for v in r]
    if hasattr(r, "detach"):
        return np.asarray(r.detach().numpy())
    return r


@pytest.mark.parametrize("call", [c for _, c in CALLS], ids=[i for i, _ in CALLS])
def test_a_call_runs_or_fails_as_in_pytorch(call):
    kind_t, out_t = _run(call, torch)
    kind_m, out_m = _run(call, mt)
    assert kind_m == kind_t, f"PyTorch: {kind_t}, minitensor: {kind_m}"
    if kind_t == "ok" and not isinstance(out_t, torch.Tensor) or kind_t != "ok":
        return
    got, want = _values(out_m), _values(out_t)
    assert str(out_m.dtype).split(".")[-1] == str(out_t.dtype).split(".")[-1]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
