"""`minitensor.cuda`: there is no GPU here, so tutorial code takes its CPU branch.

    device = 'cuda' if minitensor.cuda.is_available() else 'cpu'   # 'cpu'

As in a PyTorch build without CUDA: `is_available()` is False, `device_count()` is 0, and seeding
the (absent) GPU generators does nothing.
"""


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """Seed the GPU's generator: there is none, so nothing to do (as PyTorch without a GPU)."""


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator: there are none."""
