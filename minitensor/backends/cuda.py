"""`minitensor.backends.cuda`: NVIDIA's back end, absent. The precision flags scripts set for GPU
matmuls (`matmul.allow_tf32` ...) are plain attributes here: numpy's float32 matmul is always full
float32, so they change nothing."""
from types import SimpleNamespace

from ..nn.sdpa_backends import SDPBackend, is_enabled, set_enabled


def is_built() -> bool:
    return False


matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                         allow_bf16_reduced_precision_reduction=True)


# the attention kernels' flags (`nn.attention.sdpa_kernel` sets them too): kept, one path whatever they say
def flash_sdp_enabled() -> bool:
    return is_enabled(SDPBackend.FLASH_ATTENTION)


def enable_flash_sdp(enabled: bool) -> None:
    set_enabled(SDPBackend.FLASH_ATTENTION, enabled)


def mem_efficient_sdp_enabled() -> bool:
    return is_enabled(SDPBackend.EFFICIENT_ATTENTION)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    set_enabled(SDPBackend.EFFICIENT_ATTENTION, enabled)


def math_sdp_enabled() -> bool:
    return is_enabled(SDPBackend.MATH)


def enable_math_sdp(enabled: bool) -> None:
    set_enabled(SDPBackend.MATH, enabled)


def cudnn_sdp_enabled() -> bool:
    return is_enabled(SDPBackend.CUDNN_ATTENTION)


def enable_cudnn_sdp(enabled: bool) -> None:
    set_enabled(SDPBackend.CUDNN_ATTENTION, enabled)
