"""torch.nn.utils.stateless.functional_call against PyTorch: its FutureWarning, the module run with substituted
parameters and buffers (values, gradients into the substitutes in float64 under a random upstream weight, the
module's own tensors left alone), args/kwargs forms, strict and tie_weights. Skipped where PyTorch is absent."""
import warnings

import numpy as np
import pytest

import minitensor as mt
from minitensor import run as runner
from minitensor.nn.utils import stateless

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)


def _lib(name):
    return mt if name == "mt" else torch


class _Net:
    """A Linear -> BatchNorm1d model with the given weights, built in either library."""

    @staticmethod
    def build(lib):
        net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)).double().eval()
        return net


def _call(lib, params, x, **kw):
    net = _Net.build(lib)
    subs = {k: lib.tensor(v, requires_grad="running" not in k) for k, v in params.items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = lib.nn.utils.stateless.functional_call(net, subs, **kw) if "args" in kw else \
            lib.nn.utils.stateless.functional_call(net, subs, lib.tensor(x))
    return net, subs, out, [(w.category, str(w.message)) for w in caught]


def test_values_gradients_and_warning_match_pytorch():
    params = {"0.weight": RNG.normal(size=(4, 3)), "0.bias": RNG.normal(size=4),
              "1.running_mean": RNG.normal(size=4), "1.running_var": RNG.uniform(0.5, 2, 4)}
    x, w = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 4))
    res = {}
    for name in ("mt", "torch"):
        lib = _lib(name)
        net, subs, out, warned = _call(lib, params, x)
        (out * lib.tensor(w)).sum().backward()
        res[name] = (out.detach().numpy(), {k: v.grad.numpy() for k, v in subs.items() if v.requires_grad}, warned,
                     {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}, net[0].weight.grad)
    mo, mg, mw, ms, mgrad = res["mt"]
    to, tg, tw, ts, tgrad = res["torch"]
    np.testing.assert_allclose(mo, to, rtol=1e-12, atol=1e-12)
    assert mg.keys() == tg.keys()
    for k in mg:
        np.testing.assert_allclose(mg[k], tg[k], rtol=1e-12, atol=1e-12, err_msg=k)
    assert mw == tw and mw and mw[0][0] is FutureWarning
    assert mgrad is None and tgrad is None  # the module's own parameters take no part
    assert not np.allclose(ms["0.weight"], params["0.weight"])  # and keep their values


@pytest.mark.parametrize("form", ["tuple", "tensor", "kwargs"])
def test_args_and_kwargs_forms(form):
    x = RNG.normal(size=(2, 3))
    outs = []
    for lib in (mt, torch):
        lin = lib.nn.Linear(3, 2).double()
        p = {"weight": lib.tensor(np.arange(6.0).reshape(2, 3)), "bias": lib.tensor([1.0, -1.0]).double()}
        xs = lib.tensor(x)
        call = {"tuple": lambda: lib.nn.utils.stateless.functional_call(lin, p, (xs,)),
                "tensor": lambda: lib.nn.utils.stateless.functional_call(lin, p, xs),
                "kwargs": lambda: lib.nn.utils.stateless.functional_call(lin, p, (), {"input": xs})}[form]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            outs.append(call().detach().numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-13)


def test_strict_refuses_missing_keys_as_pytorch():
    errors = []
    for lib in (mt, torch):
        lin = lib.nn.Linear(3, 2)
        with warnings.catch_warnings(), pytest.raises(Exception) as info:
            warnings.simplefilter("ignore", FutureWarning)
            lib.nn.utils.stateless.functional_call(lin, {"weight": lib.zeros(2, 3)}, (lib.ones(1, 3),), strict=True)
        errors.append(type(info.value))
    assert errors[0] is errors[1] is RuntimeError


def test_tied_weights_follow_the_substitute():
    outs = []
    for lib in (mt, torch):
        emb = lib.nn.Embedding(4, 2)
        head = lib.nn.Linear(2, 4, bias=False)
        head.weight = emb.weight  # tied
        net = lib.nn.Sequential(emb, head)
        new = lib.tensor(np.arange(8.0).reshape(4, 2)).float()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            outs.append(lib.nn.utils.stateless.functional_call(net, {"0.weight": new}, (lib.tensor([1, 3]),))
                        .detach().numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)


def test_namespace_and_runner():
    assert stateless.__all__ == torch.nn.utils.stateless.__all__
    assert mt.nn.utils.stateless is stateless
    with runner.torch_is_minitensor():
        import torch as shadow  # noqa: F811  (minitensor, under the runner)

        assert shadow.nn.utils.stateless.functional_call is stateless.functional_call
