"""Issue 32, points 2 and 3: steps named by `autograd.step` (attention's, and a learner's own) in
explain() and the pictures; explain(values=True) printing each gradient once, no -0., a note on
what it left out, a compact mode, formulas line by line; pictures top to bottom, values by default
after backward. Small float64 graphs only: every test here takes milliseconds."""
import re

import numpy as np
import pytest

import attention
import minitensor as mt
from minitensor import viz
from minitensor.autograd import explain, name_step, step
from minitensor.autograd.steps import mask_grid, step_name

ATTENTION_STEPS = {"w_q", "w_k", "w_v", "w_o", "split heads", "merge heads", "scores = q k^T",
                   "scale 1/sqrt(d_k)", "mask", "softmax", "weights @ v"}
CAUSAL_GRID = ["1 . .", "1 1 .", "1 1 1"]
NEGATIVE_ZERO = re.compile(r"-0\.0*(?![0-9])")


def _mha_loss(kind, d_model=4, causal=True):
    """A 3-token, 2-head multi-head attention (the package's or PyTorch's API), reduced with random weights."""
    rng = np.random.default_rng(0)
    mt.manual_seed(0)
    x = mt.tensor(rng.standard_normal((1, 3, d_model)))
    if kind == "attention":
        model = attention.MultiHeadAttention(d_model, 2).double()
        out, _ = model(x, is_causal=causal)
    else:
        model = mt.nn.MultiheadAttention(d_model, 2, batch_first=True, dtype=mt.float64)
        mask = mt.tensor(np.triu(np.ones((3, 3), dtype=bool), 1)) if causal else None  # True = may NOT attend
        out, _ = model(x, x, x, attn_mask=mask)
    return (out * mt.tensor(rng.standard_normal((1, 3, d_model)))).sum()


# ---- the mechanism -----------------------------------------------------------------------------------

def test_a_step_names_the_nodes_recorded_inside_it_and_no_other():
    x = mt.tensor([1.0, -2.0], dtype=mt.float64, requires_grad=True)
    before = x * 2.0
    with step("outer"):
        a = before.exp()
        with step("inner", "x 3"):
            b = a * 3.0
        c = b.sum()
    after = c * 1.0
    assert step_name(before.grad_fn) is None and "_step_name" not in vars(before.grad_fn)  # no cost outside
    assert step_name(after.grad_fn) is None
    assert [step_name(t.grad_fn).text for t in (a, b, c)] == ["outer", "inner", "outer"]
    assert step_name(b.grad_fn).lines() == ["inner", "x 3"]

    @step("decorated")
    def double(t):
        return t * 2.0

    assert step_name(double(x).grad_fn).text == "decorated" and step_name((x * 1.0).grad_fn) is None
    named = name_step(x.tanh(), "my tanh")
    assert step_name(named.grad_fn).text == "my tanh"
    assert name_step(x, "a leaf") is x and x.grad_fn is None  # nothing to name on a leaf
    with pytest.raises(TypeError, match="step: the name must be a str"):
        step(3)
    with pytest.raises(TypeError, match="name_step: expected a Tensor"):
        name_step(np.ones(2), "x")


def test_a_step_changes_no_value_and_no_gradient_and_survives_backward():
    x = mt.tensor([0.5, -1.5], dtype=mt.float64, requires_grad=True)
    with step("square"):
        y = (x * x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, -3.0])
    assert step_name(y.grad_fn).text == "square"  # freeing the graph keeps the name, for the pictures


def test_mask_grid_draws_bool_and_additive_masks_and_says_when_it_cannot():
    causal = np.tril(np.ones((3, 3), dtype=bool))
    assert str(mask_grid(causal)).splitlines() == CAUSAL_GRID
    additive = np.where(causal, 0.0, -np.inf)
    assert str(mask_grid(mt.tensor(additive), additive=True)).splitlines() == CAUSAL_GRID
    assert "float mask" in str(mask_grid(np.full((3, 3), 0.5), additive=True))
    assert "too big to draw" in str(mask_grid(np.ones((40, 40), dtype=bool)))
    two = np.stack([causal, ~causal | np.eye(3, dtype=bool)])
    assert str(mask_grid(two)).splitlines()[-1] == "(the first of 2 different masks)"


# ---- attention's steps by name, in explain() and in the pictures -------------------------------------------

@pytest.mark.parametrize("kind", ["attention", "nn"])
def test_multi_head_attention_names_every_step_as_the_math_does(kind):
    report = explain(_mha_loss(kind))
    named = {r.step_name for r in report.rows}
    assert ATTENTION_STEPS <= named, ATTENTION_STEPS - named
    scale = next(r for r in report.rows if r.step_name == "scale 1/sqrt(d_k)")
    assert scale.op == "MulBackward" and scale.step_detail == ["x 0.7071"]  # d_k = 4 / 2 heads
    mask = next(r for r in report.rows if r.step_name == "mask")
    assert mask.step_detail == CAUSAL_GRID
    text = str(report)
    assert "[scale 1/sqrt(d_k): x 0.7071]" in text and "   mask: 1 . ." in text
    assert "[split heads]" in text and "[w_q]" in text and "<pre>1 . .\n1 1 .\n1 1 1</pre>" in report._repr_html_()


def test_the_functional_attention_of_both_packages_names_its_steps():
    rng = np.random.default_rng(1)
    q, k, v = (mt.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True) for _ in range(3))
    out = mt.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    out2, _ = attention.scaled_dot_product_attention(q, k, v, scale=0.25)  # not 1/sqrt(d_k) = 0.5
    for o, scale in ((out, "scale 1/sqrt(d_k): x 0.5"), (out2, "scale: x 0.25")):
        names = [r.step_name for r in explain(o.sum())]
        assert names[1:3] == ["weights @ v", "softmax"] and "scores = q k^T" in names
        assert f"[{scale}]" in str(explain(o.sum())) and "[mask" in str(explain(out.sum()))


@pytest.mark.parametrize("kind", ["attention", "nn"])
def test_the_pictures_show_the_steps_top_to_bottom_and_narrow(kind):
    loss = _mha_loss(kind, d_model=8)
    dot = viz.to_dot(loss)
    assert "rankdir=TB;" in dot and "[scale 1/sqrt(d_k)]\\nx 0.5\\n" in dot and "[mask]\\n1 . .\\n1 1 .\\n1 1 1" in dot
    svg = viz.to_svg(loss)
    width, height = (float(v) for v in re.search(r'width="([\d.]+)" height="([\d.]+)"', svg).groups())
    assert width < 800 < height  # laid left to right it was about 2,900 px wide
    for name in ATTENTION_STEPS:
        assert f">[{name}]<" in svg.replace("&gt;", ">"), name
    loss.backward()
    assert "[w_q]" in viz.to_dot(loss)  # backward frees the graph, not the names


# ---- explain(values=True) a learner can read ---------------------------------------------------------------

def test_each_gradient_is_printed_once_and_the_mha_report_is_shorter():
    report = explain(_mha_loss("attention", d_model=8, causal=False), values=True)
    text = str(report)
    # a node fed by one consumer refers to the line where the consumer sent its g
    assert all(r.grad_from == f"#{r.step - 1} {report.rows[r.step - 2].op}" for r in report.rows[1:4])
    received = [r for r in report.rows[1:] if r.grad is not None]
    assert received and all(r.grad_from for r in received if len(r.senders) == 1)
    printed = [line for line in text.splitlines() if line.startswith("   g      = ") and "what #" not in line]
    assert len(printed) == sum(1 for r in report.rows if not r.grad_from and r.grad is not None) == 1  # the root's
    assert len(text.splitlines()) <= 380  # 515 lines before each gradient was printed once


def test_a_gradient_summed_from_two_consumers_is_printed_with_its_senders():
    x = mt.tensor([0.1, -0.2], dtype=mt.float64, requires_grad=True)
    h = x * 2
    loss = (h.exp() + h * 3).sum()
    text = str(explain(loss, values=True))
    assert "(the sum of what #3 MulBackward and #4 ExpBackward sent)" in text
    assert "|grad| = 11.19   = what #5 MulBackward sent it (above)" in text


def test_no_negative_zero_is_printed():
    x = mt.tensor([[1e-9, -1e-9], [-0.0, 2.0]], dtype=mt.float64, requires_grad=True)
    loss = (x * mt.tensor([[-1e-7, 1.0], [-2.0, -1e-6]], dtype=mt.float64)).sum()
    text = str(explain(loss, values=True))
    assert not NEGATIVE_ZERO.search(text) and "0." in text and "-2." in text
    mha = str(explain(_mha_loss("nn"), values=True))
    assert not NEGATIVE_ZERO.search(mha)
    loss.backward()
    assert not NEGATIVE_ZERO.search(viz.to_dot(loss, show_values=True))


def test_values_left_out_for_size_are_announced_with_the_option_that_shows_them():
    x = mt.tensor(np.linspace(-1, 1, 80), requires_grad=True)
    loss = (x.tanh() * mt.tensor(np.linspace(0, 1, 80))).sum()
    report = explain(loss, values=True)
    assert "(8 values of more than 64 elements left out: explain(..., values=True, values_up_to=80) shows them)" \
        in str(report).splitlines()[2] and report.left_out == [80] * 8  # 3 g, 3 outputs, 1 sent to x, x's
    shown = explain(loss, values=True, values_up_to=80)
    assert "left out" not in str(shown) and all(r.output_value is not None for r in shown.rows)
    with pytest.raises(ValueError, match="values_up_to must be an int >= 0"):
        explain(loss, values_up_to=-1)


def test_compact_mode_is_one_line_per_node():
    report = explain(_mha_loss("attention"), compact=True)
    lines = str(report).splitlines()
    node_lines = [line for line in lines if line.startswith("#")]
    assert len(node_lines) == len(report.rows) and len(lines) == 2 + len(report.rows) + 2 + len(report.leaves)
    assert any("[mask: 1 . . / 1 1 . / 1 1 1]" in line for line in node_lines)
    assert "forward:" not in str(report) and report.text(compact=False) != str(report)


def test_a_formula_never_runs_a_sentence_into_the_math():
    x = mt.tensor([1.0, -1.0, 2.0], dtype=mt.float64, requires_grad=True)
    loss = (mt.where(mt.tensor([True, False, True]), x, 0.0) * 2.0).sum()
    lines = str(explain(loss)).splitlines()
    vjp = next(i for i, line in enumerate(lines) if "VJP:" in line and "where(cond, g, 0)" in line)
    assert "Selecting" not in lines[vjp] and lines[vjp + 1].lstrip().startswith("Selecting")
    assert lines[vjp + 1].index("Selecting") == lines[vjp].index("ga =")  # under the formula, on its own line


def test_after_backward_a_small_graph_shows_values_and_gradients_by_default():
    w = mt.tensor([[0.5, -1.0]], dtype=mt.float64, requires_grad=True)
    loss = (w.tanh() * 3.0).sum()
    assert "data " not in viz.to_dot(loss) and explain(loss).rows[0].output_value is None  # before backward: norms
    loss.backward(retain_graph=True)
    dot = viz.to_dot(loss)
    assert "data [[ 0.5 -1. ]]" in dot and "grad [[" in dot
    assert explain(loss).rows[-1].output_value is not None and explain(loss, values=False).rows[0].output_value is None
    big = mt.tensor(np.ones((10, 10)), requires_grad=True)
    (big * 2.0).sum().backward()
    assert "data " not in viz.to_dot((big * 2.0).sum())  # a big graph: only the norms
