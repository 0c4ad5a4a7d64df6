"""A training step of the toy transformer (the trainer's default model) in minitensor and PyTorch.

    python benchmarks/bench_train.py            # 15 interleaved repeats of 10 steps
    python benchmarks/bench_train.py --quick    # 5 repeats of 5 steps (well under a minute)

minitensor runs `attention.trainer`'s own `build(Config())` and `train_step` (forward,
cross-entropy, backward, gradient clipping at 1.0, AdamW, scheduler). PyTorch runs the same
model written in PyTorch: token + position embeddings, 3 pre-LayerNorm blocks of causal 3-head
attention (explicit w_q, w_k, w_v, w_o) and a tanh-GELU MLP, final LayerNorm, linear head; AdamW
with the Config's lr and betas and weight decay on Linear weights only, the same clipping and
a constant LambdaLR. Both train on the same pre-made batches of 64 sort sequences.

minitensor's BLAS runs on the trainer's threads (two at most), PyTorch on its default count.
Both libraries' worker threads spin for a while after their last call, and on two cores a
spinning worker of one library takes the core the other's next block needs (measured: PyTorch's
step 50% slower right after a minitensor block), so every block starts after a 0.3 s rest, with
every worker idle, and the untimed steps that follow the rest warm its own library up again.

The three contenders are interleaved (minitensor, PyTorch on its default thread count, PyTorch
on 1 thread; the thread count is switched before each block), each block runs `--number`
steps, and the median of the repeats is reported. How to read it: the ratio minitensor /
PyTorch-default is the target (at most 1.0: as fast as PyTorch eager as its users run it);
minitensor / PyTorch-1-thread is for information, as are the autograd nodes per step. Note
`minitensor.tune_malloc()` changes the allocator for the whole process, PyTorch's steps included.
"""
import itertools
import os
import sys

_USER_ENV = dict(os.environ)  # before the pins below: PyTorch gets its own default thread count back
# BLAS threads as the trainer (examples/train_toy_model.py) sets them: two at most (set before
# numpy loads; a value you set wins).
_THREADS = str(min(2, os.cpu_count() or 1))
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, _THREADS)
SETTLE = 0.3  # seconds of rest before each timed block: see the docstring
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import minitensor as mt  # noqa: E402
import minitensor.nn.functional as F  # noqa: E402
from attention.trainer import Config, build, lr_factor, train_step  # noqa: E402
from benchmarks._timing import import_torch, interleaved, run_options, table, tune_malloc, verdict  # noqa: E402

TARGET = 1.0  # minitensor / PyTorch on its default threads


def minitensor_side(cfg):
    """(step(x, y), loss(x, y)): the trainer's own training step, and a forward for counting nodes."""
    task, model, opt, sched = build(cfg)
    model.train()

    def loss(x, y):
        logits = model(mt.from_numpy(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), mt.from_numpy(y.reshape(-1)))

    return (lambda x, y: train_step(model, opt, sched, x, y, cfg.clip)), loss


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


def main(argv=None):
    repeats, number = run_options(argv, __doc__, full=(15, 10), quick=(5, 5), smoke=(1, 1), what="training steps")

    tune_malloc(mt)
    torch = import_torch(_USER_ENV)
    threads = torch.get_num_threads() if torch is not None else None

    cfg = Config()
    task = build(cfg)[0]
    rng = np.random.default_rng(0)
    data = [task.batch(cfg.batch, rng) for _ in range(20)]
    x, y = data[0]
    print(f"default model: {cfg.layers} layers, {cfg.heads} heads, d_model {cfg.d_model}; batch {tuple(x.shape)} "
          f"of {cfg.task}; AdamW lr {cfg.lr} betas ({cfg.beta1}, {cfg.beta2}) weight decay {cfg.weight_decay} "
          f"on Linear weights, clip {cfg.clip}")

    mt_step, mt_loss = minitensor_side(cfg)
    steps = {"minitensor": cycling(mt_step, data)}
    before, nodes = {}, {"minitensor": count_nodes(mt_loss(x, y), lambda n: isinstance(n, mt.Tensor))}
    print(f"minitensor: BLAS on {os.environ['OPENBLAS_NUM_THREADS']} thread(s), as the trainer")
    if torch is not None:
        print(f"PyTorch {torch.__version__}: default {threads} thread(s), and 1")
        th_step, th_loss = torch_side(torch, cfg, task.vocab_size, task.block_size)
        nodes["PyTorch"] = count_nodes(th_loss(x, y), lambda n: type(n).__name__ == "AccumulateGrad")
        default, single = f"PyTorch {threads} thread(s)", "PyTorch 1 thread"
        steps[default], before[default] = cycling(th_step, data), lambda: torch.set_num_threads(threads)
        steps[single], before[single] = cycling(th_step, data), lambda: torch.set_num_threads(1)
    print(f"{repeats} interleaved repeats of {number} steps; medians\n")

    t = interleaved(steps, repeats, number, before=before, settle=SETTLE if repeats > 1 else 0.0)
    if torch is not None:
        torch.set_num_threads(threads)
    table(["library", "ms/step", "steps/s", "minitensor / this"],
          [[name, s * 1e3, 1 / s, t["minitensor"] / s] for name, s in t.items()])
    print("autograd nodes per step (forward graph, leaves not counted): "
          + ", ".join(f"{name} {n}" for name, n in nodes.items()) + "\n")

    print("== targets ==")
    if torch is None:
        print("SKIP  minitensor / PyTorch default threads: PyTorch is not installed")
        return
    verdict(f"minitensor / PyTorch default ({threads} thread(s))", t["minitensor"] / t[default], TARGET, "x")
    print(f"info  minitensor / PyTorch 1 thread: {t['minitensor'] / t[single]:.3f}x")


if __name__ == "__main__":
    main()
