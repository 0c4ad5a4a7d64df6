"""`minitensor.backends.cuda`: NVIDIA's back end, absent. The precision flags scripts set for GPU
matmuls (`matmul.allow_tf32` ...) are plain attributes here: numpy's float32 matmul is always full
float32, so they change nothing."""
from types import SimpleNamespace


def is_built() -> bool:
    return False


matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                         allow_bf16_reduced_precision_reduction=True)
