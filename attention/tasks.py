"""Synthetic sequence tasks for training a tiny decoder-only transformer.

Each task maps a prompt of ``prompt_len`` tokens to an answer of ``answer_len``
tokens. The model sees ``concat(prompt, answer)[:-1]`` and is scored only on the
answer positions, as in minGPT's sort and adder demos.

Every prompt belongs to exactly one of two splits, ``'train'`` or ``'heldout'``,
decided by a fixed hash of its tokens. The split never depends on a seed, so no
amount of training-set sampling can ever leak a held-out prompt.

Pure numpy; randomness comes only from the ``np.random.Generator`` passed in.

The registry also names ``chars``, next-character prediction on a text (``attention.chars``):
no prompt and answer there, every position is a target, and the score is held-out loss.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .chars import CharsTask

IGNORE_INDEX = -100  # PyTorch's cross_entropy default ignore_index

# Prompt spaces up to this size are materialised, so sampling and the held-out
# listing are exact; bigger spaces fall back to rejection sampling.
_ENUMERATE_LIMIT = 500_000
# Up to this size the held-out count is still computed exactly, in chunks.
_COUNT_LIMIT = 1 << 24
_CHUNK = 1 << 18
# heldout_prompts() must not take an rng, yet needs a reproducible sample.
_HELDOUT_SAMPLE_SEED = 0

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_H0 = np.uint64(0x9E3779B97F4A7C15)


def _mix(z):
    # splitmix64 finaliser: a bijection on uint64 with good avalanche, so
    # neighbouring prompts land in unrelated splits.
    z = (z ^ (z >> 30)) * _M1
    z = (z ^ (z >> 27)) * _M2
    return z ^ (z >> 31)


def stable_hash(tokens: ArrayLike) -> NDArray[np.uint64]:
    """Hash each row of an int array to uint64, identically on every run and
    platform (unlike Python's salted ``hash``)."""
    tokens = np.asarray(tokens, dtype=np.int64)
    h = np.full(tokens.shape[0], _H0, dtype=np.uint64)
    for col in tokens.T:
        h = _mix(h ^ col.astype(np.uint64))
    return h


class Task:
    """Base class; subclasses set the sizes and implement ``answer``."""

    name = "task"
    _pools: dict[str, NDArray[np.int64]] | None
    _num_heldout: int | None

    def __init__(self, vocab_size: int, prompt_len: int, answer_len: int, heldout_fraction: float = 0.2) -> None:
        if not 0.0 < heldout_fraction < 1.0:
            raise ValueError(f"heldout_fraction must be in (0, 1), got {heldout_fraction}")
        self.vocab_size = int(vocab_size)
        self.prompt_len = int(prompt_len)
        self.answer_len = int(answer_len)
        self.block_size = self.prompt_len + self.answer_len - 1
        self.heldout_fraction = float(heldout_fraction)
        # Every sequence over the vocabulary is a valid prompt for these tasks.
        self.space_size = self.vocab_size ** self.prompt_len
        self._pools = None
        self._num_heldout = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()!r})"

    # -- to override -------------------------------------------------------
    def answer(self, prompts: ArrayLike) -> NDArray[np.int64]:
        """Correct answers, shape (N, answer_len)."""
        raise NotImplementedError

    def describe(self) -> str:
        return self.name

    # -- splits ------------------------------------------------------------
    def _check_prompts(self, prompts: ArrayLike) -> NDArray[np.int64]:
        prompts = np.asarray(prompts, dtype=np.int64)
        if prompts.ndim != 2 or prompts.shape[1] != self.prompt_len:
            raise ValueError(f"expected prompts of shape (N, {self.prompt_len}), got {prompts.shape}")
        return prompts

    def split_of(self, prompts: ArrayLike) -> NDArray[np.bool_]:
        """Boolean mask, True where a prompt is in the held-out split."""
        h = stable_hash(self._check_prompts(prompts))
        # Top 53 bits as a uniform float in [0, 1).
        return (h >> 11).astype(np.float64) * 2.0**-53 < self.heldout_fraction

    def _prompts_from_index(self, idx: ArrayLike) -> NDArray[np.int64]:
        # Base-vocab digits, most significant first, so index order is lexicographic.
        idx = np.asarray(idx, dtype=np.int64)
        powers = self.vocab_size ** np.arange(self.prompt_len - 1, -1, -1, dtype=np.int64)
        return (idx[:, None] // powers) % self.vocab_size

    def _enumerable(self):
        return self.space_size <= _ENUMERATE_LIMIT

    def _pool(self, split: str) -> NDArray[np.int64]:
        if self._pools is None:
            everything = self._prompts_from_index(np.arange(self.space_size))
            held = self.split_of(everything)
            self._pools = {"train": everything[~held], "heldout": everything[held]}
        return self._pools[split]

    def num_heldout(self) -> int:
        """Number of distinct held-out prompts: exact for spaces up to 2**24,
        otherwise the expected count."""
        if self._num_heldout is None:
            if self._enumerable():
                self._num_heldout = len(self._pool("heldout"))
            elif self.space_size <= _COUNT_LIMIT:
                self._num_heldout = sum(
                    int(self.split_of(self._prompts_from_index(np.arange(i, min(i + _CHUNK, self.space_size)))).sum())
                    for i in range(0, self.space_size, _CHUNK)
                )
            else:
                self._num_heldout = round(self.heldout_fraction * self.space_size)
        return self._num_heldout

    # -- sampling ----------------------------------------------------------
    def sample_prompts(self, n: int, rng: np.random.Generator, split: str = "train") -> NDArray[np.int64]:
        """``n`` prompts drawn uniformly from ``split``, shape (n, prompt_len)."""
        if split not in ("train", "heldout"):
            raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
        if self._enumerable():
            pool = self._pool(split)
            if len(pool) == 0:
                raise ValueError(f"{self.name}: the {split} split is empty")
            return pool[rng.integers(0, len(pool), size=n)]
        want_heldout = split == "heldout"
        accept = self.heldout_fraction if want_heldout else 1.0 - self.heldout_fraction
        out, have, rounds = [], 0, 0
        while have < n:
            # Oversample so one round nearly always suffices.
            m = int((n - have) / accept * 1.1) + 16
            cand = rng.integers(0, self.vocab_size, size=(m, self.prompt_len), dtype=np.int64)
            cand = cand[self.split_of(cand) == want_heldout]
            out.append(cand)
            have += len(cand)
            rounds += 1
            # Fail loudly rather than spin if the split is (nearly) empty.
            if rounds == 100 and have < n:
                raise RuntimeError(f"{self.name}: could not draw {n} {split} prompts")
        return np.concatenate(out)[:n]

    def batch(self, n: int, rng: np.random.Generator,
              split: str = "train") -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Inputs and targets, both (n, block_size) int64; targets outside the
        answer are IGNORE_INDEX."""
        prompts = self.sample_prompts(n, rng, split)
        seq = np.concatenate([prompts, self.answer(prompts)], axis=1)
        x = seq[:, :-1].copy()
        y = seq[:, 1:].copy()
        # Target j predicts seq[j + 1]; the answer starts at seq[prompt_len].
        y[:, : self.prompt_len - 1] = IGNORE_INDEX
        return x, y

    def heldout_prompts(self, n: int | None = None) -> NDArray[np.int64]:
        """Distinct held-out prompts in a fixed order: all of them (lexicographic)
        when the space is enumerable, else a fixed pseudo-random sample of ``n``
        (default 1000). A smaller ``n`` always gives a prefix of a larger one."""
        if self._enumerable():
            pool = self._pool("heldout")
            return pool.copy() if n is None else pool[:n].copy()
        n = 1000 if n is None else n
        if n > self.num_heldout():
            raise ValueError(f"only {self.num_heldout()} held-out prompts exist, asked for {n}")
        rng = np.random.default_rng(_HELDOUT_SAMPLE_SEED)
        drawn = np.empty((0, self.prompt_len), dtype=np.int64)
        while True:
            # Fixed-size rounds keep the draw sequence independent of n.
            drawn = np.concatenate([drawn, self.sample_prompts(4096, rng, "heldout")])
            _, first = np.unique(drawn, axis=0, return_index=True)
            if len(first) >= n:
                return drawn[np.sort(first)[:n]]

    def exact_match(self, prompts: ArrayLike, predicted_answers: ArrayLike) -> float:
        """Fraction of rows whose predicted answer is entirely correct."""
        target = self.answer(prompts)
        predicted_answers = np.asarray(predicted_answers)
        if predicted_answers.shape != target.shape:
            raise ValueError(f"expected answers of shape {target.shape}, got {predicted_answers.shape}")
        return float(np.all(predicted_answers == target, axis=1).mean())


class _SequenceTask(Task):
    # Prompt and answer are both `length` digits from range(num_digits).
    def __init__(self, length: int = 6, num_digits: int = 10, heldout_fraction: float = 0.2) -> None:
        super().__init__(num_digits, length, length, heldout_fraction)
        self.length = length
        self.num_digits = num_digits


class SortTask(_SequenceTask):
    """Sort the prompt ascending (minGPT's sort demo)."""

    name = "sort"

    def __init__(self, length: int = 6, num_digits: int = 3, heldout_fraction: float = 0.2) -> None:
        super().__init__(length, num_digits, heldout_fraction)

    def answer(self, prompts: ArrayLike) -> NDArray[np.int64]:
        return np.sort(self._check_prompts(prompts), axis=1)

    def describe(self) -> str:
        return f"sort: {self.length} digits in [0, {self.num_digits}) -> sorted ascending"


class ReverseTask(_SequenceTask):
    """Repeat the prompt backwards."""

    name = "reverse"

    def answer(self, prompts: ArrayLike) -> NDArray[np.int64]:
        return self._check_prompts(prompts)[:, ::-1].copy()

    def describe(self) -> str:
        return f"reverse: {self.length} digits in [0, {self.num_digits}) -> same digits backwards"


class CopyTask(_SequenceTask):
    """Repeat the prompt verbatim."""

    name = "copy"

    def answer(self, prompts: ArrayLike) -> NDArray[np.int64]:
        return self._check_prompts(prompts).copy()

    def describe(self) -> str:
        return f"copy: {self.length} digits in [0, {self.num_digits}) -> same digits again"


class AddTask(Task):
    """Add two ``num_digits``-digit numbers. The prompt is both numbers' digits,
    most significant first; the answer is the sum's ``num_digits + 1`` digits
    least significant first, so each digit only depends on carries already
    emitted (minGPT's adder does the same)."""

    name = "add"

    def __init__(self, num_digits: int = 2, heldout_fraction: float = 0.2) -> None:
        super().__init__(10, 2 * num_digits, num_digits + 1, heldout_fraction)
        self.num_digits = num_digits

    def answer(self, prompts: ArrayLike) -> NDArray[np.int64]:
        prompts = self._check_prompts(prompts)
        d = self.num_digits
        powers = 10 ** np.arange(d - 1, -1, -1, dtype=np.int64)
        total = prompts[:, :d] @ powers + prompts[:, d:] @ powers
        return (total[:, None] // 10 ** np.arange(d + 1, dtype=np.int64)) % 10

    def describe(self) -> str:
        d = self.num_digits
        return f"add: two {d}-digit numbers -> their {d + 1}-digit sum, least significant digit first"


# name -> what makes the task; chars reads a text file (the shipped one unless given a path=)
TASKS: dict[str, Callable[..., Task | CharsTask]] = {
    "sort": SortTask, "reverse": ReverseTask, "copy": CopyTask, "add": AddTask, "chars": CharsTask.from_file}


def get_task(name: str, **kwargs: Any) -> Task | CharsTask:
    """Instantiate the task registered under ``name`` (keyword arguments go to its constructor)."""
    try:
        cls = TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; valid names: {', '.join(sorted(TASKS))}") from None
    return cls(**kwargs)
