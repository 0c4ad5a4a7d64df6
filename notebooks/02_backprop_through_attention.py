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
# # Backprop through attention: what autograd does, node by node
#
# Notebook 01 wrote every gradient by hand. Here autograd shows its own work on a tiny attention:
# `explain(loss, values=True)` lists every node of the backward pass in the order it runs, with
# the VJP formula it applies and the numbers going in and out; `to_svg` draws the graph, with the
# values and gradients once `backward()` has run. Then the same for a causal mask and for
# multi-head attention's split and merge, with the gradients as heatmaps, and a whole multi-head
# attention layer whose nodes are named as the math names them. The derivations are in
# `docs/backprop_through_attention.md`, the engine in `docs/engine.md`.
#
# Notation as in the docs: for the loss $L$ and any tensor $Y$, $dY = \partial L / \partial Y$,
# of $Y$'s shape; $g$ is the gradient a node receives for its output.

# %%
import math

import numpy as np

import attention
import minitensor as mt
from minitensor.autograd import explain, step
from minitensor.viz import to_svg

np.set_printoptions(precision=4, suppress=True)
rng = np.random.default_rng(0)


def tensor(*shape, requires_grad=False):
    """Random float64 numbers from `rng`, as a Tensor."""
    return mt.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


# %% [markdown]
# ## 1. A tiny attention
#
# Three tokens, queries, keys and values of size $d_k = 2$ (leaves, so each gets a gradient):
#
# $$S = \frac{Q K^\top}{\sqrt{d_k}} \qquad P = \operatorname{softmax}(S) \qquad O = P V
# \qquad L = \sum O \odot G$$
#
# $G$ is random: a loss of $\sum O$ would send the same gradient to every element and hide
# mistakes. Each line of the math is a `with step(...)` block: every node recorded inside is named
# after it, in `explain` and in the picture (the ops compute exactly as without it).

# %%
q = tensor(3, 2, requires_grad=True)
k = tensor(3, 2, requires_grad=True)
v = tensor(3, 2, requires_grad=True)
G = tensor(3, 2)
with step("scores = q k^T / sqrt(d_k)"):
    scores = q @ k.mT / math.sqrt(2)
with step("softmax"):
    p = scores.softmax(dim=-1)
with step("weights @ v"):
    out = p @ v
loss = (out * G).sum()

# %% [markdown]
# `explain` runs the backward pass for real (the same engine, the same VJPs) but writes no
# `.grad`, and keeps the graph, so `loss.backward()` still works afterwards. Read it from the top:
# the sum sends ones, the product with $G$ turns them into $G$, and so on back to the leaves.
# Each gradient is printed once: where a node sent it (`-> input ...`); the node that received it
# says where to look.

# %%
report = explain(loss, values=True)
report

# %% [markdown]
# `explain(loss, compact=True)` is the same walk in one line per node: its step, its output's
# shape, the norm of the gradient it received and of each one it sent.

# %%
print(explain(loss, compact=True))

# %% [markdown]
# One row checked by hand. The softmax node received $g = dP$ and sent $dS$ to the division by
# $\sqrt{d_k}$; its VJP is
#
# $$dS = P \odot \big(dP - \operatorname{rowsum}(dP \odot P)\big)$$
#
# and the division sends $dS / \sqrt{d_k}$ on to $Q K^\top$: the scale's backward is the same
# scale.

# %%
softmax_row = next(r for r in report.rows if r.op == "SoftmaxBackward")
P, dP, dS = softmax_row.output_value, softmax_row.grad, softmax_row.inputs[0].grad
print("dS from explain\n", dS)
assert np.allclose(dS, P * (dP - (dP * P).sum(axis=-1, keepdims=True)))
division_row = next(r for r in report.rows if r.op == "DivBackward")
assert np.allclose(division_row.inputs[0].grad, dS / math.sqrt(2))
print(softmax_row.op, "and", division_row.op, "apply the formulas above")

# %% [markdown]
# `explain` wrote no gradient; `backward` does, and its gradients are the ones the report's last
# table announced. (`retain_grad()` keeps the gradients of the intermediate results too, for the
# picture below.)

# %%
assert q.grad is None
for t in (scores, p, out):
    t.retain_grad()
loss.backward()
for leaf in report.leaves:
    assert np.allclose(leaf.tensor.grad.numpy(), leaf.grad), leaf.name
print("dQ\n", q.grad.numpy())

# %% [markdown]
# The same graph as a picture, drawn after `backward()`, so every box shows its values (`data`)
# and its gradient (`grad`): leaves are blue boxes, ops ellipses, the loss a double ellipse, each
# op with the step it belongs to; each edge carries the position of the argument it feeds. A graph
# of small tensors shows the numbers by default once backward has run (`show_values=False` shows
# only the norms). `to_svg` draws it in Python, with no Graphviz.

# %%
to_svg(loss)

# %% [markdown]
# ## 2. A causal mask
#
# A decoder lets query $i$ see only keys $j \le i$. The mask is applied to the scores before the
# softmax, by selecting:
#
# $$S' = \operatorname{where}(\text{mask}, S, -\infty) \qquad P = \operatorname{softmax}(S')$$
#
# $e^{-\infty} = 0$, so a masked key gets weight exactly 0. The backward of the selection sends
# $dS'$ through where the mask is True and 0 elsewhere; the softmax's backward already gives 0
# there, because $dS' = P \odot (\dots)$ and $P$ is 0 at a masked key.

# %%
T = 5
q = tensor(T, 4, requires_grad=True)
k = tensor(T, 4, requires_grad=True)
v = tensor(T, 4, requires_grad=True)
G = tensor(T, 4)
mask = attention.causal_mask(T)  # bool, True where query i may attend to key j
scores = q @ k.mT / math.sqrt(4)
masked = mt.where(mask, scores, float("-inf"))  # scores.masked_fill(~mask, -inf) is the same node
p = masked.softmax(dim=-1)
out = p @ v
for t in (scores, p):
    t.retain_grad()
loss = (out * G).sum()

report = explain(loss)
where_row = next(r for r in report.rows if r.op == "WhereBackward")
print(where_row.op)
print("  forward:", where_row.forward)
for i, line in enumerate(where_row.vjp.splitlines()):  # the formula, then the sentence that explains it
    print("  VJP:    " if i == 0 else "         " + " ", line.strip())

# %%
loss.backward()
dS = scores.grad.numpy()
above = ~mask.numpy()
print("dS\n", dS)
assert np.all(p.detach().numpy()[above] == 0) and np.all(dS[above] == 0)
assert np.all(dS[0] == 0)  # query 0 sees one key only: its weight is 1 whatever the score
same = attention.scaled_dot_product_attention(q.detach(), k.detach(), v.detach(), is_causal=True)[0]
assert np.allclose(same.numpy(), out.detach().numpy())
print("masked entries: weight 0 and gradient 0; attention.scaled_dot_product_attention(is_causal=True) agrees")

# %% [markdown]
# Row 0 of $dS$ is zero: a query with a single key gives it weight 1 whatever its score, so the
# score gets no gradient. The weights, and the two gradients, as heatmaps (weights from 0 to 1;
# gradients red positive, blue negative, white 0):

# %%
positions = [str(i) for i in range(T)]
attention.show_heatmaps(p, positions, positions, title="P, causal")

# %%
attention.show_heatmaps(p.grad, positions, positions, title="dP")

# %%
attention.show_heatmaps(scores.grad, positions, positions, title="dS")

# %% [markdown]
# Never multiply the scores by a 0/1 mask instead: a masked score becomes 0, not $-\infty$, so the
# key still gets a weight. And a row masked entirely is $0/0$ with $-\infty$;
# `attention.scaled_dot_product_attention` gives such a row zeros and zero gradient instead.

# %% [markdown]
# ## 3. Multi-head attention: split and merge
#
# $H$ heads run side by side on slices of the projections. With $d_{model} = H d_k$:
#
# $$\text{split: } Q \in \mathbb{R}^{T \times H d_k} \to \text{reshape}(T, H, d_k) \to
# \text{transpose}(0, 1) \in \mathbb{R}^{H \times T \times d_k}$$
#
# $$O_h = \operatorname{softmax}\!\Big(\frac{Q_h K_h^\top}{\sqrt{d_k}}\Big) V_h
# \qquad \text{merge: } O \to \text{transpose}(0, 1) \to \text{reshape}(T, H d_k)$$
#
# Split and merge only move numbers, so their VJPs move the gradient back: the VJP of a reshape is
# a reshape to the input's shape, the VJP of a transpose is the same transpose. The backward of
# the merge is a split, and each head's slice of $dW_Q$ depends on that head only.
#
# In the list below, `merged` is the merge's reshape and `Q`, `K`, `V` the splits' transposes (a
# transpose is recorded as a permute); the permute of shape (2, 3, 4) is the $K_h^\top$ of the
# scores.

# %%
T, H, d_k = 4, 2, 3
d_model = H * d_k
x = tensor(T, d_model)
w_q = tensor(d_model, d_model, requires_grad=True)
w_k = tensor(d_model, d_model, requires_grad=True)
w_v = tensor(d_model, d_model, requires_grad=True)
G = tensor(T, d_model)


def split(a):
    return a.reshape(T, H, d_k).transpose(0, 1)  # (H, T, d_k)


def merge(a):
    return a.transpose(0, 1).reshape(T, d_model)  # (T, H d_k)


Q, K, V = split(x @ w_q), split(x @ w_k), split(x @ w_v)
heads_scores = Q @ K.mT / math.sqrt(d_k)
heads_p = heads_scores.softmax(dim=-1)  # (H, T, T)
merged = merge(heads_p @ V)
heads_p.retain_grad()
loss = (merged * G).sum()

for row in explain(loss, names=dict(Q=Q, K=K, V=V, merged=merged)):
    if row.op in ("ReshapeBackward", "PermuteBackward"):
        print(f"#{row.step:<2} {row.op:<15} output {row.output_name:<6} {str(row.output_shape):<9}  VJP {row.vjp}")

# %%
loss.backward(retain_graph=True)  # kept for the test of the next cell
attention.show_heatmaps(heads_p, title="P of each head")

# %%
attention.show_heatmaps(heads_p.grad, title="dP of each head")

# %% [markdown]
# The claim that each head keeps to itself, tested: a loss that reads head 0's columns of the
# merged output only gives the columns of $W_Q$ that make head 1's queries a gradient of exactly
# zero.

# %%
w_q.grad = None
head0_only = merged[:, :d_k]
(head0_only * G[:, :d_k]).sum().backward(inputs=[w_q])
print("dW_Q with a loss on head 0 only\n", w_q.grad.numpy())
assert np.all(w_q.grad.numpy()[:, d_k:] == 0) and np.any(w_q.grad.numpy()[:, :d_k] != 0)


# %% [markdown]
# ## 4. A multi-head attention layer, each step by name
#
# `attention.MultiHeadAttention` does all of the above in one layer: the projections `w_q`, `w_k`,
# `w_v`, the split into heads, the scaled and masked scores, the softmax, the weighted sum of the
# values, the merge and `w_o`. Each of those steps names its nodes (with `step`, as in section 1),
# so the report and the picture read as the math: the scale shows its factor $1/\sqrt{d_k}$, the
# mask is drawn as a grid (`1` where a query may attend, `.` where it may not).

# %%
mt.manual_seed(0)
mha = attention.MultiHeadAttention(d_model=4, num_heads=2).double()  # float64, as the tensors here
x = tensor(3, 4)
mha_out, mha_weights = mha(x, is_causal=True)
loss = (mha_out * tensor(3, 4)).sum()
print(explain(loss, compact=True))

# %%
loss.backward()
to_svg(loss, names=dict(mha.named_parameters()))  # the parameters by name, their gradients in their boxes
