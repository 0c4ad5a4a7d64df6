"""What the Spatial Transformer tutorial met: a 2-d/3-d pool's output is a tensor of its own (an in-place
ReLU after it works), and affine_grid's base grid is PyTorch's to the last bit."""
import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as F

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("pool", ["max_pool2d", "max_pool3d", "adaptive_max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("batched", [True, False])
def test_an_inplace_relu_after_a_pool_matches_pytorch(pool, batched):
    nd = 3 if pool.endswith("3d") else 2
    shape = ((2,) if batched else ()) + (3,) + (4,) * nd
    x = np.cos(np.arange(np.prod(shape)) * 0.37).reshape(shape)
    w = np.sin(np.arange(np.prod(shape)) * 0.11).reshape(shape)[(Ellipsis,) + (slice(0, 2),) * nd]
    arg = 2
    ours_in, theirs_in = mt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours = getattr(F, pool)(ours_in * 1, arg)
    theirs = getattr(torch.nn.functional, pool)(theirs_in * 1, arg)
    assert ours._base is None
    ours = F.relu_(ours)
    theirs = torch.nn.functional.relu_(theirs)
    (ours * mt.tensor(w)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())
    np.testing.assert_allclose(ours_in.grad.numpy(), theirs_in.grad.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", [(1, 1, 28, 28), (2, 1, 7, 29), (1, 1, 3, 5, 13)])
def test_affine_grid_is_pytorchs_to_the_bit(dtype, align, size):
    nd = len(size) - 2
    theta = np.cos(np.arange(size[0] * nd * (nd + 1)) * 0.9).reshape(size[0], nd, nd + 1)
    ours = F.affine_grid(mt.tensor(theta, dtype=getattr(mt, dtype)), size, align_corners=align)
    theirs = torch.nn.functional.affine_grid(torch.tensor(theta, dtype=getattr(torch, dtype)), size,
                                             align_corners=align)
    identity = np.concatenate([np.eye(nd), np.zeros((nd, 1))], 1)[None].repeat(size[0], 0)
    base = F.affine_grid(mt.tensor(identity, dtype=getattr(mt, dtype)), size, align_corners=align)
    base_t = torch.nn.functional.affine_grid(torch.tensor(identity, dtype=getattr(torch, dtype)), size,
                                             align_corners=align)
    np.testing.assert_array_equal(base.numpy(), base_t.numpy())
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6 if dtype == "float32" else 1e-13)
