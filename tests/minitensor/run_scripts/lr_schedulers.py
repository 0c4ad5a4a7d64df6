"""Learning-rate schedules in the manner of the torch.optim documentation's "How to adjust learning rate",
written for PyTorch: scheduler.step() after optimizer.step() each epoch, scheduler.get_last_lr() and
optimizer.param_groups[0]["lr"], StepLR, MultiStepLR, ExponentialLR, LambdaLR with a warmup lambda,
CosineAnnealingLR, OneCycleLR stepped per batch, ReduceLROnPlateau fed a validation loss, SequentialLR of
a LinearLR warmup and a cosine decay with milestones, chaining two schedulers, per-parameter-group
options, and a scheduler's state_dict() reloaded into a fresh one.

A linear model with fixed weights learns a fixed target, so both libraries compute the same losses.
"""
import torch
from torch import nn
from torch.optim.lr_scheduler import (
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiStepLR,
    OneCycleLR,
    ReduceLROnPlateau,
    SequentialLR,
    StepLR,
)

torch.manual_seed(0)
x = torch.linspace(-1, 1, 24).view(8, 3)
y = x @ torch.tensor([[0.5], [-1.0], [2.0]]) + 0.3


def make_model():
    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.1, 0.2, -0.1]]))
        model.bias.fill_(0.0)
    return model


def train_epoch(model, optimizer, batches=1):
    for b in range(batches):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.item()


def rounded(lrs):
    return [round(lr, 6) for lr in lrs]


for name, make in [
    ("StepLR", lambda opt: StepLR(opt, step_size=2, gamma=0.5)),
    ("MultiStepLR", lambda opt: MultiStepLR(opt, milestones=[2, 4], gamma=0.1)),
    ("ExponentialLR", lambda opt: ExponentialLR(opt, gamma=0.9)),
    ("LambdaLR", lambda opt: LambdaLR(opt, lr_lambda=lambda epoch: min(1.0, (epoch + 1) / 3))),
    ("CosineAnnealingLR", lambda opt: CosineAnnealingLR(opt, T_max=5, eta_min=0.001)),
]:
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = make(optimizer)
    lrs, losses = [], []
    for epoch in range(6):
        losses.append(train_epoch(model, optimizer))
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    print(name, rounded(lrs), round(losses[-1], 6), optimizer.param_groups[0]["lr"] == lrs[-1])

# OneCycleLR steps after every batch
model = make_model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = OneCycleLR(optimizer, max_lr=0.2, steps_per_epoch=4, epochs=3)
lrs, momenta = [], []
for epoch in range(3):
    for batch in range(4):
        train_epoch(model, optimizer)
        scheduler.step()
        lrs.append(optimizer.param_groups[0]["lr"])
        momenta.append(optimizer.param_groups[0]["momentum"])
print("OneCycleLR", rounded(lrs[:-1]), rounded(momenta[:6]))
print(model.weight, model.bias)

# ReduceLROnPlateau on a validation loss that stalls
model = make_model()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
scheduler = ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=1)
for epoch, val_loss in enumerate([1.0, 0.9, 0.95, 0.92, 0.91, 0.93, 0.94]):
    train_epoch(model, optimizer)
    scheduler.step(val_loss)
    print("plateau", epoch, optimizer.param_groups[0]["lr"], scheduler.num_bad_epochs)

# SequentialLR: a linear warmup, then cosine decay
model = make_model()
optimizer = torch.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.01)
warmup = LinearLR(optimizer, start_factor=0.25, total_iters=3)
decay = CosineAnnealingLR(optimizer, T_max=6)
scheduler = SequentialLR(optimizer, schedulers=[warmup, decay], milestones=[3])
lrs = []
for epoch in range(8):
    loss = train_epoch(model, optimizer)
    scheduler.step()
    lrs.append(scheduler.get_last_lr()[0])
print("SequentialLR", rounded(lrs), round(loss, 6))

# two schedulers chained on one optimizer: their factors multiply
model = make_model()
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
scheduler1 = ExponentialLR(optimizer, gamma=0.9)
scheduler2 = MultiStepLR(optimizer, milestones=[2, 3], gamma=0.1)
for epoch in range(4):
    train_epoch(model, optimizer)
    scheduler1.step()
    scheduler2.step()
print("chained", rounded([g["lr"] for g in optimizer.param_groups]))

# per-parameter options: one group per tensor, each scheduled from its own initial lr
model = make_model()
optimizer = torch.optim.SGD([
    {"params": model.weight},
    {"params": model.bias, "lr": 0.01},
], lr=0.1, momentum=0.9)
scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
for epoch in range(3):
    train_epoch(model, optimizer)
    scheduler.step()
print("groups", rounded(scheduler.get_last_lr()), [g["initial_lr"] for g in optimizer.param_groups])

state = scheduler.state_dict()
restored = StepLR(optimizer, step_size=5, gamma=0.1)
restored.load_state_dict(state)
print("restored", restored.last_epoch, restored.step_size, restored.gamma, rounded(restored.get_last_lr()))
