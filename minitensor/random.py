"""One global numpy Generator behind every random op, reset by `manual_seed` (as PyTorch's is)."""
from __future__ import annotations

import contextlib
import math
from typing import Any, Iterable, Iterator, Mapping

import numpy as np

_generator = np.random.default_rng(0)
_initial_seed = 0  # (PyTorch draws one at startup; minitensor starts from 0, so runs repeat)


def manual_seed(seed: int) -> Generator:
    """Seed the global generator: the same seed gives the same numbers, op for op. Returns the global
    generator (`default_generator`), as PyTorch does."""
    global _generator, _initial_seed
    _initial_seed = int(seed)
    _generator = np.random.default_rng(_initial_seed)
    return default_generator


def seed() -> int:
    """Seed the global generator from the operating system's entropy, and return the seed."""
    s = int(np.random.default_rng().integers(2 ** 63))  # (a fresh generator draws from the OS's entropy)
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed the global generator was last seeded with (0 until `manual_seed` or `seed`)."""
    return _initial_seed


def _gen(generator: Generator | None = None) -> Any:
    """The generator a random op draws from: the one passed as `generator=`, else the global one."""
    return _generator if generator is None else generator


def kept_mask(shape: tuple[int, ...], p: float) -> Any:
    """A bool array of `shape`, each element False with probability p, independently (dropout's mask).

    Each element compares a uniform 32-bit integer with p 2^32, two integers cut from each 64-bit
    draw of the global generator: half the draws of comparing one uniform float per element, and
    the probability is p to within 2^-33."""
    n = math.prod(shape)
    words = _generator.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]
    threshold = round(p * 2 ** 32)
    if threshold >= 2 ** 32:  # p within 2^-33 of 1: nothing is kept (no uint32 reaches 2^32)
        return np.zeros(shape, dtype=bool)
    return (words >= threshold).reshape(shape)


def get_rng_state() -> Mapping[str, Any]:
    """The generator's state (a dict), to restore with `set_rng_state`."""
    return _generator.bit_generator.state


def set_rng_state(new_state: Mapping[str, Any]) -> None:
    _generator.bit_generator.state = new_state


class Generator:
    """A private random stream, for code that passes `generator=` (PyTorch's torch.Generator)."""

    _DEFAULT_SEED = 67280421310721  # what PyTorch's `torch.Generator().initial_seed()` reports

    def __init__(self, device: str = "cpu") -> None:
        self.manual_seed(self._DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> int:
        """The seed this generator was last seeded with (by `manual_seed` or `seed`)."""
        return self._seed

    def seed(self) -> int:
        """Seed from the operating system's entropy; the seed."""
        s = int(np.random.default_rng().integers(2 ** 63))
        self.manual_seed(s)
        return s

    def get_state(self) -> Mapping[str, Any]:
        return self._rng.bit_generator.state

    def set_state(self, state: Mapping[str, Any]) -> Generator:
        self._rng.bit_generator.state = state
        return self

    def __getattr__(self, name: str) -> Any:  # uniform, normal, random, ... of the numpy Generator
        return getattr(self._rng, name)


class _DefaultGenerator(Generator):
    """`minitensor.default_generator`: the global generator, as a Generator object."""

    def __init__(self) -> None:
        pass  # (no `_rng` of its own: it draws from the global generator, which manual_seed replaces)

    def __getattr__(self, name: str) -> Any:
        return getattr(_generator, name)

    def manual_seed(self, seed: int) -> Generator:
        return manual_seed(seed)

    def initial_seed(self) -> int:
        return _initial_seed

    def seed(self) -> int:
        return seed()

    def get_state(self) -> Mapping[str, Any]:
        return get_rng_state()

    def set_state(self, state: Mapping[str, Any]) -> Generator:
        set_rng_state(state)
        return self


default_generator: Generator = _DefaultGenerator()


# ---- issue 29: fork_rng, thread_safe_generator ---------------------------------------------------------

@contextlib.contextmanager
def fork_rng(devices: Iterable[Any] | None = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str | None = None) -> Iterator[None]:
    """Inside, draw random numbers (or reseed) freely: on leaving, the global generator's state and initial
    seed are put back as they were, even when the block raises. With `enabled=False` it does nothing.
    minitensor has one generator, the CPU's: `devices` and `device_type` (which name accelerators' generators
    in PyTorch) are accepted and there is nothing more to save."""
    if not enabled:
        yield
        return
    seed_before, state_before = _initial_seed, dict(get_rng_state())
    try:
        yield
    finally:
        globals()["_initial_seed"] = seed_before  # (manual_seed inside may have replaced the generator too)
        set_rng_state(state_before)


def thread_safe_generator() -> Generator | None:
    """The generator a DataLoader's worker thread should draw from, or None for the global one. minitensor's
    DataLoader runs everything in the calling thread, so this is always None (as PyTorch's is outside worker
    threads)."""
    return None
