"""`minitensor.backends.cudnn`: NVIDIA's library, absent. Scripts set these flags for
reproducibility on a GPU; here they are plain attributes that change nothing."""

enabled = True
deterministic = False
benchmark = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version() -> None:
    """The cuDNN version: None, as PyTorch reports without cuDNN."""
    return None
