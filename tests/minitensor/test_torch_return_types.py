"""The (values, indices)-style results print as PyTorch's `torch.return_types.NAME(` with one field a line,
under the runner's naming: a tutorial's `print(q.max(1))` or `print(torch.topk(x, 2))` shows the same text."""
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow

A = [[2.0, 1.0, 4.0], [1.0, 3.0, 0.5]]
SQUARE = [[2.0, 1.0], [1.0, 3.0]]
CASES = {
    "max": lambda t: t.tensor(A, requires_grad=True).max(1),  # a grad_fn inside the field's repr
    "min": lambda t: t.min(t.tensor(A), 0, keepdim=True),
    "sort": lambda t: t.sort(t.tensor(A), descending=True),
    "topk": lambda t: t.topk(t.tensor(A), 2),
    "kthvalue": lambda t: t.kthvalue(t.tensor(A), 2),
    "median": lambda t: t.median(t.tensor(A), 1),
    "nanmedian": lambda t: t.nanmedian(t.tensor(A), 1),
    "mode": lambda t: t.mode(t.tensor([[1, 1, 2], [3, 2, 2]]), 1),
    "cummax": lambda t: t.cummax(t.tensor(A), 1),
    "cummin": lambda t: t.cummin(t.tensor(A, dtype=t.float64), 1),
    "aminmax": lambda t: t.aminmax(t.tensor(A)),
    "histogram": lambda t: t.histogram(t.tensor([1.0, 2.0, 2.5]), 2),
    "frexp": lambda t: t.frexp(t.tensor([1.0, 6.0])),
    "slogdet": lambda t: t.slogdet(t.tensor(SQUARE)),
    "svd": lambda t: t.svd(t.tensor(SQUARE)),
    "linalg.inv_ex": lambda t: t.linalg.inv_ex(t.tensor(SQUARE)),
    "linalg.cholesky_ex": lambda t: t.linalg.cholesky_ex(t.tensor(SQUARE)),
    "linalg.solve_ex": lambda t: t.linalg.solve_ex(t.tensor(SQUARE), t.tensor(SQUARE)),
    "linalg.lu": lambda t: t.linalg.lu(t.tensor(SQUARE)),
    "lu_unpack": lambda t: t.lu_unpack(*t.linalg.lu_factor(t.tensor(SQUARE))),
    "qr": lambda t: t.tensor(SQUARE).qr(),  # (the method: torch.qr itself warns that it is deprecated)
    "Tensor.slogdet": lambda t: t.tensor(SQUARE).slogdet(),
    # torch.linalg's own names: linalg_slogdet, not slogdet
    "linalg.slogdet": lambda t: t.linalg.slogdet(t.tensor(SQUARE)),
    "linalg.qr": lambda t: t.linalg.qr(t.tensor(SQUARE)),
    "linalg.svd": lambda t: t.linalg.svd(t.tensor(SQUARE)),
    "linalg.eigh": lambda t: t.linalg.eigh(t.tensor(SQUARE)),
    "linalg.lu_factor": lambda t: t.linalg.lu_factor(t.tensor(SQUARE)),
    "linalg.lu_factor_ex": lambda t: t.linalg.lu_factor_ex(t.tensor(SQUARE)),
}


@pytest.mark.parametrize("name", CASES)
def test_results_print_as_pytorchs_return_types(name, as_torch):
    ours, theirs = CASES[name](mt), CASES[name](torch)
    assert repr(ours) == repr(theirs) and str(ours) == str(theirs)
    assert type(ours).__name__ == type(theirs).__name__ and all(hasattr(theirs, f) for f in ours._fields)


def test_outside_the_runner_the_library_is_minitensor():
    r = mt.tensor([1.0, 3.0]).max(0)
    assert repr(r) == "minitensor.return_types.max(\nvalues=tensor(3.),\nindices=tensor(1))"
    values, indices = r  # still a tuple
    assert r._replace(indices=None).values is values
