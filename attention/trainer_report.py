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
    """A live bar on a terminal (tqdm when installed), plain lines otherwise (logs, CI, pipes).

    Its ETA counts the steps left at the rate of the training steps alone, plus the evaluations
    left (every `eval_every` steps and at the last one) at the time the evaluations took so far.
    With `may_stop_early` (a toy task stops once held-out is perfect) it is an upper bound, and
    says "at most"."""

    def __init__(self, total: int, start: int, stream: TextIO | None = None, every: int = 50,
                 eval_every: int | None = None, may_stop_early: bool = False) -> None:
        self.stream = stream or sys.stdout
        self.total, self.start_step, self.every = total, start, every
        self.eval_every, self.may_stop_early = eval_every, may_stop_early
        self.t0 = time.perf_counter()
        self.eval_seconds, self.n_evals = 0.0, 0
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.bar, self.last_loss, self.closed = None, float("nan"), False
        if self.tty:
            try:
                from tqdm import tqdm

                # tqdm's own estimate would assume every step is trained and none is evaluated: ours is shown
                self.bar = tqdm(total=total, initial=start, file=self.stream, unit="step", dynamic_ncols=True,
                                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}{postfix}]")
            except ImportError:
                pass

    def evaluated(self, seconds: float) -> None:
        """An evaluation (with its sample, if any) took `seconds`: kept out of the step rate, and
        counted once per evaluation left in the ETA."""
        self.eval_seconds += seconds
        self.n_evals += 1

    def _evals_left(self, step: int) -> int:
        if not self.eval_every:
            return 0
        return self.total // self.eval_every - step // self.eval_every + (1 if self.total % self.eval_every else 0)

    def eta(self, step: int) -> str:
        """The time left as text: '1m20s', 'at most 1m20s' (a run that may stop early), '?' (unknown yet)."""
        done = step - self.start_step
        training = time.perf_counter() - self.t0 - self.eval_seconds
        if done <= 0 or training <= 0:
            return "?"
        left = (self.total - step) * training / done
        evals = self._evals_left(step)
        if evals and self.n_evals:
            left += evals * self.eval_seconds / self.n_evals
        text = _fmt_time(left) + (" + evaluations" if evals and not self.n_evals else "")
        return f"at most {text}" if self.may_stop_early and step < self.total else text

    def update(self, step: int, loss: float) -> None:
        self.last_loss = loss
        done = step - self.start_step
        rate = done / max(time.perf_counter() - self.t0, 1e-9)
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix_str(f"loss={loss:.4f}, ETA {self.eta(step)}")
        elif self.tty:
            width = 30
            filled = int(width * step / self.total)
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] step {step}/{self.total} "
                              f"loss {loss:.4f} {rate:.1f} steps/s ETA {self.eta(step)}   ")
            self.stream.flush()
        elif step % self.every == 0 or step == self.total:
            self.stream.write(f"step {step}/{self.total}  loss {loss:.4f}  {rate:.1f} steps/s  "
                              f"ETA {self.eta(step)}\n")
            self.stream.flush()

    def note(self, text: str) -> None:
        if self.bar is not None:
            self.bar.write(text)
        else:
            self.stream.write(("\n" if self.tty else "") + text + "\n")
            self.stream.flush()

    def close(self, step: int) -> None:
        """End the bar at `step`: where training stopped, which is the whole bar when it stopped early."""
        if self.closed:
            return
        self.closed = True
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
