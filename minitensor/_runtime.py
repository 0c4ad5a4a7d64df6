"""The small functions of PyTorch's namespace about the runtime rather than the math: the default
device, thread counts, build flags, dtype questions (`promote_types`, `result_type`, `can_cast`),
tests on tensors (`is_nonzero`, `is_same_size`, `typename` ...), `compile` (its checks; the replay
is the speed layer's, minitensor/fast/compile.py), and the stand-ins that let a tutorial's
`with torch.autocast(...)` run. Each stand-in says in its docstring what it does not do (see
docs/notes/misc_differences.md).
"""
from __future__ import annotations

import contextlib
from typing import Any, TypeVar

import numpy as np

from . import _dtype
from .autograd import grad_mode
from .tensor import Size, Tensor, check_device, device

_T = TypeVar("_T")

# ---- the default device: always the CPU -------------------------------------------------------------


def set_default_device(device: object) -> None:
    """Accepts 'cpu' (or None, PyTorch's way of going back to the CPU); any other device is refused
    with the reason, since minitensor runs on numpy on the CPU."""
    check_device(device, "set_default_device")


def get_default_device() -> device:
    return device("cpu")


# ---- threads: recorded only -------------------------------------------------------------------------
_threads = {"intra": 1, "interop": 1}


def _thread_count(n: int, op: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
        raise RuntimeError(f"{op}: Expected number of threads to be positive, got {n!r}")
    return int(n)


def set_num_threads(num: int, /) -> None:  # (positional only: PyTorch's takes no keyword arguments)
    """Recorded for `get_num_threads`, with no effect: numpy's BLAS fixes its thread count when it
    loads (set OMP_NUM_THREADS / OPENBLAS_NUM_THREADS before starting Python to change it)."""
    _threads["intra"] = _thread_count(num, "set_num_threads")


def get_num_threads() -> int:
    return _threads["intra"]


def set_num_interop_threads(num: int, /) -> None:
    """Recorded for `get_num_interop_threads`, with no effect: minitensor runs each op in one thread."""
    _threads["interop"] = _thread_count(num, "set_num_interop_threads")


def get_num_interop_threads() -> int:
    return _threads["interop"]


_matmul_precision = "highest"


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted and recorded ('highest', 'high' or 'medium'), with no effect: numpy's float32 matmul
    is always full float32 (PyTorch may use TF32 or bfloat16 passes on some GPUs for 'high'/'medium')."""
    global _matmul_precision
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"set_float32_matmul_precision: invalid precision {precision!r}; expected 'highest', "
                           "'high' or 'medium'")
    _matmul_precision = precision


def get_float32_matmul_precision() -> str:
    return _matmul_precision


# ---- what the build has (PyTorch's `has_*` flags, for this library) -----------------------------------
has_cuda = False
has_cudnn = False
has_mps = False
has_mkldnn = False
has_lapack = True  # numpy.linalg links a LAPACK
has_mkl = False
has_openmp = False
has_spectral = True  # numpy.fft


# ---- questions about dtypes ---------------------------------------------------------------------------

def promote_types(type1: Any, type2: Any) -> _dtype.PublicDType:
    """The dtype PyTorch's promotion gives two dtypes (float32 and int64: float32)."""
    return _dtype.public(_dtype.promote_types(_dtype.as_dtype(type1, "promote_types"),
                                              _dtype.as_dtype(type2, "promote_types")))


def result_type(tensor: Tensor | complex, other: Tensor | complex) -> _dtype.PublicDType:
    """The dtype an arithmetic op gives these operands (tensors or Python numbers), by PyTorch's rules
    (a 0-d tensor or a number changes a dimensioned tensor's dtype only by a higher category)."""
    operands = [x._array if isinstance(x, Tensor) else x for x in (tensor, other)]
    for x in operands:
        if not isinstance(x, (np.ndarray, bool, int, float)):
            raise TypeError(f"result_type: expected tensors or Python numbers, got {type(x).__name__}")
    if not any(isinstance(x, np.ndarray) for x in operands):  # two numbers: as 0-d tensors of their types
        operands = [np.asarray(x, _dtype.result_dtype(x)) for x in operands]
    return _dtype.public(_dtype.result_dtype(*operands))


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch casts `from_` to `to` where it refuses to lose a category (out=, in-place ops):
    float to an integer and an integer to bool are refused, any cast within a category allowed."""
    return _dtype.can_cast(_dtype.as_dtype(from_, "can_cast"), _dtype.as_dtype(to, "can_cast"))


def is_floating_point(input: Tensor) -> bool:
    return _dtype.kind(_tensor(input, "is_floating_point").dtype) == "f"


def is_complex(input: Tensor) -> bool:
    """Always False: minitensor has no complex dtypes."""
    _tensor(input, "is_complex")
    return False


def is_nonzero(input: Tensor) -> bool:
    """Whether a one-element tensor is nonzero (`bool(x)` with PyTorch's errors for other sizes)."""
    n = _tensor(input, "is_nonzero").numel()
    if n != 1:
        which = "no values" if n == 0 else "more than one value"
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with {which} is ambiguous")
    return bool(input._array.reshape(()))


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return _tensor(input, "is_same_size").shape == _tensor(other, "is_same_size").shape


def is_storage(obj: object) -> bool:
    """Always False: minitensor has no storage objects (a tensor's memory is a numpy array)."""
    return False


def _tensor(x: Any, op: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


_TYPENAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "int64": "LongTensor",
              "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
              "bool": "BoolTensor"}


def typename(obj: object) -> str:
    """'torch.FloatTensor' for a float32 tensor (PyTorch's legacy names, under the library's name as
    reprs print it); for anything else its type's qualified name ('int', 'numpy.ndarray')."""
    if isinstance(obj, Tensor):
        name = _TYPENAMES.get(obj.dtype.name)
        if name is not None:
            return f"{Size.shown_as}.{name}"
    t = type(obj)
    return t.__qualname__ if t.__module__ in ("builtins", None) else f"{t.__module__}.{t.__qualname__}"


# ---- anomaly mode as PyTorch's functions --------------------------------------------------------------

def is_anomaly_enabled() -> bool:
    return bool(grad_mode.modes.anomaly_enabled)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection (see `autograd.detect_anomaly`) on or off for this thread."""
    grad_mode.modes.anomaly_enabled = bool(enabled)


def is_anomaly_check_nan_enabled() -> bool:
    return bool(grad_mode.modes.anomaly_enabled)


# ---- compile (replays through the speed layer's slot) and stand-ins: accepted, documented, no effect ------

# `compile`'s settings, as PyTorch checks them; what a compiled step does is minitensor/fast/compile.py's
COMPILE_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
COMPILE_BACKENDS = ("inductor", "eager", "aot_eager", "aot_eager_decomp_partition", "cudagraphs", "openxla", "tvm",
                    "ts", "aot_ts", "onnxrt", "tensorrt", "torch_tensorrt", "ipex")
#: the speed layer's slot (filled from above by minitensor/__init__.py; None on the plain path, where
#: `compile` returns its argument unchanged): `compiler(model, settings, in_place)` -> the replaying callable
compiler: Any = None
COMPILE_DEFAULTS = (("fullgraph", False), ("dynamic", None), ("backend", None), ("mode", None), ("options", None),
                    ("recompile_limit", None))


def compile(model: _T | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: Any = None, mode: str | None = None, options: dict[str, Any] | None = None,
            name: str | None = None, disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None) -> Any:
    """`torch.compile`: a module or function that records its ops once and replays them at later calls
    with same-shaped inputs (minitensor/fast/compile.py says how, and when it runs eagerly instead).
    A module comes back wrapped (`_orig_mod` is the module; `state_dict()` keys start with
    `_orig_mod.`, as PyTorch's), a function as a function of the same name. Without `model` it is a
    decorator factory (`@compile(mode=...)`). `disable=True`, and the plain path (MINITENSOR_PLAIN=1),
    return `model` unchanged. `mode`, `backend`, `options` and `dynamic` are checked and accepted: every
    backend replays, and shapes are always specialised (a new shape records afresh)."""
    settings = _compile_settings(fullgraph, dynamic, backend, mode, options, recompile_limit)
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                  options=options, name=name, disable=disable, recompile_limit=recompile_limit)
    if not callable(model):
        raise AssertionError(f"compile: a callable function is expected, but {type(model)} is provided")
    if disable or compiler is None:
        return model
    return compiler(model, settings, False)


def _compile_settings(fullgraph, dynamic, backend, mode, options, recompile_limit):
    """compile's arguments checked as PyTorch checks them; what the replay uses of them."""
    if mode is not None and options is not None:
        raise RuntimeError("compile: either mode or options can be specified, but both can't be specified at the "
                           "same time")
    if mode is not None and mode not in COMPILE_MODES:
        raise RuntimeError(f"compile: unrecognized mode={mode}, should be one of: {', '.join(COMPILE_MODES)}")
    if isinstance(backend, str) and backend not in COMPILE_BACKENDS:
        raise RuntimeError(f"compile: invalid backend {backend!r} (one of {', '.join(COMPILE_BACKENDS)}, or a "
                           "callable)")
    if recompile_limit is not None and (isinstance(recompile_limit, bool) or not isinstance(recompile_limit, int)
                                        or recompile_limit < 1):
        raise RuntimeError(f"compile: recompile_limit must be a positive int, got {recompile_limit!r}")
    return {"fullgraph": bool(fullgraph), "recompile_limit": recompile_limit}


class autocast(contextlib.ContextDecorator):
    """A stand-in for `torch.autocast` / `torch.amp.autocast`: accepted on the CPU, where it changes
    nothing. PyTorch would run matmuls and the like in bfloat16 (or float16) inside; minitensor keeps
    computing in each tensor's own dtype (float32), so results carry more digits than PyTorch's and
    their dtype stays float32. A 'cuda' device is refused as everywhere else."""

    def __init__(self, device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        check_device(device_type, "autocast")
        if dtype is not None and not isinstance(dtype, _dtype.StoragelessDType):
            d = _dtype.as_dtype(dtype, "autocast")
            if _dtype.kind(d) != "f":
                raise RuntimeError(f"autocast: expected a floating dtype for the autocast region, got {d}")
        self.device_type, self.fast_dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
