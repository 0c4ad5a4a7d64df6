"""Logistic regression from scratch and its refactors, in the manner of "What is torch.nn really?",
written for PyTorch: weights from torch.randn(784, 10) / math.sqrt(784) and requires_grad_(), a
hand-written log_softmax (x - x.exp().sum(-1).log().unsqueeze(-1)), the negative log-likelihood as
-input[range(target.shape[0]), target].mean(), torch.argmax(out, dim=1), the update inside
torch.no_grad() with weights.grad.zero_(); then F.cross_entropy, an nn.Module with nn.Parameter,
nn.Linear, optim.SGD(momentum=0.9), TensorDataset and DataLoader, a get_data/fit/loss_batch loop,
a Lambda(nn.Module) wrapper, xb.view(-1, 1, 28, 28), and an nn.Sequential of Conv2d with
nn.AdaptiveAvgPool2d(1).

The "images" are made here from numpy's RandomState; every random draw of the tutorial is overwritten
with fixed numbers (torch.randn's draws differ between the libraries), so both start from the same weights.
"""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset

rs = np.random.RandomState(3)
n_train, n_valid = 64, 32
labels = rs.randint(0, 10, size=n_train + n_valid)
pixels = rs.uniform(0, 0.3, size=(n_train + n_valid, 784)).astype(np.float32)
for i, label in enumerate(labels):
    pixels[i, label * 70:label * 70 + 70] += 0.7  # each digit lights its own band of pixels
x_train, y_train, x_valid, y_valid = map(
    torch.tensor, (pixels[:n_train], labels[:n_train], pixels[n_train:], labels[n_train:])
)
n, c = x_train.shape
print(x_train.shape, x_train.dtype, y_train.dtype, y_train.min(), y_train.max())


def fixed_(t, scale, phase=0.0):
    """Overwrite a tensor with a table of sines (the tutorial's random init drawn the same on both sides)."""
    with torch.no_grad():
        t.copy_(scale * torch.sin(torch.arange(t.numel(), dtype=torch.float32) * 0.731 + phase).view(t.shape))
    return t


weights = torch.randn(784, 10) / math.sqrt(784)
fixed_(weights, 1 / math.sqrt(784))
weights.requires_grad_()
bias = torch.zeros(10, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


bs = 16
xb = x_train[0:bs]
preds = model(xb)
print(preds[0], preds.shape)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


loss_func = nll
yb = y_train[0:bs]
print(loss_func(preds, yb))


def accuracy(out, yb):
    preds = torch.argmax(out, dim=1)
    return (preds == yb).float().mean()


print(accuracy(preds, yb))

lr = 0.5
epochs = 2
for epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        end_i = start_i + bs
        xb = x_train[start_i:end_i]
        yb = y_train[start_i:end_i]
        pred = model(xb)
        loss = loss_func(pred, yb)

        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
print(loss_func(model(xb), yb), accuracy(model(xb), yb))

# Using torch.nn.functional
loss_func = F.cross_entropy


def model(xb):
    return xb @ weights + bias


print(loss_func(model(xb), yb), accuracy(model(xb), yb))


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.Parameter(torch.randn(784, 10) / math.sqrt(784))
        self.bias = nn.Parameter(torch.zeros(10))
        fixed_(self.weights, 1 / math.sqrt(784))

    def forward(self, xb):
        return xb @ self.weights + self.bias


model = Mnist_Logistic()
print(loss_func(model(xb), yb))


def fit():
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)

            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= p.grad * lr
                model.zero_grad()


fit()
print(loss_func(model(xb), yb))


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(784, 10)
        fixed_(self.lin.weight, 0.03)
        fixed_(self.lin.bias, 0.01, 1.0)

    def forward(self, xb):
        return self.lin(xb)


def get_model():
    model = Mnist_Logistic()
    return model, optim.SGD(model.parameters(), lr=lr)


model, opt = get_model()
print(loss_func(model(xb), yb))

train_ds = TensorDataset(x_train, y_train)
train_dl = DataLoader(train_ds, batch_size=bs)
for epoch in range(epochs):
    for xb, yb in train_dl:
        pred = model(xb)
        loss = loss_func(pred, yb)

        loss.backward()
        opt.step()
        opt.zero_grad()
print(loss_func(model(xb), yb))

valid_ds = TensorDataset(x_valid, y_valid)


def get_data(train_ds, valid_ds, bs):
    return (
        DataLoader(train_ds, batch_size=bs, shuffle=False),
        DataLoader(valid_ds, batch_size=bs * 2),
    )


def loss_batch(model, loss_func, xb, yb, opt=None):
    loss = loss_func(model(xb), yb)

    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()

    return loss.item(), len(xb)


def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss_batch(model, loss_func, xb, yb, opt)

        model.eval()
        with torch.no_grad():
            losses, nums = zip(
                *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl]
            )
        val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)

        print(epoch, f"{val_loss:.6f}")


train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
model, opt = get_model()
fit(epochs, model, loss_func, opt, train_dl, valid_dl)


class Lambda(nn.Module):
    def __init__(self, func):
        super().__init__()
        self.func = func

    def forward(self, x):
        return self.func(x)


def preprocess(x):
    return x.view(-1, 1, 28, 28)


model = nn.Sequential(
    Lambda(preprocess),
    nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1),
    nn.ReLU(),
    nn.Conv2d(4, 4, kernel_size=3, stride=2, padding=1),
    nn.ReLU(),
    nn.Conv2d(4, 10, kernel_size=3, stride=2, padding=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    Lambda(lambda x: x.view(x.size(0), -1)),
)
for k, p in enumerate(model.parameters()):
    fixed_(p, 0.3, k)
print(model)
opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
fit(epochs, model, loss_func, opt, train_dl, valid_dl)
print(model[1].weight.grad is None, model[1].weight.sum())
