"""For `autograd.grad` and `backward(inputs=...)`: the part of the graph that leads to the inputs.
As in PyTorch, only those nodes run, so the hooks of other leaves and of nodes below an input
don't fire, and a node below a non-leaf input keeps what it saved for a later backward."""
from ..tensor import Tensor


def needed_nodes(roots, capture):
    """The nodes from which some tensor of `capture` is reached (a capture's own grad_fn included)."""
    targets = {id(t) for t in capture if t.grad_fn is None}
    parents, order, seen = {}, [], set(roots)
    stack = list(roots)
    while stack:  # every reachable node, and for each the nodes that feed it its gradient
        node = stack.pop()
        order.append(node)
        for _, child, _, _ in node.edges:
            if isinstance(child, Tensor):
                continue
            parents.setdefault(child, []).append(node)
            if child not in seen:
                seen.add(child)
                stack.append(child)
    needed = {t.grad_fn for t in capture if t.grad_fn is not None and t.grad_fn in seen}
    needed.update(node for node in order if any(isinstance(c, Tensor) and id(c) in targets
                                                for _, c, _, _ in node.edges))
    stack = list(needed)
    while stack:  # upward from the targets
        for parent in parents.get(stack.pop(), ()):
            if parent not in needed:
                needed.add(parent)
                stack.append(parent)
    return needed


def leads_to(child, needed, capture_ids):
    """Whether a gradient sent to `child` (a node or a leaf) is of any use to the inputs."""
    return id(child) in capture_ids if isinstance(child, Tensor) else child in needed
