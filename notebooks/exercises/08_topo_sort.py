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
# # Exercise 8 of 9: the engine's topological sort
#
# `loss.backward()` must call each node's backward once, with the sum of every gradient that flows
# into the node's output. So a node may run only after every node that consumes its output has
# run: the nodes must be in a topological order of the graph, read from the output back.
#
# The graph, as minitensor records it: `t.grad_fn` is the node that made tensor t (None for a
# leaf). `node.gradient_edges` is a tuple of (child, i), one per input of the op that needs a
# gradient: `child` is the node that made that input, or the input itself when it is a leaf
# Tensor (`isinstance(child, Tensor)`), and `i` is that input's place among forward's arguments, so
# the gradient for it is `grads[i]`. Leaves have no backward; they only collect gradients.
# (`node.next_functions` shows the same graph as PyTorch prints it, with a leaf as its
# `AccumulateGrad` node; the engine walks `gradient_edges`.)
#
# Your task: `topological_order(root)` returns every node reachable from `root` (leaves excluded),
# each exactly once, each before every node that made one of its inputs. `backward` below runs the
# VJPs in your order, as the real engine (minitensor/autograd/engine.py) does in its own.
# Graphs to think about: b = a.exp(); c = b * b + b (b feeds three inputs of two nodes), and a
# chain of two thousand ops (a recursive walk hits Python's recursion limit at about 1000).
#
# Run the cells from the top: the one under **Your code** saves itself as
# `my_exercises/topo_sort.py`, the one under **Grade it** grades that file: the graph's backward
# is run in your order and compared with the real engine's. Change the code, run both again. The
# same file can be graded in a terminal with `attention-grade topo_sort
# my_exercises/topo_sort.py`.


# %%
import os

from attention.course.exercises import find
from attention.course.grade import grade_exercise, report

exercise = find("topo_sort")
os.makedirs("my_exercises", exist_ok=True)


# %% [markdown]
# ## Your code
#
# Replace each `raise NotImplementedError(...)` with your code; keep the rest. (`%%writefile` on
# the first line saves the cell to the file instead of running it.)


# %%
# %%writefile my_exercises/topo_sort.py
from minitensor import Tensor
from minitensor.autograd import no_grad


def topological_order(root):
    """Every node reachable from `root`, each before the nodes that made its inputs."""
    raise NotImplementedError(
        "the engine's topological sort is yours to write. Hint 1: a node may run only after every "
        "node that uses its output. Walk from the root through node.gradient_edges; list a node "
        "once all the nodes it reads from are listed, then reverse the list. (next hint: "
        "attention-grade --hint 2 topo_sort)"
    )


def backward(output, g):
    """Run the graph's VJPs in your order from `output` with upstream gradient `g`; return
    {id(leaf): (leaf, gradient)}. (Keyed by id: `==` on Tensors compares elementwise.)"""
    pending = {output.grad_fn: g}  # node -> the sum of the gradients of its output so far
    leaves = {}
    with no_grad():
        for node in topological_order(output.grad_fn):
            grads = node.backward(node, pending.pop(node))
            grads = grads if isinstance(grads, tuple) else (grads,)
            for child, i in node.gradient_edges:
                if isinstance(child, Tensor):
                    total = leaves[id(child)][1] + grads[i] if id(child) in leaves else grads[i]
                    leaves[id(child)] = (child, total)
                else:
                    pending[child] = pending[child] + grads[i] if child in pending else grads[i]
    return leaves


# %% [markdown]
# ## Grade it
#
# 8 points in 6 cases. A fresh copy of this notebook reports "not implemented yet".


# %%
result = grade_exercise(exercise, "my_exercises/topo_sort.py")
print("\n".join(report(result)))


# %% [markdown]
# ## Hints
#
# Open one at a time: the third all but gives the answer.
#
# <details><summary>Hint 1</summary>
#
# a node may run only after every node that uses its output. Walk from the root through
# node.gradient_edges; list a node once all the nodes it reads from are listed, then reverse the
# list.
#
# </details>
#
# <details><summary>Hint 2</summary>
#
# keep a set of visited nodes, so a node reached by two paths is walked once (without it the
# ladder has 2^30 paths). Use a list as an explicit stack, not recursion: the chain is 3000 deep.
#
# </details>
#
# <details><summary>Hint 3</summary>
#
# stack = [(root, False)]; pop (node, done): if done, append node to order; else if not visited,
# mark it, push (node, True), then push (child, False) for every child that is not a Tensor.
# Return order reversed.
#
# </details>
