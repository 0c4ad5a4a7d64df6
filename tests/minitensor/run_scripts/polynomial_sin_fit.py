"""Fitting y = sin(x) with a cubic, in the manner of "Learning PyTorch with Examples", written for PyTorch:
the gradients by hand on tensors, then autograd, a custom autograd.Function (Legendre P3), an nn.Sequential
of Linear and Flatten fed x.unsqueeze(-1).pow(p), RMSprop, and a dynamic net whose depth is drawn at random.

Every starting weight is set here, and Python's own `random` picks the depth, so both libraries start
from the same numbers and take the same branches.
"""
import math
import random

import torch

dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 400, device=device, dtype=dtype)
y = torch.sin(x)

# 1. Tensors only: the forward and the gradients of the squared error written out.
a, b, c, d = (torch.full((), v, device=device, dtype=dtype) for v in (0.1, -0.2, 0.3, -0.1))
learning_rate = 1e-5
for t in range(150):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum().item()
    if t % 50 == 49:
        print("tensors", t, round(loss, 3))
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d
print(f"Result: y = {a.item():.5f} + {b.item():.5f} x + {c.item():.5f} x^2 + {d.item():.5f} x^3")

# 2. Autograd: the same fit with requires_grad leaves and an update under no_grad.
a = torch.tensor(0.1, dtype=dtype, requires_grad=True)
b = torch.tensor(-0.2, dtype=dtype, requires_grad=True)
c = torch.tensor(0.3, dtype=dtype, requires_grad=True)
d = torch.tensor(-0.1, dtype=dtype, requires_grad=True)
for t in range(150):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 50 == 49:
        print("autograd", t, round(loss.item(), 3))
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f"Result: y = {a.item():.5f} + {b.item():.5f} x + {c.item():.5f} x^2 + {d.item():.5f} x^3")


# 3. A Function of our own: P3(z) = (5 z^3 - 3 z) / 2, its backward 1.5 (5 z^2 - 1).
class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, dtype=dtype, requires_grad=True)
learning_rate = 5e-6
for t in range(150):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 50 == 49:
        print("function", t, round(loss.item(), 3))
    loss.backward()
    with torch.no_grad():
        for p in (a, b, c, d):
            p -= learning_rate * p.grad
            p.grad = None
print(f"Result: y = {a.item():.5f} + {b.item():.5f} * P3({c.item():.5f} + {d.item():.5f} x)")

# 4. nn: the features x, x^2, x^3 as a (400, 3) tensor, a Linear layer, then Flatten(0, 1) to (400,).
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
print("features:", tuple(xx.shape), xx.dtype)
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
with torch.no_grad():
    model[0].weight.copy_(torch.tensor([[0.5, -0.1, -0.05]]))
    model[0].bias.fill_(0.05)
loss_fn = torch.nn.MSELoss(reduction="sum")
# half the usual 1e-3: at 1e-3 the cubic coefficient bounces, and the bounce magnifies float32 rounding
optimizer = torch.optim.RMSprop(model.parameters(), lr=5e-4)
for t in range(150):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 50 == 49:
        print("rmsprop", t, round(loss.item(), 3))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
linear_layer = model[0]
print(f"Result: y = {linear_layer.bias.item():.5f} + {linear_layer.weight[:, 0].item():.5f} x"
      f" + {linear_layer.weight[:, 1].item():.5f} x^2 + {linear_layer.weight[:, 2].item():.5f} x^3")


# 5. A dynamic net: the same parameter e reused for x^4 and x^5 a random number of times.
class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.tensor(0.0))
        self.b = torch.nn.Parameter(torch.tensor(0.8))
        self.c = torch.nn.Parameter(torch.tensor(0.0))
        self.d = torch.nn.Parameter(torch.tensor(-0.1))
        self.e = torch.nn.Parameter(torch.tensor(0.0))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return (f"y = {self.a.item():.5f} + {self.b.item():.5f} x + {self.c.item():.5f} x^2"
                f" + {self.d.item():.5f} x^3 + {self.e.item():.5f} x^4 ? + {self.e.item():.5f} x^5 ?")


random.seed(0)
model = DynamicNet()
criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(150):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 50 == 49:
        print("dynamic", t, round(loss.item(), 3))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"Result: {model.string()}")
