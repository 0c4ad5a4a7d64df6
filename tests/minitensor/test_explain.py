"""autograd.explain: one row per node in backward order, with formulas, norms and broadcasting notes."""
import numpy as np
import pytest

import minitensor as torch
from minitensor.autograd import Function, explain


def _norm(a):
    return float(np.linalg.norm(np.asarray(a, dtype=np.float64).ravel()))


@pytest.fixture
def graph():
    """loss = sum(tanh(x * w + b) * u): x (2, 3), w and b (3,) broadcast over x's rows."""
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    w = torch.tensor(rng.standard_normal(3), requires_grad=True)
    b = torch.tensor(rng.standard_normal(3), requires_grad=True)
    u = torch.tensor(rng.standard_normal((2, 3)))  # random upstream weights: not a plain sum
    xw = x * w
    pre = xw + b
    y = pre.tanh()
    loss = (y * u).sum()
    return dict(x=x, w=w, b=b, u=u, xw=xw, pre=pre, y=y, loss=loss)


def test_rows_follow_backward_order_with_names_shapes_and_formulas(graph):
    report = explain(graph["loss"], names=graph)
    assert [r.op for r in report.rows] == ["SumBackward", "MulBackward", "TanhBackward", "AddBackward", "MulBackward"]
    assert [r.step for r in report.rows] == [1, 2, 3, 4, 5]
    assert [r.output_shape for r in report.rows] == [(), (2, 3), (2, 3), (2, 3), (2, 3)]
    assert [r.output_name for r in report.rows] == ["loss", "", "y", "pre", "xw"]
    assert [r.input_shapes for r in report.rows] == [[(2, 3)], [(2, 3)], [(2, 3)], [(2, 3), (3,)], [(2, 3), (3,)]]
    tanh, add, mul = report.rows[2], report.rows[3], report.rows[4]
    assert "tanh" in tanh.forward and "1 - out^2" in tanh.vjp
    assert "a + b" in add.forward and "unbroadcast(g, b.shape)" in add.vjp
    assert "g * b" in mul.vjp and "g * a" in mul.vjp
    assert [i.source for i in add.inputs] == ["#5 MulBackward 'xw'", "leaf 'b'"]
    assert [i.source for i in mul.inputs] == ["leaf 'x'", "leaf 'w'"]


def test_norms_equal_the_actual_gradients(graph):
    g = graph
    report = explain(g["loss"], names=g)
    for name in ("y", "pre", "xw"):
        g[name].retain_grad()
    g["loss"].backward()
    by_name = {r.output_name: r for r in report.rows}
    for name in ("y", "pre", "xw"):
        assert by_name[name].grad_norm == pytest.approx(_norm(g[name].grad.numpy(force=True)), rel=1e-12)
    assert report.rows[0].grad_norm == 1.0
    add, mul = by_name["pre"], by_name["xw"]
    assert add.inputs[1].grad_norm == pytest.approx(_norm(g["b"].grad.numpy(force=True)), rel=1e-12)
    assert mul.inputs[0].grad_norm == pytest.approx(_norm(g["x"].grad.numpy(force=True)), rel=1e-12)
    assert mul.inputs[1].grad_norm == pytest.approx(_norm(g["w"].grad.numpy(force=True)), rel=1e-12)
    leaves = {lf.name: lf for lf in report.leaves}
    assert set(leaves) == {"x", "w", "b"}
    for name in ("x", "w", "b"):
        np.testing.assert_allclose(leaves[name].grad, g[name].grad.numpy(force=True), rtol=1e-12)
        assert leaves[name].grad_norm == pytest.approx(_norm(g[name].grad.numpy(force=True)), rel=1e-12)


def test_broadcasting_notes_say_which_dims_were_summed(graph):
    report = explain(graph["loss"], names=graph)
    add, mul = report.rows[3], report.rows[4]
    assert [i.summed_dims for i in add.inputs] == [(), (0,)]
    assert add.broadcast_notes == ["input 1 has shape (3,): its gradient is g summed over dim 0 of (2, 3)"]
    assert [i.summed_dims for i in mul.inputs] == [(), (0,)]
    assert all(not r.broadcast_notes for r in report.rows[:3])  # a reduction is not "broadcasting"


def test_size_one_dims_and_batched_matmul_are_reported():
    a = torch.randn(4, 1, 3, dtype=torch.float64, requires_grad=True)
    c = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    m = torch.randn(5, 3, 2, dtype=torch.float64, requires_grad=True)
    w = torch.randn(2, 6, dtype=torch.float64, requires_grad=True)
    s = a * c  # (4, 2, 3): a's dim 1 stretched, c gets a new leading dim
    out = (m @ w).sum() + s.sum()  # w (2, 6) is shared by the batch of 5
    rows = {r.op: r for r in explain(out).rows}
    assert [i.summed_dims for i in rows["MulBackward"].inputs] == [(1,), (0,)]
    assert [i.summed_dims for i in rows["MatmulBackward"].inputs] == [(), (0,)]


def test_explain_leaves_grad_untouched_and_the_graph_usable():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    h = x.exp()
    h.retain_grad()
    loss = (h * torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)).sum()
    explain(loss)
    assert x.grad is None and h.grad is None
    loss.backward()  # the graph was retained
    np.testing.assert_allclose(x.grad.numpy(force=True), np.exp([1.0, 2.0, 3.0]) * [0.5, -1.0, 2.0])
    before = x.grad.numpy(force=True).copy()
    explain((x * x).sum())
    np.testing.assert_array_equal(x.grad.numpy(force=True), before)  # an existing .grad is not accumulated into


def test_fan_out_rows_show_each_path_and_leaf_totals_sum_them():
    x = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    loss = (x * x * torch.tensor([3.0, 5.0], dtype=torch.float64)).sum()
    report = explain(loss, names={"x": x})
    square = next(r for r in report.rows if r.input_shapes == [(2,), (2,)] and r.inputs[0].source == "leaf 'x'")
    assert [i.grad_norm for i in square.inputs] == pytest.approx([_norm([3.0, -10.0])] * 2)
    (leaf,) = report.leaves
    np.testing.assert_allclose(leaf.grad, [6.0, -20.0])


def test_names_default_to_the_callers_variables():
    weights = torch.ones(2, dtype=torch.float64, requires_grad=True)
    total = (weights * 2.0).sum()
    report = explain(total)
    assert report.rows[0].output_name == "total"
    assert report.leaves[0].name == "weights"


def test_text_and_html_show_every_row():
    w = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    bias = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    loss = ((torch.randn(4, 3, dtype=torch.float64) @ w + bias).relu() * torch.randn(4, 2, dtype=torch.float64)).sum()
    report = explain(loss)
    text, html = str(report), report._repr_html_()
    for r in report.rows:
        assert f"#{r.step} {r.op}" in text and r.op in html
    assert "summed over dim 0 of (4, 2)" in text and "summed over dim 0 of (4, 2)" in html
    assert "g @ b^T" in text and "<table>" in html and "&lt;" not in text
    assert report.to_records()[0]["op"] == "SumBackward"
    assert len(report) == len(list(report)) == len(report.to_records())


def test_non_scalar_output_and_errors():
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y = x * 3.0
    report = explain(y, gradient=torch.tensor([1.0, -1.0], dtype=torch.float64))
    np.testing.assert_allclose(report.leaves[0].grad, [3.0, -3.0])
    with pytest.raises(RuntimeError, match="scalar"):
        explain(y)
    with pytest.raises(RuntimeError, match="does not require grad"):
        explain(torch.tensor([1.0]))
    with pytest.raises(TypeError):
        explain(np.ones(2))


def test_a_user_function_without_a_formula_still_gets_a_row():
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return x.numpy(force=True) * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (row,) = explain(Double.apply(x), gradient=torch.ones(2, dtype=torch.float64)).rows
    assert row.op == "DoubleBackward" and "no docstring" in row.forward and "VJP" in row.vjp


def test_a_vjp_returning_a_numpy_array_gets_its_norm():
    class Triple(Function):
        r"""out = 3 x;   VJP: gx = 3 g"""

        @staticmethod
        def forward(ctx, x):
            return x.numpy(force=True) * 3

        @staticmethod
        def backward(ctx, g):
            return np.asarray(g.numpy(force=True) * 3)[::-1][::-1]  # a plain (and not-owning) ndarray

    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    (row,) = explain(Triple.apply(x), gradient=torch.tensor([[1.0, 0.0], [0.0, 2.0]], dtype=torch.float64)).rows
    assert row.vjp == "gx = 3 g" and row.forward == "out = 3 x"
    assert row.inputs[0].grad_norm == pytest.approx(3 * np.sqrt(5))


# ---- the fused ops: explain() prints their math, as for the primitive ops ----------------------

def _fused_op_graphs():
    """A float64 graph through each fused op of minitensor, reduced with random weights."""
    import minitensor.nn.functional as F

    rng = np.random.default_rng(8)
    x = torch.tensor(rng.standard_normal((5, 4)), requires_grad=True)
    w = torch.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = torch.tensor(rng.standard_normal(3), requires_grad=True)
    gamma, beta = (torch.tensor(rng.standard_normal(4), requires_grad=True) for _ in range(2))
    u = torch.tensor(rng.standard_normal((5, 4)))
    return {
        "LinearBackward": (F.linear(x, w, b) * u[:, :3]).sum(),
        "LayerNormBackward": (F.layer_norm(x, (4,), gamma, beta) * u).sum(),
        "CrossEntropyBackward": F.cross_entropy(x, torch.tensor([0, 1, 2, 3, 0]), label_smoothing=0.1),
        "GeluBackward": (F.gelu(x, approximate="tanh") * u).sum(),
    }


# what each formula must state, so that cutting the docstring down can't lose the math
_FUSED_MATH = {
    "LinearBackward": ("x W^T + b", "gx = g W"),
    "LayerNormBackward": ("sqrt(var + eps)", "gx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat))"),
    "CrossEntropyBackward": ("logp_i = x_i - log \\sum_c e^{x_{i,c}}", "gx_i = r_i keep_i (a_i p_i - q_i)"),
    "GeluBackward": ("x * Phi(x)", "gx = g * (Phi(x) + x * phi(x))"),
}


@pytest.mark.parametrize("op", sorted(_FUSED_MATH))
def test_a_fused_op_explains_its_math_and_no_implementation(op, implementation_words_in):
    rows = [r for r in explain(_fused_op_graphs()[op]).rows if r.op == op]
    assert len(rows) == 1, [r.op for r in explain(_fused_op_graphs()[op]).rows]
    row = rows[0]
    forward_math, vjp_math = _FUSED_MATH[op]
    assert row.forward.startswith("out = ") and forward_math in " ".join(row.forward.split())
    assert vjp_math in " ".join(row.vjp.split())
    assert implementation_words_in(row.forward + " " + row.vjp) == []


# Excerpts of what explain() printed for these ops before their docstrings kept only the math:
# the word check above must catch each of them.
_PRINTED_BEFORE = {
    "LinearBackward": "computed as one matrix product of x flattened to rows x2 (R, in), then b added in place",
    "LayerNormBackward": "over the last `k` dims (var: population, two-pass)",
    "CrossEntropyBackward": "Cross-entropy of logits x (N, C) against class indices t (N,), in one op: "
                            "logp = x - m - log \\sum_c e^{x_c - m} (m the row max: nothing overflows)",
    "GeluBackward": "u = sqrt(2/pi) * (x + 0.044715 x^3) (one exp instead of a tanh)",
}


@pytest.mark.parametrize("op", sorted(_PRINTED_BEFORE))
def test_the_word_check_catches_what_was_printed_before(op, implementation_words_in):
    assert implementation_words_in(_PRINTED_BEFORE[op])


# ---- values, module names, and explain after backward --------------------------------------------

def test_values_show_each_nodes_output_and_the_gradients_it_received_and_sent(graph):
    g = graph
    report = explain(g["loss"], names=g, values=True)
    x, w, b, u = (g[k].numpy(force=True) for k in "xwbu")
    y = np.tanh(x * w + b)
    mul_u, tanh, add, mul_xw = report.rows[1:]
    np.testing.assert_allclose(tanh.output_value, y)
    np.testing.assert_allclose(tanh.grad, u)  # d loss / d y = u
    np.testing.assert_allclose(tanh.inputs[0].grad, u * (1 - y ** 2))
    np.testing.assert_allclose(add.inputs[1].grad, (u * (1 - y ** 2)).sum(0))  # b was broadcast over rows
    np.testing.assert_allclose(mul_xw.output_value, x * w)
    by_name = {lf.name: lf.grad for lf in report.leaves}
    g["loss"].backward()
    for name in "xwb":
        np.testing.assert_allclose(by_name[name], g[name].grad.numpy())
    text = str(report)
    assert "output = " in text and "g      = " in text and "grad = " in text
    assert np.array2string(y, precision=4, suppress_small=True).splitlines()[0] in text


def test_values_are_left_out_for_big_tensors_and_without_values(graph):
    assert all(r.output_value is None and r.grad is None for r in explain(graph["loss"], names=graph))
    big = torch.tensor(np.linspace(-1, 1, 200), requires_grad=True)
    report = explain((big.tanh() * torch.tensor(np.linspace(0, 1, 200))).sum(), values=True)
    tanh = report.rows[-1]
    assert tanh.op == "TanhBackward" and tanh.output_value is None and tanh.inputs[0].grad is None
    assert report.rows[0].output_value is not None  # the 0-d loss is small


def test_the_parameters_of_a_module_in_scope_are_named_after_it():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    loss = (model(torch.ones(2, 3)) * torch.tensor([[1.0], [-2.0]])).sum()
    names = {lf.name for lf in explain(loss).leaves}
    assert names == {"model.0.weight", "model.0.bias", "model.2.weight", "model.2.bias"}


def test_explain_after_backward_says_how_to_get_the_report():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (x.exp() * torch.tensor([1.0, -1.0])).sum()
    loss.backward()
    with pytest.raises(RuntimeError,
                       match=r"explain: backward\(\) already ran.*before loss.backward\(\).*retain_graph=True"):
        explain(loss)
    kept = (x.exp() * torch.tensor([1.0, -1.0])).sum()
    kept.backward(retain_graph=True)
    assert [r.op for r in explain(kept).rows] == ["SumBackward", "MulBackward", "ExpBackward"]
