"""One global numpy Generator behind every random op, reset by `manual_seed` (as PyTorch's is)."""
import numpy as np

_generator = np.random.default_rng(0)


def manual_seed(seed):
    """Seed the global generator: the same seed gives the same numbers, op for op."""
    global _generator
    _generator = np.random.default_rng(int(seed))
    return _generator


seed = manual_seed


def _gen(generator=None):
    """The generator a random op draws from: the one passed as `generator=`, else the global one."""
    return _generator if generator is None else generator


def get_rng_state():
    """The generator's state (a dict), to restore with `set_rng_state`."""
    return _generator.bit_generator.state


def set_rng_state(state):
    _generator.bit_generator.state = state


class Generator:
    """A private random stream, for code that passes `generator=` (PyTorch's torch.Generator)."""

    def __init__(self, device="cpu"):
        self._rng = np.random.default_rng(0)

    def manual_seed(self, seed):
        self._rng = np.random.default_rng(int(seed))
        return self

    def __getattr__(self, name):  # uniform, normal, random, ... of the numpy Generator
        return getattr(self._rng, name)
