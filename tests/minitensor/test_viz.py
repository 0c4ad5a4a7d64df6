"""minitensor.viz: DOT text of the autograd graph, and rendering when Graphviz is there."""
import re
import shutil
import stat
import subprocess
import sys
from xml.etree import ElementTree

import numpy as np
import pytest

import minitensor as torch
from minitensor import viz

NODE = re.compile(r'^  (n\d+) \[label="((?:[^"\\]|\\.)*)", [^\]]*\];$')
EDGE = re.compile(r'^  (n\d+) -> (n\d+) \[label="(\d+)"\];$')


def parse(dot):
    """Check the DOT text line by line (our own small grammar); return its nodes and edges."""
    lines = dot.strip().split("\n")
    assert lines[0] == "digraph minitensor {" and lines[-1] == "}"
    assert dot.count("{") == dot.count("}") == 1
    nodes, edges = {}, []
    for line in lines[1:-1]:
        if line.startswith(("  rankdir=", "  node [", "  edge [")):
            continue
        m = NODE.match(line)
        if m:
            assert m.group(1) not in nodes, f"node {m.group(1)} declared twice"
            nodes[m.group(1)] = m.group(2).split("\\n")
            continue
        m = EDGE.match(line)
        assert m, f"not a DOT statement of ours: {line!r}"
        edges.append((m.group(1), m.group(2), int(m.group(3))))
    for a, b, _ in edges:
        assert a in nodes and b in nodes, f"edge {a} -> {b} to an undeclared node"
    return nodes, edges


def _attention_graph():
    torch.manual_seed(0)
    x = torch.randn(3, 4, dtype=torch.float64)
    w_query = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    w_key = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    bias = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    queries = x @ w_query + bias
    keys = x @ w_key
    scores = queries @ keys.T
    loss = (scores.softmax(dim=-1) * torch.randn(3, 3, dtype=torch.float64)).sum()
    names = dict(w_query=w_query, w_key=w_key, bias=bias, queries=queries, scores=scores, loss=loss)
    return loss, names


def test_every_op_and_shape_appears_once_in_valid_dot():
    loss, names = _attention_graph()
    dot = viz.to_dot(loss, names=names)
    assert isinstance(dot, str)
    nodes, edges = parse(dot)
    labels = list(nodes.values())
    ops = sorted(lab[0] for lab in labels if lab[0].endswith("Backward"))
    # x @ w_query, + bias, x @ w_key, .T, queries @ keys.T, softmax, * u, sum: one node each
    assert ops == sorted(["MatmulBackward", "AddBackward", "MatmulBackward", "PermuteBackward", "MatmulBackward",
                          "SoftmaxBackward", "MulBackward", "SumBackward"])
    leaves = {lab[0]: lab[1] for lab in labels if not lab[0].endswith("Backward")}
    assert leaves == {"w_query": "(4, 3)", "w_key": "(4, 3)", "bias": "(3,)"}
    named = {lab[1]: lab for lab in labels if lab[0].endswith("Backward") and len(lab) > 2}
    assert named["scores"][2] == "(3, 3)" and named["queries"][2] == "(3, 3)" and named["loss"][2] == "()"
    assert len(edges) == 10  # 8 op nodes; every edge is one (input -> op) of the graph
    # each op is fed by as many edges as it has inputs needing a gradient
    into = {}
    for _, b, _ in edges:
        into[b] = into.get(b, 0) + 1
    by_label = {nid: lab[0] for nid, lab in nodes.items()}
    assert sorted(into[n] for n in into if by_label[n] == "MatmulBackward") == [1, 1, 2]


def test_shared_nodes_are_drawn_once_and_both_edges_kept():
    a = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    b = a + a
    c = b * b  # a diamond: b feeds both inputs of c
    nodes, edges = parse(viz.to_dot(c.sum()))
    op = {nid: lab[0] for nid, lab in nodes.items()}
    assert list(op.values()).count("AddBackward") == 1 and list(op.values()).count("a") == 1
    assert sorted(k for src, dst, k in edges if op[src] == "AddBackward" and op[dst] == "MulBackward") == [0, 1]
    assert sorted(k for src, dst, k in edges if op[src] == "a" and op[dst] == "AddBackward") == [0, 1]


def test_gradient_norms_appear_after_backward_even_when_the_graph_was_freed():
    loss, names = _attention_graph()
    names["queries"].retain_grad()
    before = viz.to_dot(loss, names=names)
    assert "|grad|" not in before
    loss.backward()  # frees the graph's saved tensors; the drawing needs only shapes and grads
    nodes, _ = parse(viz.to_dot(loss, names=names, show_values=False))  # (small: values by default)
    labels = {lab[0] if not lab[0].endswith("Backward") else (lab[1] if len(lab) > 2 else lab[0]): lab
              for lab in nodes.values()}
    for name in ("w_query", "w_key", "bias"):
        want = float(np.linalg.norm(names[name].grad.numpy(force=True)))
        assert labels[name][-1] == f"|grad| = {want:.4g}"
    want = float(np.linalg.norm(names["queries"].grad.numpy(force=True)))
    assert labels["queries"][-1] == f"|grad| = {want:.4g}"
    assert not labels["scores"][-1].startswith("|grad|")  # not retained: nothing to show


def test_a_long_chain_needs_no_recursion():
    x = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0
    nodes, edges = parse(viz.to_dot(y, names={}))
    assert len(nodes) == 3001 and len(edges) == 3000


def test_labels_are_escaped():
    x = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
    nodes, _ = parse(viz.to_dot((x * 2).sum(), names={'a "quoted" name': x}))
    assert ['a \\"quoted\\" name', "(1,)"] in nodes.values()


def test_a_leaf_alone_is_one_node():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    nodes, edges = parse(viz.to_dot(x))
    assert list(nodes.values()) == [["x", "(2,)"]] and edges == []


@pytest.fixture
def no_graphviz(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # `import graphviz` raises ImportError
    monkeypatch.setattr(viz.shutil, "which", lambda name: None)


def test_without_graphviz_svg_is_drawn_in_python_and_other_formats_explain(no_graphviz, tmp_path):
    x = torch.tensor([1.0], requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match=r"Graphviz is not installed.*\.svg needs no Graphviz"):
        viz.render(y, tmp_path / "g.png")
    assert not (tmp_path / "g.png").exists()
    viz.render(y, tmp_path / "g.svg", names={"x": x})
    assert (tmp_path / "g.svg").read_text() == viz.to_svg(y, names={"x": x})
    # in Jupyter a Dot is drawn, never shown as an escaped one-line string
    assert viz.to_dot(y, names={"x": x})._repr_svg_() == viz.to_svg(y, names={"x": x})
    hint = viz.Dot("digraph { a -> b }")._repr_svg_()  # DOT text from elsewhere: only Graphviz reads it
    assert "apt install graphviz" in hint and "to_svg" in hint
    ElementTree.fromstring(hint)
    path = viz.render(y, tmp_path / "g.dot")  # the text needs no Graphviz
    assert (tmp_path / "g.dot").read_text() == viz.to_dot(y)
    assert path == tmp_path / "g.dot"


def test_render_pipes_the_dot_text_to_the_dot_program(no_graphviz, monkeypatch, tmp_path):
    fake = tmp_path / "dot"
    fake.write_text(f"#!{sys.executable}\nimport sys\nsys.stdout.write('<svg>' + sys.argv[1] + '|' + "
                    "sys.stdin.read() + '</svg>')\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(viz.shutil, "which", lambda name: str(fake))
    x = torch.tensor([1.0], requires_grad=True)
    y = (x * 2).sum()
    viz.render(y, tmp_path / "g.svg")
    out = (tmp_path / "g.svg").read_text()
    assert out.startswith("<svg>-Tsvg|digraph minitensor {") and "MulBackward" in out
    assert viz.to_dot(y)._repr_svg_().startswith("<svg>-Tsvg|")


@pytest.mark.skipif(shutil.which("dot") is None, reason="the Graphviz programs are not installed")
def test_real_graphviz_accepts_the_text():
    loss, names = _attention_graph()
    done = subprocess.run(["dot", "-Tsvg"], input=viz.to_dot(loss, names=names).encode(), capture_output=True)
    assert done.returncode == 0 and b"<svg" in done.stdout


def test_show_values_writes_data_and_grad_into_the_boxes_after_backward():
    w = torch.tensor([[0.5, -1.25]], requires_grad=True)
    x = torch.tensor([[2.0], [3.0]])
    h = (x * w).tanh()
    loss = (h * torch.tensor([[1.0, -1.0]])).sum()
    loss.backward()  # the graph is freed; the leaves' gradients and the named h's values remain
    plain, shown = viz.to_dot(loss, show_values=False), viz.to_dot(loss, show_values=True)
    assert viz.to_dot(loss) == shown  # after backward, a graph this small shows its values by default
    assert "data" not in plain and "|grad|" in plain
    w_box = next(line for line in shown.splitlines() if line.lstrip().startswith("n") and '"w\\n' in line)
    assert np.array2string(w.numpy(force=True), precision=4, suppress_small=True) in w_box.replace("\\n", "\n")
    grad_text = np.array2string(w.grad.numpy(), precision=4, suppress_small=True)
    assert "grad " + grad_text in w_box.replace("\\n", "\n")
    assert "data " + np.array2string(h.numpy(force=True), precision=4, suppress_small=True).splitlines()[0] in \
        shown.replace("\\n", "\n")


# ---- to_svg: the same graph drawn in Python ---------------------------------------------------------

SVG = "{http://www.w3.org/2000/svg}"


def svg_graph(svg):
    """The nodes of an SVG of to_svg (id -> (kind, label lines, centre)) and its edges (from, to, argument)."""
    root = ElementTree.fromstring(svg)  # well-formed XML, or this raises
    assert root.tag == SVG + "svg"
    nodes, edges = {}, []
    for g in root.iter(SVG + "g"):
        cls = g.get("class", "").split()
        if cls[:1] == ["node"]:
            lines = [t.text or "" for t in g.iter(SVG + "tspan")]
            shapes = [c.tag.removeprefix(SVG) for c in g if c.tag != SVG + "text"]
            first = next(c for c in g if c.tag != SVG + "text")
            if first.tag == SVG + "rect":
                centre = (float(first.get("x")) + float(first.get("width")) / 2,
                          float(first.get("y")) + float(first.get("height")) / 2)
            else:
                centre = (float(first.get("cx")), float(first.get("cy")))
            assert g.get("id") not in nodes
            nodes[g.get("id")] = (cls[1], shapes, lines, centre)
        elif cls == ["edge"]:
            (label,) = [t.text for t in g.iter(SVG + "text")]
            edges.append((g.get("data-from"), g.get("data-to"), int(label)))
    return nodes, edges


def dot_labels(dot_nodes):
    return {k: [line.replace('\\"', '"') for line in v] for k, v in dot_nodes.items()}


@pytest.mark.parametrize("rankdir", ["LR", "TB", "RL", "BT"])
def test_to_svg_draws_to_dots_nodes_edges_and_labels(rankdir):
    loss, names = _attention_graph()
    svg = viz.to_svg(loss, names=names, rankdir=rankdir)
    assert isinstance(svg, viz.Svg) and isinstance(svg, str) and svg._repr_svg_() == svg
    nodes, edges = svg_graph(svg)
    dot_nodes, dot_edges = parse(viz.to_dot(loss, names=names))
    assert {k: lines for k, (_, _, lines, _) in nodes.items()} == dot_labels(dot_nodes)
    assert sorted(edges) == sorted(dot_edges)
    kinds = {k: (kind, shapes) for k, (kind, shapes, _, _) in nodes.items()}
    assert sorted(k for k, (kind, shapes) in kinds.items() if kind == "leaf" and shapes == ["rect"]) == \
        sorted(k for k, lines in dot_nodes.items() if lines[0] in ("w_query", "w_key", "bias"))
    assert [kind for kind, shapes in kinds.values() if shapes == ["ellipse", "ellipse"]] == ["root"]
    # every edge runs with the flow: from the leaves towards the output
    axis, sign = {"LR": (0, 1), "RL": (0, -1), "TB": (1, 1), "BT": (1, -1)}[rankdir]
    for a, b, _ in edges:
        assert sign * (nodes[b][3][axis] - nodes[a][3][axis]) > 0, (a, b)


def test_to_svg_writes_the_values_and_escapes_the_labels():
    w = torch.tensor([[0.5, -1.25]], requires_grad=True)
    loss = (w * 3).sum()
    loss.backward()
    svg = viz.to_svg(loss, names={'w <"1"> & co': w}, show_values=True)
    nodes, edges = svg_graph(svg)
    (leaf,) = [lines for kind, _, lines, _ in nodes.values() if kind == "leaf"]
    assert leaf[0] == 'w <"1"> & co' and leaf[2] == "data " + np.array2string(w.numpy(force=True), precision=4)
    assert leaf[3] == "grad [[3. 3.]]"
    assert len(nodes) == 3 and len(edges) == 2


def test_to_svg_of_a_leaf_alone_and_of_a_long_chain():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    nodes, edges = svg_graph(viz.to_svg(x, names={"x": x}))
    assert [v[2] for v in nodes.values()] == [["x", "(2,)"]] and edges == []
    y = x
    for _ in range(3000):
        y = y * 1.0
    nodes, edges = svg_graph(viz.to_svg(y, names={}))  # no recursion on the way
    assert len(nodes) == 3001 and len(edges) == 3000


def test_to_svg_refuses_an_unknown_rankdir():
    x = torch.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="to_svg: rankdir must be 'LR', 'RL', 'TB' or 'BT', got 'XY'"):
        viz.to_svg(x * 2, rankdir="XY")
