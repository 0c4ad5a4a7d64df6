"""A training step of the toy transformer (the README's default model) in minitensor and PyTorch.

Both models have the same layout and sizes: token + position embeddings, 3 pre-LayerNorm blocks
of causal 3-head attention (explicit w_q, w_k, w_v, w_o) and a tanh-GELU MLP, final LayerNorm,
linear head; AdamW and gradient clipping, batch 64 of sort sequences (T = 11). The ratio is
minitensor's time over PyTorch's, measured in the same run (best of several repeats); below 1
means minitensor is faster. PyTorch runs with 1 thread and with its default, and the faster of
the two is the baseline.

    python benchmarks/bench_train.py
"""
import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from attention.trainer import Config, build, train_step  # noqa: E402


def batches(n):
    task, *_ = build(Config())
    rng = np.random.default_rng(0)
    return [task.batch(64, rng) for _ in range(n)]


def time_steps(step, data, repeats=3):
    for x, y in data[:5]:
        step(x, y)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for x, y in data[5:]:
            step(x, y)
        best = min(best, (time.perf_counter() - t) / (len(data) - 5))
    return best


def minitensor_step():
    _, model, opt, sched = build(Config())
    return lambda x, y: train_step(model, opt, sched, x, y, 1.0)


def torch_step(torch):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.h = h
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d, d) for _ in range(4))
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, D = x.shape
            a = self.ln1(x)
            q, k, v = (w(a).view(B, T, self.h, D // self.h).transpose(1, 2) for w in (self.w_q, self.w_k, self.w_v))
            s = q @ k.transpose(-2, -1) / (D // self.h) ** 0.5
            s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
            z = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
            x = x + self.w_o(z)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class LM(nn.Module):
        def __init__(self, vocab=3, block=11, d=48, h=3, n=3):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
            self.blocks = nn.ModuleList(Block(d, h) for _ in range(n))
            self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln_f(x))

    model = LM()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, betas=(0.9, 0.95), weight_decay=0.1)

    def step(x, y):
        logits = model(torch.from_numpy(x))
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.from_numpy(y.reshape(-1)))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    return step


def main():
    data = batches(45)
    mt_t = time_steps(minitensor_step(), data)
    print(f"minitensor: {mt_t * 1e3:7.2f} ms/step  ({1 / mt_t:5.1f} steps/s)")
    try:
        import torch
    except ImportError:
        print("PyTorch is not installed: no baseline.")
        return
    default_threads = os.cpu_count() or 1  # our env pins OMP to 1 above; also try all cores
    times = {}
    for threads in sorted({1, default_threads}):
        torch.set_num_threads(threads)
        times[threads] = time_steps(torch_step(torch), data)
        print(f"PyTorch {torch.__version__}, {threads} thread(s): {times[threads] * 1e3:7.2f} ms/step")
    base = min(times.values())
    print(f"ratio minitensor / best PyTorch: {mt_t / base:.2f}  ({'faster' if mt_t < base else 'slower'})")


if __name__ == "__main__":
    main()
