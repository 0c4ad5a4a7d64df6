"""Train the tiny decoder-only transformer on a toy task: progress, held-out evaluation, checkpoints,
exact resume, attention maps and a loss curve.

`examples/train_toy_model.py` is the command-line face of `main()`. Everything random comes from
two seeded generators (minitensor's global one for initialisation and dropout, a numpy one for the
batches), and both are saved in every checkpoint, so a resumed run continues bit for bit where the
interrupted one stopped.
"""
from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import math
import os
import sys
import time
from typing import Any, Sequence, TextIO

import numpy as np
from numpy.typing import NDArray

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.serialization import CheckpointError

from .lm import DecoderLM, greedy_answers
from .tasks import TASKS, Task, get_task
from . import pictures


@dataclasses.dataclass
class Config:
    task: str = "sort"
    layers: int = 3
    heads: int = 3
    d_model: int = 48
    dropout: float = 0.0
    steps: int = 2000  # an upper bound: training stops once held-out exact match is perfect
    batch: int = 64
    lr: float = 5e-4
    beta1: float = 0.9
    beta2: float = 0.95
    weight_decay: float = 0.1
    clip: float = 1.0
    warmup: int = 0
    schedule: str = "constant"  # or "cosine" (decays to 10% of lr at `steps`)
    seed: int = 0
    eval_every: int = 100
    eval_n: int = 1000
    checkpoint_every: int = 100
    stop_when_perfect: bool = True
    out: str = ""  # "" means runs/<task>
    resume: bool = False
    pictures: bool = True

    def __post_init__(self) -> None:
        if not self.out:
            self.out = os.path.join("runs", self.task)


CHECKPOINT = "checkpoint.npz"


# ---- pieces ---------------------------------------------------------------------------------------

def build(cfg: Config) -> tuple[Task, DecoderLM, mt.optim.AdamW, mt.optim.lr_scheduler.LambdaLR]:
    """Task, model and optimizer for `cfg`, initialised from its seed."""
    task = get_task(cfg.task)
    mt.manual_seed(cfg.seed)
    # fused: training is what the fused attention is for (the same math, one node per layer)
    model = DecoderLM(task.vocab_size, task.block_size, n_layer=cfg.layers, n_head=cfg.heads,
                      d_model=cfg.d_model, dropout=cfg.dropout, fused=True)
    optimizer = mt.optim.AdamW(model.param_groups(cfg.weight_decay), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
    scheduler = mt.optim.lr_scheduler.LambdaLR(optimizer, lambda step: lr_factor(cfg, step))
    return task, model, optimizer, scheduler


def lr_factor(cfg: Config, step: int) -> float:
    """Linear warmup over `warmup` steps, then constant or a cosine decay to 10%."""
    if cfg.warmup and step < cfg.warmup:
        return (step + 1) / cfg.warmup
    if cfg.schedule == "cosine":
        t = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t))
    return 1.0


def train_step(model: DecoderLM, optimizer: mt.optim.Optimizer, scheduler: mt.optim.lr_scheduler.LRScheduler,
               x: NDArray[np.int64], y: NDArray[np.int64], clip: float) -> float:
    logits = model(mt.from_numpy(x))
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), mt.from_numpy(y.reshape(-1)))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip:
        mt.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    scheduler.step()
    return loss.item()


def evaluate(model: DecoderLM, task: Task, prompts: NDArray[np.int64]) -> float:
    was_training = model.training
    model.eval()
    answers = greedy_answers(model, task, prompts)
    model.train(was_training)
    return task.exact_match(prompts, answers)


def record_eval(evals: list[dict[str, Any]], step: int, model: DecoderLM, task: Task, distinct: NDArray[np.int64],
                draws: NDArray[np.int64]) -> tuple[float, float]:
    """Held-out exact match on both sets, appended to `evals`; returns (distinct, draws) accuracy."""
    acc_d, acc_n = evaluate(model, task, distinct), evaluate(model, task, draws)
    evals.append({"step": step, "distinct": acc_d, "draws": acc_n})
    return acc_d, acc_n


def heldout_sets(task: Task, n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """All distinct held-out prompts (or a fixed sample of them), and `n` fixed draws from that split."""
    distinct = task.heldout_prompts()
    draws = task.sample_prompts(n, np.random.default_rng(12345), split="heldout")
    return distinct, draws


# ---- checkpoints ----------------------------------------------------------------------------------

def save_checkpoint(path: str, cfg: Config, model: DecoderLM, optimizer: mt.optim.Optimizer,
                    scheduler: mt.optim.lr_scheduler.LRScheduler, step: int, losses: Sequence[float],
                    data_rng: np.random.Generator, evals: list[dict[str, Any]]) -> None:
    mt.save({
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": json.dumps(scheduler.state_dict()),
        "step": step,
        "losses": mt.tensor(np.asarray(losses, dtype=np.float64)),
        "evals": json.dumps(evals),
        "data_rng": json.dumps(data_rng.bit_generator.state),
        "model_rng": json.dumps(mt.get_rng_state()),
        "config": json.dumps(dataclasses.asdict(cfg)),
    }, path)


_ENTRIES = ("model", "optimizer", "scheduler", "step", "losses", "evals", "data_rng", "model_rng", "config")


def load_checkpoint(path: str, cfg: Config, model: DecoderLM, optimizer: mt.optim.Optimizer,
                    scheduler: mt.optim.lr_scheduler.LRScheduler,
                    data_rng: np.random.Generator) -> tuple[int, list[float], list[dict[str, Any]]]:
    """Restore everything a checkpoint holds; a bad file raises CheckpointError and changes nothing.

    Nothing is assigned until every entry has been read and has loaded into copies of the model,
    optimizer, scheduler and generators, so a file with a missing or mismatched piece leaves this
    run exactly as it was."""
    ck = mt.load(path)
    missing = [k for k in _ENTRIES if k not in ck] if isinstance(ck, dict) else list(_ENTRIES)
    if missing:
        raise CheckpointError(
            f"{path}: not a training checkpoint (missing {', '.join(missing)}); a bare model state_dict "
            "can be loaded with model.load_state_dict(minitensor.load(path))"
        )
    try:
        saved, sched, evals, data_state, model_state = (
            json.loads(ck[k]) for k in ("config", "scheduler", "evals", "data_rng", "model_rng"))
        for key in ("task", "layers", "heads", "d_model"):
            if saved[key] != getattr(cfg, key):
                raise CheckpointError(
                    f"{path}: was written for --{key.replace('_', '-')} {saved[key]}, but this run asks for "
                    f"{getattr(cfg, key)}; use the same settings to resume, or another --out"
                )
        step, losses = int(ck["step"]), ck["losses"].numpy(force=True).astype(float).reshape(-1).tolist()
        if not all(isinstance(e, dict) and {"step", "distinct", "draws"} <= set(e) for e in evals):
            raise ValueError(f"evals is not a list of evaluation records: {str(evals)[:80]}")
        # the dry run: every piece loads into a copy first (the copies share nothing with the originals)
        trial_model, trial_optimizer, trial_scheduler = copy.deepcopy((model, optimizer, scheduler))
        trial_model.load_state_dict(ck["model"])
        trial_optimizer.load_state_dict(ck["optimizer"])
        trial_scheduler.load_state_dict(sched)
        type(data_rng.bit_generator)().state = data_state
        np.random.default_rng().bit_generator.state = model_state  # minitensor's generator is a default_rng
    except CheckpointError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError) as e:
        raise CheckpointError(f"{path}: does not fit this run ({type(e).__name__}: {e}); nothing was changed") from e
    model.load_state_dict(ck["model"])
    optimizer.load_state_dict(ck["optimizer"])
    scheduler.load_state_dict(sched)
    data_rng.bit_generator.state = data_state
    mt.set_rng_state(model_state)
    return step, losses, evals


# ---- progress -------------------------------------------------------------------------------------

class Progress:
    """A live bar on a terminal (tqdm when installed), plain lines otherwise (logs, CI, pipes)."""

    def __init__(self, total: int, start: int, stream: TextIO | None = None, every: int = 50) -> None:
        self.stream = stream or sys.stdout
        self.total, self.start_step, self.every = total, start, every
        self.t0 = time.perf_counter()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.bar, self.last_loss = None, float("nan")
        if self.tty:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, initial=start, file=self.stream, unit="step", dynamic_ncols=True)
            except ImportError:
                pass

    def update(self, step: int, loss: float) -> None:
        self.last_loss = loss
        done = step - self.start_step
        rate = done / max(time.perf_counter() - self.t0, 1e-9)
        eta = (self.total - step) / rate if rate > 0 else float("inf")
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(loss=f"{loss:.4f}")
        elif self.tty:
            width = 30
            filled = int(width * step / self.total)
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] step {step}/{self.total} "
                              f"loss {loss:.4f} {rate:.1f} steps/s ETA {_fmt_time(eta)}   ")
            self.stream.flush()
        elif step % self.every == 0 or step == self.total:
            self.stream.write(f"step {step}/{self.total}  loss {loss:.4f}  {rate:.1f} steps/s  ETA {_fmt_time(eta)}\n")
            self.stream.flush()

    def note(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text)
        else:
            self.stream.write(("\n" if self.tty else "") + text + "\n")
            self.stream.flush()

    def close(self, step: int) -> None:
        """End the bar at `step`: where training stopped, which is the whole bar when it stopped early."""
        if self.bar is not None:
            self.bar.total = step
            self.bar.refresh()
            self.bar.close()
        elif self.tty:
            self.total = step
            self.update(step, self.last_loss)
            self.stream.write("\n")


def _fmt_time(seconds):
    if not math.isfinite(seconds):
        return "?"
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


# ---- the run --------------------------------------------------------------------------------------

def train(cfg: Config, stream: TextIO | None = None) -> dict[str, Any]:
    """Train per `cfg`; return a dict with the results (also printed as a report)."""
    stream = stream or sys.stdout
    os.makedirs(cfg.out, exist_ok=True)
    ckpt_path = os.path.join(cfg.out, CHECKPOINT)
    task, model, optimizer, scheduler = build(cfg)
    data_rng = np.random.default_rng(cfg.seed)
    step = 0
    losses: list[float] = []
    evals: list[dict[str, Any]] = []
    if cfg.resume:
        if not os.path.exists(ckpt_path):
            raise CheckpointError(f"--resume: no checkpoint at {ckpt_path}; run without --resume to start fresh")
        step, losses, evals = load_checkpoint(ckpt_path, cfg, model, optimizer, scheduler, data_rng)
        stream.write(f"resumed from {ckpt_path} at step {step}\n")
    distinct, draws = heldout_sets(task, cfg.eval_n)
    n_params = sum(p.numel() for p in model.parameters())
    stream.write(f"task: {task.describe()}\nmodel: {cfg.layers} layers, {cfg.heads} heads, d_model {cfg.d_model}, "
                 f"{n_params:,} parameters\nheld-out: {len(distinct)} distinct prompts, {len(draws)} draws\n"
                 f"BLAS threads: {blas_threads()}\n")
    t0, first = time.perf_counter(), step
    progress = Progress(cfg.steps, step, stream)
    perfect = bool(evals and evals[-1]["distinct"] == 1.0 and evals[-1]["draws"] == 1.0)
    model.train()
    while step < cfg.steps and not (perfect and cfg.stop_when_perfect):
        x, y = task.batch(cfg.batch, data_rng)
        losses.append(train_step(model, optimizer, scheduler, x, y, cfg.clip))
        step += 1
        progress.update(step, losses[-1])
        if step % cfg.eval_every == 0 or step == cfg.steps:
            acc_d, acc_n = record_eval(evals, step, model, task, distinct, draws)
            progress.note(f"step {step}: held-out exact match {100 * acc_n:.2f}% of {len(draws)} draws, "
                          f"{100 * acc_d:.2f}% of {len(distinct)} distinct prompts")
            perfect = acc_d == 1.0 and acc_n == 1.0
        if step % cfg.checkpoint_every == 0 or perfect or step == cfg.steps:
            save_checkpoint(ckpt_path, cfg, model, optimizer, scheduler, step, losses, data_rng, evals)
    progress.close(step)
    wall, ran = time.perf_counter() - t0, step - first
    if not evals or evals[-1]["step"] != step:
        record_eval(evals, step, model, task, distinct, draws)
        save_checkpoint(ckpt_path, cfg, model, optimizer, scheduler, step, losses, data_rng, evals)
    final = evals[-1]
    files = [ckpt_path]
    if cfg.pictures:
        files += pictures.draw(model, task, pictures.telling_example(distinct), losses, cfg.out, stream)
    result = {
        "steps": step, "wall_time": wall, "heldout_exact_match": final["draws"],
        "heldout_distinct_exact_match": final["distinct"], "heldout_draws": len(draws),
        "heldout_distinct": len(distinct), "parameters": n_params, "final_loss": losses[-1] if losses else None,
        "files": files,
    }
    stream.write(
        "\n== report ==\n"
        f"task            {cfg.task}\n"
        f"steps           {step}{f' ({ran} in this run, resumed at step {first})' if first else ''}\n"
        f"wall time       {wall:.1f} s ({ran / max(wall, 1e-9):.1f} steps/s)\n"
        f"parameters      {n_params:,}\n"
        f"final loss      {'-' if result['final_loss'] is None else format(result['final_loss'], '.4f')}\n"
        f"held-out exact match: {100 * final['draws']:.2f}% of {len(draws)} held-out sequences "
        f"({100 * final['distinct']:.2f}% of all {len(distinct)} distinct held-out prompts)\n"
        f"files           {', '.join(files)}\n"
    )
    return result


def _at_least(low, kind=int):
    """An argparse type: a number of `kind` that is at least `low` (a one-line error otherwise)."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a{'n integer' if kind is int else ' number'}, got {text!r}")
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value
    parse.__name__ = kind.__name__  # what argparse calls the type in its messages
    return parse


def blas_threads() -> str:
    """The BLAS thread count this process asked for (numpy read it when it loaded)."""
    return os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "BLAS's default"


def parser() -> argparse.ArgumentParser:
    """The command line of the trainer: every option with its default in --help, each value checked."""
    d = Config()
    ap = argparse.ArgumentParser(
        prog="python -m attention" if sys.argv[0].endswith("__main__.py") else None,
        description="Train a tiny decoder-only transformer on a toy task (CPU, numpy).")
    pos, count, rate = _at_least(1), _at_least(0), _at_least(0.0, float)

    def option(flag, what, **kw):
        ap.add_argument(flag, help=f"{what} (default: {kw['default']})", **kw)

    option("--task", "what the model learns", default=d.task, choices=sorted(TASKS))
    option("--layers", "transformer blocks", type=pos, default=d.layers)
    option("--heads", "attention heads per block (must divide --d-model)", type=pos, default=d.heads)
    option("--d-model", "width of the residual stream", type=pos, default=d.d_model)
    option("--dropout", "dropout probability, below 1", type=rate, default=d.dropout)
    option("--steps", "maximum steps (stops early at 100%% held-out)", type=pos, default=d.steps)
    option("--batch", "sequences per step", type=pos, default=d.batch)
    option("--lr", "AdamW's learning rate", type=rate, default=d.lr)
    option("--weight-decay", "AdamW's decay on Linear weights", type=rate, default=d.weight_decay)
    option("--clip", "gradient norm clipping (0: none)", type=rate, default=d.clip)
    option("--warmup", "steps of linear learning-rate warmup", type=count, default=d.warmup)
    option("--schedule", "learning-rate schedule", default=d.schedule, choices=["constant", "cosine"])
    option("--seed", "seed of the weights, dropout and batches", type=count, default=d.seed)
    option("--eval-every", "steps between held-out evaluations", type=pos, default=d.eval_every)
    option("--eval-n", "held-out sequences drawn per evaluation", type=pos, default=d.eval_n)
    option("--checkpoint-every", "steps between checkpoints", type=pos, default=d.checkpoint_every)
    ap.add_argument("--no-early-stop", dest="stop_when_perfect", action="store_false",
                    help="run all --steps even once held-out exact match is perfect")
    ap.add_argument("--no-pictures", dest="pictures", action="store_false",
                    help="skip the attention maps and the loss curve")
    ap.add_argument("--out", default=None, help="folder for checkpoint and pictures (default: runs/<task>)")
    ap.add_argument("--resume", action="store_true", help="continue from the checkpoint in --out")
    ap.add_argument("--threads", type=pos, default=None,
                    help="BLAS threads (default: 1, or OPENBLAS_NUM_THREADS if you set it)")
    return ap


def parse_args(argv: Sequence[str] | None = None) -> Config:
    ap = parser()
    a = ap.parse_args(argv)
    if a.d_model % a.heads:
        ap.error(f"argument --heads: {a.heads} heads don't divide --d-model {a.d_model}")
    if a.dropout >= 1:
        ap.error(f"argument --dropout: must be below 1, got {a.dropout}")
    fields = {f.name for f in dataclasses.fields(Config)}
    return Config(**{k: v for k, v in vars(a).items() if k in fields and v is not None})


def command(argv: Sequence[str] | None = None) -> int:
    """`python -m attention`, the `attention-train` command and examples/train_toy_model.py.

    BLAS reads its thread count once, when numpy loads, and numpy is loaded by the time this runs.
    So when the count asked for (--threads, else OPENBLAS_NUM_THREADS if set, else 1) is not the
    one this process has, it starts the same command again with the count set, once."""
    argv = sys.argv[1:] if argv is None else list(argv)
    threads = parser().parse_known_args(argv)[0].threads
    want = str(threads) if threads else os.environ.get("OPENBLAS_NUM_THREADS") or "1"
    if os.environ.get("OPENBLAS_NUM_THREADS") != want and not os.environ.get(_RESTARTED):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=want, OMP_NUM_THREADS=want, MKL_NUM_THREADS=want, **{_RESTARTED: "1"})
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    return main(argv)


_RESTARTED = "ATTENTION_TRAIN_RESTARTED"  # set in the restarted process, so it never restarts again


def main(argv: Sequence[str] | None = None) -> int:
    cfg = parse_args(argv)
    # A training run owns its process: keep freed arrays for reuse (see minitensor.tune_malloc)
    mt.tune_malloc()
    try:
        train(cfg)
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0

