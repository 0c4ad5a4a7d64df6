"""The trainer's settings: every option with its default, the defaults that depend on the task, and
the checks that refuse settings which can't run, before anything is built.

`Config` is what `attention.trainer.train` reads. The command line (attention/trainer_cli.py) fills
one from its flags and checks each value on its own (a count is at least 1, a rate at least 0);
`check` then refuses the combinations, naming the option as the command line spells it.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Sequence

from .chars import CharsTask
from .tasks import Task, get_task

# The settings whose default depends on the task (None in Config until __post_init__ fills them):
# the toy tasks' are minGPT's sort demo; chars' a model that learns to write text resembling the
# shipped one in about a minute on one CPU thread.
TASK_DEFAULTS: dict[str, dict[str, Any]] = {
    "toy": dict(block_size=None, layers=3, heads=3, d_model=48, steps=2000, batch=64, lr=5e-4,
                warmup=0, schedule="constant", eval_every=100, sample=0),
    "chars": dict(block_size=64, layers=2, heads=4, d_model=64, steps=1500, batch=32, lr=1e-2,
                  warmup=100, schedule="cosine", eval_every=250, sample=200),
}


def task_defaults(task: str) -> dict[str, Any]:
    return TASK_DEFAULTS["chars" if task == "chars" else "toy"]


# The default of a field whose value is the task's (TASK_DEFAULTS), until __post_init__ fills it
# in; typed Any, so the field keeps the type it will hold
PER_TASK: Any = None


@dataclasses.dataclass
class Config:
    task: str = "sort"
    data: str = ""  # chars: the text file; "" means the one shipped in attention/data
    block_size: int | None = None  # chars: characters of context; a toy task's lengths set its own
    layers: int = PER_TASK
    heads: int = PER_TASK
    d_model: int = PER_TASK
    dropout: float = 0.0
    steps: int = PER_TASK  # toy tasks: an upper bound, training stops once held-out exact match is perfect
    batch: int = PER_TASK
    lr: float = PER_TASK
    beta1: float = 0.9
    beta2: float = 0.95
    weight_decay: float = 0.1
    clip: float = 1.0
    warmup: int = PER_TASK
    schedule: str = PER_TASK  # "constant" or "cosine" (decays to 10% of lr at `steps`)
    seed: int = 0
    eval_every: int = PER_TASK
    eval_n: int = 1000
    checkpoint_every: int = 100
    stop_when_perfect: bool = True
    out: str = ""  # "" means runs/<task>
    resume: bool = False
    pictures: bool = True
    sample: int = PER_TASK  # chars: characters of generated text printed at each evaluation and at the end
    temperature: float = 1.0  # of those samples (0: greedy)
    top_k: int | None = None  # of those samples (None: every character may be drawn)
    prompt: str | None = None  # the text samples continue; None: a newline (or the first character if none)
    generate_only: bool = False  # print a sample from the checkpoint in `out` instead of training
    replay: bool = True  # replay each step's forward from a recording (minitensor.fast.Replay): same numbers, faster

    def __post_init__(self) -> None:
        for key, value in task_defaults(self.task).items():
            if getattr(self, key) is None:
                setattr(self, key, value)
        if not self.out:
            self.out = os.path.join("runs", self.task)


def make_task(cfg: Config) -> Task | CharsTask:
    """The task `cfg` names; chars reads its text file (the shipped one unless `cfg.data` names one)."""
    if cfg.task == "chars":
        return get_task("chars", path=cfg.data or None, block_size=cfg.block_size)
    return get_task(cfg.task)


class CommandError(Exception):
    """A request the run can't carry out (for instance a --prompt with unknown characters): `error: ...`, exit 2."""


def prompt_of(cfg: Config, chars: Sequence[str]) -> str:
    """The text a sample continues: --prompt, else a newline (else the vocabulary's first character)."""
    if cfg.prompt is not None:
        return cfg.prompt
    return "\n" if "\n" in chars else chars[0]


def prompt_ids(cfg: Config, chars: Sequence[str] | None) -> list[int]:
    """The prompt's ids in the vocabulary `chars`, or a CommandError naming what is wrong with it."""
    if chars is None:
        raise CommandError(f"--sample: only --task chars writes text (the {cfg.task} task is scored by exact match)")
    prompt = prompt_of(cfg, chars)
    if not prompt:
        raise CommandError("--prompt: needs at least one character to continue")
    ids = {c: i for i, c in enumerate(chars)}
    unknown = sorted(set(prompt) - set(ids))
    if unknown:
        raise CommandError(f"--prompt: {prompt!r} has characters the model never saw: {''.join(unknown)!r}")
    return [ids[c] for c in prompt]


def check(cfg: Config) -> None:
    """Refuse settings that can't run together: a ValueError that names the option (`argument --heads: ...`).

    A chars run reads its text here, so an unreadable --data, or a --prompt with characters the text
    doesn't have, stops the command before any training."""
    if cfg.d_model % cfg.heads:
        raise ValueError(f"argument --heads: {cfg.heads} heads don't divide --d-model {cfg.d_model}")
    if cfg.dropout >= 1:
        raise ValueError(f"argument --dropout: must be below 1, got {cfg.dropout}")
    if cfg.lr * cfg.weight_decay >= 1:  # AdamW multiplies every decayed weight by 1 - lr * weight_decay a step
        raise ValueError(f"argument --weight-decay: lr * weight decay must be below 1 (each step multiplies the "
                         f"weights by 1 - lr * weight decay), got {cfg.lr:g} * {cfg.weight_decay:g}")
    if os.path.exists(cfg.out) and not os.path.isdir(cfg.out):
        raise ValueError(f"argument --out: {cfg.out} is a file, not a folder")
    if cfg.task == "chars" and not cfg.generate_only:
        try:
            task = make_task(cfg)
        except OSError as e:
            raise ValueError(f"argument --data: cannot read {e.filename}: {e.strerror}") from e
        except ValueError as e:
            raise ValueError(f"argument --data: {e}") from e
        if cfg.sample and isinstance(task, CharsTask):
            try:
                prompt_ids(cfg, task.chars)
            except CommandError as e:
                raise ValueError(f"argument {e}") from e
