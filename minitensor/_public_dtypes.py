"""The dtypes under the names users reach them by (`minitensor.float32`, `torch.float32` under the runner):
`_dtype.PublicDType` objects, one per numpy dtype, which print as PyTorch's. minitensor's own code keeps
numpy's dtypes (`_dtype.float32` ...); `minitensor/__init__.py` imports these."""
from __future__ import annotations

from . import _dtype as _d
from ._dtype import PublicDType, public

float32, float64, float16 = public(_d.float32), public(_d.float64), public(_d.float16)
int64, int32, int16, int8 = public(_d.int64), public(_d.int32), public(_d.int16), public(_d.int8)
uint8, uint16, uint32, uint64 = public(_d.uint8), public(_d.uint16), public(_d.uint32), public(_d.uint64)
bool_ = public(_d.bool_)
# (without ml_dtypes, bfloat16 is the storageless stand-in, a PublicDType too)
bfloat16: PublicDType = public(_d.bfloat16) if _d.has_bfloat16 else _d.bfloat16

float = float32  # noqa: A001 - torch.float is float32
double = float64
long = int64
int = int32  # noqa: A001 - torch.int is int32
half = float16
short = int16


def get_default_dtype() -> PublicDType:
    """The dtype Python floats and float factories produce (float32 unless `set_default_dtype` changed it)."""
    return public(_d.get_default_dtype())
