r"""What each exercise asks and how it is graded: its cases, points, reference and hints.

An `Exercise` names the function the student's file must define (`entry`), the inputs it gets,
a reference built from minitensor's own ops, and its cases (input shapes; each worth `points`).
Its `kind` says what is checked in each case (see `check.py`):

    'backward'   the forward is given; the student writes a Function's backward. Each float
                 input's gradient is compared with central finite differences (float64, the
                 output weighted by a random upstream gradient: never `.sum()`, whose gradient
                 through a softmax is zero and hides every bug).
    'function'   the student writes forward and backward; output and gradients are compared
                 with what autograd computes through the reference.
    'order'      the student writes the engine's topological sort; backward through graphs with
                 shared subexpressions in that order is compared with the real engine's.
    'steps'      the backprop ninja: the student writes the backward of a small attention model
                 one variable at a time (`d_x(c, p, d)` for each variable x, see `ninja.py`). Each
                 case grades one step alone, on random upstream gradients, against autograd's VJP
                 of the lines that read that variable; the last trains with the student's `train`
                 (their backward only) and compares its losses with autograd's training. Its
                 `diagnose` and `factors` take (variable, forward values, ...), not (args, index).

The hints come in tiers: 1 points the way, 2 names the pieces, 3 all but gives the answer. A
released stub raises NotImplementedError with hint 1; the grader shows more on request.
Adding an exercise: a teacher source in `source/` and an `Exercise(...)` below.
"""
import math

import numpy as np

import minitensor
import minitensor.nn.functional as F

from . import ninja


class Case:
    """One graded case: `make(rng)` returns the arguments of the student's function ('order':
    the output tensor and {name: leaf}); `points` is what passing it earns."""

    def __init__(self, label, make, points=1):
        self.label, self.make, self.points = label, make, points


class Exercise:
    def __init__(self, name, title, entry, arg_names, cases, hints, reference=None, kind="backward",
                 diagnose=None, timeout_note="an endless loop?", factors=None):
        self.name, self.title, self.entry, self.arg_names = name, title, entry, arg_names
        self.cases, self.hints, self.reference, self.kind = cases, hints, reference, kind
        self.timeout_note = timeout_note  # what a case that runs out of time most likely means
        # diagnose(args, input index, yours, expected) -> a sentence or None: what a wrong
        # gradient of this exercise most likely means (say, rows of repeated indices)
        self.diagnose = diagnose
        # factors(args, input index) -> [(value, what it is, what it most likely means)]: the ratios
        # yours / true this exercise's usual slips give (a missing 1/sqrt(d_k), a missing 1/N ...),
        # so the report can name the slip rather than print a bare number
        self.factors = factors

    @property
    def max_score(self):
        return sum(c.points for c in self.cases)

    def stub_message(self):
        """What a released stub raises: the task, hint 1 and how to ask for the next one."""
        more = f" (next hint: attention-grade --hint 2 {self.name})" if len(self.hints) > 1 else ""
        return f"{self.title} is yours to write. Hint 1: {self.hints[0]}{more}"


def _randn(rng, *shape, scale=1.0):
    return minitensor.from_numpy(rng.standard_normal(shape) * scale)


def _indices(values):
    return minitensor.from_numpy(np.array(values, dtype=np.int64))


# ---- softmax, layer norm, scaled dot-product attention ---------------------------------------------

def _softmax_case(shape, scale=1.0, shift=0.0):
    # every case's true gradient must be of a meaningful size: a softmax over rows of one element,
    # or over logits so far apart that it saturates, has a gradient of (nearly) 0, which a backward
    # returning 0 would match. Large inputs are a shift instead (the softmax does not change, the
    # gradient neither, but a backward that recomputes exp(x) overflows)
    label = f"x {shape}" + (f" times {scale:g}" if scale != 1 else "") + (f" plus {shift:g}" if shift else "")
    return Case(label, lambda rng: (minitensor.from_numpy(rng.standard_normal(shape) * scale + shift),))


def _layer_norm_case(shape):
    d = shape[-1]
    # weight and bias are random, not ones and zeros: a gradient that ignores them must not pass
    return Case(f"x {shape}, weight ({d},), bias ({d},)",
                lambda rng: (_randn(rng, *shape), _randn(rng, d), _randn(rng, d), 1e-5))


def _sdpa_case(q, k, v, causal=False):
    def make(rng):
        mask = minitensor.from_numpy(np.tril(np.ones((q[-2], k[-2]), dtype=bool))) if causal else None
        return _randn(rng, *q), _randn(rng, *k), _randn(rng, *v), mask

    return Case(f"q {q}, k {k}, v {v}" + (", causal mask" if causal else ""), make)


def _scale_factors(d_k):
    """The ratios a slip with the 1/sqrt(d_k) scale gives: left out (sqrt(d_k)) or applied twice."""
    root = math.sqrt(d_k)
    return [(root, f"sqrt(d_k)={root:.4g} (d_k={d_k})", "did you forget the 1/sqrt(d_k) scale?"),
            (1 / root, f"1/sqrt(d_k)={1 / root:.4g} (d_k={d_k})", "is the 1/sqrt(d_k) scale applied twice?")]


def _sdpa_factors(args, i):
    return _scale_factors(args[0].shape[-1]) if i < 2 else []  # v never meets the scale


def _sdpa_reference(q, k, v, mask=None):
    s = (q @ k.mT) * (1.0 / math.sqrt(q.shape[-1]))
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return F.softmax(s, dim=-1) @ v


# ---- cross-entropy, GELU, embedding ----------------------------------------------------------------

def _cross_entropy_case(n, c, scale=1.0):
    def make(rng):
        return _randn(rng, n, c, scale=scale), _indices(rng.integers(0, c, n))

    return Case(f"logits ({n}, {c})" + (f" times {scale:g}" if scale != 1 else "") + f", targets ({n},)", make)


def _mean_factors(args, i):
    """Cross-entropy: the loss is a mean over the N rows, so a slip with N gives N or 1/N."""
    n = args[0].shape[0]
    if n == 1:
        return []
    return [(n, f"N={n} (the number of rows)", "did you forget to divide by N? The loss is the mean over the rows"),
            (1 / n, f"1/N=1/{n}", "divided by N twice?")]


def _embedding_case(label, rows, dim, indices, points=1):
    return Case(label, lambda rng: (_indices(indices), _randn(rng, rows, dim)), points)


def _repeated_rows(args, i, yours, expected):
    """Embedding: when only rows looked up more than once are wrong, say so."""
    idx = args[0].numpy().reshape(-1)
    wrong = sorted({int(r) for r in np.argwhere(~np.isclose(yours, expected, rtol=1e-3, atol=1e-5))[:, 0]})
    counts = np.bincount(idx, minlength=yours.shape[0])
    if wrong and all(counts[r] > 1 for r in wrong):
        return (f"only rows looked up more than once are wrong (rows {wrong}, looked up "
                f"{[int(counts[r]) for r in wrong]} times): a repeated row must get the sum of all its gradients")
    return None


# ---- the attention block ---------------------------------------------------------------------------

def _block_case(batch, t, d, h, causal=False):
    shape = (*batch, t, d)

    def make(rng):
        return (_randn(rng, *shape), _randn(rng, h, d, scale=0.5), _randn(rng, h, d, scale=0.5),
                _randn(rng, h, d, scale=0.5), _randn(rng, d, h, scale=0.5), causal)

    return Case(f"x {shape}, head size {h}" + (", causal" if causal else ""), make)


def _block_factors(args, i):
    return _scale_factors(args[1].shape[0]) if i < 3 else []  # w_v and w_o never meet the scale


def _block_reference(x, w_q, w_k, w_v, w_o, causal=False):
    q, k, v = x @ w_q.mT, x @ w_k.mT, x @ w_v.mT
    s = (q @ k.mT) * (1.0 / math.sqrt(w_q.shape[0]))
    if causal:
        t = x.shape[-2]
        s = s.masked_fill(~minitensor.from_numpy(np.tril(np.ones((t, t), dtype=bool))), float("-inf"))
    return F.softmax(s, dim=-1) @ v @ w_o.mT


# ---- graphs for the topological sort ---------------------------------------------------------------

def _leaf(rng, *shape):
    return _randn(rng, *shape).requires_grad_(True)


def _graph_square(rng):
    x = _leaf(rng, 4)
    return (x * x).sin(), {"x": x}  # one node reads x twice


def _graph_diamond(rng):
    a = _leaf(rng, 3)
    b = a.exp()
    return b * b + b, {"a": a}  # b feeds three inputs of two nodes


def _graph_shared_layers(rng):
    x, w = _leaf(rng, 2, 3), _leaf(rng, 3, 3)
    h = (x @ w).tanh()
    return (h @ w) * h + h.sum(dim=1, keepdim=True), {"x": x, "w": w}  # w and h used at two depths


def _graph_residual(rng):
    a = _leaf(rng, 3)
    b = a.exp()
    return (b * 0.5).sin().tanh() + b, {"a": a}  # b reaches the output directly and through three ops


def _graph_ladder(rng):
    x = _leaf(rng, 2)
    y = x
    for _ in range(30):  # each step reads y twice: 2^30 paths from the output to x
        y = y + 0.1 * y.sin()  # (a slope near 1: the gradient at x neither vanishes nor explodes)
    return y, {"x": x}


def _graph_chain(rng):
    x = _leaf(rng, 3)
    y = x
    for _ in range(1500):  # 3000 nodes, one after another: deeper than Python's recursion limit
        y = y * 0.999 + 0.001
    return y, {"x": x}


# ---- the backprop ninja: a small attention model's backward, a variable at a time --------------------

_NINJA_LINES = {  # the line each step goes back through
    "logits": "loss = mean cross-entropy of logits", "h": "logits = h Wlm^T + blm",
    "w_lm": "logits = h Wlm^T + blm", "b_lm": "logits = h Wlm^T + blm",
    "proj": "h = x + proj, the residual", "att": "proj = att Wo^T", "w_o": "proj = att Wo^T",
    "probs": "att = probs v", "v": "att = probs v", "masked": "probs = softmax(masked)",
    "scaled": "masked = where(allowed, scaled, -inf)", "scores": "scaled = scores / sqrt(H)",
    "q": "scores = q k^T", "k": "scores = q k^T", "w_q": "q = x Wq^T", "w_k": "k = x Wk^T", "w_v": "v = x Wv^T",
    "x": "x feeds q, k, v and h", "wpe": "x = emb + wpe", "emb": "x = emb + wpe",
    "wte": "emb = wte[tokens] (tokens repeat)",
}


class StepCase(Case):
    """A case of the ninja exercise: the step d_x of one variable x alone, or (variable None)
    training for `steps` SGD steps of rate `lr`."""

    def __init__(self, variable=None, points=1, steps=8, lr=0.5):
        label = (f"d_{variable}: {_NINJA_LINES[variable]}" if variable is not None
                 else f"train: {steps} SGD steps on your backward alone")
        super().__init__(label, ninja.make_inputs, points)
        self.variable, self.steps, self.lr = variable, steps, lr


def _ninja_factors(name, cache):
    """The ratios a step's usual slips give: the mean's N, the scale, a mean over positions."""
    n = cache["targets"].size
    if name == "logits":
        return _mean_factors((cache["logits"].reshape(n, -1),), 0)
    if name == "scores":
        return _scale_factors(cache["q"].shape[-1])
    positions = {"w_lm": n, "b_lm": n, "w_o": n, "w_q": n, "w_k": n, "w_v": n, "wpe": cache["x"].shape[0]}
    if name in positions:
        return [(1 / positions[name], f"1/{positions[name]} ({name} is used at {positions[name]} positions)",
                 "a mean where the sum belongs? A weight used at every position gets the sum of their gradients")]
    return []


def _ninja_diagnose(name, cache, upstream, yours, true):
    """What a wrong step most likely means, where its shape says more than the numbers."""
    if name == "wte":
        return _repeated_rows((minitensor.from_numpy(cache["tokens"]),), 1, yours, true)
    if name == "scaled" and np.allclose(yours, upstream["masked"]):
        return ("yours is d['masked'] unchanged: where allowed is False, masked is the constant -inf, which does "
                "not depend on scaled: those entries get 0")
    if name == "x" and np.allclose(yours, true - upstream["h"]):
        return "the residual's term is missing: x feeds h = x + proj directly too, so dx has + d['h']"
    return None


EXERCISES = {e.name: e for e in [
    Exercise(
        "softmax", "the backward of softmax", "softmax", ("x",),
        [_softmax_case((5,)), _softmax_case((3, 4)), _softmax_case((2, 3, 5)), _softmax_case((4, 2)),
         _softmax_case((2, 6), shift=1000.0)],
        hints=(
            "every output p_i of a row depends on every input x_j of that row, so dL/dx_j is a sum over "
            "the row: dL/dx_j = sum_i g_i dp_i/dx_j.",
            "the Jacobian is dp_i/dx_j = p_i (delta_ij - p_j). Apply its transpose to g without building it: "
            "you need p, g and one sum along dim=-1 (keepdim=True).",
            "dx = p * (g - sum(g * p, dim=-1, keepdim=True)).",
        ),
        reference=lambda x: F.softmax(x, dim=-1)),
    Exercise(
        "layer_norm", "the backward of layer norm", "layer_norm", ("x", "weight", "bias", "eps"),
        [_layer_norm_case((6,)), _layer_norm_case((3, 4)), _layer_norm_case((2, 3, 5))],
        hints=(
            "out = xhat * weight + bias, so the gradient of xhat is g times weight; start from there. weight "
            "and bias are used by every row: their gradients are sums over all rows.",
            "mu and rstd depend on every element of the row, so dx has three terms: the direct one, one "
            "through the mean and one through the variance. For weight and bias, reshape(-1, D).sum(dim=0) "
            "sums over any number of leading dims.",
            "dx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)) with means over dim=-1, "
            "keepdim=True; dweight = sum of g * xhat over rows; dbias = sum of g over rows.",
        ),
        reference=lambda x, w, b, eps: F.layer_norm(x, (x.shape[-1],), w, b, eps)),
    Exercise(
        "sdpa", "the backward of scaled dot-product attention", "scaled_dot_product_attention",
        ("q", "k", "v", "mask"),
        [_sdpa_case((3, 4), (3, 4), (3, 2)), _sdpa_case((2, 3, 4), (2, 5, 4), (2, 5, 3)),
         _sdpa_case((4, 3), (4, 3), (4, 2), causal=True), _sdpa_case((2, 4, 2), (2, 4, 2), (2, 4, 3), causal=True)],
        hints=(
            "go back one line of the forward at a time, last first: out = P @ v, then the softmax, then the "
            "scale, then S = q @ k^T.",
            "a matmul C = A @ B gives dA = dC @ B^T and dB = A^T @ dC (.mT transposes the last two dims); the "
            "softmax's backward is the one of the softmax exercise. Masked entries need no special case: P is "
            "0 there.",
            "dv = P^T @ g; dP = g @ v^T; dS = P * (dP - rowsum(dP * P)); dq = scale * dS @ k; "
            "dk = scale * dS^T @ q.",
        ),
        reference=_sdpa_reference, factors=_sdpa_factors),
    Exercise(
        "cross_entropy", "the backward of cross-entropy", "cross_entropy", ("logits", "targets"),
        [_cross_entropy_case(4, 3), _cross_entropy_case(1, 5), _cross_entropy_case(6, 2),
         _cross_entropy_case(3, 4, scale=30.0)],
        hints=(
            "take one row first: L_i = -x_{i,t_i} + log sum_c e^{x_{i,c}}. The loss is the mean of N such "
            "rows, and backward gets an upstream g that is not always 1.",
            "d/dx_{i,c} of log sum_c' e^{x_{i,c'}} is the softmax p_{i,c} (the forward saved p); d/dx_{i,c} of "
            "x_{i,t_i} is 1 at c = t_i and 0 elsewhere.",
            "dx = g * (p - onehot(t)) / N, with onehot(t) an (N, C) array of zeros with a 1 at [i, t_i]; "
            "return (dx, None).",
        ),
        reference=lambda x, t: F.cross_entropy(x, t), factors=_mean_factors),
    Exercise(
        "gelu", "the backward of GELU (tanh approximation)", "gelu", ("x",),
        [_softmax_case((7,)), _softmax_case((3, 4)), _softmax_case((2, 3, 4), scale=3.0)],
        hints=(
            "out = 0.5 x (1 + t) is x times a function of x: the product rule gives two terms.",
            "t = tanh(u) with u = C (x + A x^3): dt/dx = (1 - t^2) du/dx, and du/dx = C (1 + 3 A x^2).",
            "dx = g * (0.5 (1 + t) + 0.5 x (1 - t^2) C (1 + 3 A x^2)).",
        ),
        reference=lambda x: F.gelu(x, approximate="tanh")),
    Exercise(
        "embedding", "the backward of an embedding lookup", "embedding", ("indices", "weight"),
        [_embedding_case("indices (4,) all different, table (5, 3)", 5, 3, [3, 0, 4, 1]),
         _embedding_case("indices (6,) with repeats, table (5, 3)", 5, 3, [1, 3, 1, 0, 3, 1], points=2),
         _embedding_case("indices (2, 4) with repeats, table (4, 2)", 4, 2, [[2, 2, 0, 1], [1, 2, 3, 2]], points=2),
         _embedding_case("indices (5,) all the same row, table (3, 4)", 3, 4, [2, 2, 2, 2, 2])],
        hints=(
            "each output row is a copy of one row of weight, so that weight row's gradient is the upstream "
            "row of g, added up over every place the row was looked up; rows never looked up get 0.",
            "a row looked up twice gets two gradients: sum them. numpy's table[idx] += rows adds a repeated "
            "row only once (the write is buffered: the last one wins).",
            "table_grad = np.zeros(weight.shape); np.add.at(table_grad, indices.numpy(), g.numpy()); "
            "return None, from_numpy(table_grad).",
        ),
        reference=lambda idx, w: F.embedding(idx, w), diagnose=_repeated_rows),
    Exercise(
        "attention_block", "single-head attention with projections, forward and backward", "attention_block",
        ("x", "w_q", "w_k", "w_v", "w_o", "causal"),
        [_block_case((), 4, 3, 2), _block_case((2,), 3, 4, 3, causal=True), _block_case((), 5, 2, 4, causal=True),
         _block_case((2, 2), 3, 3, 3)],
        hints=(
            "forward: the six lines of the docstring, on numpy arrays (np.swapaxes(k, -1, -2) is k^T). "
            "Backward: go back through them one at a time, last first; each is a matmul or the softmax.",
            "a weight is used by every row of every batch: its gradient sums over them, e.g. dWo = g^T a with "
            "g and a flattened to (rows, features). x feeds q, k and v: its gradient is the sum of three.",
            "da = g Wo; dWo = g^T a; dP = da v^T; dv = P^T da; dS = P * (dP - rowsum(dP * P)); "
            "dq = scale dS k; dk = scale dS^T q; dx = dq Wq + dk Wk + dv Wv; dWq = dq^T x (same for k, v).",
        ),
        reference=_block_reference, kind="function", factors=_block_factors),
    Exercise(
        "topo_sort", "the engine's topological sort", "topological_order", ("root",),
        [Case("y = sin(x * x): one node reads x twice", _graph_square),
         Case("b = exp(a); y = b * b + b: b feeds three inputs", _graph_diamond),
         Case("a residual: b feeds y directly and via three ops", _graph_residual),
         Case("two layers sharing a weight and a hidden state", _graph_shared_layers),
         Case("a ladder of 30 steps that each read y twice", _graph_ladder, points=2),
         Case("a chain of 3000 nodes", _graph_chain, points=2)],
        hints=(
            "a node may run only after every node that uses its output. Walk from the root through "
            "node.gradient_edges; list a node once all the nodes it reads from are listed, then reverse the list.",
            "keep a set of visited nodes, so a node reached by two paths is walked once (without it the "
            "ladder has 2^30 paths). Use a list as an explicit stack, not recursion: the chain is 3000 deep.",
            "stack = [(root, False)]; pop (node, done): if done, append node to order; else if not visited, "
            "mark it, push (node, True), then push (child, False) for every child that is not a Tensor. "
            "Return order reversed.",
        ),
        kind="order", timeout_note="a walk without a set of visited nodes walks a node once per path to it "
                                   "(the ladder has 2^30)"),
    Exercise(
        "backprop_ninja", "every backward of a small attention model by hand, then training with it", "backward",
        ("c", "p"), [StepCase(name) for name in ninja.STEPS] + [StepCase(points=3)],
        hints=(
            "one line of the forward at a time, last first: d_x is the VJP of the lines that read x, given in d the "
            "gradients of what those lines compute. A matmul C = A B gives dA = dC B^T and dB = A^T dC.",
            "a weight (out, in) used at every position gets the sum over positions: flatten to rows, "
            "dW = d(out)^T @ input. x feeds four lines (q, k, v and the residual h): dx is a sum of four. "
            "A repeated token gets the sum of its rows: np.add.at, not table[idx] +=.",
            "dlogits = dloss (softmax(logits) - onehot) / N; dmasked = probs * (dprobs - rowsum(dprobs * probs)); "
            "dscaled = where(allowed, dmasked, 0); dscores = dscaled / sqrt(H); dq = dscores k; "
            "dk = dscores^T q; train: loss, c = forward(...); grads = backward(c, p); p[n] -= lr * grads[n].",
        ),
        kind="steps", factors=_ninja_factors, diagnose=_ninja_diagnose),
]}


def find(name):
    """The exercise called `name`, or KeyError listing the choices."""
    if name not in EXERCISES:
        raise KeyError(f"unknown exercise {name!r}; choose from {', '.join(EXERCISES)}")
    return EXERCISES[name]
