"""A learner's notebook step: the character-level MLP with batch norm of a well-known lecture on
backpropagating by hand, in plain PyTorch, the lecture's way.

benchmarks/bench_tiny.py imports this file twice, once with the real `torch` and once with
`torch` mapped onto minitensor by minitensor's runner, and times the same step in both. The
tensors are tiny (a batch of 32 rows, 64 hidden units, 27 characters), so what a step costs is
each op's overhead, not its arithmetic: that is what a learner running such a notebook meets.

The batch norm is written out in small steps, as the lecture writes it so that each one can be
backpropagated by hand; here `loss.backward()` does it.

    params = build()                            # C, W1, b1, W2, b2, bngain, bnbias
    loss = train_step(params, Xb, Yb, lr=0.1)   # Xb: (32, 3) int64 indices, Yb: (32,) int64 targets
"""
import torch
import torch.nn.functional as F

VOCAB, BLOCK, EMBD, HIDDEN, BATCH = 27, 3, 10, 64, 32


def build(seed=2147483647):
    """The lecture's parameters: an embedding table, a Linear into the batch norm, its gain and
    bias, and a Linear to the logits, with the lecture's scales (Kaiming for tanh on W1)."""
    g = torch.Generator().manual_seed(seed)
    C = torch.randn((VOCAB, EMBD), generator=g)
    W1 = torch.randn((EMBD * BLOCK, HIDDEN), generator=g) * (5 / 3) / ((EMBD * BLOCK) ** 0.5)
    b1 = torch.randn(HIDDEN, generator=g) * 0.1  # useless under batch norm, kept as the lecture does
    W2 = torch.randn((HIDDEN, VOCAB), generator=g) * 0.1
    b2 = torch.randn(VOCAB, generator=g) * 0.1
    bngain = torch.randn((1, HIDDEN), generator=g) * 0.1 + 1.0
    bnbias = torch.randn((1, HIDDEN), generator=g) * 0.1
    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    for p in parameters:
        p.requires_grad = True
    return parameters


def forward(parameters, Xb, Yb):
    """The loss of one batch, one small step at a time."""
    C, W1, b1, W2, b2, bngain, bnbias = parameters
    n = Xb.shape[0]
    emb = C[Xb]  # embed the characters
    embcat = emb.view(emb.shape[0], -1)  # and concatenate their vectors
    hprebn = embcat @ W1 + b1  # first Linear
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)  # batch norm, step by step
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff ** 2
    bnvar = 1 / (n - 1) * bndiff2.sum(0, keepdim=True)  # Bessel's correction
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2  # second Linear
    return F.cross_entropy(logits, Yb)


def train_step(parameters, Xb, Yb, lr=0.1):
    """One step of plain gradient descent, as the lecture's loop writes it."""
    loss = forward(parameters, Xb, Yb)
    for p in parameters:
        p.grad = None
    loss.backward()
    for p in parameters:
        p.data += -lr * p.grad
    return loss
