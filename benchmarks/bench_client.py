"""A user's own PyTorch code on minitensor: a tutorial-style GPT's training step against PyTorch eager.

    python benchmarks/bench_client.py            # at 1 and 2 BLAS threads; 15 interleaved repeats of 5 steps
    python benchmarks/bench_client.py --quick    # 5 repeats of 3 steps
    python benchmarks/bench_client.py --model mingpt   # the second user's GPT (benchmarks/mingpt_like.py)

`benchmarks/client_gpt.py` is a GPT written in plain PyTorch idiom (composed attention with
`masked_fill` + softmax + dropout, a GELU written out with `tanh` and `pow`, `nn.Linear`,
`nn.LayerNorm`, `nn.Embedding`, `F.cross_entropy`, AdamW, `clip_grad_norm_`). This script
imports that file (or, with `--model mingpt`, `benchmarks/mingpt_like.py`: the layout of the
well-known minimal GPT repositories, with weight tying and ModuleDicts) twice: once as it is, on
PyTorch, and once inside `minitensor.run`'s import mapping, so its `import torch` gets minitensor.
Nothing in it is changed for minitensor, and no fused op is swapped in: minitensor runs the
composed ops the user wrote.

Both models get the same weights (copied from PyTorch's), the check that both compute the same
loss runs first, then both train on the same batches of 64 sequences of 11 tokens, interleaved
(A B A B ..., a 0.3 s rest before each block so the other library's worker threads are idle).

BLAS threads are fixed when numpy loads, so each thread count runs in a child process of its
own (minitensor's BLAS and PyTorch both on that count); each child prints its ratio. The target
is minitensor / PyTorch <= 1.0 at one thread; two threads are shown for information.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from benchmarks._timing import pin_child_threads  # noqa: E402

CHILD_THREADS = pin_child_threads()  # before numpy loads

import numpy as np  # noqa: E402

import minitensor as mt  # noqa: E402
from benchmarks._timing import (  # noqa: E402,E501
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

TARGET = 1.0  # minitensor / PyTorch eager, one thread
SETTLE = 0.3
VOCAB, BLOCK, BATCH = 4, 11, 64
MODELS = {"client": "client_gpt.py", "mingpt": "mingpt_like.py"}  # --model: which user's file


def model_option(argv):
    """(`--model`'s file, the other arguments): the option is this script's own, the rest are run_options'."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--model", choices=sorted(MODELS), default="client")
    known, rest = parser.parse_known_args(argv)
    return MODELS[known.model], rest


def same_weights(torch_model, mt_model):
    """Copy every parameter and buffer of the PyTorch model into the minitensor one, by name."""
    theirs = torch_model.state_dict()
    with mt.no_grad():
        for name, value in mt_model.state_dict().items():
            value.copy_(mt.tensor(theirs[name].detach().numpy()))


def child(threads, repeats, number, filename="client_gpt.py"):
    import torch

    torch.set_num_threads(threads)
    mt.tune_malloc()  # as the parent reported
    pt = load_user_file("client_gpt_on_torch", filename)
    with torch_is_minitensor():
        mn = load_user_file("client_gpt_on_minitensor", filename)
    pt_model, pt_opt = pt.build(VOCAB, BLOCK)
    mn_model, mn_opt = mn.build(VOCAB, BLOCK)
    same_weights(pt_model, mn_model)

    rng = np.random.default_rng(0)
    batches = [(rng.integers(0, VOCAB, (BATCH, BLOCK)), rng.integers(0, VOCAB, (BATCH, BLOCK))) for _ in range(8)]
    x, y = batches[0]
    pt_model.eval(), mn_model.eval()
    with torch.no_grad():
        want = pt_model(torch.from_numpy(x), torch.from_numpy(y))[1].item()
    with mt.no_grad():
        got = mn_model(mt.from_numpy(x), mt.from_numpy(y))[1].item()
    pt_model.train(), mn_model.train()
    print(f"same weights, same batch, dropout off: loss {got:.6f} on minitensor, {want:.6f} on PyTorch")
    if abs(got - want) > 1e-4 * abs(want):
        raise SystemExit("bench_client: the two libraries disagree on the loss; the timing would mean nothing")

    pt_data = [(torch.from_numpy(a), torch.from_numpy(b)) for a, b in batches]
    mn_data = [(mt.from_numpy(a), mt.from_numpy(b)) for a, b in batches]

    def cycling(lib, model, opt, data):
        state = {"i": 0}

        def step():
            a, b = data[state["i"] % len(data)]
            state["i"] += 1
            return lib.train_step(model, opt, a, b)
        return step

    steps = {"minitensor": cycling(mn, mn_model, mn_opt, mn_data), "PyTorch": cycling(pt, pt_model, pt_opt, pt_data)}
    rounds = {}
    t = interleaved(steps, repeats, number, settle=SETTLE if repeats > 1 else 0.0, rounds=rounds)
    ratio, q1, q3 = round_ratios(rounds, "minitensor", "PyTorch")
    table(["library", "ms/step"], [[name, s * 1e3] for name, s in t.items()])
    print(f"threads={threads}: minitensor / PyTorch per round {ratio:.3f} (quartiles {q1:.3f}-{q3:.3f})")


def main(argv=None):
    filename, rest = model_option(sys.argv[1:] if argv is None else argv)
    repeats, number = run_options(rest, __doc__, full=(15, 5), quick=(5, 3), smoke=(1, 1), what="training steps")
    if CHILD_THREADS:
        return child(CHILD_THREADS, repeats, number, filename)
    report_setup(mt, counts=(1, 2))
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch is not installed: this benchmark compares against it, so there is nothing to run.")
        print("SKIP  minitensor / PyTorch eager, tutorial GPT, 1 thread: PyTorch is not installed")
        return None
    print(f"processor: {processor()}")
    print(f"tutorial-style GPT (benchmarks/{filename}): 3 layers, 3 heads, 48 dims, batch ({BATCH}, {BLOCK}); "
          f"{repeats} interleaved repeats of {number} steps, per thread count\n")
    outputs = per_thread_count(__file__, sys.argv[1:] if argv is None else argv)
    ratios = {threads: per_round(out, f"threads={threads}: minitensor / PyTorch") for threads, out in outputs.items()}
    print()
    print("== targets ==")
    verdict("minitensor / PyTorch eager, tutorial GPT, 1 thread (median of per-round ratios)", ratios[1], TARGET, "x")
    print(f"info  minitensor / PyTorch eager, tutorial GPT, 2 threads: {ratios[2]:.3f}x")




if __name__ == "__main__":
    main()
