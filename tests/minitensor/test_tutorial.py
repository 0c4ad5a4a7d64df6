r"""The classic "Illustrated: Self-Attention" worked example, typed as a learner types it in PyTorch.

Only the import lines differ between the two runs below: `import minitensor as torch` and
`from minitensor.nn.functional import softmax`, or the real PyTorch. The numbers in the
assertions are the ones the tutorial prints (3 inputs of size 4, key/query/value weights 4x3).
"""
import math

import numpy as np
import pytest

from minitensor.testing import assert_close

KEYS = [[0, 1, 1], [4, 4, 0], [2, 3, 1]]
QUERYS = [[1, 0, 2], [2, 2, 2], [2, 1, 3]]
VALUES = [[1, 2, 3], [2, 8, 0], [2, 6, 3]]
SCORES = [[2, 4, 4], [4, 16, 12], [4, 12, 10]]
SOFTMAX_ROW0 = [0.063379, 0.46831, 0.46831]
OUTPUTS_WITH_ROUNDED_SOFTMAX = [[2.0, 7.0, 1.5], [2.0, 8.0, 0.0], [2.0, 7.8, 0.3]]


def illustrated_self_attention(torch, softmax):
    """The tutorial's steps, verbatim in PyTorch style; `torch` and `softmax` come from the caller's imports."""
    # Step 1: prepare inputs
    x = [
        [1, 0, 1, 0],  # Input 1
        [0, 2, 0, 2],  # Input 2
        [1, 1, 1, 1],  # Input 3
    ]
    x = torch.tensor(x, dtype=torch.float32)

    # Step 2: initialise weights
    w_key = [
        [0, 0, 1],
        [1, 1, 0],
        [0, 1, 0],
        [1, 1, 0],
    ]
    w_query = [
        [1, 0, 1],
        [1, 0, 0],
        [0, 0, 1],
        [0, 1, 1],
    ]
    w_value = [
        [0, 2, 0],
        [0, 3, 0],
        [1, 0, 3],
        [1, 1, 0],
    ]
    w_key = torch.tensor(w_key, dtype=torch.float32)
    w_query = torch.tensor(w_query, dtype=torch.float32)
    w_value = torch.tensor(w_value, dtype=torch.float32)

    # Step 3: derive key, query and value
    keys = x @ w_key
    querys = x @ w_query
    values = x @ w_value

    # Step 4: calculate attention scores
    attn_scores = querys @ keys.T

    # Step 5: calculate softmax
    attn_scores_softmax = softmax(attn_scores, dim=-1)
    exact_softmax = attn_scores_softmax

    # For readability, approximate the above as follows
    attn_scores_softmax = [
        [0.0, 0.5, 0.5],
        [0.0, 1.0, 0.0],
        [0.0, 0.9, 0.1],
    ]
    attn_scores_softmax = torch.tensor(attn_scores_softmax)

    # Step 6: multiply scores with values
    weighted_values = values[:, None] * attn_scores_softmax.T[:, :, None]

    # Step 7: sum weighted values
    outputs = weighted_values.sum(dim=0)

    return {
        "keys": keys, "querys": querys, "values": values, "attn_scores": attn_scores,
        "softmax": exact_softmax, "weighted_values": weighted_values, "outputs": outputs,
    }


def _check_tutorial_numbers(steps, to_numpy):
    got = {name: to_numpy(t) for name, t in steps.items()}
    assert got["keys"].tolist() == KEYS
    assert got["querys"].tolist() == QUERYS
    assert got["values"].tolist() == VALUES
    assert got["attn_scores"].tolist() == SCORES
    # to 5 significant digits, as the tutorial prints them
    assert [float(f"{v:.5g}") for v in got["softmax"][0]] == [float(f"{v:.5g}") for v in SOFTMAX_ROW0]
    assert got["weighted_values"].shape == (3, 3, 3)
    assert np.allclose(got["outputs"], OUTPUTS_WITH_ROUNDED_SOFTMAX, rtol=0, atol=1e-6)
    for name, arr in got.items():
        assert arr.dtype == np.float32, f"{name} is {arr.dtype}: the tutorial's float32 must stay float32"


def test_illustrated_self_attention_with_minitensor():
    import minitensor as torch
    from minitensor.nn.functional import softmax

    steps = illustrated_self_attention(torch, softmax)
    _check_tutorial_numbers(steps, lambda t: np.asarray(t.numpy(force=True)))
    assert isinstance(steps["outputs"], torch.Tensor)
    assert steps["outputs"].shape == torch.Size([3, 3])


def test_the_exact_softmax_rows_of_the_tutorial():
    import minitensor as torch
    from minitensor.nn.functional import softmax

    p = illustrated_self_attention(torch, softmax)["softmax"]
    for row, scores in zip(p.numpy(force=True), SCORES):
        e = np.exp(np.array(scores, dtype=np.float64) - max(scores))
        assert_close(row.astype(np.float64), e / e.sum(), rtol=1e-6, atol=1e-7)
    assert_close(p.sum(dim=-1), [1.0, 1.0, 1.0])


def test_backward_through_the_tutorial_matches_finite_differences():
    # the learner's next step: which way should each weight move? check it by finite differences
    import minitensor as torch
    from minitensor.autograd import gradcheck
    from minitensor.nn.functional import softmax

    x = torch.tensor([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], dtype=torch.float64)
    w_key = torch.tensor([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], dtype=torch.float64, requires_grad=True)
    w_query = torch.tensor([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], dtype=torch.float64, requires_grad=True)
    w_value = torch.tensor([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], dtype=torch.float64, requires_grad=True)

    def self_attention(w_key, w_query, w_value):
        keys, querys, values = x @ w_key, x @ w_query, x @ w_value
        attn_scores_softmax = softmax(querys @ keys.T, dim=-1)
        return (values[:, None] * attn_scores_softmax.T[:, :, None]).sum(dim=0)

    outputs = self_attention(w_key, w_query, w_value)
    outputs.backward(torch.ones_like(outputs))
    assert w_value.grad.shape == (4, 3) and w_key.grad.shape == (4, 3)
    # outputs.sum() is linear in w_value: d/dw_value = x^T (column sums of the softmax) broadcast over 3
    p = softmax(x @ w_query.detach() @ (x @ w_key.detach()).T, dim=-1)
    assert_close(w_value.grad, (x.T @ p.sum(dim=0)).unsqueeze(1).expand(4, 3))
    assert gradcheck(self_attention, (w_key, w_query, w_value))


def test_illustrated_self_attention_with_real_torch_gives_identical_numbers():
    torch = pytest.importorskip("torch")
    from torch.nn.functional import softmax as torch_softmax

    import minitensor
    from minitensor.nn.functional import softmax

    theirs = illustrated_self_attention(torch, torch_softmax)
    ours = illustrated_self_attention(minitensor, softmax)
    _check_tutorial_numbers(theirs, lambda t: t.detach().numpy())
    for name in theirs:
        a, b = ours[name].numpy(force=True), theirs[name].detach().numpy()
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert_close(a, b, rtol=1e-6, atol=1e-6, msg=f"step '{name}' differs from PyTorch")
    for name in ("keys", "querys", "values", "attn_scores", "outputs"):
        assert ours[name].tolist() == theirs[name].tolist(), name  # exact: small integers and tenths


def test_the_tutorial_row_softmax_value_is_the_textbook_one():
    # softmax([2, 4, 4])[0] = 1 / (1 + 2 e^2)
    assert f"{1 / (1 + 2 * math.exp(2)):.5g}" == "0.063379"
