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


# ---- memory and device queries tutorials call (PyTorch built without CUDA answers the same) -----------

def is_initialized() -> bool:
    return False


def empty_cache() -> None:
    """Release the GPU's cached memory: there is none."""


def memory_allocated(device: object = None) -> int:
    return 0


def max_memory_allocated(device: object = None) -> int:
    return 0


def memory_reserved(device: object = None) -> int:
    return 0


def max_memory_reserved(device: object = None) -> int:
    return 0


def reset_peak_memory_stats(device: object = None) -> None:
    """Nothing to reset (PyTorch without CUDA fails here with an internal AttributeError instead)."""


reset_max_memory_allocated = reset_peak_memory_stats


def _no_cuda(*args: object, **kwargs: object) -> None:
    # PyTorch built without CUDA raises this AssertionError from every call that needs a GPU
    raise AssertionError("Torch not compiled with CUDA enabled (minitensor runs on the CPU only; "
                         "guard GPU code with `if torch.cuda.is_available():`)")


synchronize = get_device_name = current_device = get_device_properties = set_device = _no_cuda
get_device_capability = mem_get_info = ipc_collect = _no_cuda
