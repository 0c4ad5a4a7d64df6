"""Speed of minitensor against PyTorch eager at toy scale, measured in the same run.

Each workload is written once against the PyTorch API and run on both libraries (the same code,
only the module differs), so the comparison is like for like. Machines are noisy: the two
libraries run interleaved (A B A B ...) and each timing is the median of the repeats; what
matters is the ratio printed in the last column (minitensor time / PyTorch time on one thread;
below 1 means minitensor is faster). Without PyTorch installed, only minitensor's times are
printed.

    python benchmarks/bench_core.py [--quick] [--repeats 5] [--number 20]
"""
import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # toy-sized matrices: one BLAS thread is fastest (before numpy loads)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import minitensor  # noqa: E402
from benchmarks._timing import interleaved, report_setup, run_options  # noqa: E402


def tiny_ops(lib):
    """Op overhead: 200 elementwise ops on 3-element tensors, forward and backward."""
    x = lib.randn(3, requires_grad=True)

    def step():
        y = x
        for _ in range(50):
            y = (y * 0.5 + x).tanh() - x * 0.1
        y.sum().backward()
        x.grad = None

    return step


def mlp_step(lib):
    """A training step of a 64-128-10 MLP on a batch of 64 (cross-entropy, SGD update)."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Linear(128, 10))
    x, y = lib.randn(64, 64), lib.randint(0, 10, (64,))

    def step():
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        with lib.no_grad():
            for p in model.parameters():
                p -= 0.01 * p.grad
                p.grad = None

    return step


def attention_step(lib):
    """softmax(QK^T / sqrt(d)) V with a causal mask at B=64, H=3, T=12, d=16, forward and backward."""
    q, k, v = (lib.randn(64, 3, 12, 16, requires_grad=True) for _ in range(3))
    mask = lib.ones(12, 12).tril().bool()
    w = lib.randn(64, 3, 12, 16)

    def step():
        s = q @ k.transpose(-2, -1) * (1.0 / 4.0)
        p = s.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        ((p @ v) * w).sum().backward()
        for t in (q, k, v):
            t.grad = None

    return step


def layer_norm_step(lib):
    """LayerNorm over 48 features of a (64, 12, 48) batch, forward and backward."""
    ln = lib.nn.LayerNorm(48)
    x = lib.randn(64, 12, 48, requires_grad=True)
    w = lib.randn(64, 12, 48)

    def step():
        (ln(x) * w).sum().backward()
        x.grad = None

    return step


WORKLOADS = [tiny_ops, mlp_step, attention_step, layer_norm_step]


def main(argv=None):
    repeats, inner = run_options(argv, __doc__, full=(9, 20), quick=(3, 10), smoke=(1, 1))
    report_setup(minitensor)
    try:
        import torch

        torch.set_num_threads(1)  # the same single thread as numpy's BLAS above
    except ImportError:
        torch = None
        print("PyTorch is not installed: printing minitensor's times only.")
    print(f"{'workload':<18}{'minitensor ms':>15}{'torch ms':>12}{'ratio':>9}")
    for make in WORKLOADS:
        steps = {"minitensor": make(minitensor)}
        if torch is not None:
            steps["torch"] = make(torch)
        t = interleaved(steps, repeats, inner)
        if torch is None:
            print(f"{make.__name__:<18}{t['minitensor'] * 1e3:>15.3f}")
            continue
        print(f"{make.__name__:<18}{t['minitensor'] * 1e3:>15.3f}{t['torch'] * 1e3:>12.3f}"
              f"{t['minitensor'] / t['torch']:>9.2f}")


if __name__ == "__main__":
    main()
