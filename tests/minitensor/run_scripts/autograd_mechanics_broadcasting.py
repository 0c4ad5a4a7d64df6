"""PyTorch's "Broadcasting semantics" and "Autograd mechanics" notes, written for PyTorch: which shapes
broadcast (and the error text of those that don't), in-place ops that may not change their shape, the
backwards-compatibility pitfall of a 1-d sum; then requires_grad_ to freeze a part, is_leaf, retain_grad,
the warning on reading a non-leaf's .grad, in-place correctness checks through the version counter (the
RuntimeError text), torch.no_grad / torch.inference_mode / torch.autograd.set_grad_enabled, torch.is_grad_enabled
and torch.autograd.grad with allow_unused and materialize_grads.
"""
import re
import warnings

import torch


def said(error):
    """The error's sentence as PyTorch words it: minitensor names the op before it and the shapes after it."""
    return re.sub(r" \(shapes .*\)$", "", re.sub(r"^\w+: ", "", str(error)))


# ---- Broadcasting semantics ----------------------------------------------------------------------
x = torch.empty(5, 7, 3)
y = torch.empty(5, 7, 3)
# same shapes are always broadcastable (i.e. the above rules always hold)
print((x + y).size())

x = torch.empty((0,))
y = torch.empty(2, 2)
# x and y are not broadcastable, because x does not have at least 1 dimension
try:
    x + y
except RuntimeError as e:
    print("RuntimeError:", said(e))

# can line up trailing dimensions
x = torch.empty(5, 3, 4, 1)
y = torch.empty(3, 1, 1)
# x and y are broadcastable.
print((x + y).size())

# but:
x = torch.empty(5, 2, 4, 1)
y = torch.empty(3, 1, 1)
# x and y are not broadcastable, because in the 3rd trailing dimension 2 != 3
try:
    x + y
except RuntimeError as e:
    print("RuntimeError:", said(e))

x = torch.empty(5, 1, 4, 1)
y = torch.empty(3, 1, 1)
print((x + y).size())

x = torch.empty(1)
y = torch.empty(3, 1, 7)
print((x + y).size())

x = torch.empty(5, 2, 4, 1)
y = torch.empty(3, 1, 1)
try:
    (x + y).size()
except RuntimeError as e:
    print("RuntimeError:", said(e))

# in-place semantics: the in-place tensor keeps its shape
x = torch.empty(5, 3, 4, 1)
y = torch.empty(3, 1, 1)
print(x.add_(y).size())

# but:
x = torch.empty(1, 3, 1)
y = torch.empty(3, 1, 7)
try:
    x.add_(y)
except RuntimeError as e:
    print("RuntimeError:", said(e))

# backwards compatibility: same number of elements, different shapes
print(torch.add(torch.ones(4, 1), torch.randn(4)).size())
print(torch.broadcast_shapes((2,), (3, 1), (1, 1, 1)),
      torch.broadcast_tensors(torch.ones(3, 1), torch.ones(2))[0].shape)
a = torch.arange(3.).view(3, 1)
b = torch.arange(4.)
print(a * b, (a - b).sum(0))

# ---- Autograd mechanics ---------------------------------------------------------------------------
x = torch.randn(5, 5)  # requires_grad=False by default
y = torch.randn(5, 5)  # requires_grad=False by default
z = torch.randn((5, 5), requires_grad=True)
a = x + y
print(a.requires_grad, a.is_leaf)
b = x + z
print(b.requires_grad, b.is_leaf, z.is_leaf, b.grad_fn is not None)

# freezing: the parameters of a part of a model
model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float) + k).view(p.shape))
model[0].requires_grad_(False)
inp = torch.linspace(-1, 1, 8).view(2, 4)
out = model(inp)
out.pow(2).mean().backward()
print([p.grad is None for p in model.parameters()], model[2].bias.grad)
model.requires_grad_(True)

# a non-leaf's grad, with and without retain_grad
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
h = x * x
h.retain_grad()
g = h.exp()
out = (g * torch.tensor([0.5, -1.0, 2.0])).sum()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print(g.grad)
print([str(w.message).split(". ")[0] for w in caught])
out.backward()
print(h.grad, x.grad, h.retains_grad, g.retains_grad, g.is_leaf)

# in-place correctness checks: an op that saved a tensor for backward finds it changed
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sigmoid()
c = b * 2
print(b._version)
b.mul_(3)  # sigmoid's backward needs its output, b
print(b._version)
try:
    c.sum().backward()
    b.sum().backward()
except RuntimeError as e:
    print(str(e).split(":")[0])

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * 1
c = b ** 2
b.add_(1)
try:
    c.sum().backward()
except RuntimeError as e:
    print(str(e).split(":")[0])

# an in-place op that saved nothing is fine
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a * 2
b.add_(1)
b.mul_(torch.tensor([1.0, 0.5, 2.0]))
b.sum().backward()
print(a.grad, b.grad_fn is not None)

try:
    torch.ones(2, requires_grad=True).add_(1)
except RuntimeError as e:
    print("a leaf Variable that requires grad is being used in an in-place operation" in str(e))

# grad modes
x = torch.ones(2, 2, requires_grad=True)
with torch.no_grad():
    y = x * 2
print(y.requires_grad, torch.is_grad_enabled())
with torch.inference_mode():
    y = x * 2
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
print(y.requires_grad, x.is_inference())
with torch.autograd.set_grad_enabled(False):
    print(torch.is_grad_enabled(), (x * 2).requires_grad)
torch.set_grad_enabled(False)
print((x * 2).requires_grad)
torch.set_grad_enabled(True)
print((x * 2).requires_grad)


@torch.no_grad()
def doubler(x):
    return x * 2


@torch.inference_mode()
def tripler(x):
    return x * 3


print(doubler(x).requires_grad, tripler(x).requires_grad)

# torch.autograd.grad, with an input the output does not use
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = torch.tensor([3.0, 4.0], requires_grad=True)
out = (x ** 3).sum()
try:
    torch.autograd.grad(out, (x, y), retain_graph=True)
except RuntimeError as e:
    print(said(e))
print(torch.autograd.grad(out, (x, y), allow_unused=True, retain_graph=True))
print(torch.autograd.grad(out, (x, y), allow_unused=True, materialize_grads=True, retain_graph=True))
gx, = torch.autograd.grad(out, x, create_graph=True)
print(gx, torch.autograd.grad(gx, x, torch.tensor([1.0, -1.0])))
try:
    out.backward()
    out.backward()
except RuntimeError as e:
    print(str(e).split(" (")[0])
