"""`minitensor.backends.cuda`: NVIDIA's back end, absent. The precision flags scripts set for GPU
matmuls (`matmul.allow_tf32` ...) are plain attributes here: numpy's float32 matmul is always full
float32, so they change nothing."""
from types import SimpleNamespace
from typing import Callable

from ..nn.sdpa_backends import SDPBackend, is_enabled, set_enabled


def is_built() -> bool:
    return False


matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                         allow_bf16_reduced_precision_reduction=True)


# the attention kernels' flags (`nn.attention.sdpa_kernel` sets them too): kept, one path whatever they say
def _flag(backend: SDPBackend, name: str) -> tuple[Callable[[], bool], Callable[[bool], None]]:
    """PyTorch's pair of functions for one kernel's flag: `{name}_sdp_enabled()` and `enable_{name}_sdp(enabled)`."""
    def enabled() -> bool:
        return is_enabled(backend)

    def enable(enabled: bool) -> None:
        set_enabled(backend, enabled)

    enabled.__name__, enable.__name__ = f"{name}_sdp_enabled", f"enable_{name}_sdp"
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _flag(SDPBackend.FLASH_ATTENTION, "flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _flag(SDPBackend.EFFICIENT_ATTENTION, "mem_efficient")
math_sdp_enabled, enable_math_sdp = _flag(SDPBackend.MATH, "math")
cudnn_sdp_enabled, enable_cudnn_sdp = _flag(SDPBackend.CUDNN_ATTENTION, "cudnn")
