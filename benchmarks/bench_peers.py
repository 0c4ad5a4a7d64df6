"""One training step of the trainer's default model against the compiled peers: minitensor (replayed,
as the trainer runs it), PyTorch eager, `torch.compile`, JAX `jit`, and the numpy GEMM floor.

    python benchmarks/bench_peers.py            # 15 interleaved rounds of 10 steps per thread count
    python benchmarks/bench_peers.py --quick    # 5 rounds of 5 steps

Every contender trains the same architecture from the same weights (minitensor's initialisation,
copied) on the same pre-made batches of 64 sort sequences: token + position embeddings, 3
pre-LayerNorm blocks of causal 3-head attention (w_q, w_k, w_v, w_o with biases) and a tanh-GELU
MLP, a final LayerNorm and a linear head without bias; mean cross-entropy; gradients clipped to
norm 1.0; AdamW (the Config's lr, betas, weight decay on the Linear weights only). A step is
forward, backward, clipping and the update, ending with the loss as a Python float.

- minitensor: `attention.trainer.train_step` with its `Replay`, as the trainer runs it by default.
- PyTorch eager: the model written in PyTorch, `torch.optim.AdamW`, `clip_grad_norm_`.
- torch.compile: the same, with the model and loss compiled (`torch.compile`, default inductor
  backend, compiled before timing starts: its first calls take seconds).
- JAX jit: the model in `jax.numpy`, and AdamW and clipping written out (no optax), the whole step
  one `jax.jit` function with the parameters and moments donated.
- numpy floor: the step's matrix products alone (`bench_train.matmul_floor`): no library can
  undercut it without faster matrix products.

Before timing, each contender's loss on the first batch is compared with minitensor's (float32
tolerance), so the comparison is of the same work; a contender that differs is reported and left
out. A contender whose library is not installed is skipped.

Each thread count (1 and 2) runs in a child process of its own (BLAS, PyTorch's and XLA's thread
pools fixed there); contenders are interleaved within each round, after a 0.3 s rest (see
bench_train.py: a spinning worker of one library slows the next one's block). Printed: each
contender's median time, and minitensor's time over each contender's, per round, as the median
and quartiles over rounds. Run it several times: the spread between runs is part of the figure.
"""
import os
import sys

SETTLE = 0.3
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from benchmarks._timing import pin_child_threads  # noqa: E402

CHILD_THREADS = pin_child_threads()  # before numpy loads
if CHILD_THREADS:  # XLA reads its thread count when jax loads
    os.environ.setdefault("XLA_FLAGS", f"--xla_cpu_multi_thread_eigen={'false' if CHILD_THREADS == 1 else 'true'} "
                          f"intra_op_parallelism_threads={CHILD_THREADS}")

import numpy as np  # noqa: E402

import minitensor as mt  # noqa: E402
from attention.trainer import Config, build, train_step  # noqa: E402
from benchmarks._timing import (  # noqa: E402
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
from benchmarks.bench_train import cycling, matmul_floor  # noqa: E402

TOLERANCE = 1e-4  # relative, on the first batch's loss: float32 sums in another order


def minitensor_side(cfg):
    """(step, first loss, model): the trainer's own step, replayed as the trainer runs it."""
    task, model, opt, sched = build(cfg)
    model.train()
    replay = mt.fast.Replay(lambda x, y: _mt_loss(model, x, y), names=dict(model.named_parameters()))
    return (lambda x, y: train_step(model, opt, sched, x, y, cfg.clip, replay)), model


def _mt_loss(model, x, y):
    from attention.trainer import model_loss
    return model_loss(model, x, y)


def weights_of(model):
    """{name: float32 ndarray copy} of a minitensor model's parameters."""
    return {name: p.detach().numpy().copy() for name, p in model.named_parameters()}


def decays(name):
    """Whether AdamW decays this parameter (`DecoderLM.param_groups`: the Linear layers' weights)."""
    return name.endswith(".weight") and (".attn.w_" in name or ".mlp.fc" in name or name == "head.weight")


# ---- PyTorch (eager and compiled) ----------------------------------------------------------------
def torch_model(torch, cfg, weights, heads):
    nn, tF = torch.nn, torch.nn.functional

    class Attention(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d, d) for _ in range(4))

        def forward(self, a):
            B, T, D = a.shape
            q, k, v = (w(a).view(B, T, heads, D // heads).transpose(1, 2) for w in (self.w_q, self.w_k, self.w_v))
            s = (q @ k.transpose(-2, -1)) * (D // heads) ** -0.5
            s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
            return self.w_o((s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D))

    class MLP(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            return self.fc2(tF.gelu(self.fc1(x), approximate="tanh"))

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.ln1, self.attn, self.ln2, self.mlp = nn.LayerNorm(d), Attention(d), nn.LayerNorm(d), MLP(d)

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class LM(nn.Module):
        def __init__(self, vocab, block, d, n):
            super().__init__()
            self.tok_emb, self.pos_emb = nn.Embedding(vocab, d), nn.Embedding(block, d)
            self.blocks = nn.ModuleList(Block(d) for _ in range(n))
            self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1]))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln_f(x))

    vocab, d = weights["tok_emb.weight"].shape
    model = LM(vocab, weights["pos_emb.weight"].shape[0], d, cfg.layers)
    model.load_state_dict({name: torch.from_numpy(w.copy()) for name, w in weights.items()})
    model.train()
    return model


def torch_side(torch, cfg, weights, heads, compiled):
    """(step, loss on a batch): PyTorch's step, eager or with the model and loss `torch.compile`d."""
    tF = torch.nn.functional
    model = torch_model(torch, cfg, weights, heads)
    named = dict(model.named_parameters())
    groups = [{"params": [p for n, p in named.items() if decays(n)], "weight_decay": cfg.weight_decay},
              {"params": [p for n, p in named.items() if not decays(n)], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))

    def loss(x, y):
        logits = model(x)
        return tF.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    run = torch.compile(loss) if compiled else loss

    def step(x, y):
        value = run(torch.from_numpy(x), torch.from_numpy(y))
        opt.zero_grad(set_to_none=True)
        value.backward()
        if cfg.clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        opt.step()
        return value.item()

    return step, lambda x, y: run(torch.from_numpy(x), torch.from_numpy(y)).detach().item()


# ---- JAX ------------------------------------------------------------------------------------------
def jax_side(jax, cfg, weights, heads):
    """(step, loss on a batch): the model in jax.numpy, AdamW and clipping by hand, one jitted step."""
    jnp = jax.numpy

    def layer_norm(x, w, b, eps=1e-5):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + eps) * w + b

    def linear(p, name, x):
        return x @ p[name + ".weight"].T + p[name + ".bias"]

    def gelu(x):
        return 0.5 * x * (1 + jnp.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))

    def forward(p, idx):
        B, T = idx.shape
        x = p["tok_emb.weight"][idx] + p["pos_emb.weight"][jnp.arange(T)]
        causal = jnp.tril(jnp.ones((T, T), bool))
        for i in range(cfg.layers):
            b = f"blocks.{i}."
            a = layer_norm(x, p[b + "ln1.weight"], p[b + "ln1.bias"])
            D = a.shape[-1]
            q, k, v = (linear(p, b + "attn." + w, a).reshape(B, T, heads, D // heads).transpose(0, 2, 1, 3)
                       for w in ("w_q", "w_k", "w_v"))
            s = jnp.where(causal, (q @ k.swapaxes(-1, -2)) * (D // heads) ** -0.5, -jnp.inf)
            z = (jax.nn.softmax(s, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
            x = x + linear(p, b + "attn.w_o", z)
            m = layer_norm(x, p[b + "ln2.weight"], p[b + "ln2.bias"])
            x = x + linear(p, b + "mlp.fc2", gelu(linear(p, b + "mlp.fc1", m)))
        return layer_norm(x, p["ln_f.weight"], p["ln_f.bias"]) @ p["head.weight"].T

    def loss_fn(p, x, y):
        logits = forward(p, x).reshape(-1, p["head.weight"].shape[0])
        logp = jax.nn.log_softmax(logits, axis=-1)
        y = y.reshape(-1)
        kept = y != -100  # cross_entropy's ignore_index: the prompt's positions have no target
        picked = jnp.take_along_axis(logp, jnp.where(kept, y, 0)[:, None], axis=-1)[:, 0]
        return -jnp.sum(jnp.where(kept, picked, 0.0)) / jnp.sum(kept)

    beta1, beta2, lr, eps = cfg.beta1, cfg.beta2, cfg.lr, 1e-8
    wd = {name: (cfg.weight_decay if decays(name) else 0.0) for name in weights}

    def step(p, m, v, t, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        if cfg.clip:  # clip_grad_norm_: scale by clip / (norm + 1e-6) when that is below 1
            norm = jnp.sqrt(sum(jnp.sum(gi * gi) for gi in g.values()))
            coef = jnp.minimum(1.0, cfg.clip / (norm + 1e-6))
            g = {n: gi * coef for n, gi in g.items()}
        t = t + 1
        c1, c2 = 1 - beta1 ** t, 1 - beta2 ** t
        new_p, new_m, new_v = {}, {}, {}
        for n in p:
            new_m[n] = beta1 * m[n] + (1 - beta1) * g[n]
            new_v[n] = beta2 * v[n] + (1 - beta2) * g[n] * g[n]
            w = p[n] * (1 - lr * wd[n])  # decoupled weight decay (AdamW)
            new_p[n] = w - (lr / c1) * new_m[n] / (jnp.sqrt(new_v[n] / c2) + eps)
        return new_p, new_m, new_v, t, loss

    jitted = jax.jit(step, donate_argnums=(0, 1, 2))
    state = {"p": {n: jnp.asarray(w) for n, w in weights.items()}}
    state["m"] = {n: jnp.zeros_like(w) for n, w in state["p"].items()}
    state["v"] = {n: jnp.zeros_like(w) for n, w in state["p"].items()}
    state["t"] = jnp.asarray(0, jnp.float32)

    def run(x, y):
        s = state
        s["p"], s["m"], s["v"], s["t"], loss = jitted(s["p"], s["m"], s["v"], s["t"], x, y)
        return float(loss)

    first = jax.jit(loss_fn)
    return run, lambda x, y: float(first(state["p"], x, y))


def child_jax():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_platforms", "cpu")
    return jax


# ---- the run ----------------------------------------------------------------------------------------
def child(threads, repeats, number):
    torch, jax = child_torch(), child_jax()
    mt.tune_malloc()  # as the parent reported
    cfg = Config()
    task = build(cfg)[0]
    rng = np.random.default_rng(0)
    data = [task.batch(cfg.batch, rng) for _ in range(20)]
    x, y = data[0]
    mt_step, model = minitensor_side(cfg)
    weights = weights_of(model)  # before any step: every contender starts from these
    with mt.no_grad():
        reference = float(_mt_loss(model, x, y).item())
    steps = {"minitensor": cycling(mt_step, data)}
    first_losses = {"minitensor": reference}
    contenders = []
    if torch is not None:
        torch.set_num_threads(threads)
        contenders += [("PyTorch eager", lambda: torch_side(torch, cfg, weights, cfg.heads, compiled=False)),
                       ("torch.compile", lambda: torch_side(torch, cfg, weights, cfg.heads, compiled=True))]
    else:
        print("SKIP  PyTorch (eager and torch.compile): not installed")
    if jax is not None:
        contenders.append(("JAX jit", lambda: jax_side(jax, cfg, weights, cfg.heads)))
    else:
        print("SKIP  JAX jit: not installed (pip install 'jax[cpu]')")
    for name, make in contenders:
        try:
            step, loss = make()
            first_losses[name] = loss(x, y)
            for batch in data[:3]:  # compiles (torch.compile, jit) before any timing
                step(*batch)
        except Exception as e:  # noqa: BLE001 (a peer that fails to build or compile here is reported, not fatal)
            print(f"SKIP  {name}: {type(e).__name__}: {str(e)[:200]}")
            continue
        if not abs(first_losses[name] - reference) <= TOLERANCE * abs(reference):  # (NaN: not the same)
            print(f"SKIP  {name}: its loss on the first batch, {first_losses[name]:.7f}, is not minitensor's "
                  f"{reference:.7f}: not the same work")
            continue
        steps[name] = cycling(step, data)
    steps["numpy floor"] = matmul_floor(cfg, task.vocab_size, task.block_size)
    print("loss on the first batch, before training: "
          + ", ".join(f"{name} {value:.7f}" for name, value in first_losses.items()))
    rounds = {}
    t = interleaved(steps, repeats, number, settle=SETTLE if repeats > 1 else 0.0, rounds=rounds)
    table(["contender", "ms/step", "steps/s"], [[name, s * 1e3, 1 / s] for name, s in t.items()])
    for name in steps:
        if name != "minitensor":
            ratio, q1, q3 = round_ratios(rounds, "minitensor", name)
            print(f"threads={threads}: minitensor / {name} per round {ratio:.3f} (quartiles {q1:.3f}-{q3:.3f})")
    print()


def main(argv=None):
    repeats, number = run_options(argv, __doc__, full=(15, 10), quick=(5, 5), smoke=(1, 1), what="training steps")
    if CHILD_THREADS:
        return child(CHILD_THREADS, repeats, number)
    report_setup(mt, counts=(1, 2))
    cfg = Config()
    print(f"default model: {cfg.layers} layers, {cfg.heads} heads, d_model {cfg.d_model}; batch ({cfg.batch}, "
          f"{build(cfg)[0].block_size}) of {cfg.task}; {repeats} interleaved rounds of {number} steps per thread "
          "count; ratios are minitensor's time over the contender's (below 1: minitensor is faster)\n")
    outputs = per_thread_count(__file__, sys.argv[1:] if argv is None else argv)
    print("== targets ==")
    for threads, out in outputs.items():
        for name in ("torch.compile", "JAX jit"):
            ratio = per_round(out, f"threads={threads}: minitensor / {name}")
            if ratio is None:
                print(f"SKIP  minitensor / {name}, {threads} thread(s): not installed or not run")
            else:
                verdict(f"minitensor (replayed) / {name}, {threads} thread(s) (median of per-round ratios)",
                        ratio, 1.0, "x")
        floor = per_round(out, f"threads={threads}: minitensor / numpy floor")
        if threads == 1:
            verdict("minitensor (replayed) / numpy GEMM floor, 1 thread", floor, 2.0, "x")
        else:
            print(f"info  minitensor / numpy floor, {threads} thread(s): {floor:.3f}x")
        for name in ("PyTorch eager",):
            ratio = per_round(out, f"threads={threads}: minitensor / {name}")
            if ratio is not None:
                print(f"info  minitensor / {name}, {threads} thread(s): {ratio:.3f}x")


if __name__ == "__main__":
    main()
