"""Jacobians, Hessians and per-sample gradients in the manner of the torch.func tutorials ("Jacobians,
Hessians, hvp, vhp, and more" and "Per-sample-gradients"), written for PyTorch: torch.func.grad with
argnums and has_aux, vmap over a batch with in_dims, jacrev and jacfwd (compared with each other and with
torch.autograd.functional.jacobian), hessian, the Hessian as jacfwd(jacrev(f)), hvp and vhp from
torch.autograd.functional, vjp and jvp, and per-sample gradients of a model through functional_call with
its detached named parameters, vmap(grad(compute_loss), in_dims=(None, 0, 0)).

Every weight and input is made here from fixed numbers.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

torch.manual_seed(0)
D = 4
weight = torch.cos(torch.arange(D * D, dtype=torch.float) * 0.7).view(D, D)
bias = torch.linspace(-0.5, 0.5, D)
x = torch.linspace(-1, 1, D)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


# grad of a scalar function, and of several arguments
print(grad(lambda x: x.sin().sum())(x))
print(torch.allclose(grad(lambda x: x.sin().sum())(x), x.cos()))
gw, gb = grad(lambda w, b: predict(w, b, x).pow(2).sum(), argnums=(0, 1))(weight, bias)
print(gw.shape, gw.sum(), gb)


def loss_with_aux(w):
    out = predict(w, bias, x)
    return out.pow(2).sum(), out


g, aux = grad(loss_with_aux, has_aux=True)(weight)
print(g[0], aux)

# Jacobians: reverse mode, forward mode, and the autograd.functional one
jacobian = jacrev(predict, argnums=2)(weight, bias, x)
print(jacobian)
jacobian_f = jacfwd(predict, argnums=2)(weight, bias, x)
print(torch.allclose(jacobian, jacobian_f, atol=1e-6),
      torch.allclose(jacobian, torch.autograd.functional.jacobian(lambda x: predict(weight, bias, x), x), atol=1e-6))
ft_jacobian, ft_jacobian_b = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print(ft_jacobian.shape, ft_jacobian_b.shape, ft_jacobian_b.sum())

# a batch of Jacobians with vmap
batch_size = 3
xs = torch.linspace(-1, 1, batch_size * D).view(batch_size, D)
compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, xs)
print(batch_jacobian0.shape, batch_jacobian0.sum(dim=(1, 2)))
print(vmap(torch.dot)(xs, xs), vmap(lambda v: predict(weight, bias, v))(xs).sum(1))

# Hessians
def f(x):
    return x.sin().sum() + (x ** 3).prod()


hess0 = hessian(f)(x)
hess1 = jacfwd(jacrev(f))(x)
hess2 = jacrev(jacrev(f))(x)
print(hess0)
print(torch.allclose(hess0, hess1, atol=1e-5), torch.allclose(hess0, hess2, atol=1e-5))
print(torch.autograd.functional.hessian(f, x).diagonal())

# Hessian-vector products
v = torch.linspace(1, 2, D)
_, hv = torch.autograd.functional.hvp(f, x, v)
_, vh = torch.autograd.functional.vhp(f, x, v)
print(hv, torch.allclose(hv, vh, atol=1e-5), torch.allclose(hv, hess0 @ v, atol=1e-5))


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


print(torch.allclose(hvp(f, (x,), (v,)), hv, atol=1e-5))
out, vjp_fn = vjp(torch.sin, x)
print(vjp_fn(torch.ones(D))[0], torch.allclose(out, x.sin()))
print(jvp(torch.exp, (x,), (v,))[1])


# per-sample gradients with functional_call
class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(D, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


model = SimpleMLP()
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(0.4 * torch.sin(torch.arange(p.numel()) * 1.7 + k).view(p.shape))
data = torch.linspace(-2, 2, 5 * D).view(5, D)
targets = torch.tensor([0, 2, 1, 1, 0])

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    return F.cross_entropy(predictions, targets)


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
for name, g in ft_per_sample_grads.items():
    print(name, tuple(g.shape), g.flatten(1) @ torch.linspace(0, 1, g[0].numel()))

# the loop they replace: one backward per sample
for i in range(len(data)):
    model.zero_grad()
    F.cross_entropy(model(data[i:i + 1]), targets[i:i + 1]).backward()
    same = all(torch.allclose(p.grad, ft_per_sample_grads[n][i], atol=1e-6) for n, p in model.named_parameters())
    print(i, same)
