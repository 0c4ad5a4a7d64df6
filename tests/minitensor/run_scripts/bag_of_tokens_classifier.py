"""A bag-of-tokens classifier written for PyTorch: a Dataset of dicts, SGD with momentum, StepLR.

Each sample is {"tokens": int64 numpy array, "label": int}; the default collate batches the dicts.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

rs = np.random.RandomState(4)
vocab, length, classes = 20, 6, 4


class Sequences(Dataset):
    def __init__(self, n):
        self.tokens = rs.randint(0, vocab, size=(n, length)).astype(np.int64)
        self.labels = (self.tokens % classes).sum(axis=1) % classes

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, i):
        return {"tokens": self.tokens[i], "label": int(self.labels[i])}


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, 12)
        self.norm = nn.LayerNorm(12)
        self.hidden = nn.Linear(12, 24)
        self.out = nn.Linear(24, classes)

    def forward(self, tokens):
        h = self.norm(self.embed(tokens).mean(dim=1))
        return self.out(torch.tanh(self.hidden(h)))


model = Classifier()
with torch.no_grad():
    for name, p in model.named_parameters():
        if name.startswith("norm"):
            continue
        p.copy_(torch.from_numpy(rs.normal(0.0, 0.3, size=tuple(p.shape)).astype(np.float32)))
    nn.init.zeros_(model.out.bias)

loader = DataLoader(Sequences(40), batch_size=8, drop_last=True)
batch = next(iter(loader))
print("batch:", sorted(batch), batch["tokens"].shape, batch["tokens"].dtype == torch.int64,
      batch["label"].dtype == torch.int64)

optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
for epoch in range(4):
    losses = []
    for batch in loader:
        loss = F.cross_entropy(model(batch["tokens"]), batch["label"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    scheduler.step()
    print(f"epoch {epoch}: mean loss {sum(losses) / len(losses):.6f} lr {scheduler.get_last_lr()[0]:.4f}")
