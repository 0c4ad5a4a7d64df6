"""torch.nn.grad (minitensor/nn/grad.py): a convolution's input and weight gradients from its output's,
compared with PyTorch in float64: values over strides, padding, dilation and groups, the graph they
keep to the weight (or input) and the output gradient, and the error for a mismatched output gradient."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.grad as mgrad

torch = pytest.importorskip("torch")
import torch.nn.grad as tgrad  # noqa: E402

CASES = [  # (dims, N, C_in, C_out, spatial size, kernel, stride, padding, dilation, groups)
    (1, 2, 3, 4, 9, 3, 1, 0, 1, 1),
    (1, 1, 4, 2, 11, 2, 2, 1, 2, 2),
    (2, 2, 3, 5, 7, 3, 1, 0, 1, 1),
    (2, 1, 4, 4, 8, 3, 2, 1, 1, 2),
    (2, 2, 2, 3, 9, 2, (2, 1), (1, 0), (1, 2), 1),
    (3, 1, 2, 3, 5, 2, 1, 1, 1, 1),
]


def arrays(case, seed):
    dims, n, cin, cout, size, k, stride, padding, dilation, groups = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, cin) + (size,) * dims)
    w = rng.standard_normal((cout, cin // groups) + (k,) * dims)
    conv = getattr(torch.nn.functional, f"conv{dims}d")
    y = conv(torch.from_numpy(x), torch.from_numpy(w), None, stride, padding, dilation, groups)
    g = rng.standard_normal(tuple(y.shape))
    return x, w, g


@pytest.mark.parametrize("case", CASES)
def test_input_and_weight_gradients_are_pytorchs(case):
    dims, *_, stride, padding, dilation, groups = case
    x, w, g = arrays(case, 0)
    opts = (stride, padding, dilation, groups)
    name = f"conv{dims}d"
    ours_in = getattr(mgrad, name + "_input")(x.shape, mt.tensor(w), mt.tensor(g), *opts)
    theirs_in = getattr(tgrad, name + "_input")(x.shape, torch.from_numpy(w), torch.from_numpy(g), *opts)
    np.testing.assert_allclose(ours_in.numpy(), theirs_in.numpy(), rtol=1e-10, atol=1e-12)
    ours_w = getattr(mgrad, name + "_weight")(mt.tensor(x), w.shape, mt.tensor(g), *opts)
    theirs_w = getattr(tgrad, name + "_weight")(torch.from_numpy(x), w.shape, torch.from_numpy(g), *opts)
    np.testing.assert_allclose(ours_w.numpy(), theirs_w.numpy(), rtol=1e-10, atol=1e-12)
    assert ours_in.dtype == mt.float64 and not ours_in.requires_grad and ours_in.grad_fn is None


def test_the_results_are_differentiable_in_the_weight_input_and_output_gradient():
    case = CASES[3]
    x, w, g = arrays(case, 1)
    r = np.random.default_rng(2)
    ri, rw = r.standard_normal(x.shape), r.standard_normal(w.shape)  # (a random weight on each result)
    opts = case[6:]
    got = []
    for mod, make in ((mgrad, mt.tensor), (tgrad, torch.tensor)):
        wt, gt, xt = (make(a).requires_grad_() for a in (w, g, x))
        gi = mod.conv2d_input(x.shape, wt, gt, *opts)
        gw = mod.conv2d_weight(xt, w.shape, gt, *opts)
        ((gi * make(ri)).sum() + (gw * make(rw)).sum()).backward()
        got.append([t.grad.numpy() for t in (wt, gt, xt)])
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_a_mismatched_output_gradient_is_pytorchs_error():
    x = np.ones((1, 2, 5, 5))
    w = np.ones((3, 2, 3, 3))
    g = np.ones((1, 3, 2, 2))
    with pytest.raises(RuntimeError) as theirs:
        tgrad.conv2d_input(x.shape, torch.from_numpy(w), torch.from_numpy(g))
    with pytest.raises(RuntimeError) as ours:
        mgrad.conv2d_input(x.shape, mt.tensor(w), mt.tensor(g))
    assert str(ours.value) == str(theirs.value)
    assert sorted(mgrad.__all__) == sorted(n for n in dir(tgrad) if n.startswith("conv"))
