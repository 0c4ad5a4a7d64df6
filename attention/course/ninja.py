r"""The model of the backprop-ninja exercise, as autograd sees it: its lines, each step's true VJP,
training it with autograd, and the learner's two checks (a comparison table, a training run).

A one-layer, single-head, causal attention language model, one named variable a line (the
student's file states the same lines, and derives each one's VJP):

    emb    = wte[tokens]                    (B, T, D)
    x      = emb + wpe                      (B, T, D)
    q, k, v = x Wq^T, x Wk^T, x Wv^T        (B, T, H)
    scores = q k^T                          (B, T, T)
    scaled = scores / sqrt(H)
    masked = where(allowed, scaled, -inf)   allowed[i, j] = j <= i
    probs  = softmax(masked, dim=-1)
    att    = probs v                        (B, T, H)
    proj   = att Wo^T                       (B, T, D)
    h      = x + proj                       (the residual)
    logits = h Wlm^T + blm                  (B, T, V)
    loss   = mean over the B*T positions of -log softmax(logits)[target]

The grader checks each step on its own: the student's `d_x(c, p, d)` (one for each variable x)
gets the forward values `c`, the parameters `p` and, in `d`, a random upstream gradient for each
variable that x feeds; the truth is autograd's VJP of the lines that read it, with the same
upstream gradients (`true_gradient`). So one wrong step costs its own case only, and the child
never sees a reference value. Everything here runs in the grader's process; the student's code
runs only in `compare_by_hand` and `train_by_hand`, which a learner calls on their own file.
"""
import copy
import importlib.util
import itertools
import math
import os
import sys

import numpy as np

import minitensor
import minitensor.nn.functional as F
from minitensor.autograd import grad, no_grad

# the case's sizes: batch, positions, model width, head size, vocabulary. B*T = 8 tokens from a
# vocabulary of 5 always repeat one (the embedding's scatter-add is tested), and T x T scores are
# square but not symmetric (a transposed gradient has the right shape and the wrong values)
SIZES = {"batch": 2, "n_pos": 4, "d_model": 4, "d_head": 3, "vocab": 5}
PARAMS = ("wte", "wpe", "w_q", "w_k", "w_v", "w_o", "w_lm", "b_lm")


def _allowed(n_pos):
    return np.tril(np.ones((n_pos, n_pos), dtype=bool))


def _causal(masked_input, n_pos):
    return masked_input.masked_fill(~minitensor.from_numpy(_allowed(n_pos)), float("-inf"))


def _cross_entropy(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


# (variable, the variables it reads, the line on minitensor tensors; `b` holds tokens and targets)
LINES = [
    ("emb", ("wte",), lambda wte, b: F.embedding(b["tokens"], wte)),
    ("x", ("emb", "wpe"), lambda emb, wpe, b: emb + wpe),
    ("q", ("x", "w_q"), lambda x, w, b: x @ w.mT),
    ("k", ("x", "w_k"), lambda x, w, b: x @ w.mT),
    ("v", ("x", "w_v"), lambda x, w, b: x @ w.mT),
    ("scores", ("q", "k"), lambda q, k, b: q @ k.mT),
    ("scaled", ("scores",), lambda s, b: s * (1.0 / math.sqrt(b["d_head"]))),
    ("masked", ("scaled",), lambda s, b: _causal(s, s.shape[-1])),
    ("probs", ("masked",), lambda s, b: F.softmax(s, dim=-1)),
    ("att", ("probs", "v"), lambda p, v, b: p @ v),
    ("proj", ("att", "w_o"), lambda a, w, b: a @ w.mT),
    ("h", ("x", "proj"), lambda x, proj, b: x + proj),
    ("logits", ("h", "w_lm", "b_lm"), lambda h, w, bias, b: h @ w.mT + bias),
    ("loss", ("logits",), lambda logits, b: _cross_entropy(logits, b["targets"])),
]

# the order the student writes the steps in (and the grader's cases): each after every variable it feeds
STEPS = ("logits", "h", "w_lm", "b_lm", "proj", "att", "w_o", "probs", "v", "masked", "scaled", "scores",
         "q", "k", "w_q", "w_k", "w_v", "x", "wpe", "emb", "wte")


def feeds(name):
    """The variables computed from `name` directly: the upstream gradients its step reads."""
    return tuple(out for out, inputs, _ in LINES if name in inputs)


def make_inputs(rng, sizes=SIZES):
    """Random parameters (numpy, float64), tokens and targets (int64) of the given sizes. The
    weights are small enough that no softmax saturates: every step's gradient is of a meaningful size."""
    b, t, d, h, n_vocab = (sizes[k] for k in ("batch", "n_pos", "d_model", "d_head", "vocab"))
    shapes = {"wte": (n_vocab, d), "wpe": (t, d), "w_q": (h, d), "w_k": (h, d), "w_v": (h, d),
              "w_o": (d, h), "w_lm": (n_vocab, d), "b_lm": (n_vocab,)}
    params = {name: rng.standard_normal(shapes[name]) * (0.3 if name == "b_lm" else 0.7) for name in PARAMS}
    tokens = rng.integers(0, n_vocab, (b, t))
    targets = rng.integers(0, n_vocab, (b, t))
    return params, tokens, targets


def _batch(tokens, targets, d_head):
    return {"tokens": minitensor.from_numpy(np.asarray(tokens, dtype=np.int64)),
            "targets": minitensor.from_numpy(np.asarray(targets, dtype=np.int64)), "d_head": d_head}


def _tensors(params, requires_grad=False):
    return {k: minitensor.from_numpy(np.array(v, dtype=np.float64)).requires_grad_(requires_grad)
            for k, v in params.items()}


def _run(values, batch):
    """Every line in order on `values` (a dict of tensors, the parameters at least), in place."""
    for out, inputs, fn in LINES:
        values[out] = fn(*(values[i] for i in inputs), batch)
    return values


def forward_values(params, tokens, targets):
    """The forward values every step reads, as the student's `forward` keeps them: numpy arrays
    by variable name, with the tokens, the targets and the causal pattern `allowed`."""
    with no_grad():
        values = _run(_tensors(params), _batch(tokens, targets, params["w_q"].shape[0]))
    cache = {k: values[k].numpy().copy() for k, _, _ in LINES}
    cache["loss"] = float(cache["loss"])
    cache.update(tokens=np.array(tokens), targets=np.array(targets), allowed=_allowed(np.shape(tokens)[-1]))
    return cache


def random_upstream(name, cache, rng):
    """A random gradient for each variable `name` feeds (a scalar for the loss): what its step gets in d."""
    return {out: (float(rng.standard_normal()) if out == "loss" else rng.standard_normal(np.shape(cache[out])))
            for out in feeds(name)}


def true_gradient(name, cache, params, tokens, targets, upstream):
    """Autograd's VJP of the lines that read `name`, at the cached values, given `upstream`
    (float64): sum over those lines of d<upstream[out], line(...)>/d name."""
    batch = _batch(tokens, targets, params["w_q"].shape[0])
    total = np.zeros(np.shape(params[name] if name in params else cache[name]))
    for out, inputs, fn in LINES:
        if name not in inputs:
            continue
        leaves = {i: minitensor.from_numpy(np.array(params[i] if i in params else cache[i], dtype=np.float64))
                  for i in inputs}
        leaves[name].requires_grad_(True)
        result = fn(*(leaves[i] for i in inputs), batch)
        u = minitensor.from_numpy(np.asarray(upstream[out], dtype=np.float64))
        (g,) = grad([result], [leaves[name]], grad_outputs=[u])
        total = total + g.numpy()
    return total


def all_gradients(params, tokens, targets):
    """The loss and autograd's gradient of every variable (the parameters and every line's output)."""
    values = _tensors(params, requires_grad=True)
    _run(values, _batch(tokens, targets, params["w_q"].shape[0]))
    for out, _, _ in LINES[:-1]:
        values[out].retain_grad()
    values["loss"].backward()
    return float(values["loss"].item()), {k: values[k].grad.numpy().copy() for k in STEPS}


def train_reference(params, tokens, targets, steps, lr):
    """Plain SGD with autograd's gradients from `params` (not changed): the loss before each step."""
    params = {k: np.array(v, dtype=np.float64) for k, v in params.items()}
    losses = []
    for _ in range(steps):
        loss, grads = all_gradients(params, tokens, targets)
        losses.append(loss)
        for k in PARAMS:
            params[k] = params[k] - lr * grads[k]
    return np.array(losses)


# ---- the learner's checks, on their own file ---------------------------------------------------------

_loaded = itertools.count()


def _module(student):
    """The student's module: given, or loaded from its path (again each call, so edits show)."""
    if not isinstance(student, (str, os.PathLike)):
        return student
    name = f"ninja_by_hand_{next(_loaded)}"
    spec = importlib.util.spec_from_file_location(name, os.fspath(student))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _table(rows, header):
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]
    return ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows]]


def compare_by_hand(student, seed=0, out=print):
    """Chain the student's steps as their `backward` does (each on the gradients of their own earlier
    steps), and compare each with autograd's gradient of that variable, one row a variable:
    name | shape | exact (bit for bit) | approx (within the grader's tolerance) | max diff.
    A step not written yet ends the table. Returns {variable: passed}."""
    module = _module(student)
    params, tokens, targets = make_inputs(np.random.default_rng(seed))
    cache = forward_values(params, tokens, targets)
    _, truth = all_gradients(params, tokens, targets)
    d, rows, passed = {"loss": 1.0}, [], {}
    for name in STEPS:
        try:
            got = getattr(module, f"d_{name}")(copy.deepcopy(cache), copy.deepcopy(params), d)
        except NotImplementedError:
            rows.append((name, str(truth[name].shape), "-", "-", f"d_{name} is not written yet"))
            break
        yours = np.asarray(got, dtype=np.float64)
        if yours.shape != truth[name].shape:
            rows.append((name, str(truth[name].shape), "no", "no", f"yours has shape {yours.shape}"))
            passed[name] = False
            break
        diff = float(np.max(np.abs(yours - truth[name]))) if yours.size else 0.0
        exact, approx = bool(np.array_equal(yours, truth[name])), bool(np.allclose(yours, truth[name], 1e-6, 1e-8))
        rows.append((name, str(yours.shape), "yes" if exact else "no", "yes" if approx else "no", f"{diff:.1e}"))
        passed[name] = approx
        d[name] = yours
    for line in _table(rows, ("variable", "shape", "exact", "approx", "max diff")):
        out(line)
    wrong = [k for k, ok in passed.items() if not ok]
    if wrong:
        out(f"first wrong: d_{wrong[0]} (the rows after it read its gradient, so fix it first)")
    return passed


def train_by_hand(student, steps=12, lr=0.5, seed=1, out=print):
    """Train with the student's `train` (their backward only: it runs with autograd off) and with
    autograd from the same start; print both losses side by side. Returns (yours, autograd's)."""
    module = _module(student)
    params, tokens, targets = make_inputs(np.random.default_rng(seed))
    want = train_reference(params, tokens, targets, steps, lr)
    try:
        with no_grad():
            got = np.asarray(module.train(copy.deepcopy(params), tokens.copy(), targets.copy(), steps, lr),
                             dtype=np.float64)
    except NotImplementedError as e:
        out(f"train is not written yet ({str(e).split('. ')[0]})")
        return None, want
    rows = [(k, f"{a:.6f}", f"{b:.6f}", f"{abs(a - b):.1e}") for k, (a, b) in enumerate(zip(got, want))]
    for line in _table(rows, ("step", "your loss", "autograd's", "diff")):
        out(line)
    return got, want
