"""Stochastic Weight Averaging in the manner of the SWA recipe in `torch.optim`'s docs, written for PyTorch:
`AveragedModel` (equal weights, and an EMA through `get_ema_multi_avg_fn`), `SWALR` taking over from
`CosineAnnealingLR` at `swa_start`, `update_bn` over the loader at the end; a block run through
`torch.utils.checkpoint.checkpoint(..., use_reentrant=False)` inside `forward` and `checkpoint_sequential`
(once without `use_reentrant`, which warns), whose gradients must equal the plain call's; the old AMP
spelling `torch.cuda.amp.autocast(enabled=use_amp)` / `torch.cuda.amp.GradScaler(enabled=use_amp)` with
`use_amp = torch.cuda.is_available()`; a custom loss on `torch.nn.modules.loss._Loss` reading `self.reduction`;
and `torch.testing.assert_close` on the results.

Every weight and input comes from fixed numbers (no random draws), so both libraries print the same.
"""
import torch
import torch.nn as nn
from torch.nn.modules.loss import _Loss
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.testing import assert_close
from torch.utils.checkpoint import checkpoint, checkpoint_sequential
from torch.utils.data import DataLoader, TensorDataset

use_amp = torch.cuda.is_available()
device = "cuda" if use_amp else "cpu"


class HuberishLoss(_Loss):
    """A custom loss: squared error below `delta`, linear above, reduced as `reduction` says."""

    def __init__(self, delta=0.5, reduction="mean"):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        err = (input - target).abs()
        loss = torch.where(err < self.delta, 0.5 * err ** 2, self.delta * (err - 0.5 * self.delta))
        if self.reduction == "mean":
            return loss.mean()
        if self.reduction == "sum":
            return loss.sum()
        return loss


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.block = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU())
        self.out = nn.Linear(8, 2)

    def forward(self, x, use_checkpoint=True):
        h = torch.relu(self.bn(self.inp(x)))
        h = checkpoint(self.block, h, use_reentrant=False) if use_checkpoint else self.block(h)
        return self.out(h)


def set_weights(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_((torch.sin(torch.arange(n, dtype=torch.float32) * 0.7 + i) * 0.4).reshape(p.shape))


model = Net().to(device)
set_weights(model)
X = torch.cos(torch.arange(48, dtype=torch.float32) * 0.37).reshape(12, 4)
Y = torch.stack([X.sum(1) * 0.5, X[:, 0] - X[:, 3]], dim=1)
loader = DataLoader(TensorDataset(X, Y), batch_size=4, shuffle=False)

# the checkpointed block's gradients equal the plain call's
loss_fn = HuberishLoss(delta=0.5)
loss_fn(model(X), Y).backward()
with_ckpt = [p.grad.clone() for p in model.parameters()]
model.zero_grad()
loss_fn(model(X, use_checkpoint=False), Y).backward()
plain = [p.grad.clone() for p in model.parameters()]
model.zero_grad()
for a, b in zip(with_ckpt, plain):
    assert_close(a, b)
print("checkpoint gradients equal the plain call's:", all(torch.equal(a, b) for a, b in zip(with_ckpt, plain)))
print("custom loss reductions:", round(HuberishLoss(reduction="sum")(model(X), Y).item(), 5),
      tuple(HuberishLoss(reduction="none")(model(X), Y).shape), loss_fn.reduction)

optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=6)
swa_model = AveragedModel(model)
ema_model = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.8))
swa_scheduler = SWALR(optimizer, swa_lr=0.03, anneal_epochs=2, anneal_strategy="linear")
scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
swa_start = 2

for epoch in range(6):
    total = 0.0
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        optimizer.zero_grad()
        with torch.cuda.amp.autocast(enabled=use_amp):
            loss = loss_fn(model(xb), yb)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        total += loss.item()
        ema_model.update_parameters(model)
    if epoch >= swa_start:
        swa_model.update_parameters(model)
        swa_scheduler.step()
    else:
        scheduler.step()
    print(f"epoch {epoch}: loss {total / len(loader):.5f} lr {optimizer.param_groups[0]['lr']:.5f}")

print("models averaged:", swa_model.n_averaged.item(), "ema updates:", ema_model.n_averaged.item())
update_bn(loader, swa_model)
update_bn(loader, ema_model)
swa_model.eval()
ema_model.eval()
with torch.no_grad():
    swa_out, ema_out = swa_model(X), ema_model(X)
print("swa running_mean:", [round(v, 4) for v in swa_model.module.bn.running_mean[:4].tolist()])
print("swa outputs:", [round(v, 4) for v in swa_out[:3, 0].tolist()])
print("ema outputs:", [round(v, 4) for v in ema_out[:3, 0].tolist()])
print("swa test loss:", round(loss_fn(swa_out, Y).item(), 5))
assert_close(swa_model.module.out.weight.sum(), swa_model.module.out.weight.sum().clone())

# checkpoint_sequential: the same block in two segments, the same values and gradients as running it plainly
seq = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2))
set_weights(seq)
x = X.clone().requires_grad_(True)
out = checkpoint_sequential(seq, 2, x)  # no use_reentrant: PyTorch warns
out.pow(2).sum().backward()
grad_ckpt = x.grad.clone()
x.grad = None
seq(x).pow(2).sum().backward()
assert_close(grad_ckpt, x.grad)
print("checkpoint_sequential:", [round(v, 4) for v in out[0].tolist()], "input grads equal:",
      torch.allclose(grad_ckpt, x.grad))
