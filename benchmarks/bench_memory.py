"""Memory of training the toy transformer (the trainer's default model): peak per step, and leaks.

    python benchmarks/bench_memory.py            # RSS over 2000 training steps (about a minute)
    python benchmarks/bench_memory.py --quick    # RSS over 400 steps only

(i) Peak traced memory of one training step: tracemalloc sees numpy's array allocations as
well as Python's, so after a few warm-up steps `reset_peak` and one more step give the step's
peak. Printed next to what is live before the step and to the size of the parameters, their
gradients and AdamW's state, for scale: the peak minus the live memory is what a step
allocates for activations, graph and temporaries.

(ii) Resident set size (Linux /proc/self/statm) over `--steps` training steps
(`attention.trainer.train_step`: forward, backward, clipping at 1.0, AdamW, scheduler, on
fresh batches), sampled every 100 steps. How to read it: after the first 200 steps (allocator
and optimizer state warmed up) RSS should stay flat; the target is growth from step 200 to the
last step below max(5 MB, 5% of RSS at step 200). --quick runs 400 steps, which catches a
steady leak of more than about 25 kB per step, not a slow one. The allocator tuning
(`minitensor.tune_malloc()`, as the trainer applies it) lets the process keep freed memory for
reuse, so RSS plateaus higher than the live data, but it must plateau.
"""
import argparse
import os
import sys
import tracemalloc

# Toy-sized matrices are fastest on one BLAS thread (set before numpy loads; a value you set wins).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import minitensor as mt  # noqa: E402
from attention.trainer import Config, build, train_step  # noqa: E402
from benchmarks._timing import report_setup, table, verdict  # noqa: E402

MB = 1024 * 1024


def rss_bytes():
    """Current resident set size, or None where there is no /proc (not Linux)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def trainer(cfg):
    """The trainer's model, optimizer and scheduler, and a step on fresh batches of its task."""
    task, model, opt, sched = build(cfg)
    model.train()
    rng = np.random.default_rng(cfg.seed)

    def step():
        x, y = task.batch(cfg.batch, rng)
        return train_step(model, opt, sched, x, y, cfg.clip)

    return model, opt, step


def peak_of_one_step(cfg, warmup):
    tracemalloc.start()  # before build, so the parameters and AdamW's state are traced too
    try:
        model, opt, step = trainer(cfg)
        for _ in range(warmup):
            step()
        tracemalloc.reset_peak()
        live, _ = tracemalloc.get_traced_memory()
        step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    params = sum(p._array.nbytes for p in model.parameters())
    grads = sum(p.grad._array.nbytes for p in model.parameters() if p.grad is not None)
    adam = sum(v._array.nbytes for s in opt.state.values() for v in s.values() if isinstance(v, mt.Tensor))
    print(f"== (i) one training step after {warmup} warm-up step(s) (tracemalloc) ==")
    table(["", "MB"], [["peak traced during the step", peak / MB],
                       ["live before the step", live / MB],
                       ["peak - live (the step's own allocations)", (peak - live) / MB],
                       [f"parameters ({sum(p.numel() for p in model.parameters()):,} values)", params / MB],
                       ["gradients", grads / MB],
                       ["AdamW state (exp_avg, exp_avg_sq)", adam / MB]])


def rss_over_training(cfg, steps, every, settle):
    """RSS samples every `every` steps; returns (growth after `settle` steps, allowed growth) in bytes."""
    print(f"== (ii) RSS over {steps} training steps, sampled every {every} ==")
    if rss_bytes() is None:
        print("no /proc/self/statm (not Linux): RSS not sampled\n")
        return None
    _, _, step = trainer(cfg)
    samples = {0: rss_bytes()}
    for i in range(1, steps + 1):
        step()
        if i % every == 0 or i == steps:
            samples[i] = rss_bytes()
    base = samples[settle]
    table(["step", "RSS MB", f"change since step {settle} MB"],
          [[str(i), r / MB, (r - base) / MB if i >= settle else "-"] for i, r in samples.items()])
    return samples[steps] - base, max(5 * MB, 0.05 * base)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="400 training steps instead of 2000")
    parser.add_argument("--steps", type=int, help="training steps for the RSS samples (default 2000, --quick 400)")
    parser.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)  # the test suite's tiny run
    args = parser.parse_args(argv)
    warmup, every, settle = (1, 2, 2) if args.smoke else (5, 100, 200)
    steps = args.steps or (4 if args.smoke else 400 if args.quick else 2000)
    steps = max(steps, settle)

    report_setup(mt)
    if args.quick and not args.steps:
        print("--quick: RSS over 400 steps, not 2000 (a slow leak can hide in so few)")
    cfg = Config()
    print(f"default model: {cfg.layers} layers, {cfg.heads} heads, d_model {cfg.d_model}, batch {cfg.batch} "
          f"of {cfg.task}\n")
    peak_of_one_step(cfg, warmup)
    result = rss_over_training(cfg, steps, every, settle)

    print("== targets ==")
    if result is None:
        print("SKIP  RSS flat: RSS cannot be read on this system")
        return
    growth, limit = result
    flat = verdict(f"RSS growth from step {settle} to step {steps}", growth / MB, limit / MB, " MB")
    print(f"RSS is {'flat' if flat else 'growing'} after step {settle}")


if __name__ == "__main__":
    main()
