"""The trainer's command line (`python -m attention`, `attention-train`, examples/train_toy_model.py):
its flags with their defaults in --help, their parsing into a `Config`, and the BLAS thread count
the command runs with. A bad value or combination is one `error:` line and exit status 2, as
argparse's (its usage is shown by --help only: a screen of usage above the error hid the one line
that says what is wrong).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
from typing import Sequence

from .tasks import TASKS
from .trainer_config import TASK_DEFAULTS, Config, check


def _at_least(low, kind=int, high=None, why=""):
    """An argparse type: a number of `kind` from `low` (to `high`, when given; a float must be finite),
    a one-line error otherwise; `why` says what a value above `high` would do."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a{'n integer' if kind is int else ' number'}, got {text!r}")
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}{why}, got {value}")
        return value
    parse.__name__ = kind.__name__  # what argparse calls the type in its messages
    return parse


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is its one `error:` line (exit status 2), without the usage above it."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


# AdamW moves every weight by about lr a step, whatever the gradient's size: past 1, a run only diverges
MAX_LR = 1.0


def parser() -> argparse.ArgumentParser:
    """The command line of the trainer: every option with its default in --help, each value checked."""
    d, toy, chars = Config(), TASK_DEFAULTS["toy"], TASK_DEFAULTS["chars"]
    ap = _Parser(
        prog="python -m attention" if sys.argv[0].endswith("__main__.py") else None,
        description="Train a tiny decoder-only transformer on a toy task or on a text (CPU, numpy).")
    pos, count, rate = _at_least(1), _at_least(0), _at_least(0.0, float)
    lr = _at_least(0.0, float, MAX_LR, " (AdamW moves every weight by about lr a step)")

    def option(flag, what, **kw):
        ap.add_argument(flag, help=f"{what} (default: {kw['default']})", **kw)

    def per_task(flag, what, **kw):
        """An option whose default depends on --task: None here, filled in by Config."""
        key = flag[2:].replace("-", "_")
        shown = f"{toy[key]}; " if toy[key] is not None else ""
        ap.add_argument(flag, help=f"{what} (default: {shown}chars: {chars[key]})", default=None, **kw)

    option("--task", "what the model learns", default=d.task, choices=sorted(TASKS))
    ap.add_argument("--data", default=None, metavar="FILE",
                    help="chars: the UTF-8 text file to learn (default: attention/data/pride_and_prejudice.txt, "
                         "chapters 1-17 of Jane Austen's novel)")
    per_task("--block-size", "chars: characters of context (a toy task sets its own)", type=pos)
    per_task("--layers", "transformer blocks", type=pos)
    per_task("--heads", "attention heads per block (must divide --d-model)", type=pos)
    per_task("--d-model", "width of the residual stream", type=pos)
    option("--dropout", "dropout probability, below 1", type=rate, default=d.dropout)
    per_task("--steps", "steps to train; a toy task stops early at 100%% held-out", type=pos)
    per_task("--batch", "sequences per step", type=pos)
    per_task("--lr", f"AdamW's learning rate, at most {MAX_LR:g}", type=lr)
    option("--weight-decay", "AdamW's decay on Linear weights", type=rate, default=d.weight_decay)
    option("--clip", "gradient norm clipping (0: none)", type=rate, default=d.clip)
    per_task("--warmup", "steps of linear learning-rate warmup", type=count)
    per_task("--schedule", "learning-rate schedule", choices=["constant", "cosine"])
    option("--seed", "seed of the weights, dropout, batches and samples", type=count, default=d.seed)
    per_task("--eval-every", "steps between held-out evaluations", type=pos)
    option("--eval-n", "held-out sequences per evaluation (chars: at most this many windows)", type=pos,
           default=d.eval_n)
    option("--checkpoint-every", "steps between checkpoints", type=pos, default=d.checkpoint_every)
    per_task("--sample", "chars: characters of generated text printed at each evaluation and at the end",
             type=count)
    ap.add_argument("--temperature", type=rate, default=None,
                    help=f"chars: of the samples; below 1 safer, above 1 wilder, 0 greedy (default: {d.temperature})")
    ap.add_argument("--top-k", type=pos, default=None,
                    help="chars: draw the samples from the K most likely characters only (default: all)")
    ap.add_argument("--prompt", default=None,
                    help="chars: the text the samples continue (default: a newline)")
    ap.add_argument("--generate-only", action="store_true",
                    help="chars: print --sample characters from the checkpoint in --out, without training")
    ap.add_argument("--no-early-stop", dest="stop_when_perfect", action="store_false",
                    help="run all --steps even once held-out exact match is perfect")
    ap.add_argument("--no-pictures", dest="pictures", action="store_false",
                    help="skip the attention maps and the loss curve")
    ap.add_argument("--out", default=None, help="folder for checkpoint and pictures (default: runs/<task>)")
    ap.add_argument("--resume", action="store_true", help="continue from the checkpoint in --out")
    ap.add_argument("--no-replay", dest="replay", action="store_false",
                    help="run every step eagerly instead of replaying a recording of it (the same numbers, slower)")
    ap.add_argument("--threads", type=pos, default=None,
                    help="BLAS threads (default: 1, or OPENBLAS_NUM_THREADS if you set it)")
    return ap


# options that only a text model reads: refused with a toy task, rather than silently ignored
_CHARS_ONLY = ("data", "block_size", "sample", "temperature", "top_k", "prompt")


def parse_args(argv: Sequence[str] | None = None) -> Config:
    ap = parser()
    a = ap.parse_args(argv)
    if a.task != "chars" and not a.generate_only:
        for key in _CHARS_ONLY:
            if getattr(a, key) is not None:
                ap.error(f"argument --{key.replace('_', '-')}: only for --task chars (the {a.task} task has "
                         "no text to read or write)")
    fields = {f.name for f in dataclasses.fields(Config)}
    cfg = Config(**{k: v for k, v in vars(a).items() if k in fields and v is not None})
    try:
        check(cfg)
    except ValueError as e:
        ap.error(str(e))
    return cfg


_RESTARTED = "ATTENTION_TRAIN_RESTARTED"  # set in the restarted process, so it never restarts again


def restart_for_blas_threads(argv: Sequence[str]) -> None:
    """Start this command again, once, when its BLAS runs on another thread count than the one asked
    for (--threads, else OPENBLAS_NUM_THREADS if set, else 1); otherwise return.

    BLAS reads its thread count once, when numpy loads, and numpy is loaded by the time this runs,
    so setting the count takes a fresh process."""
    threads = parser().parse_known_args(argv)[0].threads
    want = str(threads) if threads else os.environ.get("OPENBLAS_NUM_THREADS") or "1"
    if os.environ.get("OPENBLAS_NUM_THREADS") != want and not os.environ.get(_RESTARTED):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=want, OMP_NUM_THREADS=want, MKL_NUM_THREADS=want,
                   **{_RESTARTED: "1"})
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
