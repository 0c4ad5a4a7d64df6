"""What a training run prints: the header (task, model, held-out set, BLAS threads), the progress
as it trains (a live bar on a terminal, plain lines in a log), and the report at the end.
"""
from __future__ import annotations

import math
import os
import sys
import time
from typing import Any, TextIO

from .chars import CharsTask
from .tasks import Task
from .trainer_config import Config
from .trainer_eval import ExactMatch, HeldoutLoss


def blas_threads() -> str:
    """The BLAS thread count this process asked for (numpy read it when it loaded)."""
    return os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "BLAS's default"


def header(cfg: Config, task: Task | CharsTask, scorer: ExactMatch | HeldoutLoss, n_params: int) -> str:
    """The lines a run starts with: what it learns, with what, scored on what, on how many threads."""
    return (f"task: {task.describe()}\nmodel: {cfg.layers} layers, {cfg.heads} heads, d_model {cfg.d_model}, "
            f"{n_params:,} parameters\n{scorer.describe()}\nBLAS threads: {blas_threads()}\n"
            f"steps: {'replayed (minitensor.fast.Replay; --no-replay for eager)' if cfg.replay else 'eager'}\n")


def report(cfg: Config, result: dict[str, Any], scores: str, resumed_at: int) -> str:
    """The report a run ends with, from `train`'s result; `scores` is the evaluator's lines on the
    final evaluation, and `resumed_at` the step this run started from (0 for a fresh one)."""
    step, wall, loss = result["steps"], result["wall_time"], result["final_loss"]
    ran = step - resumed_at
    return (
        "\n== report ==\n"
        f"task            {cfg.task}\n"
        f"steps           {step}{f' ({ran} in this run, resumed at step {resumed_at})' if resumed_at else ''}\n"
        f"wall time       {wall:.1f} s ({ran / max(wall, 1e-9):.1f} steps/s)\n"
        f"parameters      {result['parameters']:,}\n"
        f"final loss      {'-' if loss is None else format(loss, '.4f')}\n"
        f"{scores}"
        f"files           {', '.join(result['files'])}\n"
    )


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


def _fmt_time(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"
