"""A character-level language model's task: predict every next character of a text.

    text   "It is a truth universally ..."     vocabulary: its distinct characters, sorted
    ids    [33, 62, 1, 51, 61, 1, 43, ...]     one id per character
    x      ids[s : s + block_size]             a window starting at a random s of one split
    y      ids[s + 1 : s + block_size + 1]     the same window one character on

Every position is a target: position j of x sees x[0..j] and is scored on y[j] = the character
after it. The last 10 % of the text is held out (a contiguous tail, as nanoGPT's shakespeare_char
does, so no held-out window overlaps a training one); each split keeps at least one window of
block_size + 1 characters. The score is the mean cross-entropy on held-out characters, in nats,
and bits per character = loss / ln 2: how many bits a coder driven by the model would need per
character of unseen text. For the shipped text: log2(74) = 6.2 for a uniform guess among its 74
characters, 4.5 knowing only how often each occurs, 3.5 knowing which character follows which.

The default text ships inside the package (`attention/data`, see its README): chapters 1-17 of
Jane Austen's Pride and Prejudice, public domain. Pure numpy, like the toy tasks.
"""
from __future__ import annotations

import importlib.resources
import os

import numpy as np
from numpy.typing import ArrayLike, NDArray

DEFAULT_TEXT = "pride_and_prejudice.txt"


def default_text_path() -> str:
    """The path of the shipped text (attention/data/pride_and_prejudice.txt)."""
    return str(importlib.resources.files(__package__).joinpath("data", DEFAULT_TEXT))


def read_text(path: str | os.PathLike[str]) -> str:
    """The text of a UTF-8 file, newlines as \\n; a clear ValueError if it is empty or not UTF-8.

    A missing or unreadable file raises the OSError that `open` raises."""
    with open(path, "rb") as f:
        raw = f.read()
    if not raw:
        raise ValueError(f"{path} is empty: a character model needs text to learn from")
    try:
        text = raw.decode("utf-8-sig")  # -sig: a byte-order mark is no character of the text
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not UTF-8 text (byte {e.start}: {e.reason}); save it as UTF-8") from None
    # Windows and old Mac line ends read as \n, as Python's text mode reads them
    return text.replace("\r\n", "\n").replace("\r", "\n")


class CharsTask:
    """Next-character prediction on one text: its vocabulary, its two splits and their windows."""

    name = "chars"

    def __init__(self, text: str, block_size: int = 64, heldout_fraction: float = 0.1, source: str = "text") -> None:
        if not 0.0 < heldout_fraction < 1.0:
            raise ValueError(f"heldout_fraction must be in (0, 1), got {heldout_fraction}")
        if block_size < 1:
            raise ValueError(f"block_size must be at least 1, got {block_size}")
        window = block_size + 1  # x and its targets y, one character on
        if len(text) < 2 * window:
            raise ValueError(
                f"{source} has {len(text)} characters; block_size {block_size} needs at least {2 * window}: "
                f"{window} to train on and {window} held out (use more text or a smaller block size)"
            )
        self.block_size = int(block_size)
        self.heldout_fraction = float(heldout_fraction)
        self.source = source
        self.chars = sorted(set(text))
        self.vocab_size = len(self.chars)
        self._ids = {c: i for i, c in enumerate(self.chars)}
        self.data = self.encode(text)
        n_heldout = max(window, int(round(heldout_fraction * len(text))))
        n_heldout = min(n_heldout, len(text) - window)  # and the training part keeps one window
        self.train_ids, self.heldout_ids = self.data[:-n_heldout], self.data[-n_heldout:]

    @classmethod
    def from_file(cls, path: str | os.PathLike[str] | None = None, block_size: int = 64,
                  heldout_fraction: float = 0.1) -> CharsTask:
        """The task on a UTF-8 text file; None means the text shipped with the package."""
        path = default_text_path() if path is None else os.fspath(path)
        return cls(read_text(path), block_size, heldout_fraction, source=path)

    def __repr__(self) -> str:
        return f"CharsTask({self.describe()!r})"

    def describe(self) -> str:
        return (f"chars: next character of {os.path.basename(self.source)} ({len(self.data):,} characters, "
                f"{self.vocab_size} distinct), windows of {self.block_size}")

    # -- characters <-> ids -------------------------------------------------
    def encode(self, text: str) -> NDArray[np.int64]:
        """int64 ids of the characters of `text`; a ValueError names any not in the vocabulary."""
        try:
            return np.array([self._ids[c] for c in text], dtype=np.int64)
        except KeyError:
            unknown = sorted(set(text) - set(self._ids))
            raise ValueError(f"characters not in the vocabulary of {self.source}: "
                             f"{''.join(unknown)!r}") from None

    def decode(self, ids: ArrayLike) -> str:
        """The text of a sequence of ids."""
        return "".join(self.chars[int(i)] for i in np.asarray(ids).reshape(-1))

    # -- windows ------------------------------------------------------------
    def _split(self, split: str) -> NDArray[np.int64]:
        if split not in ("train", "heldout"):
            raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
        return self.train_ids if split == "train" else self.heldout_ids

    def batch(self, n: int, rng: np.random.Generator,
              split: str = "train") -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """`n` windows at random places of `split`: inputs and targets, both (n, block_size) int64."""
        ids = self._split(split)
        starts = rng.integers(0, len(ids) - self.block_size, size=n)  # the last start leaves room for y
        offsets = starts[:, None] + np.arange(self.block_size)        # (n, block_size)
        return ids[offsets], ids[offsets + 1]

    def heldout_windows(self, n: int | None = None) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The held-out text cut into windows side by side: inputs and targets (m, block_size).

        Together they score every held-out character but the first once (a tail shorter than a
        window is left out). With more than `n` windows, `n` of them evenly spaced: a fixed set,
        so every evaluation of a run scores the same characters."""
        bs = self.block_size
        m = (len(self.heldout_ids) - 1) // bs
        chosen = np.arange(m) if n is None or n >= m else np.unique(np.linspace(0, m - 1, n).round().astype(np.int64))
        offsets = chosen[:, None] * bs + np.arange(bs)                # (m, block_size)
        return self.heldout_ids[offsets], self.heldout_ids[offsets + 1]
