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
# # Illustrated self-attention, forward and backward
#
# The worked example of "Illustrated: Self-Attention": three inputs of size 4, key, query and
# value weights of shape 4×3, scores without the $1/\sqrt{d_k}$ scale, a softmax per row, the
# weighted sum of the values. Forward with the tutorial's figures, then backward one step at a
# time, every gradient computed three ways that must agree:
#
# 1. by the formula, in plain numpy (what you write on paper);
# 2. by minitensor's autograd (`retain_grad()` on every intermediate, then `loss.backward()`);
# 3. by central finite differences of the loss, in a separate numpy forward pass.
#
# The derivation of each formula is in `docs/backprop_through_attention.md`; the terminal version
# of this notebook is `attention-walkthrough`.

# %%
import numpy as np

import attention
import minitensor as torch  # named as the tutorial names it: the same lines run on PyTorch
import minitensor.nn.functional as F
from minitensor.autograd import gradcheck

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Forward
#
# **Steps 1 and 2.** Three inputs of size 4, one per row of `x`, and the weights for keys,
# queries and values, each 4×3. The weights are what the layer learns, so they require a
# gradient. float64 throughout, so that finite differences are accurate to about $10^{-10}$.

# %%
x = torch.tensor([[1, 0, 1, 0],
                  [0, 2, 0, 2],
                  [1, 1, 1, 1]], dtype=torch.float64)
w_key = torch.tensor([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]], dtype=torch.float64, requires_grad=True)
w_query = torch.tensor([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]], dtype=torch.float64, requires_grad=True)
w_value = torch.tensor([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]], dtype=torch.float64, requires_grad=True)

# %% [markdown]
# **Step 3.** Keys, queries and values: every input times each weight matrix.
#
# $$K = x W_{key} \qquad Q = x W_{query} \qquad V = x W_{value}$$

# %%
keys = x @ w_key
queries = x @ w_query
values = x @ w_value
print("keys\n", keys.detach().numpy())
print("queries\n", queries.detach().numpy())
print("values\n", values.detach().numpy())

# the tutorial's figures
assert np.array_equal(keys.detach().numpy(), [[0, 1, 1], [4, 4, 0], [2, 3, 1]])
assert np.array_equal(queries.detach().numpy(), [[1, 0, 2], [2, 2, 2], [2, 1, 3]])
assert np.array_equal(values.detach().numpy(), [[1, 2, 3], [2, 8, 0], [2, 6, 3]])

# %% [markdown]
# **Step 4.** The attention scores: every query dotted with every key,
# $S_{ij} = q_i \cdot k_j$. (The tutorial leaves out the $1/\sqrt{d_k}$ scale; notebook 02 puts
# it back.)
#
# $$S = Q K^\top$$

# %%
scores = queries @ keys.T
print("scores\n", scores.detach().numpy())
assert np.array_equal(scores.detach().numpy(), [[2, 4, 4], [4, 16, 12], [4, 12, 10]])

# %% [markdown]
# **Step 5.** A softmax along each row turns the scores of query $i$ into weights that sum to 1:
#
# $$P_{ij} = \frac{e^{S_{ij}}}{\sum_k e^{S_{ik}}}$$
#
# The tutorial prints these rounded loosely (0.0634 shows as 0.0); everything below uses the
# exact ones.

# %%
p = F.softmax(scores, dim=-1)
print("P = softmax(S)\n", p.detach().numpy())
tutorial_p = np.array([[0.0, 0.5, 0.5], [0.0, 1.0, 0.0], [0.0, 0.9, 0.1]])
print("largest difference from the tutorial's rounded P:", np.abs(p.detach().numpy() - tutorial_p).max().round(4))

# %%
tokens = ["input 0", "input 1", "input 2"]
attention.show_heatmaps(p, tokens, tokens, title="P = softmax(S): row i is where query i looks")

# %% [markdown]
# **Steps 6 and 7.** Each value is scaled by the weight each query gives it, and the scaled values
# are summed over the inputs $j$. Together the two steps are one matrix product:
#
# $$O_i = \sum_j P_{ij}\, v_j \qquad\text{that is}\qquad O = P V$$

# %%
weighted = values[:, None] * p.T[:, :, None]  # weighted[j, i] = P[i, j] * values[j]
outputs = weighted.sum(dim=0)
print("outputs\n", outputs.detach().numpy())
print("outputs from the tutorial's rounded P (its figures)\n", tutorial_p @ values.detach().numpy())
assert np.allclose(tutorial_p @ values.detach().numpy(), [[2.0, 7.0, 1.5], [2.0, 8.0, 0.0], [2.0, 7.8, 0.3]])
assert np.allclose(outputs.detach().numpy(), (p @ values).detach().numpy())

# %% [markdown]
# ## Backward
#
# The loss is $L = \sum (O \odot G)$ for a fixed matrix $G$ of random-looking numbers, so that
# $dO = G$. Why not simply $L = \sum O$? Then $dO$ would be all ones: every row and column alike,
# and a backward that transposes a matrix or mixes up two rows would give the same numbers. (For a
# softmax alone it is worse: each row sums to 1, so the gradient of $\sum P$ is exactly zero
# whatever the backward does.)
#
# `retain_grad()` asks autograd to keep the gradient of each intermediate, so the formulas below
# can be compared with it.

# %%
G = np.round(np.random.default_rng(2019).standard_normal((3, 3)), 1)  # the G of docs/backprop_through_attention.md
for t in (keys, queries, values, scores, p, outputs):
    t.retain_grad()
loss = (outputs * torch.tensor(G)).sum()
loss.backward()
print("G\n", G)
print("L =", round(loss.item(), 4))

# %% [markdown]
# The third way: the same forward in plain numpy, any intermediate replaceable, and central
# differences $\frac{L(a + \epsilon) - L(a - \epsilon)}{2\epsilon}$, one element at a time.

# %%
xn = x.numpy()
wk, wq, wv = (w.detach().numpy() for w in (w_key, w_query, w_value))
K, Q, V = (t.detach().numpy() for t in (keys, queries, values))
S, P, O = (t.detach().numpy() for t in (scores, p, outputs))  # noqa: E741  (O: the outputs, as in the math)


def numpy_loss(w_query=wq, w_key=wk, w_value=wv, **given):
    """L again in numpy; pass an intermediate (keys=, queries=, values=, scores=, p=, outputs=) to start from it."""
    keys = given.get("keys", xn @ w_key)
    queries = given.get("queries", xn @ w_query)
    values = given.get("values", xn @ w_value)
    scores = given.get("scores", queries @ keys.T)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p = given.get("p", e / e.sum(axis=-1, keepdims=True))
    outputs = given.get("outputs", p @ values)
    return np.sum(outputs * G)


def finite_differences(loss_of, at, eps=1e-6):
    grad = np.zeros_like(at)
    for i in np.ndindex(at.shape):
        step = np.zeros_like(at)
        step[i] = eps
        grad[i] = (loss_of(at + step) - loss_of(at - step)) / (2 * eps)
    return grad


def check(name, by_formula, by_autograd, by_differences, tol=1e-6):
    """Print the gradient and how far the three ways are apart; stop the notebook if they disagree."""
    e1 = np.abs(by_formula - by_autograd).max()
    e2 = np.abs(by_formula - by_differences).max()
    verdict = "OK" if max(e1, e2) <= tol else "MISMATCH"
    print(f"{name}\n{by_formula}\nformula vs autograd: {e1:.1e}   formula vs finite differences: {e2:.1e}   {verdict}")
    assert verdict == "OK"


# %% [markdown]
# **B1. The outputs.** $L = \sum O \odot G$ is linear in $O$:
#
# $$dO = G$$

# %%
dO = G
check("dO", dO, outputs.grad.numpy(), finite_differences(lambda a: numpy_loss(outputs=a), O))

# %% [markdown]
# **B2. Through the weighted sum, to the weights.** For a product $C = AB$ the rule is
# $dA = dC\, B^\top$ and $dB = A^\top dC$. With $O = PV$:
#
# $$dP = dO\, V^\top \qquad dP_{ij} = dO_i \cdot v_j$$

# %%
dP = dO @ V.T
check("dP", dP, p.grad.numpy(), finite_differences(lambda a: numpy_loss(p=a), P))

# %% [markdown]
# **B3. ... and to the values.** Value $j$ reaches every output $i$ with weight $P_{ij}$:
#
# $$dV = P^\top dO$$

# %%
dV = P.T @ dO
check("dV", dV, values.grad.numpy(), finite_differences(lambda a: numpy_loss(values=a), V))

# %% [markdown]
# **B4. Through the softmax, to the scores.** The Jacobian of one row is
# $\partial p_i / \partial s_j = p_i(\delta_{ij} - p_j)$; applying it to $dP$ without building it:
#
# $$dS = P \odot \big(dP - \operatorname{rowsum}(dP \odot P)\big)$$
#
# Each row of $dS$ sums to 0: adding a constant to a row of scores leaves its softmax unchanged.

# %%
dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))
check("dS", dS, scores.grad.numpy(), finite_differences(lambda a: numpy_loss(scores=a), S))
print("rowsum(dS):", dS.sum(axis=-1).round(12) + 0.0)

# %% [markdown]
# The gradients of the weights and of the scores, as pictures. Red is positive, blue negative,
# white 0. Row 1 of $dS$ is almost white although row 1 of $dP$ is not: that row of $P$ is
# nearly one-hot (0.982 on key 1), and a saturated softmax passes almost no gradient.

# %%
attention.show_heatmaps(dP, tokens, tokens, title="dP = dO V^T")

# %%
attention.show_heatmaps(dS, tokens, tokens, title="dS = P ⊙ (dP − rowsum(dP ⊙ P))")

# %% [markdown]
# **B5 and B6. Through the scores, to the queries and keys.** $S = Q K^\top$ is a product, with
# $K^\top$ as its second factor (transpose $dB$ back to get $dK$):
#
# $$dQ = dS\, K \qquad dK = dS^\top Q$$

# %%
dQ = dS @ K
check("dQ", dQ, queries.grad.numpy(), finite_differences(lambda a: numpy_loss(queries=a), Q))
dK = dS.T @ Q
check("dK", dK, keys.grad.numpy(), finite_differences(lambda a: numpy_loss(keys=a), K))

# %% [markdown]
# **B7 to B9. To the weights.** Each projection is a product with $x$ on the left:
#
# $$dW_{query} = x^\top dQ \qquad dW_{key} = x^\top dK \qquad dW_{value} = x^\top dV$$
#
# Rows 0 and 2 of each come out equal: columns 0 and 2 of $x$ are equal, so those two rows of a
# weight always see the same inputs.

# %%
check("dW_query", xn.T @ dQ, w_query.grad.numpy(), finite_differences(lambda a: numpy_loss(w_query=a), wq))
check("dW_key", xn.T @ dK, w_key.grad.numpy(), finite_differences(lambda a: numpy_loss(w_key=a), wk))
check("dW_value", xn.T @ dV, w_value.grad.numpy(), finite_differences(lambda a: numpy_loss(w_value=a), wv))

# %% [markdown]
# ## The whole layer at once
#
# `gradcheck` compares autograd with finite differences for the whole layer, with random upstream
# weights instead of our $G$: it raises if any gradient of any weight is off.

# %%
def layer(w_query, w_key, w_value):
    return F.softmax((x @ w_query) @ (x @ w_key).T, dim=-1) @ (x @ w_value)


weights = [w.detach().requires_grad_() for w in (w_query, w_key, w_value)]
print("gradcheck:", gradcheck(layer, weights))

# %% [markdown]
# `attention.SelfAttention` is the same layer as a module: with the tutorial's weights and no
# scale it gives the same outputs and the same gradients.

# %%
layer_module = attention.SelfAttention(4, 3, scale=1.0)
with torch.no_grad():
    for name, w in (("w_query", w_query), ("w_key", w_key), ("w_value", w_value)):
        setattr(layer_module, name, torch.nn.Parameter(w.detach().clone()))
out, weights_of_module = layer_module(x)
(out * torch.tensor(G)).sum().backward()
assert np.allclose(out.detach().numpy(), O) and np.allclose(weights_of_module.detach().numpy(), P)
for name, w in (("w_query", w_query), ("w_key", w_key), ("w_value", w_value)):
    assert np.allclose(getattr(layer_module, name).grad.numpy(), w.grad.numpy()), name
print("attention.SelfAttention: same outputs, weights and gradients")
