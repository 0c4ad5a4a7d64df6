"""End to end: small MLPs learn fixed toy problems to a known loss (deterministic seeds)."""
import numpy as np

import minitensor as mt
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor.optim import SGD, AdamW, lr_scheduler


def test_mlp_learns_xor_quadrants_with_adamw():
    mt.manual_seed(0)
    grid = np.linspace(-1, 1, 8)
    x = np.array([[a, b] for a in grid for b in grid])
    X = mt.tensor(x, dtype=mt.float32)
    y = mt.tensor((x[:, 0] * x[:, 1] > 0).astype(np.int64))  # not linearly separable
    net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = AdamW(net.parameters(), lr=0.02, weight_decay=1e-4)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=300, eta_min=1e-3)
    first = None
    for _ in range(300):
        opt.zero_grad()
        loss = F.cross_entropy(net(X), y)
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        opt.step()
        sched.step()
        first = loss.item() if first is None else first
    assert first > 0.6  # chance level is log 2 = 0.69
    assert loss.item() < 0.01
    assert (net(X).argmax(dim=-1).numpy(force=True) == y.numpy(force=True)).all()
    assert all(p.dtype == mt.float32 for p in net.parameters())


def test_mlp_fits_a_sine_with_sgd_momentum():
    mt.manual_seed(0)
    x = np.linspace(-2, 2, 64)[:, None]
    X, Y = mt.tensor(x, dtype=mt.float32), mt.tensor(np.sin(2 * x), dtype=mt.float32)
    net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = SGD(net.parameters(), lr=0.1, momentum=0.9)
    for _ in range(400):
        opt.zero_grad()
        loss = F.mse_loss(net(X), Y)
        loss.backward()
        opt.step()
    assert loss.item() < 2e-3  # the target's variance is ~0.5
