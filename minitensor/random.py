"""One global numpy Generator behind every random op, reset by `manual_seed` (as PyTorch's is)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

_generator = np.random.default_rng(0)


def manual_seed(seed: int) -> np.random.Generator:
    """Seed the global generator: the same seed gives the same numbers, op for op."""
    global _generator
    _generator = np.random.default_rng(int(seed))
    return _generator


seed = manual_seed


def _gen(generator: Generator | None = None) -> Any:
    """The generator a random op draws from: the one passed as `generator=`, else the global one."""
    return _generator if generator is None else generator


def get_rng_state() -> Mapping[str, Any]:
    """The generator's state (a dict), to restore with `set_rng_state`."""
    return _generator.bit_generator.state


def set_rng_state(state: Mapping[str, Any]) -> None:
    _generator.bit_generator.state = state


class Generator:
    """A private random stream, for code that passes `generator=` (PyTorch's torch.Generator)."""

    def __init__(self, device: str = "cpu") -> None:
        self._rng = np.random.default_rng(0)

    def manual_seed(self, seed: int) -> Generator:
        self._rng = np.random.default_rng(int(seed))
        return self

    def __getattr__(self, name: str) -> Any:  # uniform, normal, random, ... of the numpy Generator
        return getattr(self._rng, name)
