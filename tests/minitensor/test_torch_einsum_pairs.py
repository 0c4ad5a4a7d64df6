"""einsum's matrix-product path (issue 33) against PyTorch's einsum: values, dtypes and both gradients on
attention-shaped equations, and the equations that keep the product-and-sum path (a letter of size 1
broadcasting, integers, two float dtypes) still agreeing. Finite differences: the op table's
`einsum_pair` row (tests/minitensor/test_ops.py)."""
import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

# equation, shapes; tiny sizes, each letter a size of its own so that a wrong transpose shows
PAIRS = [
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),
    ("bqhd,bkhd->bhqk", [(2, 4, 3, 5), (2, 6, 3, 5)]),
    ("bhqd,qkd->bhqk", [(2, 3, 4, 5), (4, 6, 5)]),
    ("btd,de->bte", [(2, 4, 5), (5, 3)]),
    ("bi,ij,bj->b", [(2, 3), (3, 4), (2, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ijk,k->", [(2, 3, 4), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("ii,ij->j", [(3, 3), (3, 4)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("equation, shapes", PAIRS, ids=[p[0] for p in PAIRS])
def test_einsum_pair_matches_pytorch(equation, shapes, dtype):
    rng = np.random.default_rng(len(equation))
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    weight = rng.standard_normal(np.einsum(equation, *arrays).shape).astype(dtype)
    ours = [mt.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, want = mt.einsum(equation, *ours), torch.einsum(equation, *theirs)
    assert out.grad_fn is not None and out.grad_fn.name() == "EinsumBackward"  # the matrix-product path ran
    assert str(out.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(out.detach().numpy(), want.detach().numpy(), **tol)
    out.backward(mt.tensor(weight))
    want.backward(torch.tensor(weight))
    for x, t in zip(ours, theirs):
        assert x.grad.dtype == x.dtype
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), **tol)


# the product-and-sum path: a letter of size 1 against a longer one, integers, one operand
FALLBACK = [
    ("ij,jk->ik", [(2, 1), (3, 4)], "float64"),
    ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)], "float64"),
    ("ij,jk->ik", [(2, 3), (3, 4)], "int32"),
    ("ij->j", [(2, 3)], "float64"),
]


@pytest.mark.parametrize("equation, shapes, dtype", FALLBACK, ids=[f"{e}-{d}-{s}" for e, s, d in FALLBACK])
def test_einsum_other_paths_match_pytorch(equation, shapes, dtype):
    rng = np.random.default_rng(1)
    arrays = [(rng.standard_normal(s) * 4).astype(dtype) for s in shapes]
    out = mt.einsum(equation, *[mt.tensor(a) for a in arrays])
    want = torch.einsum(equation, *[torch.tensor(a) for a in arrays])
    assert out.grad_fn is None or out.grad_fn.name() != "EinsumBackward"
    assert str(out.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)


def test_einsum_pair_double_backward():
    """Each VJP is an Einsum node again, so a gradient of a gradient flows (create_graph)."""
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    x, y = mt.tensor(a, requires_grad=True), mt.tensor(b, requires_grad=True)
    tx, ty = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (gx,) = mt.autograd.grad(mt.einsum("btd,de->bte", x, y).square().sum(), [x], create_graph=True)
    (tgx,) = torch.autograd.grad(torch.einsum("btd,de->bte", tx, ty).square().sum(), [tx], create_graph=True)
    gx.sum().backward()
    tgx.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-12)
