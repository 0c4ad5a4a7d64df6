"""grad_fn names as PyTorch prints them (`tensor(..., grad_fn=<MseLossBackward0>)`), where a tutorial prints
them: indexing named by its key, Sum/Mean by their overload, and composite ops by PyTorch's one node."""
import pytest

import minitensor as mt
import minitensor.nn.functional as mF

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark = pytest.mark.slow


def _x(lib):
    return lib.linspace(-1, 1, 12).reshape(3, 4).requires_grad_()


CASES = {  # name: f(lib, F, x) -> a tensor made from x
    "select": lambda lib, F, x: x[0], "select_last": lambda lib, F, x: x[0:2, 1],
    "slice": lambda lib, F, x: x[:2], "slice_then_full": lambda lib, F, x: x[1:, :],
    "full_then_select": lambda lib, F, x: x[:, 1], "ellipsis_select": lambda lib, F, x: x[..., -1],
    "unsqueeze_key": lambda lib, F, x: x[0, None], "alias": lambda lib, F, x: x[0:3, 0:4],
    "int_tensor_key": lambda lib, F, x: x[lib.tensor([2, 0])], "list_key": lambda lib, F, x: x[[1, 1]],
    "mask_key": lambda lib, F, x: x[x > 0], "0d_index_key": lambda lib, F, x: x[lib.tensor(1)],
    "narrow": lambda lib, F, x: x.narrow(1, 0, 2),
    "sum": lambda lib, F, x: x.sum(), "sum_dim": lambda lib, F, x: x.sum(1), "mean": lambda lib, F, x: x.mean(),
    "mean_keepdim": lambda lib, F, x: x.mean(0, keepdim=True),
    "mse_loss": lambda lib, F, x: F.mse_loss(x, x.detach() * 0.5),
    "mse_loss_none": lambda lib, F, x: F.mse_loss(x, x.detach() * 0.5, reduction="none"),
    "bce_with_logits": lambda lib, F, x: F.binary_cross_entropy_with_logits(x, (x > 0).float()),
    "bce": lambda lib, F, x: F.binary_cross_entropy(lib.sigmoid(x), (x > 0).float(), reduction="sum"),
    "nll_loss": lambda lib, F, x: F.nll_loss(x, lib.tensor([0, 3, 1])),
    "nll_loss_none": lambda lib, F, x: F.nll_loss(x, lib.tensor([0, 3, 1]), reduction="none"),
    "smooth_l1": lambda lib, F, x: F.smooth_l1_loss(x, x.detach().flip(0)),
    "huber": lambda lib, F, x: F.huber_loss(x, x.detach().flip(0), delta=0.5),
    "stack": lambda lib, F, x: lib.stack([x, x], 1), "unsqueeze": lambda lib, F, x: x.unsqueeze(-1),
    "t": lambda lib, F, x: x.t(), "transpose": lambda lib, F, x: lib.transpose(x, 0, 1),
}


@pytest.mark.parametrize("case", CASES)
def test_grad_fn_prints_as_pytorchs(case):
    ours, theirs = CASES[case](mt, mF, _x(mt)), CASES[case](torch, F, _x(torch))
    assert repr(ours).split("grad_fn=")[1] == repr(theirs).split("grad_fn=")[1]
    assert repr(ours.grad_fn).split(" object at ")[0] == repr(theirs.grad_fn).split(" object at ")[0]


def test_a_composites_name_outlives_its_backward_and_explain_keeps_its_steps():
    x = _x(mt)
    loss = mF.mse_loss(x, x.detach() * 0.5)
    loss.backward()  # frees what the node kept for backward, not its name
    assert repr(loss.grad_fn).startswith("<MseLossBackward0 object at ") and loss.grad_fn.name() == "MeanBackward"
    assert repr(x[1:, :2].grad_fn).startswith("<SliceBackward0 ")
