"""How the trainer scores its model on held-out data, and the samples of text a chars model writes.

Two kinds of task, two evaluators with one interface (`evaluator` picks):
  - `ExactMatch` (the toy tasks): greedy answers to held-out prompts, scored right or wrong; a
    perfect score ends the run early;
  - `HeldoutLoss` (chars): the mean cross-entropy on the held-out end of the text, and bits per
    character; no score is perfect, so the run trains for all its steps.
Each turns a model into a record (a dict, saved in checkpoints) and a record into the lines the
run prints.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence, TextIO

import numpy as np
from numpy.typing import NDArray

import minitensor as mt
import minitensor.nn.functional as F

from . import pictures
from .chars import CharsTask
from .lm import DecoderLM, greedy_answers
from .tasks import Task
from .trainer_config import Config, prompt_ids


def evaluate(model: DecoderLM, task: Task, prompts: NDArray[np.int64]) -> float:
    was_training = model.training
    model.eval()
    answers = greedy_answers(model, task, prompts)
    model.train(was_training)
    return task.exact_match(prompts, answers)


def heldout_loss(model: DecoderLM, x: NDArray[np.int64], y: NDArray[np.int64], batch: int = 64) -> float:
    """Mean cross-entropy (nats) of the model's next-token predictions on windows x -> targets y."""
    was_training = model.training
    model.eval()
    total = 0.0
    with mt.no_grad():
        for i in range(0, len(x), batch):
            logits = model(mt.from_numpy(x[i:i + batch]))
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), mt.from_numpy(y[i:i + batch].reshape(-1)),
                                     reduction="sum").item()
    model.train(was_training)
    return total / y.size


def heldout_sets(task: Task, n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """All distinct held-out prompts (or a fixed sample of them), and `n` fixed draws from that split."""
    distinct = task.heldout_prompts()
    draws = task.sample_prompts(n, np.random.default_rng(12345), split="heldout")
    return distinct, draws


class ExactMatch:
    """The toy tasks' evaluation: greedy answers to every distinct held-out prompt and to `n` draws."""

    keys = {"step", "distinct", "draws"}

    def __init__(self, task: Task, n: int) -> None:
        self.task = task
        self.distinct, self.draws = heldout_sets(task, n)

    def describe(self) -> str:
        return f"held-out: {len(self.distinct)} distinct prompts, {len(self.draws)} draws"

    def __call__(self, model: DecoderLM, step: int) -> dict[str, Any]:
        return {"step": step, "distinct": evaluate(model, self.task, self.distinct),
                "draws": evaluate(model, self.task, self.draws)}

    def perfect(self, record: dict[str, Any]) -> bool:
        return record["distinct"] == 1.0 and record["draws"] == 1.0

    def line(self, r: dict[str, Any]) -> str:
        return (f"held-out exact match {100 * r['draws']:.2f}% of {len(self.draws)} draws, "
                f"{100 * r['distinct']:.2f}% of {len(self.distinct)} distinct prompts")

    def report(self, r: dict[str, Any]) -> str:
        return (f"held-out exact match: {100 * r['draws']:.2f}% of {len(self.draws)} held-out sequences "
                f"({100 * r['distinct']:.2f}% of all {len(self.distinct)} distinct held-out prompts)\n")

    def result(self, r: dict[str, Any]) -> dict[str, Any]:
        return {"heldout_exact_match": r["draws"], "heldout_distinct_exact_match": r["distinct"],
                "heldout_draws": len(self.draws), "heldout_distinct": len(self.distinct)}

    def draw(self, model: DecoderLM, losses: Sequence[float], out_dir: str, stream: TextIO,
             evals: Sequence[dict[str, Any]] = ()) -> list[str]:
        return pictures.draw(model, self.task, pictures.telling_example(self.distinct), losses, out_dir, stream,
                             evals=evals)


class HeldoutLoss:
    """The chars task's evaluation: mean cross-entropy on the held-out text, and bits per character.

    It scores the same fixed windows every time (at most `n` of them), so evaluations compare."""

    keys = {"step", "loss", "bpc"}

    def __init__(self, task: CharsTask, n: int) -> None:
        self.task = task
        self.x, self.y = task.heldout_windows(n)

    def describe(self) -> str:
        return (f"held-out: the last {len(self.task.heldout_ids):,} characters, {self.y.size:,} of them scored "
                f"({len(self.x)} windows of {self.task.block_size})")

    def __call__(self, model: DecoderLM, step: int) -> dict[str, Any]:
        loss = heldout_loss(model, self.x, self.y)
        return {"step": step, "loss": loss, "bpc": loss / math.log(2)}

    def perfect(self, record: dict[str, Any]) -> bool:
        return False  # no loss is perfect: a text model trains for all --steps

    def line(self, r: dict[str, Any]) -> str:
        return f"held-out loss {r['loss']:.4f} ({r['bpc']:.3f} bits per character)"

    def report(self, r: dict[str, Any]) -> str:
        return (f"held-out loss   {r['loss']:.4f} nats = {r['bpc']:.3f} bits per character "
                f"({self.y.size:,} held-out characters)\n")

    def result(self, r: dict[str, Any]) -> dict[str, Any]:
        return {"heldout_loss": r["loss"], "heldout_bpc": r["bpc"], "heldout_chars": int(self.y.size)}

    def draw(self, model: DecoderLM, losses: Sequence[float], out_dir: str, stream: TextIO,
             evals: Sequence[dict[str, Any]] = ()) -> list[str]:
        return pictures.draw_text(model, self.task, losses, out_dir, stream, evals=evals)


def evaluator(task: Task | CharsTask, n: int) -> ExactMatch | HeldoutLoss:
    return HeldoutLoss(task, n) if isinstance(task, CharsTask) else ExactMatch(task, n)


# ---- samples of text ------------------------------------------------------------------------------

def sample_text(model: DecoderLM, chars: Sequence[str], cfg: Config) -> str:
    """`cfg.sample` characters the model writes after the prompt, drawn from a generator seeded with
    `cfg.seed`: the same text for the same weights, whatever ran before."""
    prompt = prompt_ids(cfg, chars)
    out = model.generate(mt.tensor([prompt], dtype=mt.int64), cfg.sample, temperature=cfg.temperature,
                         top_k=cfg.top_k, generator=mt.Generator().manual_seed(cfg.seed))
    return "".join(chars[i] for i in out[0, len(prompt):].tolist())


def show_sample(write: Callable[[str], object], text: str, step: int | None = None) -> None:
    where = "after training" if step is None else f"at step {step}"
    write(f"--- sample {where} ({len(text)} characters) ---\n{text}\n---")
