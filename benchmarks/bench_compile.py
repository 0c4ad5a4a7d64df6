"""`minitensor.compile` against eager minitensor: a user's training step with the model compiled.

    python benchmarks/bench_compile.py            # at 1 and 2 BLAS threads; 15 interleaved repeats of 5 steps
    python benchmarks/bench_compile.py --quick    # 5 repeats of 3 steps

Two models, each trained by the user's own loop (forward, loss, `backward()`, optimizer step), once
eagerly and once with `model = compile(model)`:
  - the tutorial GPT of benchmarks/client_gpt.py (bench_client's), imported under minitensor.run's
    mapping, `torch.compile(model)` being the one line changed; batch (64, 11), AdamW, clipping;
  - a small MLP as a first tutorial writes it (16 -> 64 -> 64 -> 4, ReLU, batch 32, SGD).
First both runs of each model train three steps from the same seed and must give the same losses
bit for bit; then the steps are timed interleaved (A B A B ..., a rest before each block) and the
per-round ratio compiled / eager is printed with its quartiles (lower is faster). The processor
(lscpu's model name) and the thread count are printed with it.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from benchmarks._timing import pin_child_threads  # noqa: E402

CHILD_THREADS = pin_child_threads()  # before numpy loads

import numpy as np  # noqa: E402

import minitensor as mt  # noqa: E402
import minitensor.nn as nn  # noqa: E402
import minitensor.nn.functional as F  # noqa: E402
from benchmarks._timing import (  # noqa: E402
    interleaved,
    load_user_file,
    per_round,
    per_thread_count,
    report_setup,
    round_ratios,
    run_options,
    table,
)
from minitensor.run import torch_is_minitensor  # noqa: E402

SETTLE = 0.3
VOCAB, BLOCK, BATCH = 4, 11, 64


def gpt_pair():
    """(make, data): make(compiled) -> the user's training step of the client GPT, compiled or not."""
    with torch_is_minitensor():
        client = load_user_file("client_gpt_compiled", "client_gpt.py")
    rng = np.random.default_rng(0)
    data = [tuple(mt.from_numpy(rng.integers(0, VOCAB, (BATCH, BLOCK))) for _ in "xy") for _ in range(8)]

    def make(compiled):
        model, opt = client.build(VOCAB, BLOCK)
        model = mt.compile(model) if compiled else model  # what `torch.compile(model)` gives under the runner
        return lambda x, y: client.train_step(model, opt, x, y)
    return make, data


def mlp_pair():
    rng = np.random.default_rng(0)
    data = [(mt.from_numpy(rng.standard_normal((32, 16)).astype(np.float32)), mt.from_numpy(rng.integers(0, 4, 32)))
            for _ in range(8)]

    def make(compiled):
        mt.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 4))
        opt = mt.optim.SGD(model.parameters(), lr=0.1)
        model = mt.compile(model) if compiled else model

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss.item()
        return step
    return make, data


def cycling(step, data):
    state = {"i": 0}

    def run():
        x, y = data[state["i"] % len(data)]
        state["i"] += 1
        return step(x, y)
    return run


def child(threads, repeats, number):
    mt.tune_malloc()
    print(f"BLAS threads: {threads}")  # (report_setup printed the processor)
    for name, pair in (("tutorial GPT (client_gpt.py)", gpt_pair), ("small MLP", mlp_pair)):
        make, data = pair()
        losses = []
        for compiled in (False, True):  # (each built just before it trains: building seeds the generator)
            step = make(compiled)
            losses.append([step(x, y) for x, y in data[:3]])
        if losses[0] != losses[1]:
            raise SystemExit(f"bench_compile: {name}: the compiled training differs from the eager one: {losses}")
        print(f"{name}: compiled and eager losses bit-identical over 3 steps ({losses[1][-1]:.6f})")
        steps = {"compiled": cycling(make(True), data), "eager": cycling(make(False), data)}
        rounds = {}
        t = interleaved(steps, repeats, number, settle=SETTLE if repeats > 1 else 0.0, rounds=rounds)
        ratio, q1, q3 = round_ratios(rounds, "compiled", "eager")
        table(["minitensor", "ms/step"], [[k, s * 1e3] for k, s in t.items()])
        print(f"threads={threads}: {name}: compiled / eager per round {ratio:.3f} (quartiles {q1:.3f}-{q3:.3f})")


def main(argv=None):
    repeats, number = run_options(argv, __doc__, full=(15, 5), quick=(5, 3), smoke=(1, 1), what="training steps")
    if CHILD_THREADS:
        return child(CHILD_THREADS, repeats, number)
    report_setup(mt, counts=(1, 2))
    outputs = per_thread_count(__file__, sys.argv[1:] if argv is None else argv)
    print("== compiled / eager, per-round medians ==")
    for threads, out in outputs.items():
        for name in ("tutorial GPT (client_gpt.py)", "small MLP"):
            print(f"info  {name}, {threads} thread(s): "
                  f"{per_round(out, f'threads={threads}: {name}: compiled / eager'):.3f}x")


if __name__ == "__main__":
    main()
