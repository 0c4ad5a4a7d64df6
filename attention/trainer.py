"""Train the tiny decoder-only transformer on a toy task or on a text: progress, held-out evaluation,
checkpoints, exact resume, samples of generated text, attention maps and a loss curve.

This module is the training itself, to read top to bottom: `build` makes the task, model, optimizer
and schedule, `train_step` is one step, and `train` is the loop. Its collaborators each have a
module of their own:
  - trainer_config.py      the settings, their defaults (per task) and the checks on them;
  - trainer_eval.py        held-out evaluation, and samples of text;
  - trainer_checkpoint.py  saving, validating and resuming a checkpoint;
  - trainer_report.py      the header, the progress bar and the final report;
  - trainer_cli.py         the command line.

Everything random comes from two seeded generators (minitensor's global one for initialisation and
dropout, a numpy one for the batches), and both are saved in every checkpoint, so a resumed run
continues bit for bit where the interrupted one stopped. Samples of text draw from a third, private
generator seeded afresh for each sample, so printing them changes nothing in the run.

Two kinds of task, two kinds of evaluation:
  - the toy tasks (sort, reverse, copy, add): held-out exact match of greedy answers; the run
    stops once it is perfect;
  - chars (a character-level language model of a text file): held-out loss and bits per character,
    for all --steps; --sample N prints N generated characters at each evaluation and at the end.
"""
from __future__ import annotations

import dataclasses
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

from .chars import CharsTask
from .fast import Replay  # the speed layer: the replayed step, and the fused attention's numpy backwards
from .lm import DecoderLM
from .tasks import Task
from .trainer_checkpoint import CHECKPOINT, load_chars_model, load_checkpoint, save_checkpoint
from .trainer_cli import parse_args, parser, restart_for_blas_threads
from .trainer_config import (
    PER_TASK,
    TASK_DEFAULTS,
    CommandError,
    Config,
    make_task,
    prompt_ids,
    prompt_of,
    task_defaults,
)
from .trainer_eval import (
    ExactMatch,
    HeldoutLoss,
    evaluate,
    evaluator,
    heldout_loss,
    heldout_sets,
    sample_text,
    show_sample,
)
from .trainer_report import Progress, blas_threads, header, report

# What `from attention.trainer import ...` found here before the trainer was split into modules
# (tests, notebooks, benchmarks and the console script attention.trainer:command use these names)
__all__ = [
    "TASK_DEFAULTS", "task_defaults", "PER_TASK", "Config", "CHECKPOINT", "make_task", "build", "lr_factor",
    "model_loss", "train_step", "evaluate", "heldout_loss", "heldout_sets", "ExactMatch", "HeldoutLoss", "evaluator",
    "CommandError", "CheckpointError", "prompt_of", "prompt_ids", "sample_text", "save_checkpoint", "load_checkpoint",
    "Progress", "train", "generate_only", "blas_threads", "parser", "parse_args", "command", "main",
    "TrainingDiverged",
]


class TrainingDiverged(RuntimeError):
    """The loss (or a weight) stopped being a finite number: the run stops there, keeping the last
    checkpoint it wrote, which is finite (`error: ...`, exit status 1, on the command line)."""


def build(cfg: Config) -> tuple[Task | CharsTask, DecoderLM, mt.optim.AdamW, mt.optim.lr_scheduler.LambdaLR]:
    """Task, model and optimizer for `cfg`, initialised from its seed."""
    task = make_task(cfg)
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


def model_loss(model: DecoderLM, x: NDArray[np.int64], y: NDArray[np.int64]) -> mt.Tensor:
    """The mean cross-entropy of the model's next-token logits on windows x (B, T) against targets y (B, T)."""
    logits = model(mt.from_numpy(x))                                              # (B, T, vocab)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), mt.from_numpy(y.reshape(-1)))


def train_step(model: DecoderLM, optimizer: mt.optim.Optimizer, scheduler: mt.optim.lr_scheduler.LRScheduler,
               x: NDArray[np.int64], y: NDArray[np.int64], clip: float, replay: Replay | None = None) -> float:
    """One step of training on the batch x -> y: gradients, clipping, the optimizer and the schedule.
    With `replay` (a `minitensor.fast.Replay` of `model_loss`), its forward and backward are that
    replay's: the same numbers, bit for bit, with less bookkeeping per op."""
    optimizer.zero_grad(set_to_none=True)
    if replay is None:
        loss = model_loss(model, x, y)
        loss.backward()
    else:
        loss = replay(x, y)
    if clip:
        mt.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    scheduler.step()
    return loss.item()


def _finite(model: DecoderLM) -> bool:
    return all(bool(np.isfinite(p.numpy(force=True)).all()) for p in model.parameters())


def _diverged(cfg: Config, step: int, what: str, saved: int | None, ckpt_path: str) -> TrainingDiverged:
    kept = (f"the last checkpoint, {ckpt_path} at step {saved}, is kept (finite)" if saved is not None
            else "no checkpoint was written")
    return TrainingDiverged(f"{what} at step {step}: training diverged, so it stops here. Try a lower --lr "
                            f"(this run's is {cfg.lr:g}); {kept}")


def train(cfg: Config, stream: TextIO | None = None) -> dict[str, Any]:
    """Train per `cfg`; return a dict with the results (also printed as a report).

    A loss or a weight that is no longer a finite number stops the run (TrainingDiverged) before
    anything non-finite is saved. The folder `cfg.out` is made when the first checkpoint is
    written, so a run that fails before that leaves no empty folder behind."""
    stream = stream or sys.stdout
    made_out = not os.path.exists(cfg.out)
    try:
        return _train(cfg, stream)
    finally:
        if made_out and os.path.isdir(cfg.out) and not os.listdir(cfg.out):
            os.rmdir(cfg.out)  # a run that failed before writing anything leaves nothing behind


def _train(cfg: Config, stream: TextIO) -> dict[str, Any]:
    ckpt_path = os.path.join(cfg.out, CHECKPOINT)
    task, model, optimizer, scheduler = build(cfg)
    vocab = task.chars if isinstance(task, CharsTask) else None
    scorer = evaluator(task, cfg.eval_n)
    data_rng = np.random.default_rng(cfg.seed)  # the batches' generator (minitensor's seeds weights and dropout)
    step = 0
    losses: list[float] = []
    evals: list[dict[str, Any]] = []
    saved: int | None = None  # the step of the last checkpoint written or resumed from
    if cfg.resume:
        if not os.path.exists(ckpt_path):
            raise CheckpointError(f"--resume: no checkpoint at {ckpt_path}; run without --resume to start fresh")
        step, losses, evals = load_checkpoint(ckpt_path, cfg, model, optimizer, scheduler, data_rng, vocab, scorer.keys)
        saved = step
        stream.write(f"resumed from {ckpt_path} at step {step}\n")
    if cfg.sample:
        prompt_ids(cfg, vocab)  # a bad --prompt, or a toy task, stops the run before it starts, not after it
    n_params = sum(p.numel() for p in model.parameters())
    perfect = bool(evals and scorer.perfect(evals[-1]))
    if cfg.resume and (step >= cfg.steps or (perfect and cfg.stop_when_perfect)):
        return _finished(cfg, stream, scorer, evals, losses, step, n_params, ckpt_path)
    stream.write(header(cfg, task, scorer, n_params))
    t0, first = time.perf_counter(), step
    progress = Progress(cfg.steps, step, stream, eval_every=cfg.eval_every,
                        may_stop_early=cfg.stop_when_perfect and not isinstance(task, CharsTask))

    def save() -> None:
        nonlocal saved
        if not _finite(model):  # a finite loss from weights that the last update made inf or nan
            progress.close(step)
            raise _diverged(cfg, step, "a weight is no longer a finite number after the update", saved, ckpt_path)
        os.makedirs(cfg.out, exist_ok=True)
        save_checkpoint(ckpt_path, cfg, model, optimizer, scheduler, step, losses, data_rng, evals, vocab)
        saved = step

    model.train()
    # the speed layer records the first step's ops and replays them for every later batch: the same numbers
    replay = Replay(lambda x, y: model_loss(model, x, y), names=dict(model.named_parameters())) if cfg.replay else None
    while step < cfg.steps and not (perfect and cfg.stop_when_perfect):  # a toy task stops once it is perfect
        x, y = task.batch(cfg.batch, data_rng)
        loss = train_step(model, optimizer, scheduler, x, y, cfg.clip, replay)
        if not math.isfinite(loss):  # nothing of this step is kept: the last checkpoint stays the last finite one
            progress.close(step)
            raise _diverged(cfg, step + 1, f"the loss is {loss}", saved, ckpt_path)
        losses.append(loss)
        step += 1
        progress.update(step, losses[-1])
        if step % cfg.eval_every == 0 or step == cfg.steps:
            started = time.perf_counter()
            evals.append(scorer(model, step))
            progress.note(f"step {step}: {scorer.line(evals[-1])}")
            perfect = scorer.perfect(evals[-1])
            if cfg.sample and vocab is not None and step < cfg.steps:  # the last one is printed after training
                show_sample(progress.note, sample_text(model, vocab, cfg), step)
            progress.evaluated(time.perf_counter() - started)
        if step % cfg.checkpoint_every == 0 or perfect or step == cfg.steps:  # the last step is always saved
            save()
    progress.close(step)
    wall = time.perf_counter() - t0
    if not evals or evals[-1]["step"] != step:
        evals.append(scorer(model, step))
        save()
    sample = sample_text(model, vocab, cfg) if cfg.sample and vocab is not None else None
    if sample is not None:
        show_sample(lambda text: stream.write(text + "\n"), sample)
    files = [ckpt_path] + (scorer.draw(model, losses, cfg.out, stream, evals) if cfg.pictures else [])
    result = {"steps": step, "wall_time": wall, **scorer.result(evals[-1]), "parameters": n_params,
              "final_loss": losses[-1] if losses else None, "sample": sample, "files": files}
    stream.write(report(cfg, result, scorer.report(evals[-1]), resumed_at=first))
    return result


def _finished(cfg: Config, stream: TextIO, scorer: ExactMatch | HeldoutLoss, evals: list[dict[str, Any]],
              losses: list[float], step: int, n_params: int, ckpt_path: str) -> dict[str, Any]:
    """--resume of a run that has nothing left to train: say so, and report where it ended."""
    if step >= cfg.steps:
        why, more = f"it ran all {cfg.steps} --steps", "raise --steps"
    else:
        why, more = "held-out exact match is perfect", "pass --no-early-stop"
    stream.write(f"nothing to train: the run in {cfg.out} finished at step {step} ({why}); {more} to train "
                 "it further\n")
    if not evals or evals[-1]["step"] != step:  # (a checkpoint always ends on an evaluation; an old one may not)
        return {"steps": step, "wall_time": 0.0, "parameters": n_params, "files": [ckpt_path],
                "final_loss": losses[-1] if losses else None, "sample": None}
    result = {"steps": step, "wall_time": 0.0, **scorer.result(evals[-1]), "parameters": n_params,
              "final_loss": losses[-1] if losses else None, "sample": None, "files": [ckpt_path]}
    stream.write(report(cfg, result, scorer.report(evals[-1]), resumed_at=step))
    return result


def generate_only(cfg: Config, stream: TextIO | None = None) -> str:
    """Print `cfg.sample` characters from the chars model saved in `cfg.out`: no data file, no training.

    The checkpoint brings the architecture and the vocabulary; `cfg` brings the sampling settings
    (--sample, --prompt, --temperature, --top-k, --seed). Returns the printed text."""
    stream = stream or sys.stdout
    path = os.path.join(cfg.out, CHECKPOINT)
    if not os.path.exists(path):
        raise CheckpointError(f"--generate-only: no checkpoint at {path}; train a --task chars model there first")
    model, chars = load_chars_model(path)
    if not cfg.sample:  # --task was left at a toy task's default of no samples
        cfg = dataclasses.replace(cfg, sample=TASK_DEFAULTS["chars"]["sample"])
    text = prompt_of(cfg, chars) + sample_text(model, chars, cfg)
    stream.write(text + ("" if text.endswith("\n") else "\n"))
    return text


def main(argv: Sequence[str] | None = None) -> int:
    cfg = parse_args(argv)
    try:
        if cfg.generate_only:
            generate_only(cfg)
        else:
            # A training run owns its process: keep freed arrays for reuse (see minitensor.tune_malloc)
            mt.tune_malloc()
            train(cfg)
    except (CheckpointError, CommandError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except TrainingDiverged as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


def command(argv: Sequence[str] | None = None) -> int:
    """`python -m attention`, the `attention-train` command and examples/train_toy_model.py: `main`,
    in a process whose BLAS runs on the thread count asked for (see trainer_cli.restart_for_blas_threads)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    restart_for_blas_threads(argv)
    return main(argv)
