"""Train the tiny decoder-only transformer on a toy task or on a text: progress, held-out evaluation,
checkpoints, exact resume, samples of generated text, attention maps and a loss curve.

`examples/train_toy_model.py` is the command-line face of `main()`. Everything random comes from
two seeded generators (minitensor's global one for initialisation and dropout, a numpy one for the
batches), and both are saved in every checkpoint, so a resumed run continues bit for bit where the
interrupted one stopped. Samples of text draw from a third, private generator seeded afresh for
each sample, so printing them changes nothing in the run.

Two kinds of task, two kinds of evaluation:
  - the toy tasks (sort, reverse, copy, add): held-out exact match of greedy answers; the run
    stops once it is perfect;
  - chars (a character-level language model of a text file): held-out loss and bits per character,
    for all --steps; --sample N prints N generated characters at each evaluation and at the end.
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
from typing import Any, Callable, Sequence, TextIO

import numpy as np
from numpy.typing import NDArray

import minitensor as mt
import minitensor.nn.functional as F
from minitensor.serialization import CheckpointError

from .chars import CharsTask
from .lm import DecoderLM, greedy_answers
from .tasks import TASKS, Task, get_task
from . import fast, pictures  # noqa: F401  (fast: the fused attention's numpy backwards, for training)

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


CHECKPOINT = "checkpoint.npz"


# ---- pieces ---------------------------------------------------------------------------------------

def make_task(cfg: Config) -> Task | CharsTask:
    """The task `cfg` names; chars reads its text file (the shipped one unless `cfg.data` names one)."""
    if cfg.task == "chars":
        return get_task("chars", path=cfg.data or None, block_size=cfg.block_size)
    return get_task(cfg.task)


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
               x: NDArray[np.int64], y: NDArray[np.int64], clip: float, replay: mt.fast.Replay | None = None) -> float:
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

    def draw(self, model: DecoderLM, losses: Sequence[float], out_dir: str, stream: TextIO) -> list[str]:
        return pictures.draw(model, self.task, pictures.telling_example(self.distinct), losses, out_dir, stream)


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

    def draw(self, model: DecoderLM, losses: Sequence[float], out_dir: str, stream: TextIO) -> list[str]:
        return pictures.draw_text(model, self.task, losses, out_dir, stream)


def evaluator(task: Task | CharsTask, n: int) -> ExactMatch | HeldoutLoss:
    return HeldoutLoss(task, n) if isinstance(task, CharsTask) else ExactMatch(task, n)


# ---- samples of text ------------------------------------------------------------------------------

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


def sample_text(model: DecoderLM, chars: Sequence[str], cfg: Config) -> str:
    """`cfg.sample` characters the model writes after the prompt, drawn from a generator seeded with
    `cfg.seed`: the same text for the same weights, whatever ran before."""
    prompt = prompt_ids(cfg, chars)
    out = model.generate(mt.tensor([prompt], dtype=mt.int64), cfg.sample, temperature=cfg.temperature,
                         top_k=cfg.top_k, generator=mt.Generator().manual_seed(cfg.seed))
    return "".join(chars[i] for i in out[0, len(prompt):].tolist())


def _show_sample(write: Callable[[str], object], text: str, step: int | None = None) -> None:
    where = "after training" if step is None else f"at step {step}"
    write(f"--- sample {where} ({len(text)} characters) ---\n{text}\n---")


# ---- checkpoints ----------------------------------------------------------------------------------

def save_checkpoint(path: str, cfg: Config, model: DecoderLM, optimizer: mt.optim.Optimizer,
                    scheduler: mt.optim.lr_scheduler.LRScheduler, step: int, losses: Sequence[float],
                    data_rng: np.random.Generator, evals: list[dict[str, Any]],
                    vocab: Sequence[str] | None = None) -> None:
    """Everything a resumed run needs; `vocab` (chars: the text's characters, in id order) too,
    so a resumed run or --generate-only maps ids to the same characters."""
    extra = {} if vocab is None else {"vocab": json.dumps(list(vocab))}
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
        **extra,
    }, path)


_ENTRIES = ("model", "optimizer", "scheduler", "step", "losses", "evals", "data_rng", "model_rng", "config")


def load_checkpoint(path: str, cfg: Config, model: DecoderLM, optimizer: mt.optim.Optimizer,
                    scheduler: mt.optim.lr_scheduler.LRScheduler, data_rng: np.random.Generator,
                    vocab: Sequence[str] | None = None,
                    eval_keys: set[str] = ExactMatch.keys) -> tuple[int, list[float], list[dict[str, Any]]]:
    """Restore everything a checkpoint holds; a bad file raises CheckpointError and changes nothing.

    Nothing is assigned until every entry has been read and has loaded into copies of the model,
    optimizer, scheduler and generators, so a file with a missing or mismatched piece leaves this
    run exactly as it was."""
    ck = mt.load(path)
    entries = _ENTRIES + (("vocab",) if vocab is not None else ())
    missing = [k for k in entries if k not in ck] if isinstance(ck, dict) else list(entries)
    if missing:
        raise CheckpointError(
            f"{path}: not a training checkpoint (missing {', '.join(missing)}); a bare model state_dict "
            "can be loaded with model.load_state_dict(minitensor.load(path))"
        )
    try:
        saved, sched, evals, data_state, model_state = (
            json.loads(ck[k]) for k in ("config", "scheduler", "evals", "data_rng", "model_rng"))
        for key in ("task", "layers", "heads", "d_model", "block_size"):
            if saved.get(key) != getattr(cfg, key):
                raise CheckpointError(
                    f"{path}: was written for --{key.replace('_', '-')} {saved.get(key)}, but this run asks for "
                    f"{getattr(cfg, key)}; use the same settings to resume, or another --out"
                )
        if vocab is not None and json.loads(ck["vocab"]) != list(vocab):
            raise CheckpointError(
                f"{path}: was trained on a text with other characters ({len(json.loads(ck['vocab']))} distinct; "
                f"this text has {len(vocab)}); resume with the same --data, or use another --out"
            )
        step, losses = int(ck["step"]), ck["losses"].numpy(force=True).astype(float).reshape(-1).tolist()
        if not all(isinstance(e, dict) and eval_keys <= set(e) for e in evals):
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
    vocab = task.chars if isinstance(task, CharsTask) else None
    scorer = evaluator(task, cfg.eval_n)
    data_rng = np.random.default_rng(cfg.seed)
    step = 0
    losses: list[float] = []
    evals: list[dict[str, Any]] = []
    if cfg.resume:
        if not os.path.exists(ckpt_path):
            raise CheckpointError(f"--resume: no checkpoint at {ckpt_path}; run without --resume to start fresh")
        step, losses, evals = load_checkpoint(ckpt_path, cfg, model, optimizer, scheduler, data_rng, vocab, scorer.keys)
        stream.write(f"resumed from {ckpt_path} at step {step}\n")
    if cfg.sample:
        prompt_ids(cfg, vocab)  # a bad --prompt, or a toy task, stops the run before it starts, not after it
    n_params = sum(p.numel() for p in model.parameters())
    stream.write(f"task: {task.describe()}\nmodel: {cfg.layers} layers, {cfg.heads} heads, d_model {cfg.d_model}, "
                 f"{n_params:,} parameters\n{scorer.describe()}\nBLAS threads: {blas_threads()}\n"
                 f"steps: {'replayed (minitensor.fast.Replay; --no-replay for eager)' if cfg.replay else 'eager'}\n")
    t0, first = time.perf_counter(), step
    progress = Progress(cfg.steps, step, stream)
    perfect = bool(evals and scorer.perfect(evals[-1]))

    def save():
        save_checkpoint(ckpt_path, cfg, model, optimizer, scheduler, step, losses, data_rng, evals, vocab)

    model.train()
    replay = mt.fast.Replay(lambda x, y: model_loss(model, x, y), names=dict(model.named_parameters())) if cfg.replay else None
    while step < cfg.steps and not (perfect and cfg.stop_when_perfect):
        x, y = task.batch(cfg.batch, data_rng)
        losses.append(train_step(model, optimizer, scheduler, x, y, cfg.clip, replay))
        step += 1
        progress.update(step, losses[-1])
        if step % cfg.eval_every == 0 or step == cfg.steps:
            evals.append(scorer(model, step))
            progress.note(f"step {step}: {scorer.line(evals[-1])}")
            perfect = scorer.perfect(evals[-1])
            if cfg.sample and vocab is not None and step < cfg.steps:  # the last one is printed after training
                _show_sample(progress.note, sample_text(model, vocab, cfg), step)
        if step % cfg.checkpoint_every == 0 or perfect or step == cfg.steps:
            save()
    progress.close(step)
    wall, ran = time.perf_counter() - t0, step - first
    if not evals or evals[-1]["step"] != step:
        evals.append(scorer(model, step))
        save()
    final = evals[-1]
    sample = sample_text(model, vocab, cfg) if cfg.sample and vocab is not None else None
    if sample is not None:
        _show_sample(lambda text: stream.write(text + "\n"), sample)
    files = [ckpt_path]
    if cfg.pictures:
        files += scorer.draw(model, losses, cfg.out, stream)
    result = {
        "steps": step, "wall_time": wall, **scorer.result(final), "parameters": n_params,
        "final_loss": losses[-1] if losses else None, "sample": sample, "files": files,
    }
    stream.write(
        "\n== report ==\n"
        f"task            {cfg.task}\n"
        f"steps           {step}{f' ({ran} in this run, resumed at step {first})' if first else ''}\n"
        f"wall time       {wall:.1f} s ({ran / max(wall, 1e-9):.1f} steps/s)\n"
        f"parameters      {n_params:,}\n"
        f"final loss      {'-' if result['final_loss'] is None else format(result['final_loss'], '.4f')}\n"
        f"{scorer.report(final)}"
        f"files           {', '.join(files)}\n"
    )
    return result


def generate_only(cfg: Config, stream: TextIO | None = None) -> str:
    """Print `cfg.sample` characters from the chars model saved in `cfg.out`: no data file, no training.

    The checkpoint brings the architecture and the vocabulary; `cfg` brings the sampling settings
    (--sample, --prompt, --temperature, --top-k, --seed). Returns the printed text."""
    stream = stream or sys.stdout
    path = os.path.join(cfg.out, CHECKPOINT)
    if not os.path.exists(path):
        raise CheckpointError(f"--generate-only: no checkpoint at {path}; train a --task chars model there first")
    ck = mt.load(path)
    if not isinstance(ck, dict) or "config" not in ck or "model" not in ck:
        raise CheckpointError(f"{path}: not a training checkpoint (no config or model entry)")
    try:
        saved = json.loads(ck["config"])
        if "vocab" not in ck:
            raise CommandError(f"{path}: holds a model of the {saved.get('task')!r} task; --generate-only writes "
                               "text with a --task chars model")
        chars = json.loads(ck["vocab"])
        model = DecoderLM(len(chars), saved["block_size"], n_layer=saved["layers"], n_head=saved["heads"],
                          d_model=saved["d_model"], fused=True)
        model.load_state_dict(ck["model"])
    except CommandError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, RuntimeError) as e:
        raise CheckpointError(f"{path}: does not hold a usable chars model ({type(e).__name__}: {e})") from e
    if not cfg.sample:  # --task was left at a toy task's default of no samples
        cfg = dataclasses.replace(cfg, sample=TASK_DEFAULTS["chars"]["sample"])
    text = prompt_of(cfg, chars) + sample_text(model, chars, cfg)
    stream.write(text + ("" if text.endswith("\n") else "\n"))
    return text


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
    d, toy, chars = Config(), TASK_DEFAULTS["toy"], TASK_DEFAULTS["chars"]
    ap = argparse.ArgumentParser(
        prog="python -m attention" if sys.argv[0].endswith("__main__.py") else None,
        description="Train a tiny decoder-only transformer on a toy task or on a text (CPU, numpy).")
    pos, count, rate = _at_least(1), _at_least(0), _at_least(0.0, float)

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
    per_task("--lr", "AdamW's learning rate", type=rate)
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
    if cfg.d_model % cfg.heads:
        ap.error(f"argument --heads: {cfg.heads} heads don't divide --d-model {cfg.d_model}")
    if cfg.dropout >= 1:
        ap.error(f"argument --dropout: must be below 1, got {cfg.dropout}")
    if cfg.task == "chars" and not cfg.generate_only:
        try:
            task = make_task(cfg)
        except OSError as e:
            ap.error(f"argument --data: cannot read {e.filename}: {e.strerror}")
        except ValueError as e:
            ap.error(f"argument --data: {e}")
        if cfg.sample and isinstance(task, CharsTask):
            try:
                prompt_ids(cfg, task.chars)
            except CommandError as e:
                ap.error(f"argument {e}")
    return cfg


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
    return 0

