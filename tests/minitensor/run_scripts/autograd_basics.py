"""The autograd tutorials' idioms ("Automatic Differentiation with torch.autograd" and "A Gentle
Introduction to torch.autograd"), written for PyTorch: a one-layer net with binary_cross_entropy_with_logits,
grad_fn reprs, requires_grad_(), backward(gradient=...), retain_graph and accumulating .grad, .grad.zero_(),
torch.no_grad() and detach(), torch.autograd.grad with create_graph, next_functions, and
torch.autograd.functional.jacobian. Every tensor is made here from fixed numbers.
"""
import torch

x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.linspace(-1, 1, 15).reshape(5, 3).requires_grad_()
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(z)
print(loss)
print(repr(z.grad_fn).split(" object")[0], repr(loss.grad_fn).split(" object")[0])

loss.backward()
print(w.grad)
print(b.grad)

z = torch.matmul(x, w) + b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)
z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad, z_det.is_leaf, z.is_leaf, w.is_leaf)

# The Jacobian-vector product: backward with a gradient, twice accumulating, then zeroed.
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")

# Q = 3a^3 - b^2, with an external gradient since Q is a vector.
a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3 * a ** 3 - b ** 2
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
print(9 * a ** 2 == a.grad)
print(-2 * b == b.grad)

# Frozen parameters: only what requires grad enters the graph.
x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

# torch.autograd.grad, and a second derivative through create_graph.
t = torch.linspace(0.5, 2.0, 4, requires_grad=True)
f = (t ** 3).sum()
(df,) = torch.autograd.grad(f, t, create_graph=True)
print("df/dt", df)
(d2f,) = torch.autograd.grad(df.sum(), t)
print("d2f/dt2", d2f)

# The graph, walked through next_functions.
u = torch.tensor([1.0, 2.0], requires_grad=True)
v = (u * 2).exp().sum()
node, depth = v.grad_fn, 0
while node is not None and getattr(node, "next_functions", ()):
    depth += 1
    node = node.next_functions[0][0]
print(depth, "nodes above the leaf")

# The Jacobian of a function of a vector.
def softplus(s):
    return torch.log1p(torch.exp(s))


jac = torch.autograd.functional.jacobian(softplus, torch.tensor([-1.0, 0.0, 2.0]))
print(jac)
jac_w = torch.autograd.functional.jacobian(lambda m: m @ torch.tensor([1.0, -2.0]), torch.ones(2, 2))
print(jac_w.shape, jac_w.sum().item())
