"""The "Parametrizations Tutorial" of the PyTorch documentation, written for PyTorch, with its weights set from
torch.arange / torch.linspace (not drawn) so both libraries start from the same numbers: a symmetric weight
(`X.triu() + X.triu(1).transpose(-1, -2)`) on a Linear, a skew-symmetric one on a Conv2d, printing the
parametrized layer and `layer.parametrizations.weight.original`, recomputation on each access and
`parametrize.cached()`, chaining Skew with a Cayley map and with matrix_exp (orthogonal weights) and Symmetric
with matrix_exp (positive definite), initialising through right_inverse (`layer.weight = X`), and
remove_parametrizations with leave_parametrized True and False. Then nn.utils.parametrizations: orthogonal,
weight_norm (original0 / original1) and spectral_norm's largest singular value.
"""
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils import parametrizations

torch.manual_seed(0)


def set_weight(layer, start=-1.0, end=1.0, name="weight"):
    w = getattr(layer, name)
    with torch.no_grad():
        w.copy_(torch.linspace(start, end, w.numel()).reshape(w.shape))
        if getattr(layer, "bias", None) is not None:
            layer.bias.copy_(torch.linspace(-0.1, 0.1, layer.bias.numel()))


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


layer = nn.Linear(3, 3)
set_weight(layer)
parametrize.register_parametrization(layer, "weight", Symmetric())
A = layer.weight
assert torch.allclose(A, A.T)
print(A)


class Skew(nn.Module):
    def forward(self, X):
        A = X.triu(1)
        return A - A.transpose(-1, -2)


cnn = nn.Conv2d(in_channels=5, out_channels=8, kernel_size=3)
set_weight(cnn, -0.5, 0.5)
parametrize.register_parametrization(cnn, "weight", Skew())
print(cnn.weight[0, 1])
print(cnn.weight[2, 2])

# Inspecting a parametrized module
layer = nn.Linear(3, 3)
set_weight(layer)
print(f"Unparametrized:\n{layer}")
parametrize.register_parametrization(layer, "weight", Skew())
print(f"\nParametrized:\n{layer}")
print(layer.parametrizations)
print(layer.parametrizations.weight)
print(layer.parametrizations.weight[0])
print(dict(layer.named_parameters()))
print(layer.parametrizations.weight.original)
print(torch.dist(layer.weight, layer.parametrizations.weight.original.triu(1)
                 - layer.parametrizations.weight.original.triu(1).T))
print(list(layer.state_dict()))


# Caching the value of a parametrization
class NoisyParametrization(nn.Module):
    def forward(self, X):
        print("Computing the Parametrization")
        return X


layer = nn.Linear(4, 4)
parametrize.register_parametrization(layer, "weight", NoisyParametrization())
print("Here, layer.weight is recomputed every time we call it")
foo = layer.weight + layer.weight.T
bar = layer.weight.sum()
with parametrize.cached():
    print("Here, it is computed just the first time layer.weight is called")
    foo = layer.weight + layer.weight.T
    bar = layer.weight.sum()


# Concatenating parametrizations
class CayleyMap(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("Id", torch.eye(n))

    def forward(self, X):
        # (I + X)(I - X)^{-1}
        return torch.linalg.solve(self.Id - X, self.Id + X)


layer = nn.Linear(3, 3)
set_weight(layer)
parametrize.register_parametrization(layer, "weight", Skew())
parametrize.register_parametrization(layer, "weight", CayleyMap(3))
X = layer.weight
print(torch.dist(X.T @ X, torch.eye(3)) < 1e-6)
print(layer)


class MatrixExponential(nn.Module):
    def forward(self, X):
        return torch.matrix_exp(X)


layer_orthogonal = nn.Linear(3, 3)
set_weight(layer_orthogonal, 0.0, 0.8)
parametrize.register_parametrization(layer_orthogonal, "weight", Skew())
parametrize.register_parametrization(layer_orthogonal, "weight", MatrixExponential())
X = layer_orthogonal.weight
print(X)
print(torch.dist(X.T @ X, torch.eye(3)) < 1e-6)

layer_spd = nn.Linear(3, 3)
set_weight(layer_spd, -0.4, 0.4)
parametrize.register_parametrization(layer_spd, "weight", Symmetric())
parametrize.register_parametrization(layer_spd, "weight", MatrixExponential())
X = layer_spd.weight
print(torch.dist(X, X.T) < 1e-6, (torch.linalg.eigvalsh(X) > 0.).all())

# Gradients reach `original`
out = layer_orthogonal(torch.linspace(-1, 1, 6).reshape(2, 3))
(out * torch.arange(6.).reshape(2, 3)).sum().backward()
print(layer_orthogonal.parametrizations.weight.original.grad)


# Initializing parametrizations through right_inverse
class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A):
        return A.triu()


layer = nn.Linear(3, 3)
parametrize.register_parametrization(layer, "weight", Symmetric())
X = torch.arange(9.).reshape(3, 3) / 10
X = X + X.T
layer.weight = X
print(torch.allclose(layer.weight, X), layer.parametrizations.weight.original)

# Removing parametrizations
layer = nn.Linear(3, 3)
set_weight(layer)
print("Before:")
print(layer)
print(layer.weight)
parametrize.register_parametrization(layer, "weight", Skew())
print("\nParametrized:")
print(layer)
print(layer.weight)
parametrize.remove_parametrizations(layer, "weight")
print("\nAfter. Weight has skew-symmetric values but it is unconstrained:")
print(layer)
print(layer.weight)

layer = nn.Linear(3, 3)
set_weight(layer)
parametrize.register_parametrization(layer, "weight", Skew())
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
print("\nAfter. Same as Before:")
print(layer.weight)

# The ready-made parametrizations
orth = nn.Linear(3, 3)
with torch.no_grad():
    orth.weight.copy_(torch.tensor([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]))
parametrizations.orthogonal(orth)  # the weight becomes the Q of its QR decomposition
print(orth)
Q = orth.weight
print(Q, torch.dist(Q.T @ Q, torch.eye(3)) < 1e-6)
set_weight(orth.parametrizations.weight, 0.1, 0.9, name="original")
print(orth.weight)

wn = parametrizations.weight_norm(nn.Linear(3, 2))
with torch.no_grad():
    wn.parametrizations.weight.original1.copy_(torch.linspace(-1, 1, 6).reshape(2, 3))
    wn.parametrizations.weight.original0.copy_(torch.tensor([[2.0], [0.5]]))
print(wn.parametrizations.weight.original0.shape, wn.parametrizations.weight.original1.shape)
print(wn.weight)

sn = parametrizations.spectral_norm(nn.Linear(4, 3))
set_weight(sn.parametrizations.weight, name="original")
for _ in range(20):  # power iteration: each read in training mode takes one step
    W = sn.weight
print(round(torch.linalg.matrix_norm(W.detach(), 2).item(), 4))
