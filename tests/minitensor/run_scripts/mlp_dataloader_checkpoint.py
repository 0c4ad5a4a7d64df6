"""An MLP classifier written for PyTorch: a DataLoader loop, a checkpoint saved and reloaded, training resumed.

Usage: script.py OUTPUT_DIR (the checkpoint is written there).
"""
import os
import sys

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

ckpt_path = os.path.join(sys.argv[1], "checkpoint.pt")

rs = np.random.RandomState(1)
X = torch.tensor(rs.normal(size=(70, 4)), dtype=torch.float32)
labels = torch.tensor((rs.normal(size=(4, 3)).T @ rs.normal(size=(4, 70))).argmax(0), dtype=torch.long)
dataset = TensorDataset(X, labels)
loader = DataLoader(dataset, batch_size=16, shuffle=False)
print("samples:", len(dataset), "batches per epoch:", len(loader))


def make_model(seed):
    model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 3))
    init = np.random.RandomState(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.data.copy_(torch.tensor(init.uniform(-0.5, 0.5, size=tuple(p.shape)), dtype=torch.float32))
    return model


loss_fn = nn.CrossEntropyLoss()


def train_epoch(model, optimizer):
    model.train()
    total = 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item() * xb.shape[0]
    return total / len(loader.dataset)


model = make_model(2)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
for epoch in range(3):
    print(f"epoch {epoch}: loss {train_epoch(model, optimizer):.6f}")

torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": 3}, ckpt_path)

resumed = make_model(3)
resumed_opt = torch.optim.Adam(resumed.parameters(), lr=0.5)
checkpoint = torch.load(ckpt_path, weights_only=True, map_location="cpu")
resumed.load_state_dict(checkpoint["model"])
resumed_opt.load_state_dict(checkpoint["optimizer"])
start = checkpoint["epoch"]
print("resumed at epoch", start, "lr", resumed_opt.param_groups[0]["lr"])
with torch.no_grad():
    print("same outputs after reload:", torch.equal(model(X), resumed(X)))

for epoch in range(start, start + 2):
    continued, restarted = train_epoch(model, optimizer), train_epoch(resumed, resumed_opt)
    print(f"epoch {epoch}: loss {continued:.6f} resumed {restarted:.6f} equal {continued == restarted}")

model.eval()
with torch.no_grad():
    accuracy = (model(X).argmax(dim=1) == labels).float().mean().item()
print(f"accuracy {accuracy:.4f}")
