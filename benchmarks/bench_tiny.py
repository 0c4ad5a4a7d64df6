"""A learner's notebook on minitensor: the tiny batch-norm MLP step of a backprop lecture against PyTorch eager.

    python benchmarks/bench_tiny.py            # at 1 and 2 BLAS threads; 21 interleaved repeats of 40 steps
    python benchmarks/bench_tiny.py --quick    # 5 repeats of 20 steps

`benchmarks/tiny_lecture.py` is the training step of a well-known lecture on backpropagation by
hand (vocabulary 27, context 3, embedding 10, hidden 64, batch 32): `C[Xb]`, `view`, `@`, batch
norm written out in small steps, `tanh`, `F.cross_entropy`, `p.grad = None`, `loss.backward()`,
`p.data += -lr * p.grad`. This script imports that file twice: once as it is, on PyTorch, and
once inside `minitensor.run`'s import mapping, so its `import torch` gets minitensor. Nothing in
it is changed for minitensor.

At these sizes the arithmetic is a few microseconds: a step's time is the per-op overhead of the
library (about 30 ops forward, as many VJPs, the optimizer's in-place updates). Both get the same
weights (copied from PyTorch's); the check that both compute the same loss runs first; then both
train on the same batches, interleaved (A B A B ..., a short rest before each block so the
other library's worker threads are idle).

BLAS threads are fixed when numpy loads, so each thread count runs in a child process of its
own (minitensor's BLAS and PyTorch both on that count); each child prints its per-round ratio
with its quartiles. The target is minitensor / PyTorch <= 1.5 at one thread (issue 33); two
threads are shown for information.
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
    interleaved,
    load_user_file,
    per_round,
    per_thread_count,
    processor,
    report_setup,
    round_ratios,
    run_options,
    table,
    verdict,
)
from minitensor.run import torch_is_minitensor  # noqa: E402

TARGET = 1.5  # minitensor / PyTorch eager, one thread
SETTLE = 0.05






def child(threads, repeats, number):
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _timed(torch, threads, repeats, number)
    finally:
        torch.set_num_threads(before)  # (--smoke runs this in the caller's process)


def _timed(torch, threads, repeats, number):
    mt.tune_malloc()  # as the parent reported
    pt = load_user_file("tiny_lecture_on_torch", "tiny_lecture.py")
    with torch_is_minitensor():
        mn = load_user_file("tiny_lecture_on_minitensor", "tiny_lecture.py")
    pt_params = pt.build()
    mn_params = mn.build()
    with mt.no_grad():
        for mine, theirs in zip(mn_params, pt_params):
            mine.copy_(mt.tensor(theirs.detach().numpy()))

    rng = np.random.default_rng(0)
    batches = [(rng.integers(0, pt.VOCAB, (pt.BATCH, pt.BLOCK)), rng.integers(0, pt.VOCAB, pt.BATCH))
               for _ in range(16)]
    pt_data = [(torch.from_numpy(a), torch.from_numpy(b)) for a, b in batches]
    mn_data = [(mt.from_numpy(a), mt.from_numpy(b)) for a, b in batches]
    want = pt.train_step(pt_params, *pt_data[0]).item()
    got = mn.train_step(mn_params, *mn_data[0]).item()
    want2 = pt.forward(pt_params, *pt_data[1]).item()  # after one step each: the updates agree too
    got2 = mn.forward(mn_params, *mn_data[1]).item()
    print(f"same weights, same batches: loss {got:.6f} then {got2:.6f} on minitensor, "
          f"{want:.6f} then {want2:.6f} on PyTorch")
    if abs(got - want) > 1e-4 * abs(want) or abs(got2 - want2) > 1e-4 * abs(want2):
        raise SystemExit("bench_tiny: the two libraries disagree on the loss; the timing would mean nothing")

    def cycling(lib, params, data):
        state = {"i": 0}

        def step():
            xb, yb = data[state["i"] % len(data)]
            state["i"] += 1
            lib.train_step(params, xb, yb)
        return step

    steps = {"minitensor": cycling(mn, mn_params, mn_data), "PyTorch": cycling(pt, pt_params, pt_data)}
    rounds = {}
    t = interleaved(steps, repeats, number, settle=SETTLE if repeats > 1 else 0.0, rounds=rounds)
    ratio, q1, q3 = round_ratios(rounds, "minitensor", "PyTorch")
    table(["library", "ms/step"], [[name, s * 1e3] for name, s in t.items()])
    print(f"threads={threads}: minitensor / PyTorch per round {ratio:.3f} (quartiles {q1:.3f}-{q3:.3f})")
    return ratio


def main(argv=None):
    repeats, number = run_options(argv, __doc__, full=(21, 40), quick=(5, 20), smoke=(1, 2), what="training steps")
    if CHILD_THREADS:
        return child(CHILD_THREADS, repeats, number)
    report_setup(mt, counts=(1, 2))
    print(f"processor: {processor()}")
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is not installed: this benchmark compares against it, so there is nothing to run.")
        print("SKIP  minitensor / PyTorch eager, lecture MLP step, 1 thread: PyTorch is not installed")
        return None
    print("backprop lecture's MLP step (benchmarks/tiny_lecture.py): vocabulary 27, context 3, embedding 10, "
          f"hidden 64, batch 32; {repeats} interleaved repeats of {number} steps, per thread count\n")
    if repeats == 1:  # the test suite's --smoke: one step, in this process (two children cost seconds of imports)
        ratios = {1: child(1, repeats, number)}
    else:
        outputs = per_thread_count(__file__, sys.argv[1:] if argv is None else argv)
        ratios = {threads: per_round(out, f"threads={threads}: minitensor / PyTorch")
                  for threads, out in outputs.items()}
    print()
    print("== targets ==")
    verdict("minitensor / PyTorch eager, lecture MLP step, 1 thread (median of per-round ratios)",
            ratios[1], TARGET, "x")
    if 2 in ratios:
        print(f"info  minitensor / PyTorch eager, lecture MLP step, 2 threads: {ratios[2]:.3f}x")


if __name__ == "__main__":
    main()
