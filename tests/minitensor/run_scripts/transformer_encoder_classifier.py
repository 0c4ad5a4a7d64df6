"""A sequence classifier on nn.TransformerEncoder, written for PyTorch: padded token sequences,
a key padding mask, sinusoidal positions, mean pooling over the real tokens, Adam.

The task: does the sequence contain token 7? Weights come from numpy's RandomState, so PyTorch and
minitensor start from the same numbers, and dropout is 0.0 because the two libraries draw
different random numbers.
"""
import math

import numpy as np
import torch
import torch.nn as nn

rs = np.random.RandomState(5)
vocab_size, d_model, nhead, num_layers, max_len, pad_id = 12, 16, 2, 2, 10, 0


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return x + self.pe[:, :x.size(1)]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.pos_encoder = PositionalEncoding(d_model, max_len)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers)
        self.head = nn.Linear(d_model, 2)

    def forward(self, tokens):
        padding_mask = tokens == pad_id  # True where there is no token
        x = self.pos_encoder(self.embedding(tokens) * math.sqrt(d_model))
        x = self.encoder(x, src_key_padding_mask=padding_mask)
        keep = (~padding_mask).unsqueeze(-1).float()
        pooled = (x * keep).sum(dim=1) / keep.sum(dim=1)
        return self.head(pooled)


def make_data(n):
    tokens = np.zeros((n, max_len), dtype=np.int64)
    for i, length in enumerate(rs.randint(3, max_len + 1, size=n)):
        tokens[i, :length] = rs.randint(1, vocab_size, size=length)
    labels = (tokens == 7).any(axis=1).astype(np.int64)
    return torch.from_numpy(tokens), torch.from_numpy(labels)


model = Classifier()
with torch.no_grad():
    for name, p in model.named_parameters():
        if "norm" in name:
            continue  # LayerNorm's ones and zeros are the same in both libraries
        p.copy_(torch.tensor(rs.normal(0.0, 0.2, size=tuple(p.shape)), dtype=torch.float32))
print("parameters:", sum(p.numel() for p in model.parameters()))
print("state dict:", list(model.state_dict())[2:6])

tokens, labels = make_data(64)
print("positives:", int(labels.sum()), "of", len(labels))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
batch_size = 16
for epoch in range(4):
    model.train()
    total = 0.0
    for start in range(0, len(tokens), batch_size):
        x, y = tokens[start:start + batch_size], labels[start:start + batch_size]
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
    print(f"epoch {epoch}: loss {total / len(tokens):.6f}")

model.eval()
with torch.no_grad():
    logits = model(tokens)
    accuracy = (logits.argmax(dim=-1) == labels).float().mean().item()
    print(f"eval loss {criterion(logits, labels).item():.6f} accuracy {accuracy:.4f}")
    # the first layer's attention for the first sequence, averaged over the heads
    x = model.pos_encoder(model.embedding(tokens[:1]) * math.sqrt(d_model))
    _, weights = model.encoder.layers[0].self_attn(x, x, x, key_padding_mask=tokens[:1] == pad_id)
    print("weights:", weights.shape, [round(w, 4) for w in weights[0, 0].tolist()])
