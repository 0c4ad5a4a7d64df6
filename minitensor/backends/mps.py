"""`minitensor.backends.mps`: Apple's GPU back end, absent (minitensor runs on numpy, on the CPU)."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
