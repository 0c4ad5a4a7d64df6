"""An ordinary training script, as a user writes it: a model with attention, a data loader, a
training loop with AdamW and a schedule, evaluation under no_grad, a checkpoint saved and loaded.

tests/typing/test_typecheck.py type-checks it with `mypy --strict` against minitensor and
attention (zero errors), and runs it: `python sample_user_script.py [checkpoint path]`.
The task: does a sequence of tokens contain the token 1?
"""
import os
import sys
import tempfile
from typing import Any

import attention
import minitensor
import minitensor.nn as nn
import minitensor.nn.functional as F
from minitensor import Tensor, optim
from minitensor.autograd import Function
from minitensor.utils.data import DataLoader, TensorDataset

VOCAB, SEQ, D_MODEL = 8, 6, 16


class TokenClassifier(nn.Module):
    def __init__(self, vocab: int, d_model: int, num_heads: int, num_classes: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = attention.LearnedPositionalEncoding(SEQ, d_model)
        self.block = attention.TransformerBlock(d_model, num_heads)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.pos(self.embed(tokens))        # (B, T, d_model)
        x = self.block(x)                        # (B, T, d_model)
        pooled = self.norm(x).mean(dim=1)        # (B, d_model)
        return self.head(pooled)                 # (B, num_classes)


class Cube(Function):
    r"""A user's own op: out = x^3;   VJP: gx = g * 3 x^2"""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        return x.detach() ** 3

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> Tensor:
        x: Tensor = ctx.inputs[0]
        return g * 3 * x ** 2


def make_data(n: int) -> tuple[Tensor, Tensor]:
    tokens = minitensor.randint(0, VOCAB, (n, SEQ))
    labels = (tokens == 1).any(dim=1).long()
    return tokens, labels


def accuracy(model: TokenClassifier, tokens: Tensor, labels: Tensor) -> float:
    model.eval()
    with minitensor.no_grad():
        predicted = model(tokens).argmax(dim=-1)
    model.train()
    return (predicted == labels).float().mean().item()


def attention_summary(x: Tensor) -> Tensor:
    """A few ops on their own, as in a tutorial: scores, weights, a reshape, a projection."""
    scores = x @ x.T / x.shape[-1] ** 0.5            # (T, T)
    weights = scores.softmax(-1)                      # rows sum to 1
    assert bool((weights.sum(dim=1) - 1).abs().max() < 1e-5)
    flat = (weights @ x).view(2, -1)                  # (2, T * d / 2)
    proj = nn.Linear(flat.shape[1], 3)
    w = minitensor.randn(3, flat.shape[1])
    return Cube.apply(proj(flat) + F.linear(flat, w))


def train(checkpoint: str, steps_per_epoch: int = 8, epochs: int = 2) -> float:
    minitensor.manual_seed(0)
    tokens, labels = make_data(256)
    loader = DataLoader(TensorDataset(tokens, labels), batch_size=32, shuffle=True)
    model = TokenClassifier(VOCAB, D_MODEL, num_heads=2, num_classes=2)
    opt = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    schedule = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * steps_per_epoch)
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"{n_params} parameters")

    for epoch in range(epochs):
        total = 0.0
        for step, (x, y) in enumerate(loader):
            if step == steps_per_epoch:
                break
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            opt.step()
            schedule.step()
            total += loss.item()
        print(f"epoch {epoch}: loss {total / steps_per_epoch:.4f}, lr {schedule.get_last_lr()[0]:.2e}")

    minitensor.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": epochs}, checkpoint)

    restored = TokenClassifier(VOCAB, D_MODEL, num_heads=2, num_classes=2)
    restored_opt = optim.AdamW(restored.parameters(), lr=3e-3, weight_decay=0.01)
    state = minitensor.load(checkpoint)
    restored.load_state_dict(state["model"])
    restored_opt.load_state_dict(state["optimizer"])
    shape: tuple[int, ...] = tokens.shape
    acc = accuracy(restored, tokens, labels)
    assert acc == accuracy(model, tokens, labels)
    print(f"restored after epoch {state['epoch']}: accuracy {acc:.3f} on {shape[0]} sequences")

    for name, p in restored.named_parameters():
        assert isinstance(p, nn.Parameter) and p.grad is None, name
    print(tuple(attention_summary(minitensor.randn(SEQ, 4)).shape))
    return acc


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(), "classifier.ckpt")
    train(path)
