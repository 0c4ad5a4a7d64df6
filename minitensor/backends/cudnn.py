"""`minitensor.backends.cudnn`: NVIDIA's library, absent. Scripts set these flags for
reproducibility on a GPU; here they are plain attributes that change nothing."""

enabled = True
deterministic = False
benchmark = False


def is_available() -> bool:
    return False
