r"""Checking one case of one exercise against the student's module: what failed, said once, at their line.

Runs inside the process that grades (see `grade.py`, which gives each case a time limit). Each
check returns `(status, lines)`: status 'pass', 'fail' or 'not implemented', and the lines to
show the student. The rules the messages follow:
- one (yours, true) pair per wrong input: the element that misses the tolerance by the most;
- when yours / true is the same number at every element, say so: a factor is missing or extra;
- an error in the student's code is shown with the student's frames only (their file and line),
  never the grader's or the library's.

The true gradient of a 'backward' exercise comes from central differences,

    dL/dx_j ~ (f(x + eps e_j) - f(x - eps e_j)) / (2 eps),   f(x) = <u, out(x)>,

in float64 with eps = 1e-6 (error about 1e-9) and u a random upstream gradient: with u all ones
the gradient of a softmax would be 0 whatever the backward returns.

Split in two (see `grade.py`): the `run_*` functions call the student's code, in the child
process, and describe what came back as values (arrays, error lines); the `judge_*` functions,
in the grader's process, check those values (through `channel.py`'s strict checks) against
references computed there. So nothing the student's code does can reach a verdict.
"""
import copy
import inspect
import itertools
import math
import os
import re
import traceback

import numpy as np

import minitensor
from minitensor.autograd import Function, grad, no_grad

from . import ninja
from .channel import (
    MAX_DIMS,
    MAX_ELEMENTS,
    Malformed,
    clip,
    clip_lines,
    decode,
    encode,
    expect_array,
    expect_bool,
    expect_dict,
    expect_int,
    expect_lines,
    expect_shape,
    expect_text,
)

EPS = 1e-6
# against finite differences (error ~1e-9, and more where the output is large); against autograd
# the two sides differ only by the order of float64 sums
NUMERIC_TOL, AUTOGRAD_TOL = (1e-5, 1e-3), (1e-8, 1e-6)


# ---- what the student wrote ------------------------------------------------------------------------

def _in_file(filename, path):
    return os.path.normcase(os.path.abspath(filename)) == os.path.normcase(os.path.abspath(path))


def student_error(e, path, fallback=None):
    """Lines describing exception `e` through the student's frames only (their file and line).

    A recursion shows its repeated line once with a count. An error raised after the student's
    code returned (the engine checking what their backward gave back) has no frame of theirs:
    then `fallback`, a function of theirs, is pointed at instead."""
    if isinstance(e, SyntaxError) and e.filename and _in_file(e.filename, path):
        return [f"SyntaxError: {e.msg}", f'  File "{path}", line {e.lineno}', f"    {(e.text or '').strip()}"]
    message = str(e).strip().splitlines() or [""]
    lines = [f"{type(e).__name__}: {message[0]}"] + ["  " + m for m in message[1:]]
    frames = [f for f in traceback.extract_tb(e.__traceback__) if _in_file(f.filename, path)]
    shown = []  # [frame, times]: a recursion repeats the same few lines hundreds of times
    for f in frames:
        if shown and (shown[-1][0].lineno, shown[-1][0].name) == (f.lineno, f.name):
            shown[-1][1] += 1
        elif len(shown) >= 2 and (shown[-2][0].lineno, shown[-2][0].name) == (f.lineno, f.name):
            shown[-2][1] += 1  # a two-line cycle (a call, then the recursive call)
        else:
            shown.append([f, 1])
    for f, times in shown:
        again = f" (and {times - 1} more times: a recursion)" if times > 1 else ""
        lines.append(f'  File "{path}", line {f.lineno}, in {f.name}{again}')
        if f.line:
            lines.append(f"    {f.line.strip()}")
    if not shown and fallback is not None:
        try:
            start = inspect.getsourcelines(fallback)[1]
        except (OSError, TypeError):
            start = None
        if start is not None:
            lines.append(f'  File "{path}", line {start}, in {fallback.__name__} '
                         "(raised after it returned: check what it returns)")
    if isinstance(e, RecursionError):
        lines.append("a recursive walk stops at about 1000 nested calls: use an explicit stack (a list you "
                     "append to and pop from) instead")
    return lines


def _raised_by_student(e, path):
    frames = traceback.extract_tb(e.__traceback__)
    return bool(frames) and _in_file(frames[-1].filename, path)


def _student_functions(module):
    """The Function subclasses the student's file defines."""
    return [v for v in vars(module).values()
            if isinstance(v, type) and issubclass(v, Function) and v.__module__ == module.__name__]


def _fallback(module, method):
    found = _student_functions(module) if method else []
    return getattr(found[0], method) if found else None


def describe_error(e, module, path, method):
    """In the child: an exception from the student's side as values (their lines, and whether it
    is their own NotImplementedError, i.e. a stub not written yet)."""
    return {"lines": clip_lines(student_error(e, path, _fallback(module, method))),
            "not_implemented": isinstance(e, NotImplementedError) and _raised_by_student(e, path),
            "message": clip(str(e))}


def _error_verdict(record, what, path):
    """In the grader: (status, lines) for an error record the child sent."""
    expect_dict(record, ("lines", "not_implemented", "message"), path)
    lines = expect_lines(record["lines"], f"{path}.lines")
    if expect_bool(record["not_implemented"], f"{path}.not_implemented"):
        return "not implemented", [f"NOT IMPLEMENTED: {expect_text(record['message'], f'{path}.message')}"]
    return "fail", [f"ERROR in your code {what}:"] + ["  " + x for x in lines]


# ---- comparing gradients ---------------------------------------------------------------------------

def _fmt_index(j):
    return str(j if len(j) != 1 else j[0]) if j else "()"


def _factor(c):
    """A ratio in words: 2x, 1/4 of, the negative of ..."""
    if abs(c + 1) < 1e-3:
        return "the negative of"
    inv = 1 / c
    if abs(c) < 1 and abs(inv - round(inv)) < 1e-3 * abs(inv):
        return f"1/{round(inv)} of" if inv > 0 else f"-1/{-round(inv)} times"
    return f"{c:.4g}x"


def _tolerance(true, tol):
    """(atol, rtol) for comparing with `true`: the absolute part shrinks with the true gradient's
    size (down to 1/1000 of it), so a small gradient is checked relatively, and returning 0 for
    it, or twice it, fails as it does for a large one."""
    atol, rtol = tol
    scale = float(np.abs(true).max()) if true.size else 0.0
    return min(atol, max(atol * 1e-3, atol * scale)), rtol


def constant_ratio(yours, true, tol=NUMERIC_TOL):
    """The number c with yours = c * true at every element (within tolerance), or None."""
    atol, rtol = _tolerance(true, tol)
    if yours.size == 0:
        return None
    big = np.abs(true) > max(atol, 1e-3 * float(np.abs(true).max()))
    if not big.any():
        return None
    c = float(np.median(yours[big] / true[big]))
    if not np.all(np.abs(yours - c * true) <= atol + rtol * np.abs(c * true)):
        return None
    return c


def _transposed(yours, true, tol):
    """Whether `yours` is `true` with its last two dims swapped (and that is not `true` itself)."""
    if true.ndim < 2 or true.shape[-1] != true.shape[-2] or true.shape[-1] < 2:
        return False
    atol, rtol = tol
    swapped = np.swapaxes(true, -1, -2)
    return bool(np.all(np.abs(yours - swapped) <= atol + rtol * np.abs(swapped)))


# the ratios any backward can slip into, after an exercise's own (see Exercise.factors)
_COMMON_FACTORS = [(2.0, "2", "a term counted twice, or a factor 2 too many?"),
                   (0.5, "1/2", "a term left out, or a factor 1/2 too many?")]


def broadcast_factors(in_shape, out_shape):
    """An input broadcast over rows of the output (a weight, a bias) gets the sum of their gradients:
    a mean there instead gives a ratio of 1/rows."""
    in_shape, out_shape = tuple(in_shape), tuple(out_shape)
    try:
        if np.broadcast_shapes(in_shape, out_shape) != out_shape:
            return []
    except ValueError:
        return []
    rows = math.prod(out_shape) // max(1, math.prod(in_shape))
    if rows < 2:
        return []
    return [(1 / rows, f"1/{rows} (the input is used by {rows} rows)",
             "a mean over a broadcast axis where the sum belongs? An input used by every row gets the sum of "
             "their gradients")]


def _named(c, factors):
    """The slips whose factor is c: [(what the factor is, what it means)]."""
    return [(what, means) for value, what, means in factors if abs(c - value) <= 1e-3 * abs(value)]


def gradient_pair(name, yours, true, truth, note=None, upstream=None, tol=NUMERIC_TOL, zero_note=True, factors=()):
    """[] if `yours` matches `true`; else the lines naming the input, its worst element as one
    (yours, true) pair, and what a constant ratio means (`upstream`: the random upstream gradient,
    for a scalar output: a ratio of 1/upstream means it was left out; `factors`: the ratios this
    exercise's usual slips give, [(value, what it is, what it means)], named when one matches).
    The tolerance is relative to the true gradient's size (see `_tolerance`)."""
    if yours is None:
        return [f"WRONG GRADIENT for {name}: your backward returned None for it, but it needs a gradient"]
    tol = _tolerance(true, tol)
    atol, rtol = tol
    err = np.abs(yours - true) - (atol + rtol * np.abs(true))
    bad = ~(err <= 0)  # NaN counts as wrong
    if not bad.any():
        return []
    j = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(np.isnan(err), np.inf, err))), true.shape))
    lines = [f"WRONG GRADIENT for {name}: {int(bad.sum())} of {true.size} elements are wrong",
             f"  worst, element {_fmt_index(j)}: yours {yours[j]:.6g}, {truth} {true[j]:.6g}"]
    c = constant_ratio(yours, true, tol)
    if np.all(np.abs(yours) <= atol) and np.any(np.abs(true) > atol):
        if zero_note:
            lines.append("  your gradient is 0 everywhere: is the gradient you computed the one you return?")
    elif _transposed(yours, true, tol):
        lines.append("  your gradient is the true one transposed (its last two dims swapped): a .mT too many or "
                     "too few, or a matmul's factors in the wrong order?")
    elif c is not None and abs(c) > 1e-12 and abs(c - 1) > 1e-3:
        named = _named(c, list(factors) + _COMMON_FACTORS)
        if upstream is not None and np.ndim(upstream) == 0 and abs(c * float(upstream) - 1) < 1e-3:
            lines.append(f"  your gradient is the true one divided by the upstream gradient g ({float(upstream):.4g} "
                         "here) everywhere: multiply by g")
        elif abs(c + 1) < 1e-3:
            lines.append("  your gradient is the true one with its sign flipped everywhere: a "
                         "minus sign too many or too few")
        elif named:
            what = named[0][0]
            times = "" if what in ("2", "1/2") else f", i.e. times {what}"
            lines.append(f"  your gradient is {_factor(c)} the true one everywhere{times}: {named[0][1]}")
            lines += [f"  or: {means}" for _, means in named[1:]]
        else:
            lines.append(f"  your gradient is {_factor(c)} the true one everywhere: a missing or extra factor")
    if note:
        lines.append("  " + note)
    return lines


_SHAPE_ERROR = re.compile(r"gradient of shape \(([0-9, ]*)\) for input (\d+), which has shape \(([0-9, ]*)\)")


def _shape(text):
    return tuple(int(d) for d in text.replace(" ", "").split(",") if d)


def shape_note(exercise, message):
    """What a gradient of the wrong shape most likely means (the engine's error names both shapes):
    a transpose, or a sum left out over the axes an input was broadcast along; None otherwise."""
    m = _SHAPE_ERROR.search(message)
    if m is None:
        return None
    got, i, want = _shape(m.group(1)), int(m.group(2)), _shape(m.group(3))
    if len(got) > MAX_DIMS or len(want) > MAX_DIMS or max(got + want, default=0) > MAX_ELEMENTS:
        return None  # (the message is the child's text: no real case has such shapes)
    name = f"'{exercise.arg_names[i]}'" if i < len(exercise.arg_names) else f"input {i}"
    return shape_words(name, got, want)


def shape_words(name, got, want):
    """What a gradient of shape `got` for `name`, of shape `want`, most likely means, or None."""
    if len(got) == len(want) >= 2 and got == want[:-2] + (want[-1], want[-2]):
        return (f"your gradient for {name} is {got}, its shape is {want}: the last two dims are swapped, "
                "a transpose too many or too few?")
    try:
        broadcast = np.broadcast_shapes(want, got) == got
    except ValueError:
        broadcast = False
    if broadcast:
        lead = len(got) - len(want)
        axes = list(range(lead)) + [lead + k for k, d in enumerate(want) if d == 1 and got[lead + k] != 1]
        return (f"your gradient for {name} is {got}, its shape is {want}: {name} is broadcast over dims {axes} "
                "of it, so its gradient is the sum over them: a missing sum over a broadcast axis")
    return None


def _numeric_gradient(fn, args, i, u):
    r"""d<u, fn(args)>/d args[i] by central differences (outputs subtracted before they are weighted)."""
    base = np.array(args[i].numpy(force=True), dtype=np.float64)
    numeric = np.zeros_like(base)
    flat = base.reshape(-1)

    def out_at(a):
        moved = list(args)
        moved[i] = minitensor.from_numpy(a.copy())
        return np.array(fn(*moved).numpy(force=True), dtype=np.float64)

    with no_grad():
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + EPS
            plus = out_at(base)
            flat[j] = orig - EPS
            minus = out_at(base)
            flat[j] = orig
            numeric.reshape(-1)[j] = float(np.sum((plus - minus) * u)) / (2 * EPS)
    return numeric


def _gradients(fn, args, wanted, u):
    """The gradients of <u, fn(args)> for args[i], i in wanted (None where none arrives)."""
    inputs = [a.detach().requires_grad_(True) if i in wanted else a for i, a in enumerate(args)]
    out = fn(*inputs)
    if not out.requires_grad:
        return [None] * len(wanted)
    found = grad([out], [inputs[i] for i in wanted], grad_outputs=[minitensor.from_numpy(u)], allow_unused=True)
    return [None if g is None else np.array(g.numpy(force=True), dtype=np.float64) for g in found]


def _describe_input(exercise, i):
    return f"input '{exercise.arg_names[i]}' (argument {i})"


# ---- the student's side, in the child ------------------------------------------------------------

def arguments(args):
    """The case's arguments as the child receives them: arrays for tensors, the rest as they are."""
    return [("tensor", a.numpy(force=True)) if isinstance(a, minitensor.Tensor) else ("value", a) for a in args]


def from_arguments(sent):
    return [minitensor.from_numpy(v.copy()) if kind == "tensor" else v for kind, v in sent]


def run_forward(module, path, entry, args):
    """Call the student's function once: its output as float64 values, or its error."""
    try:
        got = getattr(module, entry)(*args)
        if not isinstance(got, minitensor.Tensor):
            return {"error": None, "type": clip(type(got).__name__), "values": None}
        return {"error": None, "type": "Tensor", "values": np.array(got.numpy(force=True), dtype=np.float64)}
    except Exception as e:  # noqa: BLE001 (whatever the student's code raises is reported, not raised)
        return {"error": describe_error(e, module, path, "forward"), "type": None, "values": None}


def run_gradients(module, path, entry, args, floats, u):
    """The node that made the output (its name and module), then the gradients of <u, out> for the
    float inputs, as computed by the student's backward."""
    fn = getattr(module, entry)
    out = {"probe_error": None, "node": None, "grad_error": None, "grads": None}
    try:
        probe = fn(*[a.detach().requires_grad_(True) if i in floats else a for i, a in enumerate(args)])
        node = probe.grad_fn
        if node is None:
            return out
        out["node"] = [clip(node.name()), clip(type(node).__module__)]
    except Exception as e:  # noqa: BLE001 (say, .numpy() on an input that requires grad)
        out["probe_error"] = describe_error(e, module, path, "forward")
        return out
    if type(node).__module__ != module.__name__:
        return out
    # The exercise is the VJP itself, unbroadcasting included: the engine's leniency for users' Functions
    # (a broadcast gradient summed to its input, as PyTorch allows) is off for the student's node, so a
    # missing sum over a broadcast axis is named as the slip it is
    type(node).sums_broadcast_gradients = False
    try:
        out["grads"] = _gradients(fn, args, floats, u)
    except Exception as e:  # noqa: BLE001
        out["grad_error"] = describe_error(e, module, path, "backward")
    return out


def _order_limit(n_nodes):
    return 2 * n_nodes + 100  # an order with a few duplicates is still described in full


def run_order(module, path, entry, case, seed):
    """Call topological_order on the case's graph; describe each entry of what it returned by its
    index in the graph (`graph_nodes` numbers them the same way in the grader)."""
    root = case.make(np.random.default_rng(seed))[0].grad_fn
    nodes = graph_nodes(root)
    index = {id(n): k for k, n in enumerate(nodes)}
    try:
        order = getattr(module, entry)(root)
        if not isinstance(order, (list, tuple)) and hasattr(order, "__iter__"):
            order = list(itertools.islice(order, _order_limit(len(nodes)) + 1))  # a generator is a fine answer
    except Exception as e:  # noqa: BLE001
        return {"error": describe_error(e, module, path, None), "returned": None, "length": 0, "entries": []}
    if not isinstance(order, (list, tuple)):
        return {"error": None, "returned": clip(type(order).__name__), "length": 0, "entries": []}
    entries = []
    for n in order[:_order_limit(len(nodes))]:
        if isinstance(n, minitensor.Tensor):
            entries.append(["leaf", [int(d) for d in n.shape]])
        elif isinstance(n, Function):
            entries.append(["node", index[id(n)]] if id(n) in index else ["foreign", clip(type(n).__name__)])
        else:
            entries.append(["other", clip(type(n).__name__)])
    return {"error": None, "returned": "list", "length": len(order), "entries": entries}


class MissingUpstream(KeyError):
    """A step of the ninja exercise read a gradient it is not given: the message names those it is."""

    def __str__(self):
        return str(self.args[0])


class _Upstream(dict[str, object]):
    """The gradients a step gets in `d`: those of the variables its own variable feeds directly."""

    def __init__(self, name, values):
        super().__init__(values)
        self.name = name

    def __missing__(self, key):
        raise MissingUpstream(f"d[{key!r}]: d_{self.name} gets the gradients of what {self.name} feeds directly, "
                              f"{', '.join(f'd[{k!r}]' for k in self)}, and no other")


def _as_values(value):
    """What a step or `train` returned, as {"type", "values"}: float64 values when it is an array,
    a Tensor, a number or a list of numbers that the channel can carry; else only its type's name."""
    if isinstance(value, minitensor.Tensor):
        value = value.numpy(force=True)
    elif isinstance(value, (list, tuple)) and len(value) <= MAX_ELEMENTS and all(
            isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in value):
        value = np.array(value, dtype=np.float64)
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "iuf":
        return {"type": clip(type(value).__name__), "values": None}
    if value.ndim > MAX_DIMS or value.size > MAX_ELEMENTS:
        return {"type": clip(f"array of shape {value.shape}"), "values": None}
    return {"type": "array", "values": np.array(value, dtype=np.float64)}


def run_ninja(module, path, kind, payload):
    """The ninja exercise in the child: one step (`kind` 'step': payload (name, cache, params,
    upstream)) or the training run ('train': payload (params, tokens, targets, steps, lr)), which
    runs with autograd off: its gradients must come from the student's own steps."""
    try:
        if kind == "step":
            name, cache, params, upstream = payload
            got = getattr(module, f"d_{name}")(cache, params, _Upstream(name, upstream))
        else:
            with no_grad():
                got = module.train(*payload)
    except Exception as e:  # noqa: BLE001
        return {"error": describe_error(e, module, path, None), "type": None, "values": None}
    return {"error": None, **_as_values(got)}


# ---- the grader's side: verdicts from those values --------------------------------------------------

def judge_case(exercise, case, seed, module_name, call):
    """Grade one case: (status, lines). `call(kind, payload)` has the student's side run (in a child
    process, or here for `check_case`) and returns its decoded record; every verdict is computed here
    from those values against references computed here. A record that is not exactly what was asked
    for raises Malformed."""
    rng = np.random.default_rng(seed)
    if exercise.kind == "order":
        return _judge_order(exercise, case, rng, call("order", seed))
    if exercise.kind == "steps":
        return _judge_steps(exercise, case, rng, call)
    return _judge_function(exercise, case, rng, module_name, call)


def _judge_function(exercise, case, rng, module_name, call):
    args = case.make(rng)
    floats = [i for i, a in enumerate(args) if isinstance(a, minitensor.Tensor) and a.dtype.kind == "f"]
    given = exercise.kind == "backward"

    # 1. the forward, against the reference made of minitensor's ops
    record = expect_dict(call("forward", arguments(args)), ("error", "type", "values"))
    if record["error"] is not None:
        return _error_verdict(record["error"], "in the forward", "error")
    want = exercise.reference(*args)
    if record["values"] is None:
        shape = expect_text(record["type"], "type")
    else:
        yours = expect_array(record["values"], "values")
        shape = yours.shape
    if shape != tuple(want.shape):
        return "fail", [f"WRONG FORWARD: your output is {shape}, the right one has shape {tuple(want.shape)}"
                        + ("; the forward was given: restore it" if given else "")]
    true = want.numpy(force=True).astype(np.float64)
    if not np.allclose(yours, true, rtol=1e-7, atol=1e-9):
        diff = np.abs(yours - true)
        j = tuple(int(x) for x in np.unravel_index(int(np.argmax(np.where(np.isnan(diff), np.inf, diff))), true.shape))
        return "fail", [f"WRONG FORWARD: element {_fmt_index(j)} of your output is {yours[j]:.6g}, it should be "
                        f"{true[j]:.6g}" + ("; the forward was given: restore it" if given else "")]

    # 2. the output must come from the student's own Function (composing library ops would be no
    # exercise). The child reports the node: a lie here gains nothing the gradients don't check
    u = np.asarray(rng.standard_normal(tuple(want.shape)))
    record = expect_dict(call("gradients", (floats, u)), ("probe_error", "node", "grad_error", "grads"))
    if record["probe_error"] is not None:
        return _error_verdict(record["probe_error"], "in the forward, on inputs that require grad", "probe_error")
    node = record["node"]
    if node is not None and (not isinstance(node, list) or len(node) != 2):
        raise Malformed("node should be [name, module]")
    if node is None or expect_text(node[1], "node[1]") != module_name:
        made = "no graph node" if node is None else f"'{expect_text(node[0], 'node[0]')}' of {node[1]}"
        return "fail", [f"NOT YOUR FUNCTION: the output was made by {made}, not by a Function defined in your file; "
                        "the exercise is to write that Function's backward"]

    # 3. every float input's gradient, one (yours, true) pair for each that is wrong
    if record["grad_error"] is not None:
        status, lines = _error_verdict(record["grad_error"], "in the backward", "grad_error")
        note = shape_note(exercise, expect_text(record["grad_error"]["message"], "grad_error.message"))
        return status, lines + ([f"  {note}"] if note else [])
    grads = record["grads"]
    if not isinstance(grads, list) or len(grads) != len(floats):
        raise Malformed(f"grads should be a list of {len(floats)} gradients")
    analytic = [None if g is None else expect_array(g, f"grads[{k}]", args[i].shape)
                for k, (i, g) in enumerate(zip(floats, grads))]
    if exercise.kind == "backward":
        # differences of the reference: its forward equals theirs (checked above), and it prints nothing
        truth, tol = "finite differences", NUMERIC_TOL
        true_grads = [_numeric_gradient(exercise.reference, args, i, u) for i in floats]
    else:
        truth, tol, true_grads = "autograd", AUTOGRAD_TOL, _gradients(exercise.reference, args, floats, u)
    lines = []
    for i, yours_g, true_g in zip(floats, analytic, true_grads):
        note = None
        if exercise.diagnose is not None and yours_g is not None:
            note = exercise.diagnose(args, i, yours_g, true_g)
        factors = (exercise.factors(args, i) if exercise.factors else []) + broadcast_factors(args[i].shape, want.shape)
        lines += gradient_pair(_describe_input(exercise, i), yours_g, true_g, truth, note, upstream=u, tol=tol,
                               factors=factors)
    return ("fail" if lines else "pass"), lines


def graph_nodes(root):
    """Every node reachable from `root` (a list, the same order in the child and in the grader),
    and for each the nodes that made its inputs (a dict)."""
    inputs, stack = {root: []}, [root]
    while stack:
        node = stack.pop()
        for child, _ in node.gradient_edges:
            if isinstance(child, minitensor.Tensor):
                continue
            inputs[node].append(child)
            if child not in inputs:
                inputs[child] = []
                stack.append(child)
    return _Nodes(inputs)


class _Nodes(list[Function]):
    def __init__(self, inputs):
        super().__init__(inputs)
        self.inputs = inputs


class _Entry:
    """An entry of the student's order that is no node of the graph: a leaf, a node from elsewhere,
    or something else."""

    def __init__(self, kind, what):
        self.kind, self.what = kind, what

    def name(self):
        return str(self.what)


def _entries(record, nodes):
    expect_dict(record, ("error", "returned", "length", "entries"))
    length = expect_int(record["length"], "length")
    if not isinstance(record["entries"], list) or len(record["entries"]) != min(length, _order_limit(len(nodes))):
        raise Malformed("entries should describe the order's entries")
    order = []
    for k, e in enumerate(record["entries"]):
        if not isinstance(e, list) or len(e) != 2 or e[0] not in ("leaf", "node", "foreign", "other"):
            raise Malformed(f"entries[{k}] should be [kind, what]")
        if e[0] == "node":
            order.append(nodes[expect_int(e[1], f"entries[{k}][1]", 0, len(nodes) - 1)])
        elif e[0] == "leaf":
            order.append(_Entry("leaf", expect_shape(e[1], f"entries[{k}][1]")))
        else:
            order.append(_Entry(e[0], expect_text(e[1], f"entries[{k}][1]")))
    return order


def _order_problems(order, inputs):
    """What is wrong with `order` as a topological order of the graph `inputs`, in words."""
    leaves = [n for n in order if isinstance(n, _Entry) and n.kind == "leaf"]
    if leaves:
        return [f"your order holds a leaf tensor of shape {leaves[0].what}: list only nodes (grad_fn "
                "objects); a leaf has no backward to run"]
    others = [n for n in order if isinstance(n, _Entry) and n.kind == "other"]
    if others:
        return [f"your order holds a {others[0].what}, not a node: list the grad_fn objects"]
    problems, position = [], {}
    for k, node in enumerate(order):
        if node in position:
            problems.append(f"'{node.name()}' is in your order twice: each node must run once, with the sum "
                            "of its gradients")
            break
        position[node] = k
    missing = [n for n in inputs if n not in position]
    if missing:
        problems.append(f"your order misses {len(missing)} of the {len(inputs)} nodes (one is "
                        f"'{missing[0].name()}'): their backward never runs")
    for node, k in position.items():
        early = [c for c in inputs.get(node, ()) if c in position and position[c] < k]
        if early:
            problems.append(f"'{early[0].name()}' (at {position[early[0]]} in your order) comes before "
                            f"'{node.name()}' (at {k}), which reads its output: it would run before all of its "
                            "gradient has arrived")
            break
    return problems


def _walk(root, g, order):
    """Backpropagate through the graph in `order` as given (run twice, out of turn or never). Only
    the library's own nodes run: the order is all the student contributed."""
    pending, leaves = {root: g}, {}
    with no_grad():
        for node in order:
            if node not in pending:
                continue  # no gradient reached it (yet): in a bad order, that is where gradient is lost
            grads = node.backward(node, pending.pop(node))
            grads = grads if isinstance(grads, tuple) else (grads,)
            for child, i in node.gradient_edges:
                gi = (grads[i] if isinstance(grads[i], minitensor.Tensor)
                      else minitensor.from_numpy(np.asarray(grads[i])))
                if isinstance(child, minitensor.Tensor):
                    leaves[id(child)] = leaves[id(child)] + gi if id(child) in leaves else gi
                else:
                    pending[child] = pending[child] + gi if child in pending else gi
    return leaves


def _judge_order(exercise, case, rng, record):
    out, leaves = case.make(rng)
    u = minitensor.from_numpy(np.asarray(rng.standard_normal(tuple(out.shape))))
    root = out.grad_fn
    nodes = graph_nodes(root)
    order = _entries(record, nodes)
    if record["error"] is not None:
        return _error_verdict(record["error"], "in topological_order", "error")
    if record["returned"] != "list":
        return "fail", [f"topological_order returned a {expect_text(record['returned'], 'returned')}, not a list "
                        "of nodes"]
    if record["length"] > _order_limit(len(nodes)):
        return "fail", [f"your order has {record['length']} entries, for a graph of {len(nodes)} nodes: each node "
                        "must be in it once"]
    problems = _order_problems(order, nodes.inputs)
    if problems and any(isinstance(n, _Entry) and n.kind != "foreign" for n in order):
        return "fail", problems
    yours = _walk(root, u, order)
    true = grad([out], list(leaves.values()), grad_outputs=[u], retain_graph=True)
    lines = []
    for (name, leaf), g in zip(leaves.items(), true):
        mine = yours.get(id(leaf))
        mine = np.zeros(tuple(leaf.shape)) if mine is None else mine.numpy(force=True)
        lines += gradient_pair(f"leaf '{name}' {tuple(leaf.shape)}", mine, g.numpy(force=True), "the engine's",
                               tol=AUTOGRAD_TOL, zero_note=False)
    lines += problems
    return ("fail" if lines else "pass"), lines


def _returned(record, what, want_shape):
    """The array a ninja record holds, or the lines saying what came back instead."""
    expect_dict(record, ("error", "type", "values"))
    if record["error"] is not None:
        return None, _error_verdict(record["error"], f"in {what}", "error")
    if record["values"] is None:
        return None, ("fail", [f"WRONG TYPE: {what} returned a {expect_text(record['type'], 'type')}, not an array "
                               f"of shape {want_shape}"])
    return expect_array(record["values"], "values"), None


def _judge_steps(exercise, case, rng, call):
    """One step of the ninja exercise, alone: the student's d_<name> on the forward values and random
    upstream gradients, against autograd's VJP of the lines that read <name>; or the training run."""
    params, tokens, targets = case.make(rng)
    if case.variable is None:
        return _judge_training(case, params, tokens, targets, call)
    name, what = case.variable, f"d_{case.variable}"
    cache = ninja.forward_values(params, tokens, targets)
    upstream = ninja.random_upstream(name, cache, rng)
    true = ninja.true_gradient(name, cache, params, tokens, targets, upstream)
    yours, verdict = _returned(call("step", (name, cache, params, upstream)), what, true.shape)
    if verdict is not None:
        return verdict
    if yours.shape != true.shape:
        note = shape_words(f"'{name}'", yours.shape, true.shape)
        return "fail", [f"WRONG SHAPE: {what} returned an array of shape {yours.shape}; {name} has shape "
                        f"{true.shape}, and so has its gradient"] + ([f"  {note}"] if note else [])
    note = exercise.diagnose(name, cache, upstream, yours, true) if exercise.diagnose else None
    factors = exercise.factors(name, cache) if exercise.factors else []
    lines = gradient_pair(f"{what} (the gradient of '{name}')", yours, true, "autograd", note,
                          upstream=upstream.get("loss"), tol=AUTOGRAD_TOL, factors=factors)
    return ("fail" if lines else "pass"), lines


def _judge_training(case, params, tokens, targets, call):
    """The student's `train`: its losses must fall and be autograd's training's, step by step."""
    want = ninja.train_reference(params, tokens, targets, case.steps, case.lr)
    yours, verdict = _returned(call("train", (params, tokens, targets, case.steps, case.lr)), "train",
                               want.shape)
    if verdict is not None:
        return verdict
    if yours.shape != want.shape:
        return "fail", [f"WRONG LOSSES: train returned {yours.size} values for {case.steps} steps: return the loss "
                        "before each step, as a list of floats"]
    lines = []
    if not np.all(np.isfinite(yours)):
        lines.append(f"YOUR LOSS IS NOT FINITE from step {int(np.argmin(np.isfinite(yours)))} on: a gradient far "
                     "too large, or a sign that climbs instead of descending?")
    elif not yours[-1] < yours[0]:
        lines.append(f"YOUR LOSS DOES NOT FALL: {yours[0]:.6g} before the first step, {yours[-1]:.6g} before the "
                     f"last (autograd's: {want[0]:.6g}, then {want[-1]:.6g})")
    close = np.abs(yours - want) <= 1e-9 + 1e-6 * np.abs(want)
    if not close.all():
        first = int(np.argmin(close))
        lines.append(f"YOUR TRAINING IS NOT AUTOGRAD'S: from step {first} on, the losses differ")
        lines += [f"  step {k}: yours {yours[k]:.8g}, autograd's {want[k]:.8g}" for k in range(first, min(first + 3,
                                                                                                      len(want)))]
        lines.append("  the loss before the first step is already different: is it the loss of the forward, before "
                     "the update?" if first == 0 else
                     "  the first loss agrees, so a gradient or the update is wrong: p[name] -= lr * dL/dp[name] for "
                     "every parameter; compare_by_hand shows which gradient")
    return ("fail" if lines else "pass"), lines


def check_case(exercise, module, path, case, seed):
    """Grade one case in this process, against a module already imported here: (status, lines).

    The same two halves as `grade.py` runs, joined by the same encoding and checks; but the
    student's code runs here, so use this for a trusted module only (the grader never does)."""
    state = {}

    def call(kind, payload):
        if kind == "forward":
            state["args"] = from_arguments(payload)
            record = run_forward(module, path, exercise.entry, state["args"])
        elif kind == "gradients":
            record = run_gradients(module, path, exercise.entry, state["args"], *payload)
        elif kind in ("step", "train"):
            # (a copy, as the child gets one: a step that changes its arguments changes no reference)
            record = run_ninja(module, path, kind, copy.deepcopy(payload))
        else:
            record = run_order(module, path, exercise.entry, case, payload)
        return decode(encode(record))

    return judge_case(exercise, case, seed, module.__name__, call)
