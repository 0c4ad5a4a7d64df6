r"""Exercise: the engine's topological sort.

`loss.backward()` must call each node's backward once, with the sum of every gradient that flows
into the node's output. So a node may run only after every node that consumes its output has
run: the nodes must be in a topological order of the graph, read from the output back.

The graph, as minitensor records it: `t.grad_fn` is the node that made tensor t (None for a
leaf). `node.gradient_edges` is a tuple of (child, i), one per input of the op that needs a
gradient: `child` is the node that made that input, or the input itself when it is a leaf
Tensor (`isinstance(child, Tensor)`), and `i` is that input's place among forward's arguments, so
the gradient for it is `grads[i]`. Leaves have no backward; they only collect gradients.
(`node.next_functions` shows the same graph as PyTorch prints it, with a leaf as its
`AccumulateGrad` node; the engine walks `gradient_edges`.)

Your task: `topological_order(root)` returns every node reachable from `root` (leaves excluded),
each exactly once, each before every node that made one of its inputs. `backward` below runs the
VJPs in your order, as the real engine (minitensor/autograd/engine.py) does in its own.
Graphs to think about: b = a.exp(); c = b * b + b (b feeds three inputs of two nodes), and a
chain of two thousand ops (a recursive walk hits Python's recursion limit at about 1000).

Grade it:   attention-grade topo_sort topo_sort.py        (more hints: attention-grade --hint 2 topo_sort)
"""
from minitensor import Tensor
from minitensor.autograd import no_grad


def topological_order(root):
    """Every node reachable from `root`, each before the nodes that made its inputs."""
    # BEGIN SOLUTION
    order, visited = [], set()
    stack = [(root, False)]  # (node, whether the nodes it reads from are already in `order`)
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if node in visited:
            continue  # reached again by another path: a node is listed once
        visited.add(node)
        stack.append((node, True))  # popped again after all of its inputs' nodes
        for child, _ in node.gradient_edges:
            if not isinstance(child, Tensor) and child not in visited:
                stack.append((child, False))
    return order[::-1]  # reversed post-order: each node before the nodes that feed it
    # END SOLUTION


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
