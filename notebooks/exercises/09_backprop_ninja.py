# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Exercise 9 of 9: every backward of a small attention model by hand, then training with it
#
# The model: a one-layer, single-head, causal attention language model, forward in numpy (given
# below), one named variable a line. Shapes: B sequences of T tokens, width D, head size H,
# vocabulary V; weights stored as nn.Linear stores them (y = x W^T).
#
#     emb    = wte[tokens]                    (B, T, D)    wte: (V, D)    embedding lookup
#     x      = emb + wpe                      (B, T, D)    wpe: (T, D)    positions
#     q      = x Wq^T,  k = x Wk^T,  v = x Wv^T   (B, T, H)    Wq, Wk, Wv: (H, D)
#     scores = q k^T                          (B, T, T)
#     scaled = scores / sqrt(H)
#     masked = where(allowed, scaled, -inf)   allowed[i, j] = (j <= i): no token sees a later one
#     probs  = softmax(masked) along the last dim
#     att    = probs v                        (B, T, H)
#     proj   = att Wo^T                       (B, T, D)    Wo: (D, H)
#     h      = x + proj                                    the residual
#     logits = h Wlm^T + blm                  (B, T, V)    Wlm: (V, D), blm: (V,)
#     loss   = -(1/N) sum_{b,t} log softmax(logits[b, t])[targets[b, t]],   N = B T
#
# Going backward, write dY for dL/dY (same shape as Y). A variable used by several lines gets the
# sum of what each line sends back; a weight used at every position gets the sum over positions.
# Each line's vector-Jacobian product (VJP), derived from the line:
#
# - loss: d loss/d logits[b,t,c] = (softmax(logits[b,t])_c - [c == targets[b,t]]) / N, so
#   dlogits = dloss * (P - onehot(targets)) / N with P the softmax of the logits (dloss = 1 when
#   the loss is what you differentiate; the grader passes other values to check you use it).
# - logits = h Wlm^T + blm: each logit is a dot product, so dh = dlogits Wlm;
#   dWlm = sum over (b, t) of dlogits[b,t]^T h[b,t] (a (V, D) outer product each);
#   dblm = sum over (b, t) of dlogits[b,t].
# - h = x + proj: an addition passes its gradient on unchanged: dproj = dh, and dh is also
#   one of x's terms.
# - proj = att Wo^T: datt = dproj Wo; dWo = sum over (b, t) of dproj[b,t]^T att[b,t].
# - att = probs v (per sequence, C = A B gives dA = dC B^T and dB = A^T dC):
#   dprobs = datt v^T; dv = probs^T datt.
# - probs = softmax(masked): in each row, d probs_i/d masked_j = probs_i ([i == j] - probs_j), so
#   dmasked = probs * (dprobs - sum_j(dprobs_j probs_j)), the sum along the row (keepdims).
# - masked = where(allowed, scaled, -inf): an entry copied from scaled gets its gradient, an
#   entry replaced by the constant -inf sends none back: dscaled = where(allowed, dmasked, 0).
# - scaled = scores / sqrt(H): dscores = dscaled / sqrt(H).
# - scores = q k^T: dq = dscores k; dk = dscores^T q (transpose the last two dims).
# - q = x Wq^T (k and v alike): dWq = sum over (b, t) of dq[b,t]^T x[b,t], and x's term dq Wq.
# - x feeds q, k, v and h: dx = dq Wq + dk Wk + dv Wv + dh.
# - x = emb + wpe: demb = dx; wpe is added to every sequence: dwpe = sum over b of dx[b].
# - emb = wte[tokens]: row r of wte was copied to every position holding token r, so
#   dwte[r] = sum of demb[b,t] over the (b, t) with tokens[b,t] = r (0 for a token never seen).
#
# Your task, one variable at a time, in the order below: `d_x(c, p, d)` returns dx, and so on for
# every variable. `c` holds the forward values by name (and tokens, targets, allowed), `p` the
# parameters, and `d` the gradients already computed of the variables this one feeds directly
# (d["loss"] for d_logits; d["q"], d["k"], d["v"] and d["h"] for d_x).
# After each step, run this file (`python backprop_ninja.py`, or in a notebook
# `attention.course.ninja.compare_by_hand(path)`): a table of each of your gradients against
# autograd's (exact | approx | max diff), as far as you got. Then write `train`: plain SGD whose
# gradients come from `backward` (your steps) alone, with no autograd anywhere; running the file
# prints its losses beside those of the same training done with autograd.
# The grader checks each step on its own, with random upstream gradients in `d` (so one wrong step
# costs one case), then trains with your `train` and compares the losses with autograd's training.
#
# Run the cells from the top: the one under **Your code** saves itself as
# `my_exercises/backprop_ninja.py`, the one under **Grade it** grades that file: each step alone,
# given random upstream gradients, is compared with autograd's VJP of the same line, then your
# `train` is compared with the same training done with autograd. Change the code, run both again.
# The same file can be graded in a terminal with `attention-grade backprop_ninja
# my_exercises/backprop_ninja.py`.


# %%
import os

from attention.course.exercises import find
from attention.course.grade import grade_exercise, report

exercise = find("backprop_ninja")
os.makedirs("my_exercises", exist_ok=True)


# %% [markdown]
# ## Your code
#
# Replace each `raise NotImplementedError(...)` with your code; keep the rest. (`%%writefile` on
# the first line saves the cell to the file instead of running it.)


# %%
# %%writefile my_exercises/backprop_ninja.py
import numpy as np


def forward(p, tokens, targets):
    """The loss, and every forward value by name (what the steps read as `c`)."""
    n_pos, d_head = tokens.shape[-1], p["w_q"].shape[0]
    c = {"tokens": tokens, "targets": targets, "allowed": np.tril(np.ones((n_pos, n_pos), dtype=bool))}
    c["emb"] = p["wte"][tokens]
    c["x"] = c["emb"] + p["wpe"]
    c["q"], c["k"], c["v"] = c["x"] @ p["w_q"].T, c["x"] @ p["w_k"].T, c["x"] @ p["w_v"].T
    c["scores"] = c["q"] @ np.swapaxes(c["k"], -1, -2)
    c["scaled"] = c["scores"] / np.sqrt(d_head)
    c["masked"] = np.where(c["allowed"], c["scaled"], -np.inf)
    e = np.exp(c["masked"] - c["masked"].max(axis=-1, keepdims=True))
    c["probs"] = e / e.sum(axis=-1, keepdims=True)
    c["att"] = c["probs"] @ c["v"]
    c["proj"] = c["att"] @ p["w_o"].T
    c["h"] = c["x"] + c["proj"]
    c["logits"] = c["h"] @ p["w_lm"].T + p["b_lm"]
    z = c["logits"] - c["logits"].max(axis=-1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    c["loss"] = float(-np.take_along_axis(log_probs, targets[..., None], axis=-1).mean())
    return c["loss"], c


def _rows(a):
    """(B, T, n) -> (B T, n): a weight's gradient sums over every position of every sequence."""
    return a.reshape(-1, a.shape[-1])


def _t(a):
    return np.swapaxes(a, -1, -2)


def d_logits(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_h(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_w_lm(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_b_lm(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_proj(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_att(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_w_o(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_probs(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_v(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_masked(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_scaled(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_scores(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_q(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_k(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_w_q(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_w_k(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_w_v(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_x(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_wpe(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_emb(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def d_wte(c, p, d):
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )


def backward(c, p):
    """Every gradient, each step reading those of the steps before it: {name: dL/dname}."""
    d = {"loss": 1.0}
    d["logits"] = d_logits(c, p, d)
    d["h"] = d_h(c, p, d)
    d["w_lm"] = d_w_lm(c, p, d)
    d["b_lm"] = d_b_lm(c, p, d)
    d["proj"] = d_proj(c, p, d)
    d["att"] = d_att(c, p, d)
    d["w_o"] = d_w_o(c, p, d)
    d["probs"] = d_probs(c, p, d)
    d["v"] = d_v(c, p, d)
    d["masked"] = d_masked(c, p, d)
    d["scaled"] = d_scaled(c, p, d)
    d["scores"] = d_scores(c, p, d)
    d["q"] = d_q(c, p, d)
    d["k"] = d_k(c, p, d)
    d["w_q"] = d_w_q(c, p, d)
    d["w_k"] = d_w_k(c, p, d)
    d["w_v"] = d_w_v(c, p, d)
    d["x"] = d_x(c, p, d)
    d["wpe"] = d_wpe(c, p, d)
    d["emb"] = d_emb(c, p, d)
    d["wte"] = d_wte(c, p, d)
    return d


def train(p, tokens, targets, steps, lr):
    """`steps` steps of plain SGD on one batch, p[name] -= lr * dL/dp[name] for every parameter,
    with the gradients of `backward`; returns the loss before each step (a list of floats)."""
    losses = []
    raise NotImplementedError(
        "every backward of a small attention model by hand, then training with it is yours to "
        "write. Hint 1: one line of the forward at a time, last first: d_x is the VJP of the lines "
        "that read x, given in d the gradients of what those lines compute. A matmul C = A B gives "
        "dA = dC B^T and dB = A^T dC. (next hint: attention-grade --hint 2 backprop_ninja)"
    )
    return losses


if __name__ == "__main__":  # python backprop_ninja.py: your steps against autograd, then a training run
    from attention.course.ninja import compare_by_hand, train_by_hand

    compare_by_hand(__file__)
    train_by_hand(__file__)


# %% [markdown]
# ## Check each gradient against autograd
#
# Run this after each step you write: one row a variable, your gradient against autograd's
# (`exact`: bit for bit, `approx`: within the grader's tolerance, and the largest difference).
# Each row uses your own earlier gradients, so the first wrong row is the one to fix.


# %%
from attention.course.ninja import compare_by_hand, train_by_hand

compare_by_hand("my_exercises/backprop_ninja.py")


# %% [markdown]
# ## Train with your backward alone
#
# Once `train` is written: SGD from the same start with your gradients and with autograd's, the
# loss before each step side by side. No `.backward()` anywhere: autograd is off while yours runs.


# %%
train_by_hand("my_exercises/backprop_ninja.py")


# %% [markdown]
# ## Grade it
#
# 24 points in 22 cases. A fresh copy of this notebook reports "not implemented yet".


# %%
result = grade_exercise(exercise, "my_exercises/backprop_ninja.py")
print("\n".join(report(result)))


# %% [markdown]
# ## Hints
#
# Open one at a time: the third all but gives the answer.
#
# <details><summary>Hint 1</summary>
#
# one line of the forward at a time, last first: d_x is the VJP of the lines that read x, given in
# d the gradients of what those lines compute. A matmul C = A B gives dA = dC B^T and dB = A^T dC.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# a weight (out, in) used at every position gets the sum over positions: flatten to rows, dW =
# d(out)^T @ input. x feeds four lines (q, k, v and the residual h): dx is a sum of four. A
# repeated token gets the sum of its rows: np.add.at, not table[idx] +=.
#
# </details>
#
# <details><summary>Hint 3</summary>
#
# dlogits = dloss (softmax(logits) - onehot) / N; dmasked = probs * (dprobs - rowsum(dprobs *
# probs)); dscaled = where(allowed, dmasked, 0); dscores = dscaled / sqrt(H); dq = dscores k; dk =
# dscores^T q; train: loss, c = forward(...); grads = backward(c, p); p[n] -= lr * grads[n].
#
# </details>
