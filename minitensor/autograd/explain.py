r"""`explain(loss)`: the backward pass, one node at a time, with the formula that each step applies.

    report = explain(loss, names={"W_query": w_query})
    print(report)            # a text table; in Jupyter, `report` alone shows an HTML table
    report.rows[0].op        # structured data: one `Step` per node, in the order backward ran it

The backward pass runs for real (the same engine, the same VJPs), but in capture mode: no `.grad`
is written, and the graph is retained, so `loss.backward()` still works afterwards. Each row says
what the node received (`g`, the gradient with respect to its output), what it sent to each
input, the VJP formula it used (read from the op's docstring, where the op states its math), and
where broadcasting was undone: an input smaller than the output of an elementwise op received
the *sum* of the gradient over the broadcast dims (the adjoint of copying is summing).
Hooks registered with `register_hook` run, as in any backward pass.

`explain(loss, values=True)` also shows the numbers of small tensors (up to `values_up_to`
elements, `VALUES_UP_TO` by default; a note says how many were left out): each node's output
value, the gradients it sent, and each leaf's gradient. Each gradient is printed once: a node that
received its `g` from one consumer refers to the line where that consumer sent it. A step named
with `autograd.step` (attention's `scores = q k^T`, `softmax` ...) shows its name beside the op.
`explain(loss, compact=True)` prints one line per node. Call `explain` before `backward()` (or
after `backward(retain_graph=True)`, when a graph of small tensors shows its values by default):
backward frees what the nodes saved, so a graph it ran through can't be replayed; the error then
says so. The gradients backward stored are in the leaves' `.grad`, and `to_dot(loss)` draws them
after backward too.
"""
from __future__ import annotations

import html
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from ..tensor import Tensor, broadcast_dims
from .api import root_gradients
from .engine import run_backward
from .formulas import split_formulas
from .steps import step_name


@dataclass
class InputInfo:
    """One argument of a node that receives a gradient."""

    index: int  #: position among the op's forward arguments
    shape: tuple[int, ...]
    source: str  #: where the input came from: '#3 MatmulBackward', 'leaf W_query', 'leaf (4, 3)'
    grad_norm: float | None = None  #: 2-norm of the gradient sent to this input (None: none was sent)
    summed_dims: tuple[int, ...] = ()  #: dims of the op's output that were summed to fit this input's shape
    grad: np.ndarray | None = field(repr=False, default=None)  #: the gradient sent (with values=True, small tensors)

    def to_dict(self) -> dict[str, Any]:
        return dict(index=self.index, shape=self.shape, source=self.source, grad_norm=self.grad_norm,
                    summed_dims=self.summed_dims)


@dataclass
class Step:
    """One node of the backward pass."""

    step: int  #: 1 for the first node backward runs
    op: str  #: node name, e.g. 'MulBackward'
    output_shape: tuple[int, ...]
    output_name: str  #: the name of the node's output in `names` (or the caller's variables), else ''

    grad_norm: float  #: 2-norm of g, the gradient the node received for its output
    forward: str  #: the forward formula from the op's docstring
    vjp: str  #: the VJP formula from the op's docstring
    inputs: list[InputInfo] = field(default_factory=list)  #: one InputInfo per input that needs a gradient
    output_value: np.ndarray | None = field(repr=False, default=None)  #: with values=True, small tensors
    grad: np.ndarray | None = field(repr=False, default=None)  #: g itself, with values=True, small tensors
    step_name: str = ""  #: the name of the step of the math the node belongs to (`autograd.step`), else ''
    step_detail: list[str] = field(default_factory=list)  #: lines shown under the step's name (a mask's grid ...)
    #: where g was printed already: '#2 MulBackward' when a single consumer sent it (its values equal)
    grad_from: str = ""
    senders: list[str] = field(default_factory=list)  #: the nodes that sent parts of g ('#2 MulBackward'), summed

    @property
    def input_shapes(self) -> list[tuple[int, ...]]:
        return [i.shape for i in self.inputs]

    @property
    def grad_norms_out(self) -> list[float | None]:
        return [i.grad_norm for i in self.inputs]

    @property
    def broadcast_notes(self) -> list[str]:
        """One sentence per input whose gradient was summed over broadcast dims."""
        return [
            f"input {i.index} has shape {i.shape}: its gradient is g summed over dim"
            f"{'s' if len(i.summed_dims) > 1 else ''} {', '.join(map(str, i.summed_dims))} of {self.output_shape}"
            for i in self.inputs if i.summed_dims
        ]

    def to_dict(self) -> dict[str, Any]:
        return dict(step=self.step, op=self.op, output_shape=self.output_shape, output_name=self.output_name,
                    step_name=self.step_name, grad_norm=self.grad_norm,
                    forward=self.forward, vjp=self.vjp, inputs=[i.to_dict() for i in self.inputs],
                    broadcast=self.broadcast_notes)


@dataclass
class LeafGrad:
    """The total gradient a leaf would get in `.grad` (summed over every path into it)."""

    name: str
    shape: tuple[int, ...]
    grad_norm: float
    tensor: object = field(repr=False, default=None)
    grad: np.ndarray | None = field(repr=False, default=None)
    grad_from: str = ""  #: where its gradient was printed already: '#5 MulBackward' when one node sent it all


class Explanation:
    """What `explain` returns: `rows` (a list of `Step`) and `leaves` (a list of `LeafGrad`).

    `str(report)` is the full text (`compact=True` in `explain`: one line per node), `report.text(compact=...)`
    either; `left_out` lists the sizes of the tensors whose values were left out for size."""

    def __init__(self, rows: list[Step], leaves: list[LeafGrad], root_shape: tuple[int, ...],
                 values: bool = False, compact: bool = False, left_out: list[int] | None = None,
                 values_up_to: int = 64) -> None:
        self.rows, self.leaves, self.root_shape, self.values = rows, leaves, root_shape, values
        self.compact, self.left_out, self.values_up_to = compact, list(left_out or []), values_up_to

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Step]:
        return iter(self.rows)

    def __getitem__(self, i: int) -> Step:
        return self.rows[i]

    def to_records(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.rows]

    def left_out_note(self) -> str:
        """One sentence on the values left out for size, and the option that shows them ('' if none)."""
        if not self.left_out:
            return ""
        n, biggest = len(self.left_out), max(self.left_out)
        return (f"({n} value{'s' if n > 1 else ''} of more than {self.values_up_to} elements left out: "
                f"explain(..., values=True, values_up_to={biggest}) shows them)")

    def text(self, compact: bool | None = None) -> str:
        """The report as text: a block per node, or with `compact` one line per node."""
        compact = self.compact if compact is None else compact
        lines = [f"backward from an output of shape {self.root_shape}: {len(self.rows)} nodes, in the order "
                 "backward runs them", "(g = gradient of the loss w.r.t. the node's output; [step] = the step of "
                 "the math it belongs to)"]
        if self.values and self.left_out_note():
            lines.append(self.left_out_note())
        for r in self.rows:
            lines += _compact_row(r) if compact else [""] + _full_row(r)
        if self.leaves:
            lines.append("")
            lines.append("leaf gradients (what .backward() would add to .grad):")
            width = max(len(lf.name) for lf in self.leaves)
            for lf in self.leaves:
                head = f"   {lf.name:<{width}}  {str(lf.shape):<10} |grad| = {_num(lf.grad_norm)}"
                if self.values and not compact and lf.grad_from:
                    lines.append(f"{head}   = what {lf.grad_from} sent it (above)")
                    continue
                lines.append(head)
                if self.values and not compact:
                    lines += _value_lines(" " * (width + 5) + "grad = ", _small(lf.grad, self.values_up_to))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self):
        e = html.escape
        head = ("<tr><th>#</th><th>step</th><th>op</th><th>output</th><th>|g|</th><th>VJP</th>"
                "<th>inputs: shape, source, |grad|</th><th>broadcast</th></tr>")
        body = []
        for r in self.rows:
            ins = "<br>".join(f"{i.index}: {e(str(i.shape))} from {e(i.source)}, "
                              f"{_num(i.grad_norm)}{_html_value(i.grad)}"
                              for i in r.inputs)
            g = (f"<br>what {e(r.grad_from)} sent" if r.grad_from else _html_value(r.grad))
            named = e(r.step_name) + _html_value_lines(r.step_detail)
            body.append(
                f"<tr><td>{r.step}</td><td>{named}</td><td><code>{e(r.op)}</code></td>"
                f"<td>{e(r.output_name)} {e(str(r.output_shape))}{_html_value(r.output_value)}</td>"
                f"<td>{_num(r.grad_norm)}{g}</td><td><code>{'<br>'.join(e(x) for x in _lines(r.vjp))}</code></td>"
                f"<td>{ins}</td><td>{'<br>'.join(e(n) for n in r.broadcast_notes)}</td></tr>"
            )
        leaves = "".join(
            f"<tr><td><code>{e(lf.name)}</code></td><td>{e(str(lf.shape))}</td><td>{_num(lf.grad_norm)}"
            f"{_html_value(_small(lf.grad, self.values_up_to)) if self.values and not lf.grad_from else ''}"
            f"{'<br>what ' + e(lf.grad_from) + ' sent it' if self.values and lf.grad_from else ''}</td></tr>"
            for lf in self.leaves
        )
        note = f"<p>{e(self.left_out_note())}</p>" if self.values and self.left_out else ""
        return (
            f"<p>backward from an output of shape {e(str(self.root_shape))}: {len(self.rows)} nodes</p>{note}"
            f"<table>{head}{''.join(body)}</table>"
            f"<p>leaf gradients</p><table><tr><th>leaf</th><th>shape</th><th>|grad|</th></tr>{leaves}</table>"
        )


def _full_row(r):
    """The lines of one node: its op and step, its formulas line by line, its values, what it sent."""
    named = f" '{r.output_name}'" if r.output_name else ""
    step = ""
    detail = r.step_detail
    if r.step_name:
        if len(detail) == 1:  # one short line (a scale's value) fits beside the name
            step, detail = f"  [{r.step_name}: {detail[0]}]", []
        else:
            step = f"  [{r.step_name}]"
    lines = [f"#{r.step} {r.op}{step}   output{named} {r.output_shape}   |g| = {_num(r.grad_norm)}"]
    lines += _labelled(f"   {r.step_name}: ", detail)
    lines += _labelled("   forward: ", _lines(r.forward))
    lines += _labelled("   VJP:     ", _lines(r.vjp))
    lines += _value_lines("   output = ", r.output_value)
    if r.grad_from:
        lines.append(f"   g      = what {r.grad_from} sent it (above)")
    else:
        lines += _value_lines("   g      = ", r.grad)
        if r.grad is not None and len(r.senders) > 1:  # a fan-out in the forward pass: its gradients add up
            lines.append(f"            (the sum of what {', '.join(r.senders[:-1])} and {r.senders[-1]} sent)")
    for i in r.inputs:
        lines.append(f"   -> input {i.index} {i.shape} from {i.source}:  |grad| = {_num(i.grad_norm)}")
        lines += _value_lines("      grad = ", i.grad)
    for note in r.broadcast_notes:
        lines.append(f"   broadcast: {note}")
    return lines


def _compact_row(r):
    """One line: the node, its step, its output, |g|, and where its gradients went with their norms."""
    step = ""
    if r.step_name:  # a mask's grid on one line: its rows one after the other, split by /
        step = f" [{r.step_name}" + (": " + " / ".join(r.step_detail) if r.step_detail else "") + "]"
    named = f" '{r.output_name}'" if r.output_name else ""
    sent = ", ".join(f"{i.source.split(' ', 1)[0] if i.source.startswith('#') else i.source}: {_num(i.grad_norm)}"
                     for i in r.inputs)
    return [f"#{r.step} {r.op}{step}{named} {r.output_shape}   |g| = {_num(r.grad_norm)}   -> {sent}"]


def _labelled(label, lines):
    """`lines` under a label, each further line indented to the label's width."""
    pad = " " * len(label)
    return [(label if k == 0 else pad) + line for k, line in enumerate(lines)]


def _lines(text):
    """The lines of a formula as its docstring wrote them (a sentence after the math stays on its own line)."""
    return [line.strip() for line in str(text).splitlines() if line.strip()]


def _html_value_lines(lines):
    return "" if not lines else "<pre>" + html.escape("\n".join(lines)) + "</pre>"


def _num(x):
    return "-" if x is None else f"{x:.4g}"


VALUES_UP_TO = 64  #: `values=True` shows tensors of at most this many elements (a bigger one shows its norm only)


def _small(t, up_to=None):
    """A copy of the values of `t` (a Tensor or ndarray) if it has at most `up_to` (VALUES_UP_TO) elements,
    else None."""
    arr = t._array if isinstance(t, Tensor) else np.asarray(t)
    return np.array(arr, copy=True) if arr.size <= (VALUES_UP_TO if up_to is None else up_to) else None


def _html_value(arr):
    return "" if arr is None else "<pre>" + html.escape("\n".join(_value_lines("", arr))) + "</pre>"


# "-0." (or "-0.000"): a negative number too small for the printed digits; printed as the 0 it reads as
_NEGATIVE_ZERO = re.compile(r"-(0\.0*)(?![0-9])")


def _value_lines(prefix, arr):
    """`arr` printed under a label, each further line indented to the label's width ([] if None); no
    `-0.` (a sign on a number printed as zero says nothing), no blank lines between the blocks of a
    tensor of 3 or more dims (the brackets show them)."""
    if arr is None:
        return []
    text = np.array2string(arr, precision=4, suppress_small=True, max_line_width=100 - len(prefix))
    text = _NEGATIVE_ZERO.sub(r" \1", text)
    lines = [line for line in text.splitlines() if line.strip()]
    if np.ndim(arr) == 0:
        lines = [lines[0].strip()]
    pad = " " * len(prefix)
    return [prefix + line if k == 0 else pad + line for k, line in enumerate(lines)]


def _one_line(text):
    return " ".join(text.split())


def _norm(t):

    arr = t._array if isinstance(t, Tensor) else t  # a user's VJP may return a plain ndarray
    return float(np.sqrt(np.sum(np.abs(np.asarray(arr, dtype=np.float64)) ** 2)))


def formulas(node):
    """(forward, vjp) formulas from the docstring of the node's op: the text before and after 'VJP:'."""
    forward, vjp = split_formulas(type(node).__doc__)
    if vjp is None:
        return _one_line(forward) or "(no docstring)", "(the op's docstring states no 'VJP:' formula)"
    return forward, vjp


def summed_dims(in_shape, out_shape):
    """Dims of `out_shape` that broadcasting `in_shape` up to it created: the dims `unbroadcast` sums over."""

    in_shape, out_shape = tuple(in_shape), tuple(out_shape)
    return broadcast_dims(in_shape, out_shape) if len(out_shape) >= len(in_shape) else ()


def _broadcast_of(node, inp_shape, out_shape):
    """The dims an input's gradient was summed over, for ops whose VJP undoes broadcasting."""
    vjp = formulas(node)[1]
    if "unbroadcast" not in vjp or inp_shape == out_shape:
        return ()
    if type(node).__name__ == "Matmul":  # only the batch dims broadcast; the last two are the product's
        if len(inp_shape) < 2 or len(out_shape) < 2:
            return ()
        return summed_dims(inp_shape[:-2], out_shape[:-2])
    try:
        if np.broadcast_shapes(inp_shape, out_shape) != out_shape:
            return ()
    except ValueError:
        return ()
    return summed_dims(inp_shape, out_shape)


def tensor_names(names: Any = None, depth: int = 2) -> dict[int, str]:
    """id(tensor) -> name, from `names` (a mapping or (name, tensor) pairs) or else the caller's variables.

    Learners call `explain(loss)` right where they built the graph, so the variables in scope there
    (`w_query`, `scores`, ...) are the names they know the tensors by; a module among them names its
    parameters after itself (`model.fc1.weight`).
    """

    if names is not None:
        pairs = names.items() if hasattr(names, "items") else names
    else:
        frame = sys._getframe(depth)
        try:
            pairs = list(frame.f_locals.items())
        finally:
            del frame  # a frame held in a local would keep every tensor of the caller alive
    label: dict[int, str] = {}
    for name, t in pairs:
        if name.startswith("_"):
            continue
        if isinstance(t, Tensor):
            label.setdefault(id(t), name)
        elif callable(getattr(t, "named_parameters", None)):  # a module: its parameters as `model.fc1.weight`
            for pname, p in t.named_parameters():
                label.setdefault(id(p), f"{name}.{pname}")
    return label


def explain(output: Tensor, gradient: Tensor | None = None, names: Any = None, values: bool | None = None,
            compact: bool = False, values_up_to: int = VALUES_UP_TO) -> Explanation:
    """Run backward from `output` without touching any `.grad`, and report every node it visits.

    `gradient`: as for `.backward()` (needed when `output` is not a scalar).
    `names`: optional mapping name -> tensor (e.g. `dict(model.named_parameters())`) to label
    leaves and intermediate results; by default the caller's local variables (and the parameters of
    the modules among them) are used.
    `values`: also keep and print the numbers of tensors of at most `values_up_to` elements (a note
    says how many were left out). None (the default): values when backward already ran through the
    graph (with retain_graph=True) and every tensor of it is that small, as the pictures of `viz` do.
    `compact`: print one line per node (its step, output, |g| and where its gradients went), no
    formulas and no values.
    """

    if not isinstance(output, Tensor):
        raise TypeError(f"explain: expected a Tensor, got {type(output).__name__}")
    if not output.requires_grad:
        raise RuntimeError("explain: the output does not require grad, so there is no backward pass to explain")
    if isinstance(values_up_to, bool) or not isinstance(values_up_to, int) or values_up_to < 0:
        raise ValueError(f"explain: values_up_to must be an int >= 0 (a number of elements), got {values_up_to!r}")
    small_graph, backward_ran = _check_not_freed(output, values_up_to)
    if values is None:
        values = small_graph and backward_ran
    label = tensor_names(names)
    left_out: list[int] = []

    def keep(t):
        if not values:
            return None
        kept = _small(t, values_up_to)
        if kept is None:
            left_out.append(int(np.prod(t.shape)))
        return kept

    visited: list[tuple[Any, ...]] = []
    leaves: dict[int, Tensor] = {}

    def visit(node, g, grads):  # called before the node's inputs are released
        visited.append((node, _norm(g), tuple(g.shape), keep(g), [
            (i, child, node.inputs[i], None if grads[i] is None else _norm(grads[i]),
             None if grads[i] is None else keep(grads[i])) for i, child, _, _ in node.edges
        ]))
        for _, child, _, _ in node.edges:
            if isinstance(child, Tensor):
                leaves.setdefault(id(child), child)

    if output.grad_fn is None:
        leaves[id(output)] = output
    captured = run_backward(root_gradients([output], [gradient]), retain_graph=True, create_graph=False, capture=[],
                            visit=visit, fill_retained=False)
    step_of = {node: k + 1 for k, (node, *_rest) in enumerate(visited)}
    # The tensor each node produced: `output` for the root, else the input of the node that used it
    # (a node keeps only a weak reference to its output).
    produced = {output.grad_fn: output}
    # what each node and leaf received, edge by edge: (the sender's '#k Op', the gradient's values or None)
    received: dict[Any, list[tuple[str, Any]]] = {}
    for k, (node, _g, _shape, _gv, edges) in enumerate(visited):
        for _, child, t, gn, grad_value in edges:
            if not isinstance(child, Tensor):
                produced[child] = t
            if gn is not None:
                received.setdefault(id(child), []).append((f"#{k + 1} {node.name()}", grad_value))
    rows = []
    for k, (node, g_norm, out_shape, g_value, edges) in enumerate(visited):
        fwd, vjp = formulas(node)
        ins = []
        for i, child, t, gn, grad_value in edges:
            shape = tuple(t.shape)
            if isinstance(child, Tensor):
                source = f"leaf '{label[id(t)]}'" if id(t) in label else "leaf (unnamed)"
            else:
                source = f"#{step_of[child]} {child.name()}" if child in step_of else child.name()
                if id(t) in label:
                    source += f" '{label[id(t)]}'"
            ins.append(InputInfo(i, shape, source, gn, _broadcast_of(node, shape, out_shape) if gn is not None else (),
                                 grad_value))
        out = produced.get(node)
        out_name = label.get(id(out), "") if out is not None else ""
        named = step_name(node)
        name_lines = named.lines() if named is not None else [""]
        rows.append(Step(k + 1, node.name(), out_shape, out_name, g_norm, fwd, vjp, ins,
                         keep(out) if out is not None else None, g_value, name_lines[0], name_lines[1:],
                         _sent_by(received.get(id(node)), g_value),
                         [sender for sender, _ in received.get(id(node), [])]))
    leaf_rows = []
    for key, t in leaves.items():
        g = captured.get(key)
        if g is None:
            continue
        grad = np.array(g._array, copy=True)
        if values and grad.size > values_up_to:
            left_out.append(grad.size)
        leaf_rows.append(LeafGrad(label.get(key, "(unnamed)"), tuple(t.shape), _norm(g), t, grad,
                                  _sent_by(received.get(key), _small(grad, values_up_to) if values else None)))
    return Explanation(rows, leaf_rows, tuple(output.shape), bool(values), compact, left_out, values_up_to)


def _sent_by(received, value):
    """'#k Op' when a single node sent all of `value` (so its values were printed there), else ''."""
    if value is None or not received or len(received) != 1:
        return ""
    sender, sent = received[0]
    return sender if sent is not None and np.array_equal(sent, value) else ""


def _check_not_freed(output, small_up_to):
    """Refuse, saying what to do, a graph that a backward without retain_graph already ran through.
    Returns (whether every tensor of the graph has at most `small_up_to` elements, whether a leaf has a .grad)."""
    stack, seen = [output.grad_fn] if output.grad_fn is not None else [], set()
    small, grads = output.numel() <= small_up_to, output.grad_fn is None and output.grad is not None
    while stack:
        node = stack.pop()
        if node.inputs is None:
            raise RuntimeError(
                f"explain: backward() already ran through this graph (at '{node.name()}') and freed what its "
                "nodes saved, so it can't be replayed. Call explain(loss) before loss.backward(), or run "
                "loss.backward(retain_graph=True). The gradients that backward stored are in each leaf's "
                ".grad; minitensor.viz.to_dot(loss, show_values=True) draws them."
            )
        for _, child, shape, _ in node.edges:
            small = small and int(np.prod(shape)) <= small_up_to
            if isinstance(child, Tensor):
                grads = grads or child.grad is not None
            elif child not in seen:
                seen.add(child)
                stack.append(child)
    return small, grads
