"""A nanoGPT-style sampling loop, written for PyTorch: generate() decorated with @torch.no_grad(), the context
cropped to block_size, logits[:, -1, :] / temperature, top-k filtering with torch.topk(logits, min(top_k,
logits.size(-1))) and logits[logits < v[:, [-1]]] = -float('Inf'), F.softmax, torch.multinomial with a
seeded torch.Generator, torch.cat((idx, idx_next), dim=1); then greedy decoding, repetition-free top-p
(nucleus) filtering with torch.sort, torch.cumsum and scatter, and a bigram model's weight tying.

The libraries draw different random streams: a sampled continuation is printed only where it does not
depend on the stream (its shape, the prompt it keeps, that each token is one top-k allows, that the same
seed repeats it); greedy decoding and the filtered distributions are printed in full.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F

vocab_size, block_size, n_embd = 10, 6, 8


class TinyLM(nn.Module):
    """Each position sees the mean of the embeddings so far (a causal bag of tokens), then a tied head."""

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.wte.weight = self.lm_head.weight  # https://paperswithcode.com/method/weight-tying
        tril = torch.tril(torch.ones(block_size, block_size))
        self.register_buffer("avg", tril / tril.sum(1, keepdim=True))

    def forward(self, idx):
        b, t = idx.size()
        assert t <= block_size, f"Cannot forward sequence of length {t}, block size is only {block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        x = self.avg[:t, :t] @ x
        return self.lm_head(self.ln_f(x))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        for _ in range(max_new_tokens):
            # if the sequence context is growing too long we must crop it at block_size
            idx_cond = idx if idx.size(1) <= block_size else idx[:, -block_size:]
            logits = self(idx_cond)
            # pluck the logits at the final step and scale by desired temperature
            logits = logits[:, -1, :] / temperature
            # optionally crop the logits to only the top k options
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('Inf')
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


model = TinyLM()
with torch.no_grad():
    for k, (name, p) in enumerate(model.named_parameters()):
        if name.startswith("ln_f"):
            continue
        p.copy_(torch.sin(torch.arange(p.numel()) * 0.83 + k).view(p.shape))
model.eval()
print(sum(p.numel() for p in model.parameters()), model.wte.weight is model.lm_head.weight)

start_ids = [3, 1, 4]
x = torch.tensor(start_ids, dtype=torch.long)[None, ...]
print(x, x.shape)

# the filtered distribution at the first step, as generate() builds it
logits = model(x)[:, -1, :] / 0.8
v, _ = torch.topk(logits, 3)
logits[logits < v[:, [-1]]] = -float('Inf')
probs = F.softmax(logits, dim=-1)
print(probs)
allowed = probs[0] > 0

g = torch.Generator().manual_seed(1337)
y = model.generate(x, 8, temperature=0.8, top_k=3, generator=g)
print(y.shape, y.dtype, y[0, :3].tolist() == start_ids, bool(allowed[y[0, 3]]))
again = model.generate(x, 8, temperature=0.8, top_k=3, generator=torch.Generator().manual_seed(1337))
print(torch.equal(y, again), bool(((y >= 0) & (y < vocab_size)).all()))

# top_k=1 is greedy: no randomness left
greedy = model.generate(x, 8, top_k=1)
print(greedy)


@torch.no_grad()
def greedy_decode(model, idx, steps):
    for _ in range(steps):
        logits = model(idx[:, -block_size:])
        idx = torch.cat((idx, logits[:, -1, :].argmax(dim=-1, keepdim=True)), dim=1)
    return idx


print(torch.equal(greedy_decode(model, x, 8), greedy))


def top_p_filter(logits, top_p):
    sorted_logits, sorted_indices = torch.sort(logits, descending=True)
    cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
    sorted_indices_to_remove = cumulative_probs > top_p
    sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
    sorted_indices_to_remove[..., 0] = False
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
    return logits.masked_fill(indices_to_remove, float("-inf"))


batch = torch.tensor([[3, 1, 4], [1, 5, 9]])
with torch.no_grad():
    last = model(batch)[:, -1, :]
filtered = top_p_filter(last, 0.7)
print(F.softmax(filtered, dim=-1))
print(torch.isinf(filtered).sum(dim=1), torch.multinomial(F.softmax(filtered, dim=-1), 4, replacement=True).shape)
print(y.requires_grad, model.training)
