"""A tiny GPT with hand-written causal self-attention, written for PyTorch: a few AdamW steps on fixed tokens.

Weights come from numpy's RandomState, so PyTorch and minitensor start from the same numbers.
"""
import math

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"
vocab_size, block_size, n_embd, n_head, n_layer = 11, 8, 16, 2, 2


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        mask = torch.tril(torch.ones(block_size, block_size))
        self.register_buffer("bias", mask.view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(n_embd, dim=2)
        q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
        k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
        v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att.masked_fill_(self.bias[:, :, :T, :T] == 0, -torch.inf)
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention()
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens):
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -block_size:])
            next_id = torch.argmax(logits[:, -1, :], dim=-1, keepdim=True)
            idx = torch.cat((idx, next_id), dim=1)
        return idx


rs = np.random.RandomState(0)
model = GPT().to(device)
with torch.no_grad():
    for name, p in model.named_parameters():
        if name.startswith("ln") or ".ln" in name:
            continue  # LayerNorm's ones and zeros are the same in both libraries
        p.data.copy_(torch.tensor(rs.normal(0.0, 0.2, size=tuple(p.shape)), dtype=torch.float32))
print("parameters:", sum(p.numel() for p in model.parameters()))

data = torch.LongTensor(rs.randint(0, vocab_size, size=300))
starts = rs.randint(0, len(data) - block_size - 1, size=4).tolist()
x = torch.stack([data[i:i + block_size] for i in starts]).to(device)
y = torch.stack([data[i + 1:i + block_size + 1] for i in starts]).to(device)

optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
for step in range(6):
    logits, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(f"step {step}: loss {loss:.6f}")
print("logits:", logits.shape)

model.eval()
print("generated:", model.generate(x[:1, :3], 5)[0].tolist())
