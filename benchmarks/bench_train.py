"""A training step of the toy transformer (the trainer's default model) in minitensor and PyTorch.

    python benchmarks/bench_train.py            # 15 interleaved repeats of 10 steps
    python benchmarks/bench_train.py --quick    # 5 repeats of 5 steps (well under a minute)

minitensor runs `attention.trainer`'s own `build(Config())` and `train_step` (forward,
cross-entropy, backward, gradient clipping at 1.0, AdamW, scheduler), as the trainer runs it by
default: forward and backward replayed from a recording (`minitensor.fast.Replay`, bit for bit
the eager step's numbers). "minitensor eager", the same step without the replay, is information. PyTorch runs the same
model written in PyTorch: token + position embeddings, 3 pre-LayerNorm blocks of causal 3-head
attention (explicit w_q, w_k, w_v, w_o) and a tanh-GELU MLP, final LayerNorm, linear head; AdamW
with the Config's lr and betas and weight decay on Linear weights only, the same clipping and
a constant LambdaLR. Both train on the same pre-made batches of 64 sort sequences.

Each thread count (1, and 2: a laptop's idle cores) runs in a child process of its own, BLAS
being fixed when numpy loads: minitensor's BLAS and PyTorch both on that count (the trainer's
default is one thread). Both libraries' worker threads spin for a while after their last call, and on two cores a
spinning worker of one library takes the core the other's next block needs (measured: PyTorch's
step 50% slower right after a minitensor block), so every block starts after a 0.3 s rest, with
every worker idle, and the untimed steps that follow the rest warm its own library up again.

The two contenders are interleaved, each block runs `--number` steps, and the median of the
repeats is reported, with the quartiles of the per-round ratios. How to read it: minitensor /
PyTorch at the same thread count is the target, at most 1.0 at both counts (as fast as PyTorch
eager); the autograd nodes per step are for information. A third contender, the numpy floor,
runs the step's matrix products alone (`matmul_floor`), the same shapes in the same order; the
minitensor / floor ratio shows how far the step is from what no library can undercut without
faster matrix products (information, no target). Note `minitensor.tune_malloc()` changes
the allocator for the whole process, PyTorch's steps included.
"""
import itertools
import os
import sys

SETTLE = 0.3  # seconds of rest before each timed block: see the docstring
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchmarks._timing import pin_child_threads  # noqa: E402

CHILD_THREADS = pin_child_threads()  # before numpy loads

import numpy as np  # noqa: E402

import minitensor as mt  # noqa: E402
from attention.trainer import Config, build, lr_factor, model_loss, train_step  # noqa: E402
from benchmarks._timing import (  # noqa: E402,E501
    child_torch,
    interleaved,
    per_round,
    per_thread_count,
    report_setup,
    round_ratios,
    run_options,
    table,
    verdict,
)

TARGET = 1.0  # minitensor / PyTorch, at the same thread count


def minitensor_side(cfg, replay=True):
    """(step(x, y), loss(x, y)): the trainer's own training step (replayed, as the trainer runs it by
    default, or eager), and a forward for counting nodes."""
    task, model, opt, sched = build(cfg)
    model.train()

    def loss(x, y):
        return model_loss(model, x, y)

    recording = mt.fast.Replay(loss) if replay else None
    return (lambda x, y: train_step(model, opt, sched, x, y, cfg.clip, recording)), loss


def torch_side(torch, cfg, vocab, block_size):
    """The same model, optimizer and step in PyTorch (its init doesn't matter for speed)."""
    nn, tF = torch.nn, torch.nn.functional
    torch.manual_seed(cfg.seed)

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
            return x + self.fc2(tF.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class LM(nn.Module):
        def __init__(self, vocab, block, d, h, n):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
            self.blocks = nn.ModuleList(Block(d, h) for _ in range(n))
            self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln_f(x))

    model = LM(vocab, block_size, cfg.d_model, cfg.heads, cfg.layers)
    model.train()
    # the groups of attention.lm.DecoderLM.param_groups: weight decay on Linear weights only
    decay = {id(m.weight) for m in model.modules() if isinstance(m, nn.Linear)}
    params = list(model.parameters())
    groups = [{"params": [p for p in params if id(p) in decay], "weight_decay": cfg.weight_decay},
              {"params": [p for p in params if id(p) not in decay], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: lr_factor(cfg, step))

    def loss(x, y):
        logits = model(torch.from_numpy(x))
        return tF.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.from_numpy(y.reshape(-1)))

    def step(x, y):
        value = loss(x, y)
        opt.zero_grad(set_to_none=True)
        value.backward()
        if cfg.clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        opt.step()
        sched.step()
        return value.item()

    return step, loss


def matmul_floor(cfg, vocab, block_size, seed=0):
    """The step's matrix products alone, in numpy: a training step can't take less than these.

    For B x T = N rows of d_model = d, H heads of d / H dims, a d_ff = 4 d MLP and V classes,
    a step multiplies, per block:
      - each of the six Linears (w_q, w_k, w_v, w_o: d -> d; fc1: d -> 4d; fc2: 4d -> d) three
        times: forward Y = X W^T, backward dX = dY W and dW = dY^T X;
      - attention (B, H) batches of T x T products: forward S = Q K^T and O = P V, backward
        dP = dO V^T, dV = P^T dO, dQ = dS K and dK = dS^T Q;
    and the head (d -> V, no bias) three times. Random float32 arrays of those shapes, made once.
    """
    rng = np.random.default_rng(seed)
    B, T, d, H = cfg.batch, block_size, cfg.d_model, cfg.heads
    N, dk = B * T, cfg.d_model // cfg.heads

    def arr(*shape):
        return rng.standard_normal(shape, dtype=np.float32)

    def linear(n_in, n_out):  # (X, W, dY): Y = X W^T, dX = dY W, dW = dY^T X
        return arr(N, n_in), arr(n_out, n_in), arr(N, n_out)

    linears = [linear(d, d)] * 4 + [linear(d, 4 * d), linear(4 * d, d)]
    q, k, v, p, g = arr(B, H, T, dk), arr(B, H, T, dk), arr(B, H, T, dk), arr(B, H, T, T), arr(B, H, T, dk)
    head = linear(d, vocab)

    def step():
        for _ in range(cfg.layers):
            for x, w, dy in linears:
                x @ w.T, dy @ w, dy.T @ x
            q @ k.swapaxes(-1, -2), p @ v                                  # S = Q K^T, O = P V
            g @ v.swapaxes(-1, -2), p.swapaxes(-1, -2) @ g, p @ k, p.swapaxes(-1, -2) @ q  # dP, dV, dQ, dK
        x, w, dy = head
        x @ w.T, dy @ w, dy.T @ x
    return step


def count_nodes(loss, is_leaf):
    """Autograd nodes reachable from `loss.grad_fn`, not counting the leaves' entries."""
    seen = {}  # id -> node, holding each node so its id can't be reused during the walk
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or is_leaf(node) or id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(nxt for nxt, _ in node.next_functions)
    return len(seen)


def cycling(step, data):
    batches = itertools.cycle(data)
    return lambda: step(*next(batches))


def child(threads, repeats, number):
    """Both libraries on `threads` threads, interleaved; prints the table and the per-round ratio."""
    torch = child_torch()
    mt.tune_malloc()  # as the parent reported
    cfg = Config()
    task = build(cfg)[0]
    rng = np.random.default_rng(0)
    data = [task.batch(cfg.batch, rng) for _ in range(20)]
    x, y = data[0]
    mt_step, mt_loss = minitensor_side(cfg)
    steps = {"minitensor": cycling(mt_step, data),
             "minitensor eager": cycling(minitensor_side(cfg, replay=False)[0], data),
             "numpy floor": matmul_floor(cfg, task.vocab_size, task.block_size)}
    nodes = {"minitensor": count_nodes(mt_loss(x, y), lambda n: isinstance(n, mt.Tensor))}
    if torch is not None:
        torch.set_num_threads(threads)
        th_step, th_loss = torch_side(torch, cfg, task.vocab_size, task.block_size)
        nodes["PyTorch"] = count_nodes(th_loss(x, y), lambda n: type(n).__name__ == "AccumulateGrad")
        steps["PyTorch"] = cycling(th_step, data)
    rounds = {}
    t = interleaved(steps, repeats, number, settle=SETTLE if repeats > 1 else 0.0, rounds=rounds)
    table(["library", "ms/step", "steps/s"], [[name, s * 1e3, 1 / s] for name, s in t.items()])
    print("autograd nodes per step (forward graph, leaves not counted): "
          + ", ".join(f"{name} {n}" for name, n in nodes.items()))
    ratio, q1, q3 = round_ratios(rounds, "minitensor", "minitensor eager")
    print(f"threads={threads}: minitensor replayed / eager per round {ratio:.3f} (quartiles {q1:.3f}-{q3:.3f})")
    ratio, q1, q3 = round_ratios(rounds, "minitensor", "numpy floor")
    print(f"threads={threads}: minitensor / numpy floor (its matrix products alone) per round {ratio:.3f} "
          f"(quartiles {q1:.3f}-{q3:.3f})")
    if torch is not None:
        ratio, q1, q3 = round_ratios(rounds, "minitensor", "PyTorch")
        print(f"threads={threads}: minitensor / PyTorch per round {ratio:.3f} (quartiles {q1:.3f}-{q3:.3f})")
    print()


def main(argv=None):
    repeats, number = run_options(argv, __doc__, full=(15, 10), quick=(5, 5), smoke=(1, 1), what="training steps")
    if CHILD_THREADS:
        return child(CHILD_THREADS, repeats, number)
    report_setup(mt, counts=(1, 2))
    cfg = Config()
    print(f"default model: {cfg.layers} layers, {cfg.heads} heads, d_model {cfg.d_model}; batch ({cfg.batch}, "
          f"{build(cfg)[0].block_size}) of {cfg.task}; AdamW lr {cfg.lr} betas ({cfg.beta1}, {cfg.beta2}) weight "
          f"decay {cfg.weight_decay} on Linear weights, clip {cfg.clip}; {repeats} interleaved repeats of {number} "
          "steps per thread count\n")
    outputs = per_thread_count(__file__, sys.argv[1:] if argv is None else argv)
    print("== targets ==")
    for threads, out in outputs.items():
        floor = per_round(out, f"threads={threads}: minitensor / numpy floor")
        print(f"info  minitensor / numpy floor (the step's matrix products alone), {threads} thread(s): {floor:.3f}x")
        ratio = per_round(out, f"threads={threads}: minitensor / PyTorch")
        if ratio is None:
            print(f"SKIP  minitensor / PyTorch, {threads} thread(s): PyTorch is not installed")
        else:
            verdict(f"minitensor / PyTorch eager, {threads} thread(s) (median of per-round ratios)", ratio, TARGET, "x")


if __name__ == "__main__":
    main()
