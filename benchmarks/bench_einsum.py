"""einsum on attention-shaped contractions: minitensor against PyTorch's einsum, forward and backward.

    python benchmarks/bench_einsum.py            # at 1 and 2 BLAS threads; 15 interleaved repeats of 20 calls
    python benchmarks/bench_einsum.py --quick    # 5 repeats of 10 calls

Each case is one einsum as attention code writes it, on float32 operands that require a gradient,
timed as a training step uses it: `out = einsum(eq, a, b)`, then `out.backward(w)` with a fixed
upstream weight `w` (so both VJPs run; each is an einsum again). The cases:

- `bhqd,bhkd->bhqk`: attention scores (q against every k, per batch and head);
- `bhqk,bhkd->bhqd`: the weighted sum of the values;
- `bqhd,bkhd->bhqk`: the same scores with the heads in the middle (no transpose written first);
- `bhqd,qkd->bhqk`: a relative-position term (each query against its own table of key offsets);
- `btd,de->bte`: a projection (a tensordot, no batch letter).

minitensor contracts two operands as one batched matrix product (`Einsum` in
minitensor/ops/linalg.py); before that it multiplied by broadcasting and summed, about 9x PyTorch
on the relative-position case. Both libraries' results are checked equal first. BLAS threads are
fixed when numpy loads, so each thread count runs in a child process (PyTorch on the same count);
the target is minitensor / PyTorch <= 1.5 on every case at one thread, the median of per-round ratios.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from benchmarks._timing import pin_child_threads  # noqa: E402

CHILD_THREADS = pin_child_threads()  # before numpy loads

import numpy as np  # noqa: E402

import minitensor as mt  # noqa: E402
from benchmarks._timing import (  # noqa: E402
    child_torch,
    interleaved,
    per_thread_count,
    processor,
    report_setup,
    round_ratios,
    run_options,
    table,
    verdict,
)

TARGET = 1.5  # minitensor / PyTorch einsum, forward + backward, one thread, every case
B, H, T, D = 16, 4, 64, 32  # batch, heads, sequence, head size
CASES = [
    ("bhqd,bhkd->bhqk", "scores", [(B, H, T, D), (B, H, T, D)]),
    ("bhqk,bhkd->bhqd", "values", [(B, H, T, T), (B, H, T, D)]),
    ("bqhd,bkhd->bhqk", "heads in the middle", [(B, T, H, D), (B, T, H, D)]),
    ("bhqd,qkd->bhqk", "relative position", [(B, H, T, D), (T, T, D)]),
    ("btd,de->bte", "projection", [(B, T, H * D), (H * D, H * D)]),
]


def step(lib, equation, operands, weight):
    def run():
        for x in operands:
            x.grad = None
        lib.einsum(equation, *operands).backward(weight)
    return run


def child(threads, repeats, number):
    torch = child_torch()
    if torch is None:
        print("SKIP  PyTorch is not installed: nothing to compare with")
        return
    torch.set_num_threads(threads)
    rng = np.random.default_rng(0)
    rows, ratios = [], {}
    for equation, what, shapes in CASES:
        arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        weight = rng.standard_normal(np.einsum(equation, *arrays).shape).astype(np.float32)
        ours = [mt.tensor(a, requires_grad=True) for a in arrays]
        theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
        got = mt.einsum(equation, *ours).detach().numpy()
        want = torch.einsum(equation, *theirs).detach().numpy()
        if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
            raise SystemExit(f"bench_einsum: {equation} differs from PyTorch's; the timing would mean nothing")
        steps = {"minitensor": step(mt, equation, ours, mt.tensor(weight)),
                 "PyTorch": step(torch, equation, theirs, torch.tensor(weight))}
        rounds = {}
        t = interleaved(steps, repeats, number, rounds=rounds)
        ratio, q1, q3 = round_ratios(rounds, "minitensor", "PyTorch")
        ratios[equation] = ratio
        rows.append([f"{equation} ({what})", t["minitensor"] * 1e6, t["PyTorch"] * 1e6, ratio, f"{q1:.3f}-{q3:.3f}"])
    table(["forward + backward", "minitensor µs", "PyTorch µs", "ratio", "quartiles"], rows)
    for equation, ratio in ratios.items():
        print(f"threads={threads}: {equation}: minitensor / PyTorch per round {ratio:.3f}")
    print(f"threads={threads}: worst case per round {max(ratios.values()):.3f}")


def main(argv=None):
    repeats, number = run_options(argv, __doc__, full=(15, 20), quick=(5, 10), smoke=(1, 1))
    if CHILD_THREADS:
        return child(CHILD_THREADS, repeats, number)
    report_setup(mt, counts=(1, 2))
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is not installed: this benchmark compares against it, so there is nothing to run.")
        print("SKIP  minitensor / PyTorch einsum, 1 thread: PyTorch is not installed")
        return None
    print(f"processor: {processor()}")
    print(f"attention shapes: batch {B}, heads {H}, sequence {T}, head size {D}, float32; "
          f"{repeats} interleaved repeats of {number} calls, per thread count\n")
    outputs = per_thread_count(__file__, sys.argv[1:] if argv is None else argv)
    worst = {n: _worst(out, n) for n, out in outputs.items()}
    print()
    print("== targets ==")
    verdict("minitensor / PyTorch einsum, forward + backward, worst case, 1 thread", worst[1], TARGET, "x")
    print(f"info  minitensor / PyTorch einsum, worst case, 2 threads: {worst[2]:.3f}x")


def _worst(out, threads):
    start = f"threads={threads}: worst case per round "
    return float([ln for ln in out.splitlines() if ln.startswith(start)][0][len(start):])




if __name__ == "__main__":
    main()
